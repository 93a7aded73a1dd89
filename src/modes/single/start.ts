/**
 * Single mode's start-up (the embedded default): one instance holds the
 * whole index. topics → metrics server → codec + fingerprinting → snapshot →
 * fence the predecessor → changelog replay → join the group; snapshots on an
 * interval and at the stop.
 */
import type { Registry } from 'prom-client';
import type { DedupConfig } from '../../config.js';
import { errorCode } from '../../errors.js';
import { describePlan } from '../../index/index.js';
import { createDecider, planFromConfig, samePlan } from '../../dedup/create-decider.js';
import type { Decider } from '../../dedup/decider.js';
import { createCrawledPagesConsumer, type CrawledPagesConsumer } from '../../consumers/crawled-pages.consumer.js';
import { replayChangelog } from '../../kafka/changelog-replay.js';
import { clusterId, endOffsets } from '../../kafka/admin.js';
import { createVerdictProducer } from '../../kafka/verdict-producer.js';
import type { Logger } from '../../logger.js';
import { readSnapshot, writeSnapshot } from '../../storage/state-snapshot.js';
import { pick, pageTierIn, startCommon, batchProcessor, pipelineHandle, type Closers, type Pipeline } from '../start-common.js';

export async function startSingle(config: DedupConfig, logger: Logger, registry: Registry, closers: Closers): Promise<Pipeline> {
  let decider: Decider | null = null;
  let consumer: CrawledPagesConsumer | null = null;
  const plan = planFromConfig(config);
  /** Ready = the index is loaded and the consumer is in its group, fetching. */
  const ready = (): boolean => decider !== null && (consumer?.joined ?? false);
  const common = await startCommon(config, logger, closers, ready, registry, {
    indexFingerprints: () => decider?.index.size ?? 0,
    indexBytes: () => decider?.byteLength ?? 0,
    indexMemoryLimitBytes: () => config.memoryBudgetBytes,
    indexTables: () => plan.tables.length,
    planCandidatesPerProbe: () => describePlan(plan, Math.max(1, decider?.index.size ?? 1)).expectedCandidatesPerProbe,
  });
  const { metrics, kafka, codec, maxRecordBytes, fingerprintVersion: version } = common;

  const recoveryStarted = Date.now();
  let snapshotOffsets: Record<string, string> = {};
  let loaded = null;
  try {
    loaded = await readSnapshot(config.stateDir, { pageTier: () => pageTierIn(config.stateDir) });
  } catch (error) {
    metrics.errors.inc({ code: errorCode(error) });
    logger.error('snapshot unreadable; rebuilding the index from the whole changelog', { error });
  }
  const cluster = await clusterId(kafka);
  if (loaded) {
    const changelogEnd = await endOffsets(kafka, config.fingerprintsTopic);
    // A snapshot is only as good as its offsets: they must name this
    // cluster's changelog, and that changelog must not have been recreated
    // (an end offset below the snapshot's means it was).
    const behind = Object.entries(loaded.header.offsets).some(([p, o]) => BigInt(changelogEnd[p] ?? '0') < BigInt(o));
    const reason =
      loaded.header.fingerprintVersion !== version ? `another fingerprint definition (${loaded.header.fingerprintVersion ?? 'unnamed'})`
      : loaded.header.k !== config.k || !samePlan(loaded.header.plan, plan) ? 'another k or table plan'
      : loaded.header.changelogTopic !== config.fingerprintsTopic ? 'another changelog topic'
      : loaded.header.clusterId !== cluster ? `another Kafka cluster (${loaded.header.clusterId})`
      : behind ? 'a changelog that has since been recreated (its end is before the snapshot)'
      : null;
    if (reason) {
      logger.warn(`snapshot was made with ${reason}; rebuilding the index from the whole changelog`, { snapshotCreatedAt: loaded.header.createdAt });
      loaded = null;
    }
  }
  const candidate = createDecider(config, plan, loaded ? { index: loaded.index, store: loaded.store } : undefined, loaded ? undefined : pageTierIn(config.stateDir));
  if (loaded) {
    snapshotOffsets = loaded.header.offsets;
    metrics.snapshotAge.set(Date.parse(loaded.header.createdAt) / 1000 || 0);
    logger.info('snapshot loaded', { pages: loaded.header.pages, createdAt: loaded.header.createdAt });
  }

  const producer = createVerdictProducer(kafka, `${config.groupId}-${config.instanceId}`, maxRecordBytes);
  await producer.connect();
  closers.push('verdict producer', () => producer.disconnect());
  const replay = await replayChangelog({ kafka, topic: config.fingerprintsTopic, from: snapshotOffsets, codec, apply: candidate, logger, groupIdPrefix: config.groupId, fingerprintVersion: version });
  candidate.evict(Date.now());
  metrics.recoveryDuration.set((Date.now() - recoveryStarted) / 1000);
  logger.info('index recovered', {
    fingerprints: candidate.index.size,
    replayedRecords: replay.records,
    seconds: (Date.now() - recoveryStarted) / 1000,
    plan: { k: plan.k, blocks: plan.blockWidths, tables: plan.tables.length },
  });
  decider = candidate;

  let lastSnapshot = Date.now();
  let snapshotting: Promise<void> | null = null;
  let snapshotFailures = 0;
  /** Last changelog offset each committed transaction wrote, per partition. */
  const changelogWritten = new Map<string, bigint>();
  async function snapshot(reason: string): Promise<void> {
    if (!decider) return;
    const started = Date.now();
    // The end offsets, raised to what our own committed transactions wrote:
    // right after a commit the high watermark may not show it yet, and a
    // snapshot that names an older offset replays that chunk at the next start.
    const offsets = await endOffsets(kafka, config.fingerprintsTopic);
    for (const [partition, last] of changelogWritten) {
      if (BigInt(offsets[partition] ?? '0') <= last) offsets[partition] = (last + 1n).toString();
    }
    const bytes = await writeSnapshot(
      config.stateDir,
      { createdAt: new Date().toISOString(), clusterId: cluster, changelogTopic: config.fingerprintsTopic, offsets, k: config.k, plan, pages: decider.store.size, fingerprintVersion: version },
      decider.index,
      decider.store,
    );
    lastSnapshot = Date.now();
    metrics.snapshotAge.set(lastSnapshot / 1000);
    logger.info('snapshot written', { reason, bytes, pages: decider.store.size, seconds: (Date.now() - started) / 1000 });
  }

  const processor = batchProcessor(config, common, decider);

  let fail!: (error: unknown) => void;
  const failed = new Promise<unknown>((resolve) => (fail = resolve));
  consumer = createCrawledPagesConsumer({
    kafka,
    config: pick(config, ['groupId', 'pagesTopic', 'maxBatchRecords', 'commitLingerMs', 'clientId', 'instanceId', 'singleInstance']),
    processor,
    producer,
    metrics,
    logger,
    onFatal: (error) => fail(error),
    onWritten: (written) => {
      for (const [at, last] of written) {
        const [topic, partition] = [at.slice(0, at.lastIndexOf(':')), at.slice(at.lastIndexOf(':') + 1)];
        if (topic === config.fingerprintsTopic && last > (changelogWritten.get(partition) ?? -1n)) changelogWritten.set(partition, last);
      }
    },
    afterCommit: async (_chunk, { drained }) => {
      decider!.evict(Date.now());
      if (config.snapshotIntervalSeconds > 0 && Date.now() - lastSnapshot >= config.snapshotIntervalSeconds * 1000 && !snapshotting) {
        // A snapshot holds committed decisions only: chunks of other
        // partitions may be decided and still in a transaction.
        snapshotting = drained()
          .then(() => snapshot('interval'))
          .then(() => {
            snapshotFailures = 0;
          })
          .catch((error: unknown) => {
            // A full disk must not stop consumption: count, alert
            // (DedupSnapshotFailing), and try again after a growing pause.
            snapshotFailures++;
            metrics.snapshotFailures.inc();
            const backoff = Math.min(config.snapshotIntervalSeconds, 5 * 2 ** Math.min(snapshotFailures, 10));
            lastSnapshot = Date.now() - (config.snapshotIntervalSeconds - backoff) * 1000;
            logger.error('interval snapshot failed; consumption goes on, retrying later', { error, retryInSeconds: backoff, failures: snapshotFailures });
          })
          .finally(() => (snapshotting = null));
        await snapshotting;
      }
    },
  });
  await consumer.start();

  return pipelineHandle(common, failed, logger, async () => {
    await consumer!.stop().catch((error: unknown) => logger.error('consumer stop failed', { error }));
    if (snapshotting) await snapshotting;
    await snapshot('shutdown').catch((error: unknown) => {
      metrics.errors.inc({ code: errorCode(error) });
      logger.error('snapshot at shutdown failed; the next start replays more of the changelog', { error });
    });
    await closers.closeAll();
  });
}
