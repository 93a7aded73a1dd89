/**
 * Wires the application: config in, a running pipeline out. The only module
 * that knows every part; the entry point (cli/main.ts) owns signals and the
 * exit code.
 *
 * Start-up is a short list of named steps. Each step that opens something
 * pushes its closer; if any step fails, everything opened so far is closed in
 * reverse and the error propagates, so a failed start exits instead of
 * leaving a half-started process (a metrics server answering /healthz 200
 * for a pipeline that will never consume).
 *
 * The codec step waits, unready, for a schema registry that does not answer
 * (codecWhenRegistryAnswers): that is an outage, not a failed start.
 *
 * mode=single (the embedded default):
 *   topics → metrics server → codec + fingerprinting → snapshot → fence the
 *   predecessor → changelog replay → join the group
 * mode=sharded (src/consumers/sharded-pages.consumer.ts):
 *   topics → metrics server → codec + fingerprinting → internal log appender
 *   → answers tail → shard holder (sequence tail) → join the group, whose
 *   assignment names the shards to restore
 * mode=routed (src/kafka/routed-owner.ts, src/kafka/routed-holder.ts):
 *   topics → metrics server → codec + fingerprinting → log appender → index
 *   holder (order and index tail) → replies tail → join the group, whose
 *   assignment names the index partitions to replay
 */
import { Registry } from 'prom-client';
import type { DedupConfig } from '../config.js';
import { DedupError, errorCode } from '../errors.js';
import { availableParallelism } from 'node:os';
import { createFingerprinter } from '../fingerprint/index.js';
import { createPreparePool, type PreparePool } from '../chunk/prepare-pool.js';
import { describePlan } from '../index/index.js';
import { createDecider, featureOptionsFromConfig, fingerprintVersionOf, planFromConfig, samePlan, secondStageFromConfig } from '../dedup/create-decider.js';
import type { Decider } from '../dedup/decider.js';
import { createMetrics, type MetricsState } from '../metrics/metrics.js';
import { startMetricsServer, type MetricsServer } from '../metrics/metrics-server.js';
import { createRecordCodecFromConfig, type RegistryCodecOptions } from '../wire/record-codec.js';
import { createPageBatchProcessor, type PageBatchProcessor, type ProcessorTopics } from '../chunk/page-batch-processor.js';
import { createCrawledPagesConsumer, type CrawledPagesConsumer } from '../consumers/crawled-pages.consumer.js';
import { replayChangelog } from '../kafka/changelog-replay.js';
import { clusterId, endOffsets, topicRecordLimits } from '../kafka/admin.js';
import { createVerdictProducer } from '../kafka/verdict-producer.js';
import { createLogAppender } from '../kafka/log-appender.js';
import { createAnswerTail } from '../consumers/answers.consumer.js';
import { createShardHolder, type ShardHolder } from '../consumers/sequence.consumer.js';
import { createShardedPagesConsumer, type ShardedPagesConsumer } from '../consumers/sharded-pages.consumer.js';
import type { ShardState } from '../dedup/shard-state.js';
import { createKafka, ensureTopics } from '../kafka/client.js';
import { addTraffic, createRoutedHolder, routedTrafficCounts, type RoutedHolder } from '../kafka/routed-holder.js';
import { createRoutedOwner, type RoutedOwner } from '../kafka/routed-owner.js';
import type { Logger } from '../logger.js';
import { readSnapshot, writeSnapshot } from './state-snapshot.js';
import { filePageTier } from '../storage/file-blob-store.js';
import { join as joinPath } from 'node:path';
import { performance } from 'node:perf_hooks';

/**
 * The named fields of the config and no others: below start-up each
 * component gets the narrow options it declares, not the whole config.
 */
function pick<K extends keyof DedupConfig>(config: DedupConfig, keys: readonly K[]): Pick<DedupConfig, K> {
  return Object.freeze(Object.fromEntries(keys.map((key) => [key, config[key]]))) as Pick<DedupConfig, K>;
}

/** Where a chunk came from and where its outputs go. */
function processorTopics(config: DedupConfig): ProcessorTopics {
  return {
    sourceTopic: config.pagesTopic,
    novelTopic: config.novelTopic,
    duplicateTopic: config.duplicateTopic,
    deadLetterTopic: config.deadLetterTopic,
    fingerprintsTopic: config.fingerprintsTopic,
  };
}

/** The page store's disk tier: scratch files under the state directory (src/storage/file-blob-store.ts). */
function pageTierIn(dir: string): ReturnType<typeof filePageTier> {
  return filePageTier(joinPath(dir, 'page-tier'));
}

export interface Pipeline {
  readonly metricsPort: number;
  /** Resolves when the pipeline stops by itself (a fatal error); never rejects. */
  readonly failed: Promise<unknown>;
  /** Graceful stop: finish the chunk in flight, commit, snapshot, disconnect. */
  stop(): Promise<void>;
}

