/**
 * Wires the application: config in, a running pipeline out. The only module
 * that knows every part; the entry point (cli/main.ts) owns signals and the
 * exit code.
 *
 * Start-up order matters:
 *   1. topics, schemas, metrics server (not ready yet)
 *   2. state: the snapshot if it matches the configured plan, else empty
 *   3. the transactional producer fences any predecessor (aborting its open
 *      transaction), so the changelog has a stable end
 *   4. changelog replay from the snapshot's offsets to that end
 *   5. the consumer joins the group; ready once it has joined
 */
import { Registry } from 'prom-client';
import type { DedupConfig } from '../config.js';
import { DedupError, errorCode } from '../errors.js';
import { availableParallelism } from 'node:os';
import { createFingerprintPool, createFingerprinter, type FingerprintPool } from '../fingerprint/index.js';
import { describePlan } from '../index/index.js';
import { createDecider, featureOptionsFromConfig, planFromConfig, samePlan } from '../dedup/create-decider.js';
import type { Decider } from '../dedup/decider.js';
import { createMetrics } from '../metrics/metrics.js';
import { startMetricsServer, type MetricsServer } from '../metrics/metrics-server.js';
import { createRecordCodecFromConfig } from '../wire/record-codec.js';
import { createPageBatchProcessor } from '../consumers/page-batch-processor.js';
import { createCrawledPagesConsumer, type CrawledPagesConsumer } from '../consumers/crawled-pages.consumer.js';
import { clusterId, endOffsets, replayChangelog } from '../consumers/changelog.replay.js';
import { createVerdictProducer } from '../producers/verdict.producer.js';
import { createKafka, ensureTopics } from '../kafka/client.js';
import type { Logger } from '../logger.js';
import { readSnapshot, writeSnapshot } from './state-snapshot.js';

export interface Pipeline {
  readonly metricsPort: number;
  /** Resolves when the pipeline stops by itself (a fatal error); never rejects. */
  readonly failed: Promise<unknown>;
  /** Graceful stop: finish the chunk in flight, commit, snapshot, disconnect. */
  stop(): Promise<void>;
}

