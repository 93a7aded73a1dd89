/**
 * The records of the routed sharded design (docs/architecture.md, "Sharded
 * mode, routed by table prefix"), in a compact binary form: a chunk's
 * entries for one index partition (dedup.index), the chunk's order record
 * (dedup.order), and one partition's reply to a chunk (dedup.replies).
 * Binary, not JSON or Avro: these are internal records, one per touched
 * partition per chunk, and their size is the design's cost per page (a
 * fingerprint is 8 bytes here, 16 hex digits in JSON).
 *
 * Every record starts with a version byte and a type byte. Integers are
 * big-endian; a chunk's first input offset is 8 bytes; a sequence is 6
 * bytes (2^48 pages), or a varint where a record lists many; ids are UTF-8
 * behind a 2-byte length. Version 2: round two's confirmations send a page's
 * sketch to a home once per chunk, their sequences as varint deltas; the id
 * store is one record per chunk (version 1 stored JSON, one record per id).
 * Version 3: a confirmation and an entry record write a whole sketch as its
 * differences from one before it in the record when that is shorter
 * (writeSketch); an entry's slot
 * is a delta from the previous entry's, and its flags, table mask presence and
 * band-key count share one byte (writePage); an unsettled candidate names its
 * home partition, not its fingerprint, which the confirmation of one that
 * agrees sends back (writeCandidate); slots in replies, confirmations and
 * answers for more are deltas, sequences varints.
 */
import { DedupError } from '../errors.js';
import { SKETCH_BINS, MINHASH_BINS } from '../fingerprint/feature-sketch.js';
import type { JoinedVerdict } from '../dedup/answer-join.js';
import type { PartitionAnswer, PartitionReply, RoutedPage } from '../dedup/index-partition.js';

const VERSION = 3;
const ENTRIES = 1;
const ORDER = 2;
const REPLY = 3;
const MORE = 4;
const CONFIRM = 5;
const CONFIRMED = 6;
const MORE_REPLY = 7;
const ID_STORE = 8;
const TAIL_BYTES = SKETCH_BINS - MINHASH_BINS;

/** A chunk: the input partition, its first input offset, and the attempt (a chunk decided again after a crash is another attempt). */
export interface ChunkKey {
  readonly inputPartition: number;
  readonly firstOffset: bigint;
  readonly attempt: number;
}

/** One page of a chunk as one index partition gets it: its slot in the chunk, and what routing sends there. */
export interface SlottedPage {
  readonly slot: number;
  readonly page: RoutedPage;
}

export interface EntriesRecord {
  readonly chunk: ChunkKey;
  readonly pages: readonly SlottedPage[];
}

export interface OrderRecord {
  readonly chunk: ChunkKey;
  /** Pages of the chunk that went to the index (re-sent ids did not). */
  readonly pages: number;
  /**
   * Input offsets the chunk covers, from its first: its records are those at offsets
   * firstOffset .. firstOffset + span - 1. A holder skips an order record of an input
   * partition that starts inside a chunk it already applied (a writer fenced too late);
   * the partition's next owner finds the chunks it must join by it.
   */
  readonly span: number;
  /** The index partitions the chunk touched, of `partitions`. */
  readonly touched: readonly number[];
  readonly partitions: number;
}

/**
 * Round two's requests for pages' next unsettled candidates at one partition, for one chunk and
 * one round trip (after replies that left some out): per page, its slot, its sequence, and the
 * cursor (the last candidate sent). The page as that partition got it is not sent again: the
 * partition kept it when it applied the chunk (routed-holder.ts); `page` is sent only when the
 * owner cannot be sure of that (a chunk joined after an earlier owner's). The answer is a
 * MoreReplyRecord of the same trip.
 */
export interface MoreRecord {
  readonly chunk: ChunkKey;
  readonly indexPartition: number;
  readonly trip: number;
  readonly asks: readonly MoreAsk[];
}

export interface MoreAsk {
  readonly slot: number;
  readonly sequence: number;
  readonly after: PartitionAnswer;
  readonly page: RoutedPage | null;
}

export interface ReplyRecord {
  readonly chunk: ChunkKey;
  readonly indexPartition: number;
  /** The global sequence of the chunk's slot 0: slot s was decided at base + s. */
  readonly base: number;
  /** Replies by slot; slots with neither a settled answer nor an unsettled candidate are left out. */
  readonly replies: readonly { slot: number; reply: PartitionReply }[];
}

/** A reply's per-page flags. */
const REPLY_SETTLED = 1;
const REPLY_MORE = 2;
/** The unsettled count in the flags' byte, 0 to 62 (UNSETTLED_PER_REPLY is 4); 63: a count byte follows. */
const REPLY_COUNT_SHIFT = 2;
const REPLY_COUNT_FOLLOWS = 63;

const FLAG_SHORT = 1;
const FLAG_SKETCH = 2;
const FLAG_TAIL = 4;
const FLAG_ID = 8;
/** With a tail: the page has a sketch (index-partition.ts sketchTail marks it in bin 0). */
const FLAG_KNOWN = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

class Writer {
  private buf: Uint8Array;
  private view: DataView;
  length = 0;

