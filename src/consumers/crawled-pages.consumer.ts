/**
 * The consumer group on the crawled-pages topic. Batch-first: a fetched batch
 * is cut into chunks of maxBatchRecords; each chunk is decoded, decided and
 * committed in one transaction (verdicts + dead letters + changelog + input
 * offsets), then its offsets are resolved and the consumer heartbeats. Offsets
 * are committed only inside that transaction, never by the consumer itself.
 *
 * One instance must see every page (the index is not sharded): at start-up a
 * group that already has members is refused (or warned about, by config), and
 * a group seen with more than one member after a rebalance is reported loudly.
 */
import type { Admin, Consumer, ConsumerConfig, EachBatchPayload, Kafka } from 'kafkajs';
import type { DedupConfig } from '../config.js';
import { DedupError, errorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { kafkaClientId } from '../kafka/client.js';
import type { DedupMetrics } from '../metrics/metrics.js';
import type { VerdictProducer } from '../producers/verdict.producer.js';
import type { InputRecord, PageBatchProcessor, PreparedChunk, ProcessedChunk } from './page-batch-processor.js';
import { trackConsumerHealth, type ConsumerHealth } from './consumer-health.js';

export interface CrawledPagesConsumerOptions {
  kafka: Kafka;
  config: DedupConfig;
  processor: PageBatchProcessor;
  producer: VerdictProducer;
  metrics: DedupMetrics;
  logger: Logger;
  /** Called after every committed chunk (snapshots, eviction). */
  afterCommit?: (chunk: ProcessedChunk) => Promise<void>;
  /** Called when the consumer cannot go on (fenced, or a crash kafkajs will not restart from). */
  onFatal: (error: unknown) => void;
}

export interface CrawledPagesConsumer {
  start(): Promise<void>;
  /** Finishes the chunk in flight, then leaves the group. */
  stop(): Promise<void>;
  readonly joined: boolean;
}

async function groupMembers(admin: Admin, groupId: string, ownClientId = ''): Promise<{ state: string; members: number; others: number }> {
  const { groups } = await admin.describeGroups([groupId]);
  const group = groups[0];
  const members = group?.members ?? [];
  // A member with our client id is this instance's predecessor (killed before
  // its session expired): the group coordinator drops it at the next rebalance.
  return { state: group?.state ?? 'Unknown', members: members.length, others: members.filter((m) => m.clientId !== ownClientId).length };
}

/** Cuts a fetched batch into chunks of at most `size` records: one transaction each. */
export function splitChunks(batch: EachBatchPayload['batch'], size: number): InputRecord[][] {
  const chunks: InputRecord[][] = [];
  const messages = batch.messages;
  for (let start = 0; start < messages.length; start += size) {
    chunks.push(messages.slice(start, start + size).map((m) => ({ partition: batch.partition, offset: m.offset, key: m.key, value: m.value, timestamp: m.timestamp })));
  }
  return chunks;
}

/** The per-chunk metrics, once its transaction has committed. */
export function recordChunkMetrics(metrics: DedupMetrics, batch: EachBatchPayload['batch'], records: readonly InputRecord[], chunk: ProcessedChunk): void {
  const now = Date.now();
  let bytes = 0;
  for (const r of records) bytes += r.value?.length ?? 0;
  metrics.pagesConsumed.inc({ topic: batch.topic }, records.length);
  metrics.pageBytes.inc(bytes);
  metrics.batchSize.observe(records.length);
  if (chunk.novel) metrics.verdicts.inc({ verdict: 'novel' }, chunk.novel);
  if (chunk.duplicates) metrics.verdicts.inc({ verdict: 'duplicate' }, chunk.duplicates);
  for (const [reason, count] of chunk.deadLetters) {
    metrics.deadLetters.inc({ reason }, count);
    metrics.errors.inc({ code: reason }, count);
  }
  for (const ts of chunk.timestamps) if (ts > 0 && ts <= now) metrics.verdictLatency.observe((now - ts) / 1000);
  const last = records[records.length - 1]!.offset;
  const lag = Number(batch.highWatermark) - 1 - Number(last);
  metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Math.max(0, lag));
}

