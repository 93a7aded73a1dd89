/**
 * Routed mode's input side (docs/architecture.md, "Sharded mode, routed by
 * table prefix"): the owner of input partition p decides p's chunks.
 *
 * The group on the pages topic also subscribes to dedup.index, whose
 * partitions it assigns as the index partitions this instance holds
 * (shard-assigner.ts, by instance id); they are paused here and read by the
 * holder (routed-holder.ts). Per input partition, a chunk goes:
 *
 *   prepare  decode + fingerprint (worker threads)
 *   ids      re-sent ids answered from p's id store (dedup.ids, partition p)
 *   route    each new page's table and band entries (routing.ts)
 *   entries  ONE dedup.index record per touched partition, acknowledged
 *   order    then ONE dedup.order record: its offset orders the chunk
 *   replies  the touched partitions' replies (dedup.replies, partition p), first per partition wins
 *   round 2  candidates confirmed at their homes, more asked where a reply left some out
 *   commit   ONE transaction: verdicts + dead letters + id-store entries + p's input offsets
 *
 * So no verdict is visible unless its page is in dedup.index and dedup.order,
 * from which every index partition is rebuilt. A chunk ordered and not
 * committed (its owner died or gave it up) is joined, not decided again: the
 * partition's next owner reads the id store and, from the order offset its
 * last transaction recorded, the order records of p past the committed
 * offset, and takes those chunks as they were cut, waiting for their replies
 * (the holders answer chunks not committed yet, and again after a restore).
 */
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { DedupError, errorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { DedupMetrics } from '../metrics/metrics.js';
import { IndexRouting } from '../dedup/routing.js';
import { joinReplies, sketchTail, type JoinedReplies, type PartitionAnswer, type PartitionReply, type RoutedPage } from '../dedup/index-partition.js';
import { RoundTwo } from '../dedup/round-two.js';
import type { SecondStage } from '../dedup/decider.js';
import type { TablePlan } from '../index/index.js';
import type { DecidedVerdict, InputRecord, OutputMessage, PageBatchProcessor } from '../chunk/page-batch-processor.js';
import {
  chunkName,
  decodeConfirmed,
  decodeIdStore,
  decodeMoreReply,
  decodeOrder,
  decodeReply,
  encodeConfirm,
  encodeEntries,
  encodeIdStore,
  encodeMore,
  encodeOrder,
  pairAnswers,
  replyHead,
  type ChunkKey,
  type ConfirmRecord,
  type ConfirmedAnswer,
  type IdStorePosition,
  type MoreAsk,
  type SlottedPage,
  type StoredVerdict,
} from '../wire/routed-records.js';
import type { VerdictProducer } from './verdict-producer.js';
import type { LogAppender, LogRecord } from './log-appender.js';
import { readPartition } from './partition-reader.js';
import { shardAssigner } from './shard-assigner.js';
import { pagesGroupConsumer } from '../consumers/crawled-pages.consumer.js';
import type { Lease } from '../consumers/partition-fences.js';
import { createInputFences } from './input-fences.js';
import { countRead, countWritten, newTraffic, type RoutedHolder, type Traffic } from './routed-holder.js';

export interface RoutedOwnerOptions {
  readonly kafka: Kafka;
  readonly topics: { readonly pages: string; readonly index: string; readonly order: string; readonly replies: string; readonly ids: string };
  /** With warm standbys: the empty topic whose assignment names them (one partition per index partition); null without. */
  readonly standbyTopic: string | null;
  readonly groupId: string;
  readonly instanceId: string;
  readonly maxBatchRecords: number;
  readonly indexPartitions: number;
  readonly plan: TablePlan;
  readonly secondStage: SecondStage | null;
  readonly processor: PageBatchProcessor;
  readonly appender: LogAppender;
  readonly holder: RoutedHolder;
  readonly metrics: DedupMetrics;
  readonly logger: Logger;
  readonly maxRecordBytes?: ReadonlyMap<string, number>;
  readonly onFatal: (error: unknown) => void;
}

export interface RoutedOwner {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly ready: boolean;
  /** Routed records this owner read and wrote (its id store's entries included), and the input records it committed. */
  traffic(): Traffic & { committedRecords: number; chunks: number; roundTwoAsks: number; roundTrips: number };
}

/** Where p's next owner starts: written with every transaction (the id-store record of the chunk). */
type Position = IdStorePosition;

/** A chunk of p ordered by an earlier owner and not committed: joined as it was cut. */
interface OrderedChunk {
  readonly key: ChunkKey;
  readonly span: number;
  readonly pages: number;
  readonly touched: readonly number[];
  readonly orderOffset: number;
}

/** What the owner of p knows in one lease. */
interface PartitionState {
  readonly lease: Lease<VerdictProducer>;
  readonly ids: Map<string, StoredVerdict>;
  readonly ordered: Map<bigint, OrderedChunk>;
  /** The next input offset to decide. */
  next: bigint;
  /** Set when a chunk was given up: the next batch recovers the partition again, from `next`. */
  stale: boolean;
  position: Position;
  /** This lease's attempt number for the chunks it orders. */
  readonly attempt: number;
}

/** Thrown when a chunk is given up (stopping, a rebalance, or replies that do not come): the partition's next lease joins it. */
class ChunkAbandoned extends Error {}

const SESSION_TIMEOUT_MS = 6_000;
/** A chunk waiting for replies during a rebalance gives way after this long (its partitions may be moving). */
const REBALANCE_PATIENCE_MS = 3_000;
/** Replies that do not come in this long: the chunk is given up and the partition recovered again (a late writer's order record may have taken its place). */
const REPLY_PATIENCE_MS = 20_000;

/** The replies tail: dedup.replies, the partitions this instance owns, dispatched by key. */
function createRepliesTail(kafka: Kafka, topic: string, groupId: string, logger: Logger, traffic: Traffic) {
  const consumer: Consumer = kafka.consumer({
    groupId,
    readUncommitted: false,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false,
  });
  /** Per input partition: replies arrived, by key (the first wins), with the chunk's first offset. */
  const arrived = new Map<number, Map<string, { first: bigint; value: Buffer }>>();
  const waiters = new Map<string, (value: Buffer) => void>();
  const consumedNext = new Map<number, bigint>();
  const open = new Set<number>();
  let partitions: number[] = [];

  /** The waiters' key of a reply, from its head alone: the owner decodes the body once, when it joins. */
  const keyOf = (value: Buffer): { key: string; first: bigint } => {
    const { kind, chunk, indexPartition, trip } = replyHead(value);
    const tag = kind === 'reply' ? 'r' : kind === 'more-reply' ? 'm' : 'c';
    return { key: kind === 'reply' ? `r|${chunkName(chunk)}|${indexPartition}` : `${tag}|${chunkName(chunk)}|${indexPartition}|${trip}`, first: chunk.firstOffset };
  };

  return {
    async start(): Promise<void> {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: false });
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch, isStale }) => {
          if (isStale() || !open.has(batch.partition)) return;
          let got = arrived.get(batch.partition);
          if (!got) arrived.set(batch.partition, (got = new Map()));
          for (const m of batch.messages) {
            countRead(traffic, m);
            consumedNext.set(batch.partition, BigInt(m.offset) + 1n);
            if (m.value === null) continue;
            let parsed;
            try {
              parsed = keyOf(m.value);
            } catch (error) {
              logger.error('skipping an undecodable reply', { partition: batch.partition, offset: m.offset, error });
              continue;
            }
            if (got.has(parsed.key)) continue;
            got.set(parsed.key, { first: parsed.first, value: m.value });
            const waiter = waiters.get(parsed.key);
            if (waiter) {
              waiters.delete(parsed.key);
              waiter(m.value);
            }
          }
        },
      });
      const admin = kafka.admin();
      await admin.connect();
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        partitions = (topics[0]?.partitions ?? []).map((p) => p.partitionId);
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
      consumer.pause([{ topic, partitions: partitions.filter((p) => !open.has(p)) }]);
    },
    /** Reads p's replies from `from` on. */
    open(p: number, from: bigint): void {
      open.add(p);
      arrived.set(p, new Map());
      consumedNext.set(p, from);
      consumer.seek({ topic, partition: p, offset: from.toString() });
      consumer.resume([{ topic, partitions: [p] }]);
    },
    close(p: number): void {
      open.delete(p);
      arrived.delete(p);
      consumer.pause([{ topic, partitions: [p] }]);
    },
    /** The reply under `key` of input partition p: at once if it came already. */
    expect(p: number, key: string): Promise<Buffer> {
      const got = arrived.get(p)?.get(key);
      if (got) return Promise.resolve(got.value);
      return new Promise((resolve) => waiters.set(key, resolve));
    },
    forget(keys: Iterable<string>): void {
      for (const key of keys) waiters.delete(key);
    },
    /** Drops what came for p's chunks below `next` (decided). */
    decided(p: number, next: bigint): void {
      const got = arrived.get(p);
      if (got) for (const [key, r] of got) if (r.first < next) got.delete(key);
    },
    consumedNext(p: number): bigint {
      return consumedNext.get(p) ?? 0n;
    },
    async stop(): Promise<void> {
      await consumer.stop().catch(() => undefined);
      await consumer.disconnect().catch(() => undefined);
    },
  };
}

