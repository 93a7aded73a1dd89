/**
 * The consumer group on the crawled-pages topic. Batch-first: a fetched batch
 * is cut into chunks of maxBatchRecords; each chunk is decoded, decided and
 * committed in a transaction with its verdicts, dead letters, changelog
 * entries and input offsets, then its offsets are resolved and the consumer
 * heartbeats. Offsets are committed only inside that transaction, never by
 * the consumer itself. Partitions are consumed concurrently, and the chunks
 * they decide meanwhile share a transaction (src/producers/group-commit.ts).
 *
 * One instance must see every page (the index is not sharded): at start-up a
 * group that already has members is refused (or warned about, by config), and
 * a group seen with more than one member after a rebalance is reported loudly.
 */
import type { Admin, Consumer, ConsumerConfig, EachBatchPayload, Kafka } from 'kafkajs';
import { DedupError, errorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { kafkaClientId } from '../kafka/client.js';
import type { DedupMetrics } from '../metrics/metrics.js';
import type { VerdictProducer } from '../kafka/verdict-producer.js';
import type { InputRecord, PageBatchProcessor, PreparedChunk, ProcessedChunk } from '../chunk/page-batch-processor.js';
import { trackConsumerHealth, type ConsumerHealth, type ProgressWatch } from './consumer-health.js';
import { createGroupCommitter, type CommitReceipt } from '../producers/group-commit.js';

/** Batches (input partitions) consumed at once; more than any input topic here has partitions. */
const PARTITIONS_CONSUMED_CONCURRENTLY = 64;
/** How long a batch runs before it gives way to partitions waiting for the next fetch. */
export const YIELD_BATCH_AFTER_MS = 200;

/** Runs the functions given to it one at a time, in call order. */
export function createSerialLock(): <T>(f: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(f: () => Promise<T>): Promise<T> => {
    const run = tail.then(f);
    tail = run.catch(() => undefined);
    return run;
  };
}

/** The group on the crawled-pages topic, as both modes join it, and its chunk size. */
export interface PagesGroupOptions {
  readonly groupId: string;
  readonly pagesTopic: string;
  readonly maxBatchRecords: number;
}

/** Single mode adds who this instance is (to tell its predecessor from other members) and what to do about other members. */
export interface CrawledPagesOptions extends PagesGroupOptions {
  readonly clientId: string;
  readonly instanceId: string;
  readonly singleInstance: 'refuse' | 'warn';
  /** How long a transaction waits at most for the other partitions' first chunks of the same fetch (config commitLingerMs). */
  readonly commitLingerMs: number;
}

export interface CrawledPagesConsumerOptions {
  kafka: Kafka;
  config: CrawledPagesOptions;
  processor: PageBatchProcessor;
  producer: VerdictProducer;
  metrics: DedupMetrics;
  logger: Logger;
  /**
   * Called after every committed chunk (snapshots, eviction), between
   * decisions: no chunk is being decided meanwhile. `drained` resolves once
   * every chunk decided so far is committed (what a snapshot needs).
   */
  afterCommit?: (chunk: ProcessedChunk, context: { drained: () => Promise<void> }) => Promise<void>;
  /** Called as each transaction commits, with the last offset it wrote per "topic:partition". */
  onWritten?: (written: Map<string, bigint>) => void;
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
 * A chunk's first two stages (dedup_chunk_stage_seconds): from its oldest
 * record's timestamp to its batch reaching this instance (the producer's
 * send, the broker, the wait for the fetch before to be handled), then to the
 * chunk prepared (the chunks before it in the batch, the worker pool).
 */
export function observeFetchAndPrepare(metrics: DedupMetrics, records: readonly InputRecord[], fetchedAt: number, preparedAt: number): void {
  let oldest = Infinity;
  for (const r of records) {
    const ts = Number(r.timestamp);
    if (ts > 0 && ts < oldest) oldest = ts;
  }
  if (oldest <= fetchedAt) metrics.chunkStage.observe({ stage: 'fetch' }, (fetchedAt - oldest) / 1000);
  metrics.chunkStage.observe({ stage: 'prepare' }, (preparedAt - fetchedAt) / 1000);
}

/** A chunk decided and on its way to a transaction. */
export interface ChunkCommit {
  readonly chunk: ProcessedChunk;
  /** True once the chunk's transaction has committed; false if it failed (the consumer has halted). */
  readonly committed: Promise<boolean>;
  /**
   * When set, the batch moves past the chunk once this is true, before its
   * transaction ends: its offset is resolved (the next fetch reads past it)
   * and the loop goes on. Its metrics, housekeeping and progress still wait
   * for `committed`. False ends the batch, as a failed commit does.
   */
  readonly released?: Promise<boolean>;
}

/** For a `commit` that returns only once the chunk's transaction has committed. */
export function committedChunk(chunk: ProcessedChunk): ChunkCommit {
  return { chunk, committed: Promise.resolve(true) };
}

/**
 * Drops the lag series of `topic`'s partitions this instance no longer owns.
 * A gauge keeps its last value per label set: without this, a partition that
 * moved to another instance would be reported by both, its old owner's value
 * frozen at the moment it left.
 */
export async function forgetLagOfUnowned(lag: DedupMetrics['consumerLag'], topic: string, owned: Iterable<number>): Promise<void> {
  const keep = new Set([...owned].map(String));
  for (const { labels } of (await lag.get()).values) {
    if (labels.topic === topic && !keep.has(String(labels.partition))) lag.remove({ topic, partition: String(labels.partition) });
  }
}

/**
 * The chunk loop both consumers share. It cuts a fetched batch into chunks
 * and prepares chunk i + 1 (decode, fingerprint: no state touched) while
 * chunk i is decided and committed by `commit`, so the worker threads are not
 * idle during the transaction. `commit` may return before the transaction
 * ends (`committed` then settles later): with `maxOutstanding` 2, chunk i + 1
 * is then decided while chunk i's transaction is in flight.
 * After each committed chunk, in order, it resolves the chunk's offset,
 * records its metrics, runs the housekeeping and heartbeats. It returns only
 * when every chunk it started has settled, so a stopping consumer never
 * leaves a transaction behind. A retriable failure while preparing (a
 * registry outage) is thrown, so that kafkajs retries the batch from the last
 * resolved offset; any other is fatal. `commit` returns null to end the batch
 * (halted, or given up); `yieldBatch` returning true after a committed chunk
 * ends it too, leaving the rest to the next fetch.
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
    commit: (records: InputRecord[], prepared: PreparedChunk) => Promise<ChunkCommit | null>;
    afterCommit?: (chunk: ProcessedChunk) => Promise<void>;
    yieldBatch?: () => boolean;
    /** Chunks decided and not yet settled at most: 2 decides the next chunk while the last one's transaction is in flight. */
    maxOutstanding?: 1 | 2;
    /** Readiness: told when records wait and when verdicts commit. */
    progress?: ProgressWatch;
    /**
     * Given the work a released chunk still has once the batch has moved past
     * it (metrics, housekeeping after its commit): a stopping consumer waits
     * for it.
     */
    track?: (after: Promise<void>) => void;
  },
): Promise<void> {
  const { batch } = payload;
  const { progress } = options;
  // Records behind the last committed (or released) chunk still wait once this batch is over, whatever ended it.
  let done = BigInt(batch.messages[0]?.offset ?? batch.highWatermark) - 1n;
  progress?.begin(batch.partition);
  try {
    await chunkLoop(payload, options, {
      passed: (offset) => {
        done = BigInt(offset);
      },
      committed: () => progress?.committed(),
    });
  } finally {
    progress?.end(batch.partition, Math.max(0, Number(BigInt(batch.highWatermark) - 1n - done)));
  }
}

