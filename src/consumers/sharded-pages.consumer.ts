/**
 * The sharded pipeline's consumer group (mode=sharded). Instances with the
 * same groupId subscribe to the crawled-pages topic and to the changelog
 * topic, whose partitions are the index shards; the group's assignment gives
 * each instance some input partitions (the stateless work: decode, HTML,
 * fingerprint, emit) and some shards (held by sequence.consumer.ts). The
 * changelog partitions are paused: they are assigned for ownership, never
 * consumed through the group.
 *
 * Per input partition, a chunk of records goes:
 *   prepare  decode + fingerprint (worker threads)            no state touched
 *   append   one probe per page to the sequence log           its offset orders the page
 *   await    the shards' answers, joined (answers.consumer.ts)
 *   emit     verdicts + dead letters + the input offsets, in ONE transaction
 * The assignment (src/kafka/shard-assigner.ts) keeps shards with the same
 * instance across restarts and, with standbyReplicas, names a warm standby
 * for each shard on another instance.
 * The transactional id is per input partition (<groupId>-<topic>-<partition>),
 * so whoever takes a partition over fences the previous owner, a zombie
 * included: kafkajs has no KIP-447 (group-generation fencing), and this is
 * what Kafka Streams did before it ("eos-alpha").
 *
 * A chunk abandoned at a rebalance (its answers need shards that are moving)
 * is decided again by the partition's next owner: its probes are appended
 * again, the home shards recognise the ids, and the reprobe gives each the
 * verdict of its first appearance.
 */