  /** `expected`: the bytes the record will probably take, so that it is written without growing. */
  constructor(expected = 256) {
    this.buf = new Uint8Array(Math.max(64, expected));
    this.view = new DataView(this.buf.buffer);
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.length++] = v;
  }

  u16(v: number): void {
    this.room(2);
    this.view.setUint16(this.length, v);
    this.length += 2;
  }

  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.length, v >>> 0);
    this.length += 4;
  }

  u48(v: number): void {
    this.u16(Math.floor(v / 4294967296));
    this.u32(v % 4294967296);
  }

  /** An unsigned varint (7 bits a byte, low first), for integers up to 2^53. */
  uvar(v: number): void {
    this.room(8);
    const buf = this.buf;
    while (v >= 0x80) {
      buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    buf[this.length++] = v;
  }

  /** A signed varint (zigzag), for the difference of two sequences. */
  svar(v: number): void {
    this.uvar(v < 0 ? -2 * v - 1 : 2 * v);
  }

  u64(v: bigint): void {
    this.room(8);
    this.view.setBigUint64(this.length, v);
    this.length += 8;
  }

  bytes(b: Uint8Array, from = 0, to = b.length): void {
    const n = to - from;
    this.room(n);
    const buf = this.buf;
    // Short runs (a sketch, its tail) copy faster by hand than through a subarray and set().
    for (let i = 0; i < n; i++) buf[this.length + i] = b[from + i]!;
    this.length += n;
  }

  text(s: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; encoded in place, behind its length.
    this.room(2 + 3 * s.length);
    const buf = this.buf;
    const at = this.length + 2;
    // Ids are mostly ASCII (URLs): copied by hand, which is several times faster than encodeInto on a fresh subarray.
    let i = 0;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[at + i] = c;
    }
    if (i === s.length) {
      if (i > 0xffff) throw new DedupError('PAGE_INVALID', `a page id of ${i} bytes is longer than the 65,535 a routed record carries`);
      this.view.setUint16(this.length, i);
      this.length = at + i;
      return;
    }
    const { written } = encoder.encodeInto(s, buf.subarray(at));
    if (written > 0xffff) throw new DedupError('PAGE_INVALID', `a page id of ${written} bytes is longer than the 65,535 a routed record carries`);
    this.view.setUint16(this.length, written);
    this.length += 2 + written;
  }

  done(): Buffer {
    return Buffer.from(this.buf.buffer, 0, this.length);
  }
}

class Reader {
  private at = 0;
  private readonly view: DataView;

  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new DedupError('KAFKA', `a routed record ends after ${this.buf.length} bytes, inside a field`);
  }

  u8(): number {
    this.need(1);
    return this.buf[this.at++]!;
  }

  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.at);
    this.at += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.at);
    this.at += 4;
    return v;
  }

  u48(): number {
    return this.u16() * 4294967296 + this.u32();
  }

  uvar(): number {
    let v = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      if (i >= 8) throw new DedupError('KAFKA', 'a routed record has a varint longer than 8 bytes');
      const b = this.u8();
      v += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return v;
      scale *= 0x80;
    }
  }

  svar(): number {
    const z = this.uvar();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.at);
    this.at += 8;
    return v;
  }

  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.slice(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** Copies the next n bytes into `to` at `at`: a tail is 8 bytes, cheaper by hand than a slice and set(). */
  into(to: Uint8Array, at: number, n: number): void {
    this.need(n);
    const buf = this.buf;
    for (let i = 0; i < n; i++) to[at + i] = buf[this.at + i]!;
    this.at += n;
  }

  text(): string {
    const n = this.u16();
    this.need(n);
    // Decoded from the record's own bytes, not a copy.
    const out = decoder.decode(this.buf.subarray(this.at, this.at + n));
    this.at += n;
    return out;
  }

  end(): void {
    if (this.at !== this.buf.length) throw new DedupError('KAFKA', `a routed record has ${this.buf.length - this.at} bytes after its last field`);
  }
}

function writeChunk(w: Writer, chunk: ChunkKey): void {
  w.u16(chunk.inputPartition);
  w.u64(chunk.firstOffset);
  w.u16(chunk.attempt);
}

function readChunk(r: Reader): ChunkKey {
  return { inputPartition: r.u16(), firstOffset: r.u64(), attempt: r.u16() };
}

function header(r: Reader, type: number): void {
  const version = r.u8();
  if (version !== VERSION) throw new DedupError('KAFKA', `a routed record of version ${version}; this build reads version ${VERSION}`);
  const got = r.u8();
  if (got !== type) throw new DedupError('KAFKA', `a routed record of type ${got} where type ${type} belongs`);
}

/**
 * The sketch a partition gets: the whole one at the page's home (tables bit 0), else its tail;
 * routing decides which, this only writes it.
 */
export function encodeEntries(record: EntriesRecord): Buffer {
  let expected = 16;
  for (const { page } of record.pages) expected += entryBytes(page);
  const w = new Writer(expected);
  w.u8(VERSION);
  w.u8(ENTRIES);
  writeChunk(w, record.chunk);
  w.u16(record.pages.length);
  let previous = 0;
  const written = new SketchPool();
  for (const { slot, page } of record.pages) {
    writePage(w, slot - previous, page, written);
    previous = slot;
  }
  return w.done();
}

export function decodeEntries(value: Uint8Array): EntriesRecord {
  const r = new Reader(value);
  header(r, ENTRIES);
  const chunk = readChunk(r);
  const count = r.u16();
  const pages: SlottedPage[] = [];
  let previous = 0;
  const written: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const entry = readPage(r, previous, written);
    pages.push(entry);
    previous = entry.slot;
  }
  r.end();
  return { chunk, pages };
}

export function encodeMore(record: MoreRecord): Buffer {
  let expected = 24;
  for (const a of record.asks) expected += 40 + (a.page === null ? 0 : entryBytes(a.page));
  const w = new Writer(expected);
  w.u8(VERSION);
  w.u8(MORE);
  writeChunk(w, record.chunk);
  w.u16(record.indexPartition);
  w.u16(record.trip);
  w.u16(record.asks.length);
  for (const a of record.asks) {
    w.uvar(a.sequence);
    writeCandidate(w, a.after);
    if (a.page === null) {
      w.u8(0);
      w.u16(a.slot);
    } else {
      w.u8(1);
      writePage(w, a.slot, a.page, new SketchPool());
    }
  }
  return w.done();
}