/**
 * The chunk loop both consumers share. It cuts a fetched batch into chunks
 * and prepares chunk i + 1 (decode, fingerprint: no state touched) while
 * chunk i is decided and committed by `commit`, so the worker threads are not
 * idle during the transaction; after each committed chunk it resolves the
 * chunk's offset, records its metrics, runs the housekeeping and heartbeats.
 * A retriable failure while preparing (a registry outage) is thrown, so that
 * kafkajs retries the batch from the last resolved offset; any other is
 * fatal. `commit` returns null to end the batch (halted, or given up).
 */
export async function runChunks(
  payload: EachBatchPayload,
  options: {
    maxRecords: number;
    processor: PageBatchProcessor;
    metrics: DedupMetrics;
    /** False once the consumer has halted: nothing more is prepared or committed. */
    active: () => boolean;
    onFatal: (error: unknown) => void;
    commit: (records: InputRecord[], prepared: PreparedChunk) => Promise<ProcessedChunk | null>;
    afterCommit?: (chunk: ProcessedChunk) => Promise<void>;
  },
): Promise<void> {
  const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
  const { processor, metrics } = options;
  const chunks = splitChunks(batch, options.maxRecords);
  // A prepared chunk that is never used (the batch went stale) is dropped;
  // its rejection is observed here.
  const prepare = (records: InputRecord[]) => {
    const prepared = processor.prepare(records);
    prepared.catch(() => undefined);
    return prepared;
  };
  let upcoming = chunks.length > 0 ? prepare(chunks[0]!) : null;
  for (let c = 0; c < chunks.length; c++) {
    if (!options.active() || !isRunning() || isStale()) return;
    const records = chunks[c]!;
    const endTimer = metrics.batchDuration.startTimer();
    let prepared: PreparedChunk;
    try {
      prepared = await upcoming!;
    } catch (error) {
      metrics.errors.inc({ code: errorCode(error) });
      if (error instanceof DedupError && error.retriable) throw error;
      options.onFatal(error);
      return;
    }
    upcoming = c + 1 < chunks.length ? prepare(chunks[c + 1]!) : null;
    const chunk = await options.commit(records, prepared);
    if (chunk === null) return;
    resolveOffset(records[records.length - 1]!.offset);
    endTimer();
    recordChunkMetrics(metrics, batch, records, chunk);
    if (options.afterCommit) await options.afterCommit(chunk);
    await heartbeat();
  }
}

/**
 * The consumer group on the crawled-pages topic, as both modes join it: its
 * timeouts, its health (readiness), and its crashes (counted, logged; fatal
 * when kafkajs will not restart it).
 */
export function pagesGroupConsumer(options: {
  kafka: Kafka;
  config: DedupConfig;
  metrics: DedupMetrics;
  logger: Logger;
  onFatal: (error: unknown) => void;
  partitionAssigners?: ConsumerConfig['partitionAssigners'];
  /** Sharded mode notices a dead member sooner (see sharded-pages.consumer.ts). */
  sessionTimeout?: number;
  heartbeatInterval?: number;
}): { consumer: Consumer; health: ConsumerHealth } {
  const { kafka, config, metrics, logger, onFatal } = options;
  const consumer: Consumer = kafka.consumer({
    groupId: config.groupId,
    // kafkajs heartbeats only between chunks, so a chunk (and a snapshot)
    // must finish well inside this; it is also how long a killed instance's
    // partitions wait before a restarted one gets them.
    sessionTimeout: options.sessionTimeout ?? 20_000,
    heartbeatInterval: options.heartbeatInterval ?? 3_000,
    rebalanceTimeout: 60_000,
    // Large enough that a fetch fills a whole chunk of maxBatchRecords
    // 30 KB pages: with 4 MiB a transaction carried ~130 pages at most.
    maxBytesPerPartition: 16 * 1024 * 1024,
    readUncommitted: false,
    allowAutoTopicCreation: false,
    ...(options.partitionAssigners ? { partitionAssigners: options.partitionAssigners } : {}),
  });
  const health = trackConsumerHealth(consumer);
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    metrics.errors.inc({ code: errorCode(payload.error) === 'UNKNOWN' ? 'KAFKA' : errorCode(payload.error) });
    logger.error('consumer crashed', { error: payload.error, restart: payload.restart });
    if (!payload.restart) onFatal(payload.error);
  });
  return { consumer, health };
}