import type { EachBatchPayload, Kafka } from 'kafkajs';
import { DedupError, errorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { sourceKey, type Completion, type JoinedVerdict } from '../dedup/answer-join.js';
import type { DedupMetrics } from '../metrics/metrics.js';
import type { LogAppender } from '../kafka/log-appender.js';
import { encodeShardRecord } from '../wire/shard-records.js';
import { sketchToWire } from '../wire/sketch-wire.js';
import type { AnswerTail } from './answers.consumer.js';
import { shardAssigner } from '../kafka/shard-assigner.js';
import { committedChunk, pagesGroupConsumer, runChunks, type PagesGroupOptions } from './crawled-pages.consumer.js';
import { createInputFences } from '../kafka/input-fences.js';
import type { PageBatchProcessor, PreparedChunk, PreparedPage } from '../chunk/page-batch-processor.js';
import type { ShardHolder } from './sequence.consumer.js';

/** What the sharded group consumer needs of the config (start-up picks it). */
export interface ShardedPagesOptions extends PagesGroupOptions {
  readonly instanceId: string;
  readonly fingerprintsTopic: string;
  readonly sequenceTopic: string;
  /** The standby topic, or null without standby copies. */
  readonly standbyTopic: string | null;
  readonly k: number;
  /** Whether pages carry feature sketches (the second stage is on): confirmations beyond k are counted. */
  readonly secondStage: boolean;
  /** How many input partitions are decided at once (the pages topic's partitions). */
  readonly topicPartitions: number;
}

export interface ShardedPagesConsumerOptions {
  kafka: Kafka;
  config: ShardedPagesOptions;
  processor: PageBatchProcessor;
  appender: LogAppender;
  answers: AnswerTail;
  holder: ShardHolder;
  metrics: DedupMetrics;
  logger: Logger;
  /** Output topics' max.message.bytes (requests are cut to fit). */
  maxRecordBytes?: ReadonlyMap<string, number>;
  onFatal: (error: unknown) => void;
}

export interface ShardedPagesConsumer {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** In the group, fetching, and every assigned shard restored. */
  readonly ready: boolean;
}

/**
 * The broker's floor: a dead member is noticed soonest. A member paused past
 * it (a long GC, SIGSTOP) is dropped and rejoins; its partitions are decided
 * by the others meanwhile, and it fences them again when it gets them back
 * (partition-fences.ts).
 */
const SESSION_TIMEOUT_MS = 6_000;
/** Thrown out of eachBatch when a rebalance begins while a chunk waits for answers. */
class ChunkAbandoned extends Error {}

export function createShardedPagesConsumer(options: ShardedPagesConsumerOptions): ShardedPagesConsumer {
  const { kafka, config, processor, appender, answers, holder, metrics, logger, onFatal } = options;
  const { standbyTopic, secondStage } = config;
  const { consumer, health } = pagesGroupConsumer({
    kafka,
    config,
    metrics,
    logger,
    onFatal,
    // A dead member is noticed at the session timeout, and its partitions
    // wait that long (standbys answer meanwhile). Nothing here runs long
    // between heartbeats: a chunk waiting for answers heartbeats every
    // second, and snapshots are written by the sequence tail, not here.
    sessionTimeout: SESSION_TIMEOUT_MS,
    heartbeatInterval: 1_000,
    partitionAssigners: [shardAssigner({ instance: config.instanceId, pagesTopic: config.pagesTopic, shardTopic: config.fingerprintsTopic, standbyTopic })],
  });
  /** Set at the first fatal error: nothing commits after it, whatever partition. */
  let halted = false;
  const halt = (error: unknown): void => {
    halted = true;
    onFatal(error);
  };
  /** The input partitions of the current assignment. */
  let assigned = new Set<number>();
  /**
   * Per partition and assignment: the producer that fenced the previous owner,
   * and the committed offset read after it. Records below it are skipped: the
   * previous owner may have committed them after this member joined.
   */
  const fences = createInputFences(kafka, { groupId: config.groupId, pagesTopic: config.pagesTopic, maxRecordBytes: options.maxRecordBytes });

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const assignment = payload.memberAssignment as Record<string, number[] | undefined>;
    const shards = assignment[config.fingerprintsTopic] ?? [];
    const standby = standbyTopic ? (assignment[standbyTopic] ?? []) : [];
    const partitions = new Set(assignment[config.pagesTopic] ?? []);
    assigned = partitions;
    // Each partition fences again at its first batch; producers of partitions now someone else's are closed.
    fences.assigned(partitions);
    metrics.rebalances.inc();
    const began = health.rebalancingSince || Date.now();
    logger.info('assignment', { partitions: [...partitions], shards, standby });
    holder.hold(shards, standby).then(
      () => metrics.rebalanceDuration.observe((Date.now() - began) / 1000),
      (error: unknown) => {
        metrics.errors.inc({ code: errorCode(error) });
        onFatal(error);
      },
    );
  });

  /**
   * Appends the chunk's pages to the sequence and waits until every shard has
   * answered each of them; heartbeats meanwhile, and gives the chunk up when a
   * rebalance begins (its answers may need a shard that is moving).
   */
  async function awaitVerdicts(partition: number, prepared: PreparedChunk, heartbeat: () => Promise<void>, isRunning: () => boolean): Promise<Map<number, JoinedVerdict>> {
    const verdicts = new Map<number, JoinedVerdict>();
    const keys: string[] = [];
    const probes: { key: string; index: number; value: Buffer; id: string }[] = [];
    let next = 0;
    let settle!: () => void;
    let fail!: (error: unknown) => void;
    const allAnswered = new Promise<void>((resolve, reject) => ((settle = resolve), (fail = reject)));
    let outstanding = 0;
    prepared.decoded.forEach((item, index) => {
      if (item instanceof Error) return;
      const result = prepared.results[next++]!;
      if (result.empty) return;
      const record = prepared.records[index]!;
      const key = sourceKey(partition, record.offset);
      const page: PreparedPage = item;
      keys.push(key);
      outstanding++;
      answers.expect(key, { hi: result.hi, lo: result.lo }, (completion: Completion) => {
        if (completion.verdict) {
          verdicts.set(index, completion.verdict);
          // Only confirmations are seen here: a shard's rejected candidates never leave it.
          const { distance, repeated } = completion.verdict;
          if (secondStage && !repeated && distance !== null && distance > config.k) metrics.secondStage.inc({ outcome: 'confirmed' });
          if (--outstanding === 0) settle();
          return;
        }
        // A re-sent id: ask again as of its first sequence.
        const { first, hi, lo, short, sketch } = completion.repeatOf;
        answers.rewatch(key, { hi, lo, firstSequence: first });
        const value = encodeShardRecord({ type: 'reprobe', id: page.id, hi, lo, short, asOf: first, ...(sketch === undefined ? {} : { sketch }), partition, offset: record.offset });
        appender.append([{ topic: config.sequenceTopic, partition: 0, key: page.id, value }]).then(([sequence]) => answers.sequenced(key, sequence!), fail);
      });
      probes.push({
        key,
        index,
        id: page.id,
        value: encodeShardRecord({
          type: 'probe', id: page.id, hi: result.hi >>> 0, lo: result.lo >>> 0, short: result.short, fetchedAt: page.fetchedAt,
          ...(secondStage ? { sketch: sketchToWire(result.sketch)! } : {}),
          partition, offset: record.offset,
        }),
      });
    });
    if (outstanding === 0) return verdicts;
    const started = process.hrtime.bigint();
    try {
      const offsets = await appender.append(probes.map((p) => ({ topic: config.sequenceTopic, partition: 0, key: p.id, value: p.value })));
      probes.forEach((p, i) => answers.sequenced(p.key, offsets[i]!));
      let waited = 0;
      for (;;) {
        const tick = new Promise<'tick'>((resolve) => setTimeout(() => resolve('tick'), 1000));
        if ((await Promise.race([allAnswered.then(() => 'done' as const), tick])) === 'done') break;
        if (!isRunning()) throw new ChunkAbandoned('consumer stopping');
        try {
          await heartbeat();
        } catch (error) {
          // Not waited out: with partitions consumed concurrently, another
          // partition's batch makes the consumer rejoin at once, and this
          // partition may go to another member while this chunk would commit.
          throw new ChunkAbandoned(`rebalance while waiting for answers: ${(error as Error).message}`);
        }
        if (++waited % 30 === 0) {
          logger.warn('still waiting for shard answers', { partition, pages: outstanding, seconds: waited, lowWatermark: answers.join.watermark });
        }
      }
    } catch (error) {
      for (const key of keys) answers.forget(key);
      throw error;
    }
    metrics.answerWait.observe(Number(process.hrtime.bigint() - started) / 1e9);
    return verdicts;
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, heartbeat, isRunning } = payload;
    if (batch.topic !== config.pagesTopic) {
      // A shard partition: held through the assignment, never consumed here.
      consumer.pause([{ topic: batch.topic }]);
      return;
    }
    // InitProducerId fences the previous owner and settles its open transaction; only then is the committed offset final.
    const lease = await fences.start(batch.partition);
    const from = lease.from;
    const kept = batch.messages.filter((m) => BigInt(m.offset) >= from);
    if (kept.length < batch.messages.length) {
      logger.info('skipping records another owner committed', { partition: batch.partition, records: batch.messages.length - kept.length, committed: from.toString() });
      if (kept.length === 0) {
        payload.resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
        return;
      }
      payload = { ...payload, batch: Object.assign(Object.create(Object.getPrototypeOf(batch) as object) as typeof batch, batch, { messages: kept }) };
    }
    await runChunks(payload, {
      maxRecords: config.maxBatchRecords,
      processor,
      metrics,
      active: () => !halted,
      onFatal: halt,
      progress: health.progress,
      commit: async (records, prepared) => {
        const last = records[records.length - 1]!.offset;
        try {
          const verdicts = await awaitVerdicts(batch.partition, prepared, heartbeat, isRunning);
          const chunk = await processor.decide(prepared, (index) => {
            const verdict = verdicts.get(index);
            if (!verdict) throw new DedupError('KAFKA', `no verdict joined for offset ${prepared.records[index]!.offset}`);
            return verdict;
          });
          if (halted) return null;
          // A new assignment began meanwhile: this chunk was fetched before the partition was fenced again.
          if (!lease.current) throw new ChunkAbandoned('the partition was assigned again while the chunk was decided');
          await lease.producer.commit(chunk.topicMessages, config.groupId, [{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }]);
          metrics.transactions.inc({ outcome: 'committed' });
          return committedChunk(chunk);
        } catch (error) {
          // Fenced: another member owns the partition now (this one may not have heard of the new
          // assignment yet: a session that expired under load). Its producer opened a newer epoch,
          // so nothing of this chunk can commit any more; the new owner decides it. In sharded mode
          // the input side holds no decision state, so giving the chunk up loses nothing.
          const fenced = error instanceof DedupError && (error.details as { fenced?: boolean } | undefined)?.fenced === true;
          if (error instanceof ChunkAbandoned || fenced || !assigned.has(batch.partition)) {
            // The next batch opens a new producer and reads the committed offset again.
            if (fenced) fences.fenced(lease);
            logger.info('chunk given up for the rebalance; the partition\u2019s next owner decides it again', { partition: batch.partition, reason: (error as Error).message });
            return null;
          }
          metrics.errors.inc({ code: errorCode(error) });
          if (error instanceof DedupError && error.code === 'KAFKA') metrics.transactions.inc({ outcome: 'aborted' });
          // Whatever failed here, this chunk's outputs were not committed. In
          // sharded mode no in-memory state depends on them, but the safest way
          // on is the same as the single-instance path: stop, and let the
          // partition be decided again from its committed offset.
          halt(error);
          return null;
        }
      },
    });
  }

  return {
    get ready() {
      return health.consuming && holder.caughtUp;
    },
    async start() {
      await consumer.connect();
      await consumer.subscribe({ topics: [config.pagesTopic], fromBeginning: true });
      await consumer.subscribe({ topics: [config.fingerprintsTopic], fromBeginning: false });
      if (standbyTopic) await consumer.subscribe({ topics: [standbyTopic], fromBeginning: false });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        // Partitions wait on answers independently: one waiting must not hold the others.
        partitionsConsumedConcurrently: Math.max(1, config.topicPartitions),
        eachBatch,
      });
      consumer.pause([{ topic: config.fingerprintsTopic }, ...(standbyTopic ? [{ topic: standbyTopic }] : [])]);
    },
    async stop() {
      await consumer.stop().catch(() => undefined);
      await consumer.disconnect().catch(() => undefined);
      await fences.close();
    },
  };
}