/** What start-up opened, closed in reverse on a failed start or a stop. */
class Closers {
  private readonly stack: { name: string; close: () => Promise<unknown> }[] = [];
  constructor(private readonly logger: Logger) {}
  push(name: string, close: () => Promise<unknown>): void {
    this.stack.push({ name, close });
  }
  async closeAll(): Promise<void> {
    while (this.stack.length > 0) {
      const { name, close } = this.stack.pop()!;
      await close().catch((error: unknown) => this.logger.warn(`closing ${name} failed`, { error }));
    }
  }
}

/** Consecutive failed registry calls after which the pipeline says it is not ready (it cannot decode Avro records). */
const REGISTRY_FAILURES_NOT_READY = 3;

/** Pause before start-up attempt `attempt + 1` at the registry: 1 s, 2 s, 4 s ... capped at 30 s. */
export function registryRetryDelayMs(attempt: number, firstMs = 1000, capMs = 30_000): number {
  return Math.min(capMs, firstMs * 2 ** Math.min(Math.max(0, attempt - 1), 30));
}

/**
 * Builds the codec, which registers our schemas. A registry that does not
 * answer (stopped, frozen, unreachable) is an outage to wait out, not a
 * reason to exit: exiting would crash-loop under a supervisor for as long as
 * it lasts. So the instance stays up, unready, and retries with a growing
 * pause, logging each attempt, with dedup_registry_available at 0. A
 * registry that answers and refuses (409, 422, 401) is not retried: that is a
 * configuration to fix.
 */