export function createCrawledPagesConsumer(options: CrawledPagesConsumerOptions): CrawledPagesConsumer {
  const { kafka, config, processor, producer, metrics, logger, afterCommit, onFatal } = options;
  const { consumer, health } = pagesGroupConsumer({ kafka, config, metrics, logger, onFatal });
  /** Set at the first fatal error: nothing commits after it, whatever partition. */
  let halted = false;
  const halt = (error: unknown): void => {
    halted = true;
    onFatal(error);
  };

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const admin = kafka.admin();
    admin
      .connect()
      .then(() => groupMembers(admin, config.groupId, kafkaClientId(config)))
      .then(({ members, others }) => {
        metrics.groupMembers.set(members);
        logger.info('joined consumer group', { groupId: config.groupId, memberId: payload.memberId, members, assignment: payload.memberAssignment });
        // Members with our client id are this instance's killed predecessor,
        // still waiting out its session: not another instance.
        if (others > 0) {
          metrics.errors.inc({ code: 'GROUP_NOT_EXCLUSIVE' });
          logger.error('ANOTHER INSTANCE IS IN THIS CONSUMER GROUP: the index is not sharded, so near-duplicates split across instances will be missed', {
            groupId: config.groupId,
            members,
          });
        }
      })
      .catch((error: unknown) => logger.warn('could not describe the consumer group', { error }))
      .finally(() => void admin.disconnect().catch(() => undefined));
  });

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Math.max(0, Number(batch.offsetLag())));
    await runChunks(payload, {
      maxRecords: config.maxBatchRecords,
      processor,
      metrics,
      active: () => !halted,
      onFatal: halt,
      // From here on the decider's memory holds this chunk's decisions. If
      // deciding fails, or the transaction fails or its outcome is unknown,
      // memory is ahead of what downstream saw, and a later chunk (of any
      // partition) could commit a verdict naming a page that then never
      // existed downstream. So any failure here is fatal: the process
      // restarts from durable state (snapshot + changelog), never goes on.
      commit: async (records, prepared) => {
        const last = records[records.length - 1]!.offset;
        try {
          const chunk = await processor.decide(prepared);
          if (halted) return null;
          chunk.written = await producer.commit(chunk.topicMessages, config.groupId, { topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() });
          metrics.transactions.inc({ outcome: 'committed' });
          return chunk;
        } catch (error) {
          metrics.errors.inc({ code: errorCode(error) });
          if (error instanceof DedupError && error.code === 'KAFKA') metrics.transactions.inc({ outcome: 'aborted' });
          halt(error);
          return null;
        }
      },
      // Housekeeping (eviction, snapshots) must never stop consumption.
      afterCommit: async (chunk) => {
        if (!afterCommit) return;
        await afterCommit(chunk).catch((error: unknown) => {
          metrics.errors.inc({ code: errorCode(error) });
          logger.error('after-commit housekeeping failed', { error });
        });
      },
    });
  }

  return {
    /** In the group and fetching (not merely joined once). */
    get joined() {
      return health.consuming;
    },
    async start() {
      const admin = kafka.admin();
      try {
        await admin.connect();
        const { state, others } = await groupMembers(admin, config.groupId, kafkaClientId(config));
        if (others > 0) {
          const message = `consumer group ${config.groupId} already has ${others} member(s) of other instances (state ${state}); this index is not sharded, so a second instance would miss near-duplicates split between the two`;
          if (config.singleInstance === 'refuse') throw new DedupError('GROUP_NOT_EXCLUSIVE', message);
          metrics.errors.inc({ code: 'GROUP_NOT_EXCLUSIVE' });
          logger.error(message);
        }
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
      await consumer.connect();
      await consumer.subscribe({ topics: [config.pagesTopic], fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 1, eachBatch });
    },
    async stop() {
      await consumer.stop();
      await consumer.disconnect();
    },
  };
}