export function decodeMore(value: Uint8Array): MoreRecord {
  const r = new Reader(value);
  header(r, MORE);
  const chunk = readChunk(r);
  const indexPartition = r.u16();
  const trip = r.u16();
  const asks: MoreAsk[] = [];
  for (let n = r.u16(); n > 0; n--) {
    const sequence = r.uvar();
    if (sequence >= 2 ** 48) throw new DedupError('KAFKA', `a request for more for sequence ${sequence}`);
    const after = readCandidate(r);
    const withPage = r.u8();
    if (withPage > 1) throw new DedupError('KAFKA', `a request for more with page flag ${withPage}`);
    if (withPage === 0) asks.push({ slot: r.u16(), sequence, after, page: null });
    else {
      const { slot, page } = readPage(r, 0, []);
      asks.push({ slot, sequence, after, page });
    }
  }
  r.end();
  return { chunk, indexPartition, trip, asks };
}

/** About the bytes writePage takes (ids counted at one byte a character). */
function entryBytes(page: RoutedPage): number {
  return 16 + 4 * page.bandKeys.length + (page.sketch === null ? 0 : 1 + SKETCH_BINS) + (page.id === null ? 0 : 2 + page.id.length);
}

/**
 * An entry's head byte: the flags above, whether a table mask follows (a page here by its band
 * keys alone, most of a page's partitions, has none), and its band-key count when it is 0 to 2
 * (most partitions get one key of a page), else a varint count follows.
 */
const HEAD_TABLES = 32;
const HEAD_KEYS_SHIFT = 6;
const HEAD_KEYS_FOLLOW = 3;

/**
 * The sketch a partition gets: the whole one at the page's home (tables bit 0), else its tail;
 * routing decides which, this only writes it, the whole one as writeSketch does (`written`: the
 * record's whole sketches before it). `slotDelta`: the slot less the previous entry's of the
 * record (slots grow in a record), a signed varint: a byte, not two.
 */
function writePage(w: Writer, slotDelta: number, page: RoutedPage, written: SketchPool): void {
  const home = (page.tables & 1) !== 0;
  const tail = page.sketch !== null && !home;
  const keys = page.bandKeys.length;
  const flags = (page.short ? FLAG_SHORT : 0) | (page.sketch === null ? 0 : home ? FLAG_SKETCH : FLAG_TAIL) | (page.id === null ? 0 : FLAG_ID) | (tail && page.sketch![0] !== 0 ? FLAG_KNOWN : 0);
  w.svar(slotDelta);
  w.u8(flags | (page.tables !== 0 ? HEAD_TABLES : 0) | (Math.min(keys, HEAD_KEYS_FOLLOW) << HEAD_KEYS_SHIFT));
  if (page.tables !== 0) w.uvar(page.tables);
  if (keys >= HEAD_KEYS_FOLLOW) w.uvar(keys);
  w.u32(page.hi);
  w.u32(page.lo);
  for (const key of page.bandKeys) w.u32(key);
  if (page.sketch !== null) {
    if (home) writeSketch(w, page.sketch, written);
    else w.bytes(page.sketch, MINHASH_BINS, SKETCH_BINS);
  }
  if (page.id !== null) w.text(page.id);
}

/** An entry as writePage wrote it, its slot relative to `previous`, its whole sketch perhaps relative to one of `written`. */
function readPage(r: Reader, previous: number, written: Uint8Array[]): SlottedPage {
  const slot = previous + r.svar();
  if (!(slot >= 0 && slot <= 0xffff)) throw new DedupError('KAFKA', `an entry of slot ${slot}`);
  const head = r.u8();
  const flags = head & (HEAD_TABLES - 1);
  const tables = head & HEAD_TABLES ? r.uvar() : 0;
  if (tables >= 2 ** 31 || (head & HEAD_TABLES && tables === 0)) throw new DedupError('KAFKA', `an entry with table mask ${tables}`);
  const keysInHead = head >>> HEAD_KEYS_SHIFT;
  const keys = keysInHead === HEAD_KEYS_FOLLOW ? r.uvar() : keysInHead;
  if (keys > 0xff) throw new DedupError('KAFKA', `an entry with ${keys} band keys`);
  const hi = r.u32();
  const lo = r.u32();
  const bandKeys: number[] = [];
  for (let k = 0; k < keys; k++) bandKeys.push(r.u32());
  let sketch: Uint8Array | null = null;
  if (flags & FLAG_SKETCH) {
    const how = r.u8();
    if (how === SKETCH_HERE) sketch = r.bytes(SKETCH_BINS);
    else if (how === SKETCH_DELTA) sketch = readSketchDelta(r, written);
    else throw new DedupError('KAFKA', `an entry's sketch with flag ${how}`);
    written.push(sketch);
  } else if (flags & FLAG_TAIL) {
    // The tail's form at a partition other than the home (index-partition.ts sketchTail): bin 0 marks a known sketch.
    sketch = new Uint8Array(SKETCH_BINS);
    r.into(sketch, MINHASH_BINS, TAIL_BYTES);
    sketch[0] = flags & FLAG_KNOWN ? 1 : 0;
  }
  const id = flags & FLAG_ID ? r.text() : null;
  return { slot, page: { id, hi, lo, short: (flags & FLAG_SHORT) !== 0, fetchedAt: 0, sketch, tables, bandKeys } };
}