async function chunkLoop(
  payload: EachBatchPayload,
  options: Parameters<typeof runChunks>[1],
  on: { passed: (offset: string) => void; committed: () => void },
): Promise<void> {
  const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
  const { processor, metrics } = options;
  const chunks = splitChunks(batch, options.maxRecords);
  const fetchedAt = Date.now();
  // A prepared chunk that is never used (the batch went stale) is dropped;
  // its rejection is observed here.
  const prepare = (records: InputRecord[]) => {
    const prepared = processor.prepare(records);
    prepared.catch(() => undefined);
    return prepared;
  };
  type Outstanding = { records: InputRecord[]; commit: ChunkCommit; endTimer: () => void };
  const outstanding: Outstanding[] = [];
  let ended = false;
  /** Waits for the oldest outstanding chunk's transaction; false ends the batch. */
  const settle = async (): Promise<boolean> => {
    const { records, commit, endTimer } = outstanding.shift()!;
    const last = records[records.length - 1]!.offset;
    const afterCommit = async (): Promise<void> => {
      on.committed();
      endTimer();
      recordChunkMetrics(metrics, batch, records, commit.chunk);
      if (options.afterCommit) await options.afterCommit(commit.chunk);
    };
    if (commit.released !== undefined) {
      if (!(await commit.released) || ended) return false;
      resolveOffset(last);
      on.passed(last);
      const after = commit.committed.then((ok) => (ok ? afterCommit() : undefined));
      options.track?.(after);
      await heartbeat();
      return true;
    }
    if (!(await commit.committed) || ended) return false;
    resolveOffset(last);
    on.passed(last);
    await afterCommit();
    await heartbeat();
    return true;
  };
  const settleAll = async (): Promise<void> => {
    while (outstanding.length > 0) if (!(await settle())) ended = true;
  };
  let upcoming = chunks.length > 0 ? prepare(chunks[0]!) : null;
  for (let c = 0; c < chunks.length && !ended; c++) {
    if (!options.active() || !isRunning() || isStale()) break;
    const records = chunks[c]!;
    const endTimer = metrics.batchDuration.startTimer();
    let prepared: PreparedChunk;
    try {
      prepared = await upcoming!;
      observeFetchAndPrepare(metrics, records, fetchedAt, Date.now());
    } catch (error) {
      await settleAll();
      metrics.errors.inc({ code: errorCode(error) });
      if (error instanceof DedupError && error.retriable) throw error;
      options.onFatal(error);
      return;
    }
    upcoming = c + 1 < chunks.length ? prepare(chunks[c + 1]!) : null;
    const commit = await options.commit(records, prepared);
    if (commit === null) break;
    outstanding.push({ records, commit, endTimer });
    if (outstanding.length >= (options.maxOutstanding ?? 1) && !(await settle())) ended = true;
    if (!ended && options.yieldBatch?.()) break;
  }
  await settleAll();
}

