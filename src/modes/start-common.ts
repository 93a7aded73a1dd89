/**
 * What every mode's start-up shares (src/modes/<mode>/start.ts): the closers
 * that undo a failed start, the named fields of the config a component gets,
 * the codec that waits for the registry, the parts every mode opens first
 * (topics, metrics server, codec, fingerprinting), the chunk processor and
 * the handle that stops a started pipeline.
 */
import type { Registry } from 'prom-client';
import type { DedupConfig } from '../config.js';
import { DedupError } from '../errors.js';
import { availableParallelism } from 'node:os';
import { createFingerprinter } from '../fingerprint/index.js';
import { createPreparePool, type PreparePool } from '../chunk/prepare-pool.js';
import { featureOptionsFromConfig, fingerprintVersionOf } from '../dedup/create-decider.js';
import type { Decider } from '../dedup/decider.js';
import { createMetrics, type MetricsState } from '../metrics/metrics.js';
import { startMetricsServer, type MetricsServer } from '../metrics/metrics-server.js';
import { createRecordCodecFromConfig, type RegistryCodecOptions } from '../wire/record-codec.js';
import { createPageBatchProcessor, type PageBatchProcessor, type ProcessorTopics } from '../chunk/page-batch-processor.js';
import { topicRecordLimits } from '../kafka/admin.js';
import { createKafka, ensureTopics } from '../kafka/client.js';
import type { Logger } from '../logger.js';
import { filePageTier } from '../storage/file-blob-store.js';
import { join as joinPath } from 'node:path';

/**
 * The named fields of the config and no others: below start-up each
 * component gets the narrow options it declares, not the whole config.
 */
export function pick<K extends keyof DedupConfig>(config: DedupConfig, keys: readonly K[]): Pick<DedupConfig, K> {
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
export function pageTierIn(dir: string): ReturnType<typeof filePageTier> {
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
export class Closers {
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
export async function startCommon(config: DedupConfig, logger: Logger, closers: Closers, consumerReady: () => boolean, registry: Registry, state: Omit<MetricsState, 'ready'>) {
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
export function batchProcessor(config: DedupConfig, common: Common, decider: Decider | null): PageBatchProcessor {
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
export function pipelineHandle(common: Common, failed: Promise<unknown>, logger: Logger, shutdown: () => Promise<void>): Pipeline {
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