export function encodeOrder(record: OrderRecord): Buffer {
  const w = new Writer();
  w.u8(VERSION);
  w.u8(ORDER);
  writeChunk(w, record.chunk);
  w.u16(record.pages);
  w.u32(record.span);
  w.u16(record.partitions);
  const bitmap = new Uint8Array(Math.ceil(record.partitions / 8));
  for (const q of record.touched) {
    if (!(q >= 0 && q < record.partitions)) throw new RangeError(`partition ${q} is outside 0..${record.partitions - 1}`);
    bitmap[q >>> 3]! |= 1 << (q & 7);
  }
  w.bytes(bitmap);
  return w.done();
}

export function decodeOrder(value: Uint8Array): OrderRecord {
  const r = new Reader(value);
  header(r, ORDER);
  const chunk = readChunk(r);
  const pages = r.u16();
  const span = r.u32();
  const partitions = r.u16();
  const bitmap = r.bytes(Math.ceil(partitions / 8));
  r.end();
  const touched: number[] = [];
  for (let q = 0; q < partitions; q++) if (bitmap[q >>> 3]! & (1 << (q & 7))) touched.push(q);
  return { chunk, pages, span, touched, partitions };
}

/** An answer's first byte: its distance (0..64) in the low bits, this bit when an id follows. */
const ANSWER_ID = 0x80;

function writeAnswer(w: Writer, a: PartitionAnswer): void {
  if (!(a.distance >= 0 && a.distance <= 64)) throw new RangeError(`an answer at distance ${a.distance} (0..64)`);
  w.u8(a.distance | (a.id === null ? 0 : ANSWER_ID));
  // A varint: sequences take 3 or 4 bytes for the first billions of pages, not 6.
  w.uvar(a.sequence);
  w.u32(a.hi);
  w.u32(a.lo);
  if (a.id !== null) w.text(a.id);
}

/**
 * An unsettled candidate (a reply's, an answer for more's, a request for more's cursor): its
 * distance, its sequence and its home partition, not its fingerprint, which only the home's
 * confirmation of it sends back (8 bytes saved on each of the many candidates sent, against 8 on
 * the few that agree). Read back with hi and lo 0.
 */
function writeCandidate(w: Writer, a: PartitionAnswer): void {
  if (!(a.distance >= 0 && a.distance <= 64)) throw new RangeError(`an answer at distance ${a.distance} (0..64)`);
  if (a.id !== null || a.home === undefined) throw new RangeError(`an unsettled candidate (sequence ${a.sequence}) is sent without an id and with its home`);
  w.u8(a.distance);
  w.uvar(a.sequence);
  w.uvar(a.home);
}

function readCandidate(r: Reader): PartitionAnswer {
  const distance = r.u8();
  if (distance > 64) throw new DedupError('KAFKA', `an answer at distance ${distance}`);
  const sequence = r.uvar();
  if (sequence >= 2 ** 48) throw new DedupError('KAFKA', `an answer names sequence ${sequence}`);
  const home = r.uvar();
  if (home > 0xffff) throw new DedupError('KAFKA', `a candidate whose home is partition ${home}`);
  return { id: null, distance, sequence, hi: 0, lo: 0, home };
}

function readAnswer(r: Reader): PartitionAnswer {
  const head = r.u8();
  const distance = head & ~ANSWER_ID;
  if (distance > 64) throw new DedupError('KAFKA', `an answer at distance ${distance}`);
  const sequence = r.uvar();
  if (sequence >= 2 ** 48) throw new DedupError('KAFKA', `an answer names sequence ${sequence}`);
  const hi = r.u32();
  const lo = r.u32();
  const id = head & ANSWER_ID ? r.text() : null;
  return { id, distance, sequence, hi, lo };
}

export function encodeReply(record: ReplyRecord): Buffer {
  // A settled answer with an id is about 60 bytes, an unsettled one 20.
  let expected = 16;
  for (const { reply } of record.replies) expected += 4 + (reply.settled === null ? 0 : 80) + 20 * reply.unsettled.length;
  const w = new Writer(expected);
  w.u8(VERSION);
  w.u8(REPLY);
  writeChunk(w, record.chunk);
  w.u16(record.indexPartition);
  w.u48(record.base);
  w.u16(record.replies.length);
  let previous = 0;
  for (const { slot, reply } of record.replies) {
    // Replies come in slot order: the slot as a delta, a byte. The flags and the count share a byte.
    w.svar(slot - previous);
    previous = slot;
    if (reply.unsettled.length > 0xff) throw new RangeError(`${reply.unsettled.length} unsettled candidates in one reply (at most 255)`);
    const count = Math.min(reply.unsettled.length, REPLY_COUNT_FOLLOWS);
    w.u8((reply.settled === null ? 0 : REPLY_SETTLED) | (reply.more ? REPLY_MORE : 0) | (count << REPLY_COUNT_SHIFT));
    if (count === REPLY_COUNT_FOLLOWS) w.u8(reply.unsettled.length);
    if (reply.settled !== null) writeAnswer(w, reply.settled);
    for (const c of reply.unsettled) writeCandidate(w, c);
  }
  return w.done();
}

export function decodeReply(value: Uint8Array): ReplyRecord {
  const r = new Reader(value);
  header(r, REPLY);
  const chunk = readChunk(r);
  const indexPartition = r.u16();
  const base = r.u48();
  const count = r.u16();
  const replies: { slot: number; reply: PartitionReply }[] = [];
  let slot = 0;
  for (let i = 0; i < count; i++) {
    slot += r.svar();
    if (!(slot >= 0 && slot <= 0xffff)) throw new DedupError('KAFKA', `a reply to slot ${slot}`);
    const flags = r.u8();
    const inHead = flags >>> REPLY_COUNT_SHIFT;
    const candidates = inHead === REPLY_COUNT_FOLLOWS ? r.u8() : inHead;
    const settled = flags & REPLY_SETTLED ? readAnswer(r) : null;
    const unsettled: PartitionAnswer[] = [];
    for (let n = candidates; n > 0; n--) unsettled.push(readCandidate(r));
    replies.push({ slot, reply: { settled, unsettled, more: (flags & REPLY_MORE) !== 0 } });
  }
  r.end();
  return { chunk, indexPartition, base, replies };
}