/**
 * The consumer group on the crawled-pages topic, as both modes join it: its
 * timeouts, its health (readiness), and its crashes (counted, logged; fatal
 * when kafkajs will not restart it).
 */
export function pagesGroupConsumer(options: {
  kafka: Kafka;
  config: PagesGroupOptions;
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
  const health = trackConsumerHealth(consumer, config.pagesTopic);
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const owned = (payload.memberAssignment as Record<string, number[] | undefined>)[config.pagesTopic] ?? [];
    void forgetLagOfUnowned(metrics.consumerLag, config.pagesTopic, owned).catch((error: unknown) => logger.warn('could not drop the lag of partitions moved away', { error }));
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    metrics.errors.inc({ code: errorCode(payload.error) === 'UNKNOWN' ? 'KAFKA' : errorCode(payload.error) });
    logger.error('consumer crashed', { error: payload.error, restart: payload.restart });
    if (!payload.restart) onFatal(payload.error);
  });
  return { consumer, health };
}

export function createCrawledPagesConsumer(options: CrawledPagesConsumerOptions): CrawledPagesConsumer {
  const { kafka, config, processor, producer, metrics, logger, afterCommit, onWritten, onFatal } = options;
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

  // Partitions are consumed concurrently: a partition's chunk never waits for
  // another partition's transaction of its own. Decisions are made one chunk
  // at a time (the index is one), and committed by the group committer,
  // which puts every chunk decided meanwhile into the next transaction.
  const decideLock = createSerialLock();
  /** Batches that have not queued their first chunk yet: the next transaction waits for them a little. */
  let starting = 0;
  const committer = createGroupCommitter(producer, config.groupId, {
    maxRecords: config.maxBatchRecords,
    hold: () => starting > 0,
    lingerMs: config.commitLingerMs,
    observe: (outcome, _chunks, error) => {
      metrics.transactions.inc({ outcome });
      if (error !== undefined) metrics.errors.inc({ code: errorCode(error) });
    },
  });
  /**
   * Per input partition, the last offset decided by this process. A batch
   * returns to kafkajs once its chunks are decided and queued, before their
   * transaction commits, so that the next fetch (of every partition) is not
   * held up by the commit. After a rebalance kafkajs reads the committed
   * offsets, which may lag behind chunks still queued or in flight: records
   * at or below this offset are skipped, as their verdicts are already on
   * their way. If that transaction fails the process stops, and a restart
   * starts from what was committed.
   */
  const decidedThrough = new Map<number, bigint>();
  /** Input records decided and not committed yet; a new chunk is decided only below the bound (memory, transaction size). */
  let uncommitted = 0;
  const backlogBound = 2 * config.maxBatchRecords;
  let backlogWaiters: (() => void)[] = [];
  const belowBound = async (): Promise<void> => {
    while (uncommitted >= backlogBound && !halted) await new Promise<void>((resolve) => backlogWaiters.push(resolve));
  };
  const settled = (records: number): void => {
    uncommitted -= records;
    const waiters = backlogWaiters;
    backlogWaiters = [];
    for (const wake of waiters) wake();
  };
  /** Work of released chunks still to run after their commit (metrics, housekeeping). */
  const pendingAfter = new Set<Promise<void>>();

  /** Input partitions held now (a batch yields to the others only when there are others). */
  let assigned = 0;
  /** Batches being consumed now (kafkajs fetches again once all of a fetch's batches are done). */
  let inFlight = 0;
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    assigned = Object.values(payload.memberAssignment).reduce((n, partitions) => n + partitions.length, 0);
  });

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    metrics.consumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Math.max(0, Number(batch.offsetLag())));
    const through = decidedThrough.get(batch.partition);
    if (through !== undefined && batch.messages.length > 0 && BigInt(batch.messages[0]!.offset) <= through) {
      const kept = batch.messages.filter((m) => BigInt(m.offset) > through);
      if (kept.length === 0) {
        payload.resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
        return;
      }
      payload = { ...payload, batch: Object.assign(Object.create(Object.getPrototypeOf(batch) as object) as typeof batch, batch, { messages: kept }) };
    }
    const started = Date.now();
    inFlight++;
    starting++;
    let first = true;
    /** This batch will queue no chunk before the next transaction: it holds the committer no longer. */
    const queuedFirst = () => {
      if (!first) return;
      first = false;
      starting--;
      committer.nudge();
    };
    try {
      await runChunks(payload, {
        maxRecords: config.maxBatchRecords,
        processor,
        metrics,
        active: () => !halted,
        onFatal: halt,
        progress: health.progress,
        // From here on the decider's memory holds this chunk's decisions. If
        // deciding fails, or the transaction fails or its outcome is unknown,
        // memory is ahead of what downstream saw, and a later chunk (of any
        // partition) could commit a verdict naming a page that then never
        // existed downstream. So any failure here is fatal: the process
        // restarts from durable state (snapshot + changelog), never goes on.
        commit: async (records, prepared) => {
          const preparedAt = Date.now();
          const last = records[records.length - 1]!.offset;
          let queued: { chunk: ProcessedChunk; written: Promise<CommitReceipt> } | null = null;
          try {
            await belowBound();
            queued = await decideLock(async () => {
              if (halted) return null;
              const chunk = await processor.decide(prepared);
              if (halted) return null;
              // Queued while the lock is held: transactions follow the order of decisions.
              const written = committer.submit({
                topicMessages: chunk.topicMessages,
                offsets: { topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() },
                records: records.length,
              });
              decidedThrough.set(batch.partition, BigInt(last));
              uncommitted += records.length;
              void written.then(
                () => settled(records.length),
                () => settled(records.length),
              );
              queuedFirst();
              return { chunk, written };
            });
          } catch (error) {
            metrics.errors.inc({ code: errorCode(error) });
            halt(error);
            return null;
          }
          if (queued === null) return null;
          const { chunk, written } = queued;
          const committed = written.then(
            (receipt) => {
              metrics.chunkStage.observe({ stage: 'decide' }, (receipt.queuedAt - preparedAt) / 1000);
              metrics.chunkStage.observe({ stage: 'commit_wait' }, (receipt.begunAt - receipt.queuedAt) / 1000);
              metrics.chunkStage.observe({ stage: 'transaction' }, (receipt.committedAt - receipt.begunAt) / 1000);
              chunk.written = receipt.written;
              onWritten?.(receipt.written);
              return true;
            },
            (error: unknown) => {
              halt(error);
              return false;
            },
          );
          return { chunk, committed, released: Promise.resolve(true) };
        },
        track: (after) => {
          pendingAfter.add(after);
          void after.finally(() => pendingAfter.delete(after));
        },
        // Housekeeping (eviction, snapshots) must never stop consumption. It
        // runs between decisions, so it sees no chunk half decided.
        afterCommit: (chunk) =>
          decideLock(async () => {
            if (!afterCommit) return;
            await afterCommit(chunk, { drained: () => committer.drained() }).catch((error: unknown) => {
              metrics.errors.inc({ code: errorCode(error) });
              logger.error('after-commit housekeeping failed', { error });
            });
          }),
        // A backlog on one partition must not hold up the others: kafkajs
        // fetches again only once every batch of the last fetch is done, so
        // a long batch gives way (its rest is fetched again) once it is the
        // only one left. Batches at a pace are short and never do.
        maxOutstanding: 2,
        yieldBatch: () => assigned > 1 && inFlight === 1 && Date.now() - started >= YIELD_BATCH_AFTER_MS,
      });
    } finally {
      queuedFirst();
      inFlight--;
    }
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
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: PARTITIONS_CONSUMED_CONCURRENTLY, eachBatch });
    },
    async stop() {
      await consumer.stop();
      // Batches return before their chunks commit: the last transactions,
      // and the housekeeping after them, finish before the group is left.
      await committer.drained();
      while (pendingAfter.size > 0) await Promise.allSettled([...pendingAfter]);
      await consumer.disconnect();
    },
  };
}