async function codecWhenRegistryAnswers(config: RegistryCodecOptions, logger: Logger, metrics: ReturnType<typeof createMetrics>, available: (up: boolean) => void) {
  for (let attempt = 1; ; attempt++) {
    try {
      const codec = await createRecordCodecFromConfig(config);
      if (attempt > 1) logger.info('schema registry answers; start-up goes on', { attempts: attempt });
      available(true);
      return codec;
    } catch (error) {
      // An HTTP status below 500 is an answer (a refusal, bad credentials): retrying would not change it.
      const status = error instanceof DedupError ? (error.cause as { status?: unknown } | undefined)?.status : undefined;
      const answered = typeof status === 'number' && status < 500;
      if (!(error instanceof DedupError && error.code === 'REGISTRY' && error.retriable) || answered) throw error;
      available(false);
      metrics.errors.inc({ code: 'REGISTRY' });
      const delayMs = registryRetryDelayMs(attempt);
      logger.error('schema registry unavailable at start-up: not ready, retrying', { attempt, retryInSeconds: delayMs / 1000, error });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** The parts both modes share, opened in order. */
async function startCommon(config: DedupConfig, logger: Logger, closers: Closers, consumerReady: () => boolean, registry: Registry, state: Omit<MetricsState, 'ready'>) {
  // Ready = the mode's own condition (index loaded, consumer in its group and
  // deciding: consumer-health.ts) and a registry that answers: a hung registry
  // stalls decoding.
  let registryAnswers = (): boolean => true;
  const ready = (): boolean => consumerReady() && registryAnswers();
  let registryAvailable = (): boolean => true;
  const metrics = createMetrics(registry, { ...state, ready, registryAvailable: () => registryAvailable() });
  const kafka = createKafka(config, logger);
  // Topics first: nothing listens or spawns before the cluster has answered.
  if (config.createTopics) {
    // A busy broker can refuse a fresh topic's leader for a moment; try a few times before giving up.
    for (let attempt = 1; ; attempt++) {
      try {
        await ensureTopics(kafka, config, logger);
        break;
      } catch (error) {
        const leaderNotYet = /does not host this topic-partition|LEADER_NOT_AVAILABLE|leader/i.test((error as Error).message);
        if (!leaderNotYet || attempt >= 4) throw error;
        logger.warn('creating topics failed; retrying', { attempt, error });
        await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
      }
    }
  }
  let server: MetricsServer | null = null;
  if (config.metricsPort > 0) {
    server = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, registry, ready });
    closers.push('metrics server', () => server!.close());
    logger.info('metrics server listening', { host: config.metricsHost, port: server.port });
  }
  const maxRecordBytes = await topicRecordLimits(kafka, [config.novelTopic, config.duplicateTopic, config.deadLetterTopic]);
  const codec = await codecWhenRegistryAnswers(config, logger, metrics, (up) => (registryAvailable = () => up));
  registryAnswers = () => codec.registryHealth().consecutiveFailures < REGISTRY_FAILURES_NOT_READY;
  registryAvailable = () => codec.registryHealth().consecutiveFailures === 0;
  const fingerprinter = await createFingerprinter(featureOptionsFromConfig(config));
  const threads = config.fingerprintThreads === 0 ? (availableParallelism() >= 2 ? availableParallelism() : 0) : Math.max(0, config.fingerprintThreads);
  // With workers, records are decoded, fingerprinted and their novel verdicts encoded there; without, all of it here.
  const preparePool: PreparePool | null = threads > 0 ? await createPreparePool({ codec, threads, features: featureOptionsFromConfig(config) }) : null;
  if (preparePool) closers.push('prepare pool', () => preparePool.close());
  logger.info('fingerprinting', { workerThreads: threads });
  const version = fingerprintVersionOf(config);
  return { metrics, kafka, server, codec, fingerprinter, preparePool, maxRecordBytes, fingerprintVersion: version };
}

type Common = Awaited<ReturnType<typeof startCommon>>;

/** The chunk processor of every mode: the decider is single mode's; the other modes decide through their index partitions or shards. */
function batchProcessor(config: DedupConfig, common: Common, decider: Decider | null): PageBatchProcessor {
  return createPageBatchProcessor({
    topics: processorTopics(config),
    codec: common.codec,
    fingerprinter: common.fingerprinter,
    preparePool: common.preparePool,
    decider,
    metrics: common.metrics,
    maxDeadLetterBytes: config.maxPageBytes * 2,
    maxRecordBytes: common.maxRecordBytes,
    fingerprintVersion: common.fingerprintVersion,
  });
}

/** A started pipeline: `stop` runs the mode's shutdown once, however often it is called. */
function pipelineHandle(common: Common, failed: Promise<unknown>, logger: Logger, shutdown: () => Promise<void>): Pipeline {
  let stopping: Promise<void> | null = null;
  return {
    metricsPort: common.server?.port ?? 0,
    failed,
    stop() {
      stopping ??= (async () => {
        logger.info('stopping: finishing the chunk in flight');
        await shutdown();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}

export async function startPipeline(config: DedupConfig, logger: Logger, registry: Registry = new Registry()): Promise<Pipeline> {
  const closers = new Closers(logger);
  try {
    if (config.mode === 'routed') return await startRouted(config, logger, registry, closers);
    return config.mode === 'sharded' ? await startSharded(config, logger, registry, closers) : await startSingle(config, logger, registry, closers);
  } catch (error) {
    await closers.closeAll();
    throw error instanceof DedupError ? error : new DedupError('KAFKA', `start-up failed: ${(error as Error).message}`, { cause: error });
  }
}

async function startSharded(config: DedupConfig, logger: Logger, registry: Registry, closers: Closers): Promise<Pipeline> {
  const plan = planFromConfig(config);
  let holder: ShardHolder | null = null;
  let consumer: ShardedPagesConsumer | null = null;
  const ready = (): boolean => consumer?.ready ?? false;
  const held = () => holder?.held ?? [];
  const sum = (f: (s: ShardState) => number) => held().reduce((total, s) => total + f(s), 0);
  const common = await startCommon(config, logger, closers, ready, registry, {
    indexFingerprints: () => sum((s) => s.size),
    indexBytes: () => sum((s) => s.byteLength),
    indexMemoryLimitBytes: () => config.memoryBudgetBytes,
    indexTables: () => plan.tables.length,
    planCandidatesPerProbe: () => describePlan(plan, Math.max(1, sum((s) => s.size))).expectedCandidatesPerProbe,
    shardSizes: () => held().map((s) => [s.shard, s.size] as [number, number]),
  });
  const { metrics, kafka, codec, maxRecordBytes, fingerprintVersion: version } = common;

  let fail!: (error: unknown) => void;
  const failed = new Promise<unknown>((resolve) => (fail = resolve));
  const appender = createLogAppender(kafka);
  const answers = createAnswerTail({ kafka, config: pick(config, ['answersTopic', 'shards', 'groupId', 'instanceId']), metrics, logger });
  // Independent round trips, at once: a restarted instance is ready sooner.
  const [appenderUp, answersUp, clusterUp] = await Promise.allSettled([appender.connect(), answers.start(), clusterId(kafka)]);
  if (appenderUp.status === 'fulfilled') closers.push('log appender', () => appender.disconnect());
  if (answersUp.status === 'fulfilled') closers.push('answers tail', () => answers.stop());
  for (const outcome of [appenderUp, answersUp, clusterUp]) if (outcome.status === 'rejected') throw outcome.reason;
  const cluster = (clusterUp as PromiseFulfilledResult<string>).value;
  holder = createShardHolder({
    kafka,
    clusterId: cluster,
    fingerprintVersion: version,
    snapshots: { read: (dir, tier) => readSnapshot(dir, tier ? { pageTier: tier } : {}), write: writeSnapshot, tier: pageTierIn },
    config: pick(config, ['sequenceTopic', 'answersTopic', 'fingerprintsTopic', 'shards', 'groupId', 'instanceId', 'maxFingerprints', 'stateDir', 'snapshotIntervalSeconds', 'k', 'secondStageRadius', 'secondStageSimilarity', 'secondStageBands']),
    plan,
    codec,
    appender,
    metrics,
    logger,
    onFatal: (error) => fail(error),
  });
  await holder.start();
  closers.push('shard holder', () => holder!.stop());
  const processor = batchProcessor(config, common, null);
  consumer = createShardedPagesConsumer({ kafka, config, processor, appender, answers, holder, metrics, logger, maxRecordBytes, onFatal: (error) => fail(error) });
  await consumer.start();
  closers.push('consumer', () => consumer!.stop());
  logger.info('sharded pipeline started', { shards: config.shards, plan: { k: plan.k, blocks: plan.blockWidths, tables: plan.tables.length } });

  return pipelineHandle(common, failed, logger, () => closers.closeAll());
}

async function startRouted(config: DedupConfig, logger: Logger, registry: Registry, closers: Closers): Promise<Pipeline> {
  const plan = planFromConfig(config);
  let holder: RoutedHolder | null = null;
  let owner: RoutedOwner | null = null;
  const ready = (): boolean => owner?.ready ?? false;
  const held = () => holder?.held ?? [];
  const common = await startCommon(config, logger, closers, ready, registry, {
    indexFingerprints: () => held().reduce((n, s) => n + s.size, 0),
    indexBytes: () => held().reduce((n, s) => n + s.index.byteLength + s.store.byteLength + (s.bands?.byteLength ?? 0), 0),
    indexMemoryLimitBytes: () => config.memoryBudgetBytes,
    indexTables: () => plan.tables.length,
    planCandidatesPerProbe: () => describePlan(plan, Math.max(1, held().reduce((n, s) => n + s.size, 0))).expectedCandidatesPerProbe,
    shardSizes: () => held().map((s) => [s.partition, s.size] as [number, number]),
    routedTraffic: () => (owner && holder ? routedTrafficCounts(addTraffic(owner.traffic(), holder.traffic())) : []),
  });
  const { metrics, kafka, maxRecordBytes } = common;
  let fail!: (error: unknown) => void;
  const failed = new Promise<unknown>((resolve) => (fail = resolve));
  const appender = createLogAppender(kafka);
  await appender.connect();
  closers.push('log appender', () => appender.disconnect());
  const topics = { pages: config.pagesTopic, index: config.indexTopic, order: config.orderTopic, replies: config.repliesTopic, ids: config.idsTopic };
  const secondStage = secondStageFromConfig(config);
  holder = createRoutedHolder({ kafka, topics, groupId: config.groupId, instanceId: config.instanceId, plan, indexPartitions: config.indexPartitions, k: config.k, secondStage, appender, tierDir: joinPath(config.stateDir, 'routed-tier'), metrics, logger, onFatal: (error) => fail(error) });
  await holder.start();
  closers.push('index holder', () => holder!.stop());
  const processor = batchProcessor(config, common, null);
  owner = createRoutedOwner({
    kafka,
    topics,
    standbyTopic: config.standbyReplicas > 0 ? config.standbyTopic : null,
    groupId: config.groupId,
    instanceId: config.instanceId,
    maxBatchRecords: config.maxBatchRecords,
    indexPartitions: config.indexPartitions,
    plan,
    secondStage,
    processor,
    appender,
    holder,
    metrics,
    logger,
    maxRecordBytes,
    onFatal: (error) => fail(error),
  });
  await owner.start();
  closers.push('consumer', () => owner!.stop());
  logger.info('routed pipeline started', { indexPartitions: config.indexPartitions, plan: { k: plan.k, blocks: plan.blockWidths, tables: plan.tables.length } });
  // Main-thread time from here on (fingerprinting runs on the worker threads): the coordination bench reads it from the stop line.
  const loopBefore = performance.eventLoopUtilization();
  return pipelineHandle(common, failed, logger, async () => {
    const loop = performance.eventLoopUtilization(loopBefore);
    await closers.closeAll();
    const o = owner!.traffic();
    const h = holder!.traffic();
    logger.info('routed traffic', {
      assignments: o.takeovers,
      indexReplays: h.takeovers,
      committedRecords: o.committedRecords,
      chunks: o.chunks,
      roundTwoAsks: o.roundTwoAsks,
      roundTrips: o.roundTrips,
      readBytes: o.readBytes + h.readBytes,
      readRecords: o.readRecords + h.readRecords,
      writtenBytes: o.writtenBytes + h.writtenBytes,
      writtenRecords: o.writtenRecords + h.writtenRecords,
      byKind: addTraffic(o, h).byKind,
      mainThreadBusyMs: Math.round(loop.active),
    });
  });
}

async function startSingle(config: DedupConfig, logger: Logger, registry: Registry, closers: Closers): Promise<Pipeline> {
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