/**
 * Round two's request to one home partition, for one chunk and one round trip: for each page
 * (slot), its whole sketch and the candidates held there (by sequence) whose sketches must agree
 * with it (IndexPartition.confirm). The answer is a ConfirmedRecord of the same trip.
 */
export interface ConfirmRecord {
  readonly chunk: ChunkKey;
  readonly indexPartition: number;
  /** The owner's round trip of this chunk: the answer carries it back. */
  readonly trip: number;
  readonly asks: readonly ConfirmAsk[];
}

/**
 * One page's confirmations at one home. `sent`: the page's sketch went to this home in an
 * earlier confirmation of the same chunk, so it is not sent again (`sketch` is then not
 * written; the holder takes the one it kept, routed-holder.ts).
 */
export interface ConfirmAsk {
  readonly slot: number;
  readonly sketch: Uint8Array | null;
  readonly sent?: boolean;
  readonly sequences: readonly number[];
}

/**
 * A confirmation's sketch flag: none, the sketch follows, the one sent earlier in the chunk, or
 * the sketch written as the bytes where it differs from one written before it in the record
 * (writeSketch, which an entry's whole sketch is written by too).
 */
const SKETCH_NONE = 0;
const SKETCH_HERE = 1;
const SKETCH_SENT = 2;
const SKETCH_DELTA = 3;
/** A confirmation's ask: its candidate count above the sketch's flag, 0 to 62; 63: a count follows. */
const CONFIRM_COUNT_SHIFT = 2;
const CONFIRM_COUNT_FOLLOWS = 63;

/** How many of the sketches written before it in a record a sketch is compared with, newest first. */
const DELTA_REFERENCES = 64;
const SKETCH_MASK_BYTES = SKETCH_BINS / 8;

/**
 * Writes a sketch of a record behind its flag: whole, or as its differences from the sketch
 * written before it in the same record that shares the most bytes with it (the distance back,
 * a bitmap of the bytes that are the same, the bytes that differ) when that is shorter. The
 * pages of a chunk that round two confirms are mostly pages of a few templates: their sketches
 * share many bins, so a home's confirmation carries most of them in a fraction of 64 bytes.
 * `written` gets the sketch, for the sketches after it. `flagBits`: what else the flag's byte
 * carries, above its two bits.
 */
function writeSketch(w: Writer, sketch: Uint8Array, written: SketchPool, flagBits = 0): void {
  const at = written.add(sketch);
  // The differences pay (a varint of one byte, the mask and the bytes that differ, against the
  // whole sketch) only from a reference with more equal bytes than that.
  const best = written.closest(at, 1 + SKETCH_MASK_BYTES);
  // The flag either way; then a varint of one byte (back < DELTA_REFERENCES), the mask and the bytes that differ.
  if (best >= 0) {
    const pool = written.bytes;
    const ref = best * SKETCH_BINS;
    const own = at * SKETCH_BINS;
    w.u8(SKETCH_DELTA | flagBits);
    w.uvar(at - 1 - best);
    for (let m = 0; m < SKETCH_MASK_BYTES; m++) {
      let bits = 0;
      for (let b = 0; b < 8; b++) if (pool[ref + 8 * m + b] === pool[own + 8 * m + b]) bits |= 1 << b;
      w.u8(bits);
    }
    for (let i = 0; i < SKETCH_BINS; i++) if (pool[ref + i] !== pool[own + i]) w.u8(pool[own + i]!);
  } else {
    w.u8(SKETCH_HERE | flagBits);
    w.bytes(sketch, 0, SKETCH_BINS);
  }
}

/**
 * The whole sketches an encoder wrote in a record, copied into one array: compared a 32-bit word
 * at a time (the bytes of a word that are equal counted without a branch), the closest of the
 * last DELTA_REFERENCES costs about a microsecond, where a byte at a time over arrays of several
 * kinds cost over ten.
 */
class SketchPool {
  bytes = new Uint8Array(SKETCH_BINS * 16);
  private words = new Uint32Array(this.bytes.buffer);
  private count = 0;

  /** Copies a sketch in; returns its index. */
  add(sketch: Uint8Array): number {
    if ((this.count + 1) * SKETCH_BINS > this.bytes.length) {
      const next = new Uint8Array(this.bytes.length * 2);
      next.set(this.bytes);
      this.bytes = next;
      this.words = new Uint32Array(next.buffer);
    }
    const at = this.count * SKETCH_BINS;
    for (let i = 0; i < SKETCH_BINS; i++) this.bytes[at + i] = sketch[i]!;
    return this.count++;
  }

  /**
   * Of the DELTA_REFERENCES sketches before sketch `at`, the one with the most equal bytes (the
   * latest of a tie); -1 when none has more than `floor`.
   */
  closest(at: number, floor: number): number {
    const words = this.words;
    const own = at * WORDS_PER_SKETCH;
    let best = -1;
    let bestSame = floor;
    for (let j = at - 1; j >= 0 && j >= at - DELTA_REFERENCES; j--) {
      const ref = j * WORDS_PER_SKETCH;
      // A sketch that already differs in as many bytes as the best leaves equal cannot beat it
      // (a tie keeps the later one, met first): a record's near copies are told apart from it in
      // a few words.
      const enough = SKETCH_BINS - bestSame;
      let differ = 0;
      for (let k = 0; k < WORDS_PER_SKETCH && differ < enough; k++) {
        const x = words[own + k]! ^ words[ref + k]!;
        // The high bit of each byte of x that is not zero, then their count.
        const high = (((x & 0x7f7f7f7f) + 0x7f7f7f7f) | x) & 0x80808080;
        differ += Math.imul(high >>> 7, 0x01010101) >>> 24;
      }
      const same = SKETCH_BINS - differ;
      if (same > bestSame) {
        bestSame = same;
        best = j;
      }
    }
    return best;
  }
}