interface NewPage {
  readonly index: number;
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  readonly fetchedAt: number;
  readonly sketch: Uint8Array | null;
}

export function createRoutedOwner(options: RoutedOwnerOptions): RoutedOwner {
  const { kafka, topics, processor, appender, holder, metrics, logger, onFatal } = options;
  const routing = new IndexRouting(options.plan, options.indexPartitions, options.secondStage?.bands ?? 0);
  const stage = options.secondStage;
  const { consumer, health } = pagesGroupConsumer({
    kafka,
    config: { groupId: options.groupId, pagesTopic: topics.pages, maxBatchRecords: options.maxBatchRecords },
    metrics,
    logger,
    onFatal,
    sessionTimeout: SESSION_TIMEOUT_MS,
    heartbeatInterval: 1_000,
    partitionAssigners: [shardAssigner({ instance: options.instanceId, pagesTopic: topics.pages, shardTopic: topics.index, standbyTopic: options.standbyTopic })],
  });
  const traffic = { ...newTraffic(), committedRecords: 0, chunks: 0, roundTwoAsks: 0, roundTrips: 0 };
  /** Appends routed records, counted. */
  const append = (records: LogRecord[]): Promise<number[]> => {
    countWritten(traffic, records);
    return appender.append(records);
  };
  const tail = createRepliesTail(kafka, topics.replies, `${options.groupId}-replies-${options.instanceId}-${process.pid}-${Date.now().toString(36)}`, logger, traffic);
  let halted = false;
  const halt = (error: unknown): void => {
    halted = true;
    onFatal(error);
  };
  let assigned = new Set<number>();
  const states = new Map<number, PartitionState>();
  const fences = createInputFences(kafka, { groupId: options.groupId, pagesTopic: topics.pages, maxRecordBytes: options.maxRecordBytes });

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const assignment = payload.memberAssignment as Record<string, number[] | undefined>;
    const index = assignment[topics.index] ?? [];
    const standby = options.standbyTopic === null ? [] : (assignment[options.standbyTopic] ?? []);
    const partitions = new Set(assignment[topics.pages] ?? []);
    assigned = partitions;
    fences.assigned(partitions);
    for (const p of [...states.keys()]) {
      states.delete(p);
      if (!partitions.has(p)) tail.close(p);
    }
    metrics.rebalances.inc();
    traffic.takeovers++;
    logger.info('assignment', { partitions: [...partitions], indexPartitions: index, standby });
    // A standby applies and replies as the owner does; the joiner takes the first reply.
    holder.hold([...new Set([...index, ...standby])]);
  });

  /**
   * p's state in this lease: its id store, where its last transaction left the order log,
   * and the chunks ordered past the committed offset (an earlier owner's), to be joined.
   */
  async function recover(p: number, lease: Lease<VerdictProducer>, from: bigint): Promise<PartitionState> {
    const started = Date.now();
    const ids = new Map<string, StoredVerdict>();
    let position: Position | null = null;
    // The store's records are in the chunks' order; a later one's position is the later chunk's.
    await readPartition({
      kafka,
      topic: topics.ids,
      partition: p,
      from: 0n,
      groupIdPrefix: `${options.groupId}-ids-${p}`,
      onMessage: (m) => {
        countRead(traffic, m);
        if (m.value === null) return;
        const record = decodeIdStore(m.value);
        position = record.position;
        for (const { id, verdict } of record.entries) ids.set(id, verdict);
      },
    });
    const at: Position = position ?? { order: 0, replies: 0n, spanEnd: -1n };
    // The order log as the holders read it, for p alone: the same skip rule, from the same point.
    let spanEnd = at.spanEnd;
    const ordered = new Map<bigint, OrderedChunk>();
    await readPartition({
      kafka,
      topic: topics.order,
      partition: 0,
      from: BigInt(at.order),
      groupIdPrefix: `${options.groupId}-order-${p}`,
      onMessage: (m) => {
        countRead(traffic, m);
        if (m.value === null) return;
        const record = decodeOrder(m.value);
        if (record.chunk.inputPartition !== p || record.chunk.firstOffset < spanEnd) return;
        spanEnd = record.chunk.firstOffset + BigInt(record.span);
        if (record.chunk.firstOffset >= from) ordered.set(record.chunk.firstOffset, { key: record.chunk, span: record.span, pages: record.pages, touched: record.touched, orderOffset: Number(m.offset) });
      },
    });
    tail.open(p, at.replies);
    const attempt = 1 + Math.floor(Math.random() * 0xfffe);
    logger.info('input partition taken on', { partition: p, committed: from.toString(), ids: ids.size, orderedNotCommitted: ordered.size, seconds: (Date.now() - started) / 1000 });
    return { lease, ids, ordered, next: from, stale: false, position: { ...at, spanEnd }, attempt };
  }

  /** Waits for every promise, heartbeating; gives the chunk up when stopping, in a long rebalance, or when the replies do not come. */
  async function waitAll<T>(p: number, promises: Promise<T>[], payload: EachBatchPayload, lease: Lease<VerdictProducer>): Promise<T[]> {
    const all = Promise.all(promises);
    const started = Date.now();
    let rebalancingSince = 0;
    for (let waited = 0; ; waited++) {
      const tick = new Promise<'tick'>((resolve) => setTimeout(() => resolve('tick'), waited < 20 ? 50 : 1000));
      const outcome = await Promise.race([all, tick]);
      if (outcome !== 'tick') return outcome as T[];
      if (!payload.isRunning() || halted) throw new ChunkAbandoned('stopping');
      if (!lease.current) throw new ChunkAbandoned('the partition was assigned again');
      try {
        await payload.heartbeat();
        rebalancingSince = 0;
      } catch {
        rebalancingSince ||= Date.now();
        if (Date.now() - rebalancingSince > REBALANCE_PATIENCE_MS) throw new ChunkAbandoned('a rebalance while waiting for replies');
      }
      if (Date.now() - started > REPLY_PATIENCE_MS) throw new ChunkAbandoned(`no replies in ${REPLY_PATIENCE_MS} ms`);
      if (waited > 20 && waited % 10 === 0) logger.warn('still waiting for index partitions\u2019 replies', { partition: p, seconds: (Date.now() - started) / 1000 });
    }
  }

  /** Decides one chunk of p: its records, and the earlier owner's order record if it was ordered. Returns false when given up. */
  async function decideChunk(p: number, st: PartitionState, records: InputRecord[], ordered: OrderedChunk | undefined, payload: EachBatchPayload): Promise<boolean> {
    const { lease } = st;
    const prepared = await processor.prepare(records);
    const first = BigInt(records[0]!.offset);
    const last = BigInt(records[records.length - 1]!.offset);
    // Which records are new pages, re-sent ids, or copies of an id earlier in the chunk.
    const verdicts = new Map<number, DecidedVerdict>();
    const copies: { index: number; of: string }[] = [];
    const pages: NewPage[] = [];
    const slotOf = new Map<string, number>();
    let next = 0;
    prepared.decoded.forEach((item, index) => {
      if (item instanceof Error) return;
      const result = prepared.results[next++]!;
      if (result.empty) return;
      const stored = st.ids.get(item.id);
      if (stored) {
        verdicts.set(index, { ...stored, repeated: true });
        return;
      }
      if (slotOf.has(item.id)) {
        copies.push({ index, of: item.id });
        return;
      }
      slotOf.set(item.id, pages.length);
      pages.push({ index, id: item.id, hi: result.hi >>> 0, lo: result.lo >>> 0, short: result.short, fetchedAt: item.fetchedAt, sketch: stage === null ? null : result.sketch });
    });
    if (ordered && ordered.pages !== pages.length) {
      throw new DedupError('KAFKA', `chunk ${chunkName(ordered.key)} was ordered with ${ordered.pages} new pages, and ${pages.length} are new now: the id store or the records differ from the first decision`);
    }
    const key: ChunkKey = ordered?.key ?? { inputPartition: p, firstOffset: first, attempt: st.attempt };
    const name = chunkName(key);
    let orderOffset: number | null = ordered?.orderOffset ?? null;
    const decided = new Map<string, DecidedVerdict>();
    if (pages.length > 0) {
      // Route: one entries record per touched partition, the page as each partition gets it.
      const byPartition = new Map<number, SlottedPage[]>();
      pages.forEach((page, slot) => {
        // The tail goes to every partition but the home: made once per page.
        let tail: Uint8Array | null = null;
        for (const share of routing.route(page.hi, page.lo, page.sketch)) {
          const sketch = page.sketch === null ? null : (share.tableMask & 1) !== 0 ? page.sketch : (tail ??= sketchTail(page.sketch));
          const routed: RoutedPage = { id: share.tableMask !== 0 ? page.id : null, hi: page.hi, lo: page.lo, short: page.short, fetchedAt: page.fetchedAt, sketch, tables: share.tableMask, bandKeys: share.bandKeys };
          let list = byPartition.get(share.partition);
          if (!list) byPartition.set(share.partition, (list = []));
          list.push({ slot, page: routed });
        }
      });
      const touched = [...byPartition.keys()].sort((a, b) => a - b);
      const replyKeys = touched.map((q) => `r|${name}|${q}`);
      const waiting = replyKeys.map((k) => tail.expect(p, k));
      const started = process.hrtime.bigint();
      try {
        if (orderOffset === null) {
          // The entries first, acknowledged; only then the order record that makes them count.
          // No record keys here or on round two's requests: the value names the chunk, and the partition is chosen.
          await append(touched.map((q) => ({ topic: topics.index, partition: q, key: null, value: encodeEntries({ chunk: key, pages: byPartition.get(q)! }) })));
          const [offset] = await append([{ topic: topics.order, partition: 0, key: null, value: encodeOrder({ chunk: key, pages: pages.length, span: Number(last - first + 1n), touched, partitions: options.indexPartitions }) }]);
          orderOffset = offset!;
        }
        const replies = (await waitAll(p, waiting, payload, lease)).map((value) => decodeReply(value));
        const base = replies[0]!.base;
        const bySlot: { partition: number; reply: PartitionReply }[][] = pages.map(() => []);
        for (const r of replies) for (const { slot, reply } of r.replies) bySlot[slot]!.push({ partition: r.indexPartition, reply });
        const joined = bySlot.map((list) => joinReplies(list));
        const best = await roundTwo(p, key, name, base, pages, joined, byPartition, ordered !== undefined, payload, lease);
        pages.forEach((page, slot) => {
          const b = best[slot]!;
          decided.set(page.id, {
            verdict: b === null ? 'novel' : 'duplicate',
            duplicateOf: b?.id ?? null,
            distance: b?.distance ?? null,
            hi: page.hi,
            lo: page.lo,
            duplicateOfHi: b?.hi ?? null,
            duplicateOfLo: b?.lo ?? null,
            sequence: base + slot,
            repeated: false,
          });
        });
      } catch (error) {
        tail.forget(replyKeys);
        throw error;
      }
      metrics.answerWait.observe(Number(process.hrtime.bigint() - started) / 1e9);
    }
    for (const page of pages) verdicts.set(page.index, decided.get(page.id)!);
    for (const { index, of } of copies) verdicts.set(index, { ...decided.get(of)!, repeated: true });
    const chunk = await processor.decide(prepared, (index) => {
      const verdict = verdicts.get(index);
      if (!verdict) throw new DedupError('KAFKA', `no verdict joined for offset ${prepared.records[index]!.offset}`);
      return verdict;
    });
    if (halted) return false;
    if (!lease.current) throw new ChunkAbandoned('the partition was assigned again while the chunk was decided');
    const position: Position = {
      order: orderOffset === null ? st.position.order : orderOffset + 1,
      replies: tail.consumedNext(p),
      spanEnd: orderOffset === null ? st.position.spanEnd : first + BigInt(ordered?.span ?? Number(last - first + 1n)),
    };
    const stored = pages.map((page) => {
      const { repeated: _repeated, ...verdict } = decided.get(page.id)!;
      return { id: page.id, verdict };
    });
    // One record for the chunk, keyed by it (compaction keeps each chunk's).
    const idMessages: OutputMessage[] = [{ key: `${p}:${first}`, partition: p, value: encodeIdStore({ position, entries: stored }) }];
    chunk.topicMessages.set(topics.ids, idMessages);
    await lease.producer.commit(chunk.topicMessages, options.groupId, [{ topic: topics.pages, partition: p, offset: (last + 1n).toString() }]);
    metrics.transactions.inc({ outcome: 'committed' });
    countWritten(traffic, idMessages);
    traffic.committedRecords += records.length;
    traffic.chunks++;
    for (const { id, verdict } of stored) st.ids.set(id, verdict);
    st.position = position;
    st.next = last + 1n;
    if (ordered) st.ordered.delete(ordered.key.firstOffset);
    tail.decided(p, st.next);
    const now = Date.now();
    metrics.pagesConsumed.inc({ topic: topics.pages }, records.length);
    if (chunk.novel) metrics.verdicts.inc({ verdict: 'novel' }, chunk.novel);
    if (chunk.duplicates) metrics.verdicts.inc({ verdict: 'duplicate' }, chunk.duplicates);
    for (const [reason, count] of chunk.deadLetters) metrics.deadLetters.inc({ reason }, count);
    for (const ts of chunk.timestamps) if (ts > 0 && ts <= now) metrics.verdictLatency.observe((now - ts) / 1000);
    return true;
  }

  /**
   * Round two for every page of a chunk at once (round-two.ts): one record per home partition
   * for the confirmations of a round trip, one per page and partition for more candidates.
   */
  async function roundTwo(
    p: number,
    key: ChunkKey,
    name: string,
    base: number,
    pages: readonly NewPage[],
    joined: readonly JoinedReplies[],
    byPartition: ReadonlyMap<number, readonly SlottedPage[]>,
    carryPages: boolean,
    payload: EachBatchPayload,
    lease: Lease<VerdictProducer>,
  ): Promise<(PartitionAnswer | null)[]> {
    // Candidates come named by sequence and home (routed-records.ts writeCandidate); the homes of those that agree send their fingerprints.
    const round = new RoundTwo(joined, (c) => c.home ?? routing.tablePartition(0, c.hi, c.lo));
    const fingerprints = new Map<number, ConfirmedAnswer>();
    /** (home, slot) pairs whose page sketch went to that home in an earlier trip: not sent again. */
    const sketchSent = new Set<number>();
    /** The pages as each partition got them, by slot: made only when requests for more carry them. */
    const sent = new Map<number, Map<number, RoutedPage>>();
    const sentPage = (q: number, slot: number): RoutedPage => {
      let bySlot = sent.get(q);
      if (!bySlot) sent.set(q, (bySlot = new Map(byPartition.get(q)!.map((e) => [e.slot, e.page]))));
      return bySlot.get(slot)!;
    };
    for (let trip = 0; ; trip++) {
      const step = round.step();
      if (step.done) return step.best.map((b) => (b === null || b.home === undefined ? b : { ...b, hi: fingerprints.get(b.sequence)!.hi, lo: fingerprints.get(b.sequence)!.lo }));
      const asks = new Map<string, LogRecord>();
      /** The confirmations sent, by key: their answers come back in their order. */
      const confirmations = new Map<string, ConfirmRecord>();
      const tripNo = trip & 0xffff;
      for (const [home, bySlot] of step.asks.confirms) {
        const list = [...bySlot].map(([slot, sequences]) => {
          const at = home * 0x10000 + slot;
          const sent = sketchSent.has(at);
          sketchSent.add(at);
          return { slot, sketch: pages[slot]!.sketch, sent, sequences };
        });
        const confirmation: ConfirmRecord = { chunk: key, indexPartition: home, trip: tripNo, asks: list };
        confirmations.set(`c|${name}|${home}|${tripNo}`, confirmation);
        asks.set(`c|${name}|${home}|${tripNo}`, { topic: options.topics.index, partition: home, key: null, value: encodeConfirm(confirmation) });
      }
      // One request per partition for the trip's mores. The partition kept the pages it applied
      // for the chunk; a chunk joined after an earlier owner's sends them (it may be older there).
      const mores = new Map<number, MoreAsk[]>();
      for (const { slot, partition: q, after } of step.asks.mores) {
        let list = mores.get(q);
        if (!list) mores.set(q, (list = []));
        list.push({ slot, sequence: base + slot, after, page: carryPages ? sentPage(q, slot) : null });
      }
      for (const [q, list] of mores) {
        asks.set(`m|${name}|${q}|${tripNo}`, { topic: options.topics.index, partition: q, key: null, value: encodeMore({ chunk: key, indexPartition: q, trip: tripNo, asks: list }) });
      }
      const keys = [...asks.keys()];
      traffic.roundTwoAsks += keys.length;
      traffic.roundTrips++;
      const waiting = keys.map((k) => tail.expect(p, k));
      try {
        await append([...asks.values()]);
        const answers = await waitAll(p, waiting, payload, lease);
        keys.forEach((k, i) => {
          const value = answers[i]!;
          if (k.startsWith('c|')) {
            for (const { slot, sequence, agreed } of pairAnswers(confirmations.get(k)!, decodeConfirmed(value).answers)) {
              if (agreed !== null) fingerprints.set(sequence, agreed);
              round.confirm(slot, sequence, agreed?.id ?? null);
            }
          } else {
            const r = decodeMoreReply(value);
            for (const a of r.answers) round.moreAnswered(a.slot, r.indexPartition, a.afterSequence, { unsettled: a.unsettled, more: a.more });
          }
        });
      } catch (error) {
        tail.forget(keys);
        throw error;
      }
    }
  }

  async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    if (batch.topic !== topics.pages) {
      // An index or standby partition: held through the assignment (routed-holder.ts), never consumed here.
      consumer.pause([{ topic: batch.topic }]);
      return;
    }
    const p = batch.partition;
    const lease = await fences.start(p);
    let st = states.get(p);
    if (!st || st.lease !== lease || st.stale) {
      st = await recover(p, lease, st && st.lease === lease ? st.next : lease.from);
      states.set(p, st);
    }
    const state = st;
    const messages = batch.messages.filter((m) => BigInt(m.offset) >= state.next);
    if (messages.length === 0) {
      if (batch.messages.length > 0) payload.resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
      return;
    }
    const toRecord = (m: (typeof messages)[number]): InputRecord => ({ partition: p, offset: m.offset, key: m.key, value: m.value, timestamp: m.timestamp });
    let i = 0;
    while (i < messages.length) {
      if (halted || !payload.isRunning() || payload.isStale()) return;
      const first = BigInt(messages[i]!.offset);
      const ordered = state.ordered.get(first);
      let j = i;
      if (ordered) {
        const end = first + BigInt(ordered.span);
        while (j < messages.length && BigInt(messages[j]!.offset) < end) j++;
        // The rest of an ordered chunk comes with the next fetch.
        if (j === messages.length && BigInt(batch.highWatermark) > BigInt(messages[j - 1]!.offset) + 1n && BigInt(messages[j - 1]!.offset) < end - 1n) return;
      } else {
        let stopAt: bigint | null = null;
        for (const f of state.ordered.keys()) if (f > first && (stopAt === null || f < stopAt)) stopAt = f;
        while (j < messages.length && j - i < options.maxBatchRecords && (stopAt === null || BigInt(messages[j]!.offset) < stopAt)) j++;
      }
      const records = messages.slice(i, j).map(toRecord);
      try {
        if (!(await decideChunk(p, state, records, ordered, payload))) return;
      } catch (error) {
        const fenced = error instanceof DedupError && (error.details as { fenced?: boolean } | undefined)?.fenced === true;
        if (error instanceof ChunkAbandoned || fenced || !assigned.has(p)) {
          if (fenced) fences.fenced(lease);
          // Ordered or not, the next lease (this member's or another's) finds it in the order log.
          state.stale = true;
          logger.info('chunk given up; the partition\u2019s next lease joins it if it was ordered', { partition: p, reason: (error as Error).message });
          return;
        }
        metrics.errors.inc({ code: errorCode(error) });
        if (error instanceof DedupError && error.retriable && error.code !== 'KAFKA') throw error;
        halt(error);
        return;
      }
      payload.resolveOffset(records[records.length - 1]!.offset);
      i = j;
      await payload.heartbeat().catch(() => undefined);
    }
  }

  return {
    get ready() {
      return health.consuming && holder.caughtUp;
    },
    traffic: () => ({ ...traffic }),
    async start() {
      await tail.start();
      await consumer.connect();
      await consumer.subscribe({ topics: [topics.pages], fromBeginning: true });
      await consumer.subscribe({ topics: [topics.index], fromBeginning: false });
      if (options.standbyTopic !== null) await consumer.subscribe({ topics: [options.standbyTopic], fromBeginning: false });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 64,
        eachBatch,
      });
      consumer.pause([{ topic: topics.index }, ...(options.standbyTopic === null ? [] : [{ topic: options.standbyTopic }])]);
    },
    async stop() {
      await consumer.stop().catch(() => undefined);
      await consumer.disconnect().catch(() => undefined);
      await fences.close();
      await tail.stop();
    },
  };
}