export async function startPipeline(config: DedupConfig, logger: Logger, registry: Registry = new Registry()): Promise<Pipeline> {
  let decider: Decider | null = null;
  let consumer: CrawledPagesConsumer | null = null;
  const plan = planFromConfig(config);
  /** Ready = the index is loaded and the consumer has joined its group. */
  const ready = (): boolean => decider !== null && (consumer?.joined ?? false);
  const metrics = createMetrics(registry, {
    indexFingerprints: () => decider?.index.size ?? 0,
    indexBytes: () => decider?.byteLength ?? 0,
    indexMemoryLimitBytes: () => config.memoryBudgetBytes,
    indexTables: () => plan.tables.length,
    planCandidatesPerProbe: () => describePlan(plan, Math.max(1, decider?.index.size ?? 1)).expectedCandidatesPerProbe,
    ready,
  });
  let server: MetricsServer | null = null;
  if (config.metricsPort > 0) {
    server = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry, ready });
    logger.info('metrics server listening', { host: config.metricsHost, port: server.port });
  }

  const kafka = createKafka(config, logger);
  if (config.createTopics) await ensureTopics(kafka, config, logger);
  const codec = await createRecordCodecFromConfig(config);
  const fingerprinter = await createFingerprinter(featureOptionsFromConfig(config));
  const threads = config.fingerprintThreads === 0 ? (availableParallelism() >= 2 ? availableParallelism() : 0) : Math.max(0, config.fingerprintThreads);
  const pool: FingerprintPool | null = threads > 0 ? await createFingerprintPool({ threads, features: featureOptionsFromConfig(config) }) : null;
  logger.info('fingerprinting', { workerThreads: threads });

  const recoveryStarted = Date.now();
  let snapshotOffsets: Record<string, string> = {};
  let loaded = null;
  try {
    loaded = await readSnapshot(config.stateDir);
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
      loaded.header.k !== config.k || !samePlan(loaded.header.plan, plan) ? 'another k or table plan'
      : loaded.header.changelogTopic !== config.fingerprintsTopic ? 'another changelog topic'
      : loaded.header.clusterId !== cluster ? `another Kafka cluster (${loaded.header.clusterId})`
      : behind ? 'a changelog that has since been recreated (its end is before the snapshot)'
      : null;
    if (reason) {
      logger.warn(`snapshot was made with ${reason}; rebuilding the index from the whole changelog`, { snapshotCreatedAt: loaded.header.createdAt });
      loaded = null;
    }
  }
  const candidate = createDecider(config, plan, loaded ? { index: loaded.index, store: loaded.store } : undefined);
  if (loaded) {
    snapshotOffsets = loaded.header.offsets;
    metrics.snapshotAge.set(Date.parse(loaded.header.createdAt) / 1000 || 0);
    logger.info('snapshot loaded', { pages: loaded.header.pages, createdAt: loaded.header.createdAt });
  }

  const producer = createVerdictProducer(kafka, `${config.groupId}-${config.instanceId}`);
  await producer.connect();
  const replay = await replayChangelog({ kafka, topic: config.fingerprintsTopic, from: snapshotOffsets, codec, decider: candidate, logger, groupIdPrefix: config.groupId });
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
  async function snapshot(reason: string): Promise<void> {
    if (!decider) return;
    const started = Date.now();
    const offsets = await endOffsets(kafka, config.fingerprintsTopic);
    const bytes = await writeSnapshot(
      config.stateDir,
      { createdAt: new Date().toISOString(), clusterId: cluster, changelogTopic: config.fingerprintsTopic, offsets, k: config.k, plan, pages: decider.store.size },
      decider.index,
      decider.store,
    );
    lastSnapshot = Date.now();
    metrics.snapshotAge.set(lastSnapshot / 1000);
    logger.info('snapshot written', { reason, bytes, pages: decider.store.size, seconds: (Date.now() - started) / 1000 });
  }

  const processor = createPageBatchProcessor({
    topics: { sourceTopic: config.pagesTopic, ...config },
    codec,
    fingerprinter,
    pool,
    decider,
    metrics,
    maxDeadLetterBytes: config.maxPageBytes * 2,
  });

  let fail!: (error: unknown) => void;
  const failed = new Promise<unknown>((resolve) => (fail = resolve));
  consumer = createCrawledPagesConsumer({
    kafka,
    config,
    processor,
    producer,
    metrics,
    logger,
    onFatal: (error) => fail(error),
    afterCommit: async () => {
      decider!.evict(Date.now());
      if (config.snapshotIntervalSeconds > 0 && Date.now() - lastSnapshot >= config.snapshotIntervalSeconds * 1000 && !snapshotting) {
        snapshotting = snapshot('interval').finally(() => (snapshotting = null));
        await snapshotting;
      }
    },
  });
  try {
    await consumer.start();
  } catch (error) {
    await producer.disconnect().catch(() => undefined);
    await pool?.close();
    await server?.close();
    throw error instanceof DedupError ? error : new DedupError('KAFKA', `consumer failed to start: ${(error as Error).message}`, { cause: error });
  }

  let stopping: Promise<void> | null = null;
  return {
    metricsPort: server?.port ?? 0,
    failed,
    stop() {
      stopping ??= (async () => {
        logger.info('stopping: finishing the chunk in flight');
        await consumer!.stop().catch((error: unknown) => logger.error('consumer stop failed', { error }));
        if (snapshotting) await snapshotting;
        await snapshot('shutdown').catch((error: unknown) => {
          metrics.errors.inc({ code: errorCode(error) });
          logger.error('snapshot at shutdown failed; the next start replays more of the changelog', { error });
        });
        await producer.disconnect().catch(() => undefined);
        await pool?.close().catch(() => undefined);
        await server?.close();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}