const WORDS_PER_SKETCH = SKETCH_BINS / 4;

/** Reads what writeSketch wrote after a SKETCH_DELTA flag. */
function readSketchDelta(r: Reader, written: readonly Uint8Array[]): Uint8Array {
  const back = r.uvar();
  if (back >= written.length) throw new DedupError('KAFKA', `a sketch written as the differences from one ${back + 1} back, of ${written.length}`);
  const ref = written[written.length - 1 - back]!;
  const mask = r.bytes(SKETCH_MASK_BYTES);
  const sketch = new Uint8Array(SKETCH_BINS);
  for (let i = 0; i < SKETCH_BINS; i++) sketch[i] = mask[i >>> 3]! & (1 << (i & 7)) ? ref[i]! : r.u8();
  return sketch;
}

/**
 * The home's answers to a ConfirmRecord, in the order it asked (ask by ask, sequence by
 * sequence): the candidate's id and fingerprint when the sketches agree, else null. Slots and
 * sequences are not sent back; the owner pairs the answers with its request (pairAnswers).
 */
export interface ConfirmedRecord {
  readonly chunk: ChunkKey;
  readonly indexPartition: number;
  readonly trip: number;
  readonly answers: readonly (ConfirmedAnswer | null)[];
}

/** A candidate whose sketch agrees: its id and its fingerprint (a verdict names both; the candidate came by sequence and home). */
export interface ConfirmedAnswer {
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
}

/** A ConfirmedRecord's answers paired with the request they answer; a count that differs is refused. */
export function pairAnswers(request: ConfirmRecord, answers: readonly (ConfirmedAnswer | null)[]): { slot: number; sequence: number; agreed: ConfirmedAnswer | null }[] {
  const out: { slot: number; sequence: number; agreed: ConfirmedAnswer | null }[] = [];
  let i = 0;
  for (const a of request.asks) for (const sequence of a.sequences) out.push({ slot: a.slot, sequence, agreed: i < answers.length ? answers[i++]! : null });
  if (out.length !== answers.length) throw new DedupError('KAFKA', `${answers.length} answers to a confirmation of ${out.length} candidates (chunk ${chunkName(request.chunk)}, partition ${request.indexPartition})`);
  return out;
}

/** A partition's answers to a MoreRecord: per page asked, the next unsettled candidates after its cursor `afterSequence`. */
export interface MoreReplyRecord {
  readonly chunk: ChunkKey;
  readonly indexPartition: number;
  readonly trip: number;
  readonly answers: readonly MoreAnswer[];
}

export interface MoreAnswer {
  readonly slot: number;
  readonly afterSequence: number;
  readonly unsettled: readonly PartitionAnswer[];
  readonly more: boolean;
}

export function encodeConfirm(record: ConfirmRecord): Buffer {
  let expected = 32;
  for (const a of record.asks) expected += 8 + (a.sent ? 0 : SKETCH_BINS) + 4 * a.sequences.length;
  const w = new Writer(expected);
  w.u8(VERSION);
  w.u8(CONFIRM);
  writeChunk(w, record.chunk);
  w.u16(record.indexPartition);
  w.u16(record.trip);
  w.u16(record.asks.length);
  const written = new SketchPool();
  let previousSlot = 0;
  let previousFirst = 0;
  for (const a of record.asks) {
    // Asks come mostly in slot order: the slot as a signed delta, a byte.
    w.svar(a.slot - previousSlot);
    previousSlot = a.slot;
    // The sketch's flag and the candidate count (0 to 62; 63: a count follows) share a byte.
    const count = Math.min(a.sequences.length, CONFIRM_COUNT_FOLLOWS);
    const countBits = count << CONFIRM_COUNT_SHIFT;
    if (a.sent) w.u8(SKETCH_SENT | countBits);
    else if (a.sketch === null) w.u8(SKETCH_NONE | countBits);
    else writeSketch(w, a.sketch, written, countBits);
    if (count === CONFIRM_COUNT_FOLLOWS) w.uvar(a.sequences.length);
    // Candidates of one page are near each other in the sequence, and the pages of one template
    // at one home have the same first candidates: the first as a delta from the previous ask's
    // first, the rest from the one before them, a byte or two each.
    let previous = previousFirst;
    a.sequences.forEach((q, i) => {
      w.svar(q - previous);
      previous = q;
      if (i === 0) previousFirst = q;
    });
  }
  return w.done();
}

export function decodeConfirm(value: Uint8Array): ConfirmRecord {
  const r = new Reader(value);
  header(r, CONFIRM);
  const chunk = readChunk(r);
  const indexPartition = r.u16();
  const trip = r.u16();
  const asks: ConfirmAsk[] = [];
  const written: Uint8Array[] = [];
  let slot = 0;
  let previousFirst = 0;
  for (let n = r.u16(); n > 0; n--) {
    slot += r.svar();
    if (!(slot >= 0 && slot <= 0xffff)) throw new DedupError('KAFKA', `a confirmation for slot ${slot}`);
    const head = r.u8();
    const flag = head & ((1 << CONFIRM_COUNT_SHIFT) - 1);
    const sketch = flag === SKETCH_HERE ? r.bytes(SKETCH_BINS) : flag === SKETCH_DELTA ? readSketchDelta(r, written) : null;
    if (sketch !== null) written.push(sketch);
    const inHead = head >>> CONFIRM_COUNT_SHIFT;
    const count = inHead === CONFIRM_COUNT_FOLLOWS ? r.uvar() : inHead;
    if (count > value.length) throw new DedupError('KAFKA', `a confirmation of ${count} candidates in ${value.length} bytes`);
    const sequences: number[] = [];
    let previous = previousFirst;
    for (let m = 0; m < count; m++) {
      previous += r.svar();
      if (!(previous >= 0 && previous < 2 ** 48)) throw new DedupError('KAFKA', `a confirmation names sequence ${previous}`);
      sequences.push(previous);
      if (m === 0) previousFirst = previous;
    }
    asks.push(flag === SKETCH_SENT ? { slot, sketch, sent: true, sequences } : { slot, sketch, sequences });
  }
  r.end();
  return { chunk, indexPartition, trip, asks };
}

