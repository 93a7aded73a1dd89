/**
 * Routed mode's index holder (docs/architecture.md, "Sharded mode, routed by
 * table prefix"): this instance's index partitions of dedup.index, each an
 * IndexPartition applied in the one global order.
 *
 * One consumer of a group of its own reads dedup.order (every holder reads
 * every order record; they are tiny) and the held partitions of dedup.index
 * (the others are paused). For each order record, in offset order, each held
 * partition it touches takes the chunk's entries from its own log (they are
 * there: the owner had them acknowledged before it appended the order record),
 * probes then records each page at its global sequence (the pages of the order
 * records before it, plus its slot), and replies to dedup.replies, partition
 * of the chunk's input partition. Round two's requests (confirm a candidate at
 * its home, more candidates after a cursor) come through the same index log
 * and are answered once the partition has applied the sequence they name.
 *
 * Each held partition keeps its ids, sketches and band runs in a page tier of
 * its own, scratch files under the state directory (as single mode's page
 * store does), dropped when the partition is released.
 *
 * Restore: a partition taken on starts from its local snapshot when one fits
 * (src/storage/partition-snapshot.ts: the state as of an order offset, and the
 * index log offset to read again from, IndexLogResume), else empty. It then
 * applies the order records from the snapshot's (or the log's start), with its
 * index log from the snapshot's offset (or its start). The pages of chunks
 * committed already (input offset below the group's committed offset when the
 * partition was taken on) are recorded without their probes
 * (IndexPartition.replay), about half of apply's cost, and the round-two
 * requests about them are dropped from their head, unread; chunks not
 * committed yet are applied, and replied to again: their owners may still
 * wait for them. Those of them the snapshot holds already are answered again
 * as of their sequences (IndexPartition.replyAsOf).
 *
 * The order log gives each chunk's global sequences (the pages ordered before
 * it) and which records are skipped (the ends of the chunks applied before):
 * the holder's global state, a function of the log's prefix (OrderResume).
 * A snapshot carries that state as of its resume point, the first order
 * record of a chunk not committed when it was written (else its own order
 * offset). When every partition taken on loaded a snapshot with one, the
 * holder reads the order log from the least of them (not past where it stands
 * when it keeps partitions), with that snapshot's state; otherwise from its
 * start. While it holds nothing it reads no order record at all.
 *
 * Snapshots are written between order records, one file per held partition:
 * each partition about every `intervalSeconds`, one partition at a time (the
 * one written longest ago), and all of them at a graceful stop. They are a shortcut into the
 * two logs, which stay the state: a lost or stale snapshot costs a longer
 * replay, never a verdict.
 *
 * An order record of an input partition that starts inside a chunk already
 * applied for it is skipped by every holder alike (a fenced writer that
 * appended late); so are its entries.
 */
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { DedupError, errorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { DedupMetrics, RoutedTrafficCount } from '../metrics/metrics.js';
import type { TablePlan } from '../index/index.js';
import type { SecondStage } from '../dedup/decider.js';
import { IndexPartition, type PartitionAnswer, type PartitionReply, type RoutedPage } from '../dedup/index-partition.js';
import { IndexRouting } from '../dedup/routing.js';
import { WaitingRequests } from '../dedup/waiting-requests.js';
import { IndexLogResume } from '../dedup/index-log-resume.js';
import { OrderResume, takeoverFrom, type OrderPoint } from '../dedup/order-resume.js';
import { AnswerAgain } from '../dedup/answer-again.js';
import { filePageTier } from '../storage/file-blob-store.js';
import { orderPointFields, orderPointOf, PARTITION_SNAPSHOT_SUFFIX, readPartitionSnapshot, writePartitionSnapshot } from '../storage/partition-snapshot.js';
import type { PageTier } from '../dedup/blob-store.js';
import { mkdir } from 'node:fs/promises';
import { join as joinPath } from 'node:path';

/** Pages of UNSETTLED_PER_REPLY candidates one answer to a request for more carries at most. */
const MORE_PAGES_PER_ANSWER = 8;
/** Order records remembered for a resume point past which the holder reads the committed offsets again and forgets the committed ones (at most every PRUNE_MS). */
const PRUNE_RECORDS = 20_000;
const PRUNE_MS = 10_000;
import {
  chunkName,
  decodeConfirm,
  decodeEntries,
  decodeMore,
  decodeOrder,
  encodeConfirmed,
  encodeMoreReply,
  encodeReply,
  recordChunk,
  routedRecordKind,
  type ChunkKey,
  type ConfirmRecord,
  type ConfirmedAnswer,
  type EntriesRecord,
  type MoreAnswer,
  type MoreRecord,
  type OrderRecord,
} from '../wire/routed-records.js';
import type { LogAppender, LogRecord } from './log-appender.js';
import { endOffsets } from './admin.js';

export interface RoutedHolderOptions {
  readonly kafka: Kafka;
  readonly topics: { readonly index: string; readonly order: string; readonly replies: string; readonly pages: string };
  /** The pages group, whose committed offsets say which chunks are decided. */
  readonly groupId: string;
  readonly instanceId: string;
  readonly plan: TablePlan;
  /** The index topic's partition count: routing names an unsettled candidate's home by it. */
  readonly indexPartitions: number;
  readonly k: number;
  readonly secondStage: SecondStage | null;
  readonly appender: LogAppender;
  /** Where each held partition's page tier goes (a directory per partition); in memory when absent. */
  readonly tierDir?: string;
  /** Local snapshots of the held partitions; none when absent (a restore replays both logs whole). */
  readonly snapshots?: RoutedSnapshotOptions;
  readonly metrics: DedupMetrics;
  readonly logger: Logger;
  readonly onFatal: (error: unknown) => void;
}

export interface RoutedSnapshotOptions {
  /** One file per index partition in it. */
  readonly dir: string;
  /** Write the held partitions' snapshots at most this often (and at a graceful stop); 0 = only at the stop. */
  readonly intervalSeconds: number;
  /** The Kafka cluster's id: a snapshot is only good against the logs it was made from. */
  readonly clusterId: string;
  /** The fingerprint definition this build computes. */
  readonly fingerprintVersion: string;
}

export interface RoutedHolder {
  start(): Promise<void>;
  /** The index partitions this instance holds from now on (the group's assignment). */
  hold(partitions: readonly number[]): void;
  stop(): Promise<void>;
  /** The held partitions' states. */
  readonly held: readonly IndexPartition[];
  /** Started, and every held partition has applied the order log up to where it was when taken on. */
  readonly caughtUp: boolean;
  /** Bytes (keys and values) and records this holder read from and wrote to the routed topics, and the pages it applied. */
  traffic(): Traffic;
}

/** Routed records read and written (keys and values, no record overhead), for the coordination bench and the stop log. */
export interface Traffic {
  /** Times index partitions were taken on and replayed (holder), or assignments received (owner). */
  takeovers: number;
  readBytes: number;
  readRecords: number;
  writtenBytes: number;
  writtenRecords: number;
  /** The same by record kind (routedRecordKind, or 'ids' for the id store): where the bytes go. */
  byKind: Record<string, KindTraffic>;
}

export interface KindTraffic {
  readBytes: number;
  readRecords: number;
  writtenBytes: number;
  writtenRecords: number;
}

export function newTraffic(): Traffic {
  return { takeovers: 0, readBytes: 0, readRecords: 0, writtenBytes: 0, writtenRecords: 0, byKind: {} };
}

function kindTraffic(traffic: Traffic, value: Buffer | null): KindTraffic {
  let kind = 'ids';
  if (value !== null && value.length >= 2) {
    try {
      kind = routedRecordKind(value);
    } catch {
      kind = 'ids';
    }
  }
  return (traffic.byKind[kind] ??= { readBytes: 0, readRecords: 0, writtenBytes: 0, writtenRecords: 0 });
}

export function countWritten(traffic: Traffic, records: readonly { key: string | Buffer | null; value: Buffer }[]): void {
  for (const r of records) {
    const bytes = r.value.length + (r.key === null ? 0 : Buffer.byteLength(r.key));
    traffic.writtenBytes += bytes;
    traffic.writtenRecords++;
    const k = kindTraffic(traffic, r.value);
    k.writtenBytes += bytes;
    k.writtenRecords++;
  }
}

export function countRead(traffic: Traffic, m: { key: Buffer | null; value: Buffer | null }): void {
  const bytes = (m.value?.length ?? 0) + (m.key?.length ?? 0);
  traffic.readBytes += bytes;
  traffic.readRecords++;
  const k = kindTraffic(traffic, m.value);
  k.readBytes += bytes;
  k.readRecords++;
}

/** A traffic count as the metrics export it: one line per record kind and direction that saw a record. */
export function routedTrafficCounts(traffic: Traffic): RoutedTrafficCount[] {
  const out: RoutedTrafficCount[] = [];
  for (const [kind, k] of Object.entries(traffic.byKind)) {
    if (k.readRecords > 0) out.push({ direction: 'read', kind, bytes: k.readBytes, records: k.readRecords });
    if (k.writtenRecords > 0) out.push({ direction: 'written', kind, bytes: k.writtenBytes, records: k.writtenRecords });
  }
  return out;
}

/** Sums two traffic counts (an instance's owner and holder). */
export function addTraffic(a: Traffic, b: Traffic): Traffic {
  const byKind: Record<string, KindTraffic> = {};
  for (const t of [a, b]) {
    for (const [kind, k] of Object.entries(t.byKind)) {
      const s = (byKind[kind] ??= { readBytes: 0, readRecords: 0, writtenBytes: 0, writtenRecords: 0 });
      s.readBytes += k.readBytes;
      s.readRecords += k.readRecords;
      s.writtenBytes += k.writtenBytes;
      s.writtenRecords += k.writtenRecords;
    }
  }
  return { takeovers: a.takeovers + b.takeovers, readBytes: a.readBytes + b.readBytes, readRecords: a.readRecords + b.readRecords, writtenBytes: a.writtenBytes + b.writtenBytes, writtenRecords: a.writtenRecords + b.writtenRecords, byKind };
}

interface Held {
  state: IndexPartition;
  /** Closes the partition's page tier (its scratch files); nothing for a tier in memory. */
  close(): void;
  /** The next order offset this partition applies; earlier ones are applied or skipped. */
  appliedNext: number;
  /** Order offset this partition must reach to be caught up (the log's end when taken on). */
  readyAt: number;
  /** Entries read from the partition's log (and the offset they were read at), by chunk, until their order record comes. */
  readonly entries: Map<string, { record: EntriesRecord; offset: number }>;
  /** Where a restore from a snapshot taken now would read the index log from. */
  readonly resume: IndexLogResume;
  /** The chunks its snapshot holds that are not committed, answered again, each once (nothing without a snapshot). */
  readonly again: AnswerAgain;
  /** Round-two requests waiting until the partition has applied the sequence they name. */
  readonly requests: WaitingRequests<Request>;
  /**
   * Per input partition, the page sketches its latest chunks' confirmations brought here (by
   * chunk, then slot): a later confirmation of the same chunk refers to them instead of sending
   * them again. An owner decides its chunks one at a time, so a few chunks are enough.
   */
  readonly sketches: Map<number, Map<string, Map<number, Uint8Array | null>>>;
  /** Per input partition, its latest applied chunks' entries here (by chunk): what requests for more are about. */
  readonly applied: Map<number, Map<string, AppliedChunk>>;
  /** When it was taken on (process.hrtime), until it has caught up; null after. */
  takenOn: bigint | null;
  /** Pages recorded without a probe (chunks decided already) since it was taken on. */
  replayed: number;
  /** Whether it was taken on from a snapshot. */
  fromSnapshot: boolean;
  /** Chunks the snapshot held that it answered again (not committed when it was taken on). */
  answeredAgain: number;
  /** When its last snapshot was written, or when it was taken on (Date.now()). */
  snapshotAt: number;
}

type Request = { kind: 'more'; record: MoreRecord } | { kind: 'confirm'; record: ConfirmRecord };

/** The sequence a request needs applied before it can be answered. */
function needs(request: Request): number {
  let most = -1;
  if (request.kind === 'more') for (const a of request.record.asks) most = Math.max(most, a.sequence);
  else for (const a of request.record.asks) for (const q of a.sequences) if (q > most) most = q;
  return most;
}

interface AppliedChunk {
  readonly entries: EntriesRecord;
  /** The entries' pages by slot, made at the first request for more. */
  bySlot: Map<number, RoutedPage> | null;
}

/** Chunks per input partition whose confirmation sketches and applied entries a held partition keeps. */
const SKETCH_CHUNKS = 4;

/** The kept state of `chunk` in a per-input-partition cache of its latest chunks, made if new. */
function recentChunk<T>(cache: Map<number, Map<string, T>>, chunk: ChunkKey, make: () => T): T {
  const name = chunkName(chunk);
  let chunks = cache.get(chunk.inputPartition);
  if (!chunks) cache.set(chunk.inputPartition, (chunks = new Map()));
  let kept = chunks.get(name);
  if (kept === undefined) {
    kept = make();
    chunks.set(name, kept);
    if (chunks.size > SKETCH_CHUNKS) chunks.delete(chunks.keys().next().value!);
  }
  return kept;
}

/** The page of a request for more: the one it carries, else the one this partition applied for the chunk. */
function pageOf(h: Held, chunk: ChunkKey, slot: number, page: RoutedPage | null): RoutedPage | null {
  if (page !== null) return page;
  const applied = h.applied.get(chunk.inputPartition)?.get(chunkName(chunk));
  if (!applied) return null;
  if (applied.bySlot === null) applied.bySlot = new Map(applied.entries.pages.map((e) => [e.slot, e.page]));
  return applied.bySlot.get(slot) ?? null;
}

/**
 * A confirmation as the partition answers it: sketches sent earlier in the chunk filled in from
 * what it kept, new ones kept. Null when one refers to a sketch not kept (never, while owners
 * send as they should): the request is then not answered, and its owner gives the chunk up and
 * joins it again, sending every sketch anew.
 */
function withSketches(h: Held, record: ConfirmRecord): ConfirmRecord | null {
  const kept = recentChunk(h.sketches, record.chunk, () => new Map<number, Uint8Array | null>());
  const asks = [];
  for (const a of record.asks) {
    if (a.sent) {
      if (!kept.has(a.slot)) return null;
      asks.push({ slot: a.slot, sketch: kept.get(a.slot)!, sequences: a.sequences });
    } else {
      kept.set(a.slot, a.sketch);
      asks.push(a);
    }
  }
  return { ...record, asks };
}

export function createRoutedHolder(options: RoutedHolderOptions): RoutedHolder {
  const { kafka, topics, appender, logger, metrics } = options;
  const routing = new IndexRouting(options.plan, options.indexPartitions, options.secondStage?.bands ?? 0);
  const fingerprint = new Uint32Array(2);
  const held = new Map<number, Held>();
  let wanted: readonly number[] = [];
  let started = false;
  let stopped = false;
  /** The next order offset to read (records read wait in orderQueue until applied). */
  let orderNext = 0;
  /** The order records applied or skipped: the pages ordered before the next, the ends of the chunks applied, and the resume point for snapshots. */
  let order = new OrderResume();
  let prunedAt = Date.now();
  const orderQueue: { offset: number; record: OrderRecord }[] = [];
  let orderEnd = 0;
  /** Per input partition: the group's committed offset when partitions were last taken on; chunks below it are decided. */
  const committed = new Map<number, bigint>();
  let admin: Admin | null = null;
  const traffic: Traffic = newTraffic();

  let lock: Promise<void> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const run = lock.then(work);
    lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  };

  const consumer: Consumer = kafka.consumer({
    // A group of its own per start: nothing is committed in it, and every partition comes to this one member.
    groupId: `${options.groupId}-holder-${options.instanceId}-${process.pid}-${Date.now().toString(36)}`,
    readUncommitted: false,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxWaitTimeInMs: 200,
    allowAutoTopicCreation: false,
  });

  async function readCommitted(): Promise<void> {
    if (!admin) {
      const created = kafka.admin();
      await created.connect();
      admin = created;
    }
    const [topic] = await admin.fetchOffsets({ groupId: options.groupId, topics: [topics.pages] });
    for (const p of topic?.partitions ?? []) committed.set(p.partition, p.offset.startsWith('-') ? 0n : BigInt(p.offset));
  }

  /** The group's committed offset of input partition p, as last read. */
  const committedOf = (p: number): bigint => committed.get(p) ?? 0n;

  /** Whether the owner of the chunk's input partition may still wait for an answer about it. */
  const undecided = (chunk: { inputPartition: number; firstOffset: bigint }): boolean => chunk.firstOffset >= committedOf(chunk.inputPartition);

  /** No record key: the owner files a reply by its head (replyHead). */
  const reply = (inputPartition: number, value: Buffer): LogRecord => ({ topic: topics.replies, partition: inputPartition, key: null, value });

  /**
   * Replies are written once per fetch, not once per partition's batch: kafkajs hands a fetch's
   * partitions to onBatch one after another, and round two's requests reach several partitions
   * at once, so the replies of all of them go as one request when the fetch is through
   * (setImmediate runs after the batches' microtasks). Nothing waits for their acknowledgement:
   * a reply is a function of the two logs, the appender keeps their order, and a failure is fatal.
   */
  let pending: LogRecord[] = [];
  let flushing = false;
  const send = (out: LogRecord[]): void => {
    for (const r of out) pending.push(r);
    if (flushing) return;
    flushing = true;
    setImmediate(() => {
      flushing = false;
      const records = pending;
      pending = [];
      if (records.length === 0 || stopped) return;
      countWritten(traffic, records);
      appender.append(records).catch((error: unknown) => {
        metrics.errors.inc({ code: errorCode(error) });
        options.onFatal(error instanceof DedupError ? error : new DedupError('KAFKA', `writing the routed replies failed: ${(error as Error).message}`, { cause: error }));
      });
    });
  };

  /** A partition taken on has applied the order log as far as it was then: how long that took, and how it went. */
  const caughtUpNow = (q: number, h: Held): void => {
    const seconds = Number(process.hrtime.bigint() - h.takenOn!) / 1e9;
    h.takenOn = null;
    metrics.shardRestoreDuration.observe(seconds);
    logger.info('index partition restored from its logs', { partition: q, seconds: Math.round(seconds * 1000) / 1000, fromSnapshot: h.fromSnapshot, answeredAgain: h.answeredAgain, tableEntries: h.state.size, recordedWithoutProbe: h.replayed });
  };


  /** Answers the requests whose sequences the partition has applied. */
  function answerRequests(q: number, h: Held, out: LogRecord[]): void {
    for (const request of h.requests.takeReady(h.state.position)) {
      const { chunk } = request.record;
      if (!undecided(chunk)) continue;
      const key = chunkName(chunk);
      if (request.kind === 'more') {
        const answers: MoreAnswer[] = [];
        let missing = false;
        for (const { slot, sequence, after, page: carried } of request.record.asks) {
          const page = pageOf(h, chunk, slot, carried);
          if (page === null) {
            missing = true;
            break;
          }
          // Several pages of the cursor in one answer: what as many requests in a row would get,
          // for one round trip (a template page's candidates mostly fail their confirmation).
          const { unsettled, more } = h.state.more(page, sequence, after, MORE_PAGES_PER_ANSWER);
          answers.push({ slot, afterSequence: after.sequence, unsettled, more });
        }
        // Never, while owners send as they should: the owner gives the chunk up and joins it again, pages sent.
        if (missing) logger.warn('a request for more names a chunk this partition did not keep; left unanswered', { partition: q, chunk: key });
        else out.push(reply(chunk.inputPartition, encodeMoreReply({ chunk, indexPartition: q, trip: request.record.trip, answers })));
      } else {
        const answers: (ConfirmedAnswer | null)[] = [];
        for (const { sketch, sequences } of request.record.asks) {
          for (const sequence of sequences) {
            const id = h.state.confirm(sequence, sketch, fingerprint);
            answers.push(id === null ? null : { id, hi: fingerprint[0]!, lo: fingerprint[1]! });
          }
        }
        out.push(reply(chunk.inputPartition, encodeConfirmed({ chunk, indexPartition: q, trip: request.record.trip, answers })));
      }
    }
  }

  /** Applies the queued order records while their entries are here; returns the replies to write. */
  function drain(): LogRecord[] {
    const out: LogRecord[] = [];
    let applied = 0;
    while (orderQueue.length > 0) {
      const { offset, record } = orderQueue[0]!;
      const name = chunkName(record.chunk);
      const p = record.chunk.inputPartition;
      const skip = order.skips(record.chunk);
      const targets = skip ? [] : record.touched.filter((q) => held.has(q) && held.get(q)!.appliedNext <= offset);
      // A chunk whose verdicts are committed (a restore replaying the logs) is recorded without
      // its probes: nobody waits for its replies, nor asks about it again.
      const live = undecided(record.chunk);
      // Partitions whose snapshot holds the chunk already answer it again if its owner may still wait.
      const again = skip || !live ? [] : record.touched.filter((q) => held.has(q) && held.get(q)!.appliedNext > offset && held.get(q)!.again.wants(offset));
      // The entries were acknowledged before the order record: they come, if not read yet (a
      // restore reads a snapshot's undecided chunks' entries again: IndexLogResume).
      if ([...targets, ...again].some((q) => !held.get(q)!.entries.has(name))) break;
      orderQueue.shift();
      const base = order.pagesBefore;
      /** Round one's reply of partition q to the chunk, each page answered by `answer`; the chunk is kept for requests for more. */
      const replyTo = (q: number, h: Held, entries: EntriesRecord, answer: (page: RoutedPage, sequence: number) => PartitionReply): void => {
        recentChunk(h.applied, record.chunk, () => ({ entries, bySlot: null }));
        const replies: { slot: number; reply: PartitionReply }[] = [];
        for (const { slot, page } of entries.pages) {
          const r = answer(page, base + slot);
          if (r.settled !== null || r.unsettled.length > 0) replies.push({ slot, reply: r });
        }
        out.push(reply(p, encodeReply({ chunk: record.chunk, indexPartition: q, base, replies })));
      };
      for (const q of again) {
        const h = held.get(q)!;
        replyTo(q, h, h.entries.get(name)!.record, (page, sequence) => h.state.replyAsOf(page, sequence));
        h.answeredAgain++;
      }
      for (const q of targets) {
        const h = held.get(q)!;
        const entries = h.entries.get(name)!.record;
        applied += entries.pages.length;
        if (!live) {
          for (const { slot, page } of entries.pages) h.state.replay(page, base + slot);
          h.replayed += entries.pages.length;
          continue;
        }
        replyTo(q, h, entries, (page, sequence) => h.state.apply(page, sequence));
      }
      order.take(offset, record.chunk, record.span, record.pages);
      const end = order.spanEnd(p);
      for (const [q, h] of held) {
        if (h.appliedNext <= offset) h.appliedNext = offset + 1;
        // Answered again once: a later reading of the order log (another partition taken on) does not answer it again.
        h.again.passed(offset);
        // Caught up once the order log is read as far as it was when taken on: a partition from a
        // snapshot may hold all of it, but answers new chunks only once the order log gives their sequences.
        if (h.takenOn !== null && offset + 1 >= h.readyAt) caughtUpNow(q, h);
        // Entries of this input partition below the end of its last applied chunk will never be applied.
        for (const [key, e] of h.entries) if (e.record.chunk.inputPartition === p && e.record.chunk.firstOffset < end) h.entries.delete(key);
        answerRequests(q, h, out);
      }
    }
    if (applied > 0) metrics.sequenceApplied.inc(applied);
    return out;
  }

  async function onBatch({ batch, heartbeat, isStale }: EachBatchPayload): Promise<void> {
    if (stopped || isStale()) return;
    for (const m of batch.messages) countRead(traffic, m);
    await exclusive(async () => {
      if (batch.topic === topics.order) {
        orderEnd = Math.max(orderEnd, Number(batch.highWatermark));
        for (const m of batch.messages) {
          const offset = Number(m.offset);
          // Offsets of the order log are contiguous (no transactions write it); after a seek back, a stale batch is dropped.
          if (offset !== orderNext || m.value === null) continue;
          orderQueue.push({ offset, record: decodeOrder(m.value) });
          orderNext++;
        }
      } else {
        const h = held.get(batch.partition);
        if (!h) {
          consumer.pause([{ topic: topics.index, partitions: [batch.partition] }]);
          return;
        }
        for (const m of batch.messages) {
          const at = Number(m.offset);
          if (m.value === null) {
            h.resume.read(at);
            continue;
          }
          const kind = routedRecordKind(m.value);
          if (kind === 'entries') {
            const e = decodeEntries(m.value);
            // Entries of a chunk this partition has passed (seen again after a seek) are not kept.
            h.entries.set(chunkName(e.chunk), { record: e, offset: at });
            h.resume.seen(e.chunk, at);
            continue;
          }
          if (kind !== 'more' && kind !== 'confirm') {
            h.resume.read(at);
            continue;
          }
          // A request about a chunk whose verdicts are committed is answered by nobody: dropped
          // from its head, before its body is decoded (a restore reads every request in the log).
          const about = recordChunk(m.value);
          if (!undecided(about)) {
            h.resume.read(at);
            continue;
          }
          h.resume.seen(about, at);
          if (kind === 'more') h.requests.push({ kind, record: decodeMore(m.value) });
          else {
            const record = withSketches(h, decodeConfirm(m.value));
            if (record !== null) h.requests.push({ kind, record });
            else logger.warn('a confirmation refers to a sketch this partition did not keep; left unanswered', { partition: batch.partition, offset: m.offset });
          }
        }
      }
      const out = drain();
      for (const [q, h] of held) answerRequests(q, h, out);
      if (out.length > 0) send(out);
      if (order.retained > PRUNE_RECORDS && Date.now() - prunedAt >= PRUNE_MS) {
        // Without a snapshot for a while (or none but at the stop), the resume points still forget
        // what is committed: the order log's, and each held partition's in its index log (which
        // grows as fast, a chunk at a time, and was pruned with it).
        prunedAt = Date.now();
        await readCommitted();
        order.prune(committedOf);
        for (const h of held.values()) h.resume.prune(committedOf);
      }
      const every = options.snapshots?.intervalSeconds ?? 0;
      // One partition at a time, the one written longest ago: the holder applies nothing while it
      // writes, so the chunks waiting for it wait for one partition's file, not all of them.
      const due = every > 0 ? oldestSnapshot() : null;
      if (due !== null && Date.now() - due.h.snapshotAt >= every * 1000) {
        due.h.snapshotAt = Date.now();
        // A failed snapshot costs a longer restore later, never applying now.
        await writeSnapshots('interval', [due.q]).catch((error: unknown) => {
          metrics.snapshotFailures.inc();
          logger.error('index partition snapshots failed; applying goes on', { error });
        });
      }
    }).catch((error: unknown) => {
      metrics.errors.inc({ code: errorCode(error) });
      options.onFatal(error instanceof DedupError ? error : new DedupError('KAFKA', `applying the routed index failed: ${(error as Error).message}`, { cause: error }));
      throw error;
    });
    await heartbeat();
  }

  /** Makes the held set `wanted`: drops the others, starts the new ones from their snapshots or empty, and reads the logs again for them. */
  async function applyHolding(): Promise<void> {
    const keep = new Set(wanted);
    for (const q of [...held.keys()]) {
      if (!keep.has(q)) {
        held.get(q)!.close();
        held.delete(q);
        logger.info('index partition released', { partition: q });
      }
    }
    const fresh = wanted.filter((q) => !held.has(q));
    if (fresh.length > 0) {
      traffic.takeovers++;
      await readCommitted();
      // Ready once the new partitions have applied the order log as far as it is now.
      const readyAt = Math.max(orderEnd, Number((await endOffsets(kafka, topics.order))['0'] ?? '0'));
      const indexEnd = options.snapshots === undefined ? {} : await endOffsets(kafka, topics.index);
      const kept = held.size > 0;
      /** Each new partition's resume point in the order log (null: none, read it from its start). */
      const points: (OrderPoint | null)[] = [];
      for (const q of fresh) {
        const takenOn = process.hrtime.bigint();
        const newTier = () => (options.tierDir === undefined ? undefined : filePageTier(joinPath(options.tierDir, `partition-${q}`)));
        let tier = newTier();
        const snapshot = await loadSnapshot(q, tier, readyAt, BigInt(indexEnd[String(q)] ?? '0'));
        if (snapshot === null && tier !== undefined && options.snapshots !== undefined) {
          // A load that failed may have written to the tier: the empty state gets a new one.
          tier.close();
          tier = newTier();
        }
        const state = snapshot?.state ?? new IndexPartition(q, options.plan, options.k, options.secondStage, routing, tier);
        points.push(snapshot?.orderPoint ?? null);
        const orderFrom = snapshot?.orderNext ?? 0;
        const indexFrom = snapshot?.indexOffset ?? 0;
        const closeTier = tier;
        held.set(q, {
          state,
          close: () => closeTier?.close(),
          appliedNext: orderFrom,
          readyAt,
          entries: new Map(),
          resume: new IndexLogResume(indexFrom),
          again: new AnswerAgain(orderFrom),
          requests: new WaitingRequests(needs),
          sketches: new Map(),
          applied: new Map(),
          takenOn,
          replayed: 0,
          fromSnapshot: snapshot !== null,
          answeredAgain: 0,
          snapshotAt: Date.now(),
        });
        consumer.seek({ topic: topics.index, partition: q, offset: String(indexFrom) });
      }
      // The order log again from the least resume point of the new partitions (they apply what is
      // after their snapshots, and answer again the chunks before it not committed), not past where
      // the holder stands if it keeps partitions (they skip what they applied); from its start when
      // one has no snapshot, or one without a resume point.
      const { source, point } = takeoverFrom(kept ? order.next : null, points);
      if (point !== null) order = new OrderResume(point);
      orderQueue.length = 0;
      orderNext = order.next;
      consumer.seek({ topic: topics.order, partition: 0, offset: String(orderNext) });
      for (const q of fresh) if (readyAt <= orderNext) caughtUpNow(q, held.get(q)!);
      logger.info('index partitions taken on; replaying the order log and their index logs', { partitions: fresh, orderFrom: orderNext, orderFromOf: source, orderEnd });
    }
    metrics.shardsHeld.set(held.size);
    // Holding nothing, the holder applies no order record: the log waits for the next takeover.
    if (wanted.length === 0) consumer.pause([{ topic: topics.order, partitions: [0] }]);
    else consumer.resume([{ topic: topics.order, partitions: [0] }]);
    const all = await indexPartitions();
    const paused = all.filter((q) => !keep.has(q));
    if (paused.length > 0) consumer.pause([{ topic: topics.index, partitions: paused }]);
    if (wanted.length > 0) consumer.resume([{ topic: topics.index, partitions: [...wanted] }]);
  }

  /** The caught-up held partition whose snapshot was written longest ago (or taken on longest ago), if any. */
  const oldestSnapshot = (): { q: number; h: Held } | null => {
    let oldest: { q: number; h: Held } | null = null;
    for (const [q, h] of held) if (h.takenOn === null && (oldest === null || h.snapshotAt < oldest.h.snapshotAt)) oldest = { q, h };
    return oldest;
  };
  const snapshotPath = (dir: string, q: number): string => joinPath(dir, `partition-${q}${PARTITION_SNAPSHOT_SUFFIX}`);

  /**
   * Partition q's local snapshot, if there is one that fits these logs, plan and build; its page
   * store loads into `tier`. Null (logged) otherwise: the partition is then rebuilt from the logs.
   */
  async function loadSnapshot(q: number, tier: PageTier | undefined, orderEndNow: number, indexEnd: bigint): Promise<{ state: IndexPartition; orderNext: number; indexOffset: number; orderPoint: OrderPoint | null } | null> {
    const snapshots = options.snapshots;
    if (snapshots === undefined) return null;
    let loaded;
    try {
      loaded = await readPartitionSnapshot(snapshotPath(snapshots.dir, q), { plan: options.plan, k: options.k, secondStage: options.secondStage, routing, ...(tier === undefined ? {} : { tier }) });
    } catch (error) {
      metrics.errors.inc({ code: errorCode(error) });
      logger.error('index partition snapshot unreadable; restoring the partition from its logs', { partition: q, error });
      return null;
    }
    if (loaded === null) return null;
    const { header } = loaded;
    // k, the plan and the second stage the reader checked already (another is SNAPSHOT_INVALID).
    const reason =
      header.fingerprintVersion !== snapshots.fingerprintVersion ? `another fingerprint definition (${header.fingerprintVersion})`
      : header.indexTopic !== topics.index || header.orderTopic !== topics.order ? 'other topics'
      : header.partition !== q || header.indexPartitions !== options.indexPartitions ? 'another partition count'
      : header.clusterId !== snapshots.clusterId ? 'another Kafka cluster'
      : header.orderNext > orderEndNow || BigInt(header.indexOffset) > indexEnd ? 'logs that have since been recreated'
      : null;
    if (reason !== null) {
      logger.warn(`index partition snapshot was made with ${reason}; restoring the partition from its logs`, { partition: q });
      return null;
    }
    return { state: loaded.state, orderNext: header.orderNext, indexOffset: Number(header.indexOffset), orderPoint: orderPointOf(header) };
  }

  /**
   * Writes a snapshot of every held partition that has caught up (of `only`, if given): its state as of the order
   * offset it applies next, and where its index log must be read again from. The group's
   * committed offsets are read first, so that chunks decided since the partitions were taken on
   * are not read again.
   */
  async function writeSnapshots(reason: string, only?: readonly number[]): Promise<void> {
    const snapshots = options.snapshots;
    if (snapshots === undefined) return;
    const ready = [...held].filter(([q, h]) => h.takenOn === null && (only === undefined || only.includes(q)));
    if (ready.length === 0) return;
    const started = Date.now();
    await mkdir(snapshots.dir, { recursive: true });
    await readCommitted();
    // One resume point for all: every partition caught up has applied (or passed) every order record read.
    const point = order.resumePoint(committedOf);
    prunedAt = Date.now();
    let bytes = 0;
    for (const [q, h] of ready) {
      const indexOffset = h.resume.resumeOffset(committedOf, [...h.entries.values()].map((e) => e.offset));
      bytes += await writePartitionSnapshot(
        snapshotPath(snapshots.dir, q),
        {
          createdAt: new Date().toISOString(),
          clusterId: snapshots.clusterId,
          indexTopic: topics.index,
          orderTopic: topics.order,
          partition: q,
          indexPartitions: options.indexPartitions,
          k: options.k,
          plan: options.plan,
          secondStage: options.secondStage,
          fingerprintVersion: snapshots.fingerprintVersion,
          orderNext: h.appliedNext,
          ...orderPointFields(point),
          indexOffset: String(indexOffset),
        },
        h.state,
      );
    }
    metrics.snapshotAge.set(Date.now() / 1000);
    logger.info('index partition snapshots written', { reason, partitions: ready.map(([q]) => q), orderNext: order.next, orderFrom: point.offset, bytes, seconds: (Date.now() - started) / 1000 });
  }

  let partitionCount: number | null = null;
  async function indexPartitions(): Promise<number[]> {
    if (partitionCount === null) {
      if (!admin) {
        const created = kafka.admin();
        await created.connect();
        admin = created;
      }
      const { topics: meta } = await admin.fetchTopicMetadata({ topics: [topics.index] });
      partitionCount = meta[0]?.partitions.length ?? 0;
    }
    return Array.from({ length: partitionCount }, (_, q) => q);
  }

  return {
    get held() {
      return [...held.values()].map((h) => h.state);
    },
    traffic: () => ({ ...traffic }),
    get caughtUp() {
      return started && [...held.values()].every((h) => h.takenOn === null) && wanted.every((q) => held.has(q));
    },
    async start() {
      await consumer.connect();
      await consumer.subscribe({ topics: [topics.order, topics.index], fromBeginning: true });
      await consumer.run({ autoCommit: false, eachBatchAutoResolve: true, eachBatch: onBatch });
      // Nothing is held yet: every index partition waits, paused, for an assignment.
      await exclusive(async () => {
        const all = await indexPartitions();
        consumer.pause([{ topic: topics.index, partitions: all.filter((q) => !wanted.includes(q)) }]);
        started = true;
        await applyHolding();
      });
    },
    hold(partitions) {
      wanted = [...partitions];
      if (!started) return;
      exclusive(applyHolding).catch((error: unknown) => {
        metrics.errors.inc({ code: errorCode(error) });
        options.onFatal(error);
      });
    },
    async stop() {
      stopped = true;
      await consumer.stop().catch(() => undefined);
      await consumer.disconnect().catch(() => undefined);
      await exclusive(async () => {
        if (started) {
          await writeSnapshots('shutdown').catch((error: unknown) => {
            metrics.snapshotFailures.inc();
            logger.error('index partition snapshots at shutdown failed; the next start replays more of the logs', { error });
          });
        }
        for (const h of held.values()) h.close();
        held.clear();
      });
      await admin?.disconnect().catch(() => undefined);
    },
  };
}