export function encodeConfirmed(record: ConfirmedRecord): Buffer {
  let expected = 32 + record.answers.length / 8;
  for (const a of record.answers) expected += a === null ? 0 : 10 + 3 * a.id.length;
  const w = new Writer(expected);
  w.u8(VERSION);
  w.u8(CONFIRMED);
  writeChunk(w, record.chunk);
  w.u16(record.indexPartition);
  w.u16(record.trip);
  w.uvar(record.answers.length);
  // A bit per answer (agrees), then the ids and fingerprints of those that agree: most candidates asked do not.
  const bitmap = new Uint8Array(Math.ceil(record.answers.length / 8));
  record.answers.forEach((a, i) => {
    if (a !== null) bitmap[i >>> 3]! |= 1 << (i & 7);
  });
  w.bytes(bitmap);
  for (const a of record.answers) {
    if (a === null) continue;
    w.text(a.id);
    w.u32(a.hi);
    w.u32(a.lo);
  }
  return w.done();
}

export function decodeConfirmed(value: Uint8Array): ConfirmedRecord {
  const r = new Reader(value);
  header(r, CONFIRMED);
  const chunk = readChunk(r);
  const indexPartition = r.u16();
  const trip = r.u16();
  const count = r.uvar();
  if (count > value.length * 8) throw new DedupError('KAFKA', `a confirmation answer names ${count} answers in ${value.length} bytes`);
  const bitmap = r.bytes(Math.ceil(count / 8));
  const answers: (ConfirmedAnswer | null)[] = [];
  for (let i = 0; i < count; i++) answers.push(bitmap[i >>> 3]! & (1 << (i & 7)) ? { id: r.text(), hi: r.u32(), lo: r.u32() } : null);
  r.end();
  return { chunk, indexPartition, trip, answers };
}

export function encodeMoreReply(record: MoreReplyRecord): Buffer {
  let expected = 24;
  for (const a of record.answers) expected += 12 + 40 * a.unsettled.length;
  const w = new Writer(expected);
  w.u8(VERSION);
  w.u8(MORE_REPLY);
  writeChunk(w, record.chunk);
  w.u16(record.indexPartition);
  w.u16(record.trip);
  w.u16(record.answers.length);
  let previousSlot = 0;
  for (const a of record.answers) {
    w.svar(a.slot - previousSlot);
    previousSlot = a.slot;
    w.uvar(a.afterSequence);
    w.u8(a.more ? 1 : 0);
    if (a.unsettled.length > 0xffff) throw new RangeError(`${a.unsettled.length} unsettled candidates in one answer (at most 65,535)`);
    w.uvar(a.unsettled.length);
    for (const c of a.unsettled) writeCandidate(w, c);
  }
  return w.done();
}

export function decodeMoreReply(value: Uint8Array): MoreReplyRecord {
  const r = new Reader(value);
  header(r, MORE_REPLY);
  const chunk = readChunk(r);
  const indexPartition = r.u16();
  const trip = r.u16();
  const answers: MoreAnswer[] = [];
  let slot = 0;
  for (let n = r.u16(); n > 0; n--) {
    slot += r.svar();
    if (!(slot >= 0 && slot <= 0xffff)) throw new DedupError('KAFKA', `an answer for more for slot ${slot}`);
    const afterSequence = r.uvar();
    if (afterSequence >= 2 ** 48) throw new DedupError('KAFKA', `an answer for more after sequence ${afterSequence}`);
    const more = r.u8() === 1;
    const unsettled: PartitionAnswer[] = [];
    const count = r.uvar();
    if (count > 0xffff) throw new DedupError('KAFKA', `an answer for more with ${count} candidates`);
    for (let m = count; m > 0; m--) unsettled.push(readCandidate(r));
    answers.push({ slot, afterSequence, unsettled, more });
  }
  r.end();
  return { chunk, indexPartition, trip, answers };
}

/** The kinds of routed record, by their type byte (what a reader of a mixed log dispatches on). */
export type RoutedRecordKind = 'entries' | 'order' | 'reply' | 'more' | 'confirm' | 'confirmed' | 'more-reply' | 'id-store';

const KINDS: Record<number, RoutedRecordKind> = { [ENTRIES]: 'entries', [ORDER]: 'order', [REPLY]: 'reply', [MORE]: 'more', [CONFIRM]: 'confirm', [CONFIRMED]: 'confirmed', [MORE_REPLY]: 'more-reply', [ID_STORE]: 'id-store' };

/** The kind of a routed record, read from its header. */
export function routedRecordKind(value: Uint8Array): RoutedRecordKind {
  if (value.length >= 1 && value[0] !== VERSION) throw new DedupError('KAFKA', `a routed record of version ${value[0]}; this build reads version ${VERSION}`);
  if (value.length < 2 || KINDS[value[1]!] === undefined) throw new DedupError('KAFKA', `not a routed record of version ${VERSION} (${value.length} bytes, header ${value[0]} ${value[1]})`);
  return KINDS[value[1]!]!;
}

/**
 * What a reply, an answer to a confirmation or an answer for more names, read from its head
 * alone (they all start with the chunk and the index partition, the last two with the trip):
 * how the replies tail files a record without decoding its body, which the owner decodes once.
 */
export function replyHead(value: Uint8Array): { kind: RoutedRecordKind; chunk: ChunkKey; indexPartition: number; trip: number } {
  const kind = routedRecordKind(value);
  if (kind !== 'reply' && kind !== 'confirmed' && kind !== 'more-reply') throw new DedupError('KAFKA', `a routed record of kind ${kind} where a reply belongs`);
  const { r, chunk } = chunkHead(value);
  const indexPartition = r.u16();
  return { kind, chunk, indexPartition, trip: kind === 'reply' ? 0 : r.u16() };
}

/** The chunk after a record's version and kind (every kind but the id store's), and a reader placed after it. */
function chunkHead(value: Uint8Array): { r: Reader; chunk: ChunkKey } {
  const r = new Reader(value);
  r.u8();
  r.u8();
  return { r, chunk: readChunk(r) };
}

/**
 * The chunk a routed record is about, read from its head alone (every kind but the id store's
 * starts with it): how a holder drops a request about a decided chunk without decoding its body.
 */
export function recordChunk(value: Uint8Array): ChunkKey {
  const kind = routedRecordKind(value);
  if (kind === 'id-store') throw new DedupError('KAFKA', 'an id-store record names no chunk');
  return chunkHead(value).chunk;
}

/** A chunk's key as text: the key of its records, and how waiters and buffers name it. */
export function chunkName(chunk: ChunkKey): string {
  return `${chunk.inputPartition}:${chunk.firstOffset}:${chunk.attempt}`;
}

/** A page id's verdict as its input partition's id store keeps it: what a re-sent id is answered with. */
export type StoredVerdict = Omit<JoinedVerdict, 'repeated'>;

/** Where an input partition's next owner starts: carried by every id-store record (the last one read counts). */
export interface IdStorePosition {
  /** The order offset after the last chunk of the partition a transaction committed. */
  readonly order: number;
  /** Where the partition's reply log is read from. */
  readonly replies: bigint;
  /** The end of the partition's last chunk applied in the order log (-1: none). */
  readonly spanEnd: bigint;
}

/**
 * One chunk's id-store record (dedup.ids, written in the chunk's transaction): the verdicts of
 * its new pages and the position after it. One record per chunk, not one per id: the per-record
 * overhead was most of the store's cost.
 */
export interface IdStoreRecord {
  readonly position: IdStorePosition;
  readonly entries: readonly { readonly id: string; readonly verdict: StoredVerdict }[];
}

const STORED_DUPLICATE = 1;
const STORED_OF = 2;
const STORED_DISTANCE = 4;
const STORED_OF_FINGERPRINT = 8;

export function encodeIdStore(record: IdStoreRecord): Buffer {
  let expected = 32;
  for (const e of record.entries) expected += 24 + e.id.length + (e.verdict.duplicateOf?.length ?? 0);
  const w = new Writer(expected);
  w.u8(VERSION);
  w.u8(ID_STORE);
  w.uvar(record.position.order);
  w.u64(record.position.replies);
  w.u64(record.position.spanEnd + 1n);
  w.uvar(record.entries.length);
  let previous = 0;
  for (const { id, verdict: v } of record.entries) {
    w.text(id);
    const ofFingerprint = v.duplicateOfHi !== null && v.duplicateOfLo !== null;
    w.u8((v.verdict === 'duplicate' ? STORED_DUPLICATE : 0) | (v.duplicateOf !== null ? STORED_OF : 0) | (v.distance !== null ? STORED_DISTANCE : 0) | (ofFingerprint ? STORED_OF_FINGERPRINT : 0));
    w.u32(v.hi);
    w.u32(v.lo);
    // A chunk's pages have consecutive sequences: the delta is a byte.
    w.svar(v.sequence - previous);
    previous = v.sequence;
    if (v.distance !== null) w.u8(v.distance);
    if (ofFingerprint) {
      w.u32(v.duplicateOfHi!);
      w.u32(v.duplicateOfLo!);
    }
    if (v.duplicateOf !== null) w.text(v.duplicateOf);
  }
  return w.done();
}

export function decodeIdStore(value: Uint8Array): IdStoreRecord {
  const r = new Reader(value);
  header(r, ID_STORE);
  const order = r.uvar();
  const replies = r.u64();
  const spanEnd = r.u64() - 1n;
  const entries: { id: string; verdict: StoredVerdict }[] = [];
  let previous = 0;
  for (let n = r.uvar(); n > 0; n--) {
    const id = r.text();
    const flags = r.u8();
    if (flags > 15) throw new DedupError('KAFKA', `an id-store entry with flags ${flags}`);
    const hi = r.u32();
    const lo = r.u32();
    previous += r.svar();
    const distance = flags & STORED_DISTANCE ? r.u8() : null;
    const ofFingerprint = (flags & STORED_OF_FINGERPRINT) !== 0;
    const duplicateOfHi = ofFingerprint ? r.u32() : null;
    const duplicateOfLo = ofFingerprint ? r.u32() : null;
    const duplicateOf = flags & STORED_OF ? r.text() : null;
    entries.push({ id, verdict: { verdict: flags & STORED_DUPLICATE ? 'duplicate' : 'novel', duplicateOf, distance, hi, lo, duplicateOfHi, duplicateOfLo, sequence: previous } });
  }
  r.end();
  return { position: { order, replies, spanEnd }, entries };
}
