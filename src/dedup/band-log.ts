/**
 * The band entries one index partition holds (index-partition.ts): per page
 * that some band key routed to it, its fingerprint, global sequence, whether
 * it is short, and its sketch's 8-byte tail (content-number digests, script
 * share, size: feature-sketch.ts), under refs of the log's own, in the order
 * pages were decided; and the keys, in a SketchBands over those refs (the
 * chain rule of sketch-bands.ts).
 *
 * Why apart from the table index and the page store: a page touches a
 * partition for one band key far more often than for a table entry (14 band
 * keys against 4 tables, each to the partition of its key), and what a band
 * candidate needs is only what round one settles with: how far it is, when it
 * was decided, whether it is short, its size and its content numbers. It is
 * beyond the radius (within it, a table probe finds it), so beyond k, so it is
 * never settled here but named by sequence and confirmed at its home. So no
 * id, no table entries, no page-store record: a 17-byte record and 4 bytes of
 * RAM a page, and 6 to 9 bytes per key.
 *
 * Where it lives: RAM keeps only what the keys' probe and its cut "as of a
 * sequence" read for every probe, the sequences (firstRefFrom's binary
 * search; the chain rule itself reads only the keys). A sequence is held as
 * its low 32 bits, in chunks of 4,096 pages, so that RAM follows the pages
 * held (a doubled array held up to twice that, and copied it all to grow):
 * sequences rise with the refs, so their high bits change only at a few refs,
 * kept apart (highFrom). The rest of a page, its record, is read only for a
 * band candidate (a key of the probe matched), never for the pages a probe
 * does not find, which are nearly all: so the records go to a blob of the
 * page tier (a scratch file in the service, read with pread, as the page
 * store's records are), appended in ref order at ref x RECORD_BYTES. A
 * candidate costs one read (load) at most: the records read last are kept
 * in a small cache (MAX_CACHE_SLOTS), which BandRecord's accessors read.
 *
 * Record, RECORD_BYTES = 17, little-endian: u32 hi, u32 lo, the sketch tail
 * (bins MINHASH_BINS.. of a sketch: 8 bytes), u8 short flag (0 or 1).
 *
 * Snapshot (snapshotChunks, readFrom), little-endian: u32 magic 'BDLG',
 * version 2, bands, pages, high count h; u32 highFrom[h], highs[h]; the
 * bands' snapshot (sketch-bands.ts SKETCH_BANDS_LAYOUT); u32 lows[pages];
 * then the records as the blob holds them, streamed from it a few MiB at a
 * time (version 1 had per-chunk columns in RAM, and is refused:
 * SNAPSHOT_INVALID). A load appends the records to a new blob and checks
 * what a probe relies on: sequences rising with the refs, flags 0 or 1, no
 * band entry of a page not held.
 *
 * Pure: typed arrays and the blob interface only, no I/O of its own.
 */
import { MINHASH_BINS, SKETCH_BINS, numbersAgreeAt, sketchSize } from '../fingerprint/feature-sketch.js';
import { SketchBands } from './sketch-bands.js';
import { MemoryBlobStore, memoryRunBlob, type RunBlob } from './blob-store.js';
import { bytesOf, readSliced, slicesOf, type ByteSource } from '../index/byte-stream.js';
import { DedupError } from '../errors.js';

const TAIL = SKETCH_BINS - MINHASH_BINS;
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;
const TWO_32 = 2 ** 32;
const MAGIC = 0x474c4442; // 'BDLG'
const VERSION = 2;
const HEAD_WORDS = 5;
/** A record's fields: fingerprint (hi, lo), the sketch's tail, the short flag. */
const TAIL_AT = 8;
const SHORT_AT = TAIL_AT + TAIL;
/** Bytes of a page's record in the blob (and in a snapshot). */
export const RECORD_BYTES = SHORT_AT + 1;
/** Records a snapshot reads or writes at a time: 4.25 MiB. */
const RECORDS_PER_SLICE = 1 << 18;
/** Sequences are below 2^53: their high words below 2^21. */
const MAX_HIGH = 2 ** 21;

function invalid(message: string): DedupError {
  return new DedupError('SNAPSHOT_INVALID', `band log snapshot: ${message}`);
}

const u32At = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;

/**
 * The record cache: of the records read, the last one per slot (slot = ref modulo the slots). A
 * probe reads the records of its keys' newest pages, and every page of a cluster of near copies
 * (templates, mirrors, re-crawls: what band candidates mostly are) probes for the same ones. A
 * slot per CACHE_PAGES_PER_SLOT pages held, so that a small log holds a small cache, up to
 * MAX_CACHE_SLOTS (21 bytes a slot: 344 KiB a log).
 */
const MIN_CACHE_SLOTS = 1 << 8;
const MAX_CACHE_SLOTS = 1 << 14;
const CACHE_PAGES_PER_SLOT = 4;

/**
 * One page's record as BandLog.load read it: a view of the log's record cache, valid until the
 * log's next load or add. The log keeps one and points it at the record loaded.
 */
export class BandRecord {
  /** The record's bytes (layout above) are bytes[at, at + RECORD_BYTES). */
  bytes: Uint8Array = new Uint8Array(0);
  at = 0;
  /** The ref loaded (-1: none yet). */
  ref = -1;

  get hi(): number {
    return u32At(this.bytes, this.at);
  }

  get lo(): number {
    return u32At(this.bytes, this.at + 4);
  }

  get isShort(): boolean {
    return this.bytes[this.at + SHORT_AT] === 1;
  }

  // The tail sits where bins MINHASH_BINS.. of a whole sketch would, so the sketch readers take
  // it at an offset MINHASH_BINS before it (they read only the tail's bins).

  /** The size recorded in the page's sketch (feature-sketch.ts sketchSize). */
  get size(): number {
    return sketchSize(this.bytes, this.at + TAIL_AT - MINHASH_BINS);
  }

  /** Whether the page's sketch and `sketch` (of `size`) have the same content numbers (numbersAgreeAt). */
  numbersAgree(sketch: Uint8Array, size: number): boolean {
    return numbersAgreeAt(this.bytes, this.at + TAIL_AT - MINHASH_BINS, sketch, size);
  }
}

export class BandLog {
  readonly bands: SketchBands;
  /** Per chunk of CHUNK refs: the sequences' low 32 bits. */
  private readonly lows: Uint32Array[] = [];
  /** The refs from which the sequences' high bits are highs[i] (rising; one entry until 2^32 pages). */
  private readonly highFrom: number[] = [0];
  private readonly highs: number[] = [0];
  /** The pages' records, at ref x RECORD_BYTES. */
  private readonly records: RunBlob;
  /** The record add writes, and the one load reads into before it goes to the cache. */
  private readonly scratch = new Uint8Array(RECORD_BYTES);
  /** The record cache (above): records by slot, and the ref in each slot (-1: none; refs are below 2^31). */
  private cache = new Uint8Array(0);
  private cachedRefs = new Int32Array(0);
  private readonly loaded = new BandRecord();
  /** The pages held at which the cache doubles (Infinity at its largest). */
  private cacheGrowsAt = 0;
  private length = 0;

  /**
   * `blobs`: new blobs for the records and the keys' sorted runs (a page tier's scratch files in
   * the service); in memory when absent. `bands` as SketchBands: those (a snapshot's, readFrom).
   */
  constructor(bands: number | SketchBands, blobs?: () => RunBlob) {
    this.bands = typeof bands === 'number' ? new SketchBands(bands, blobs === undefined ? {} : { blobs }) : bands;
    this.records = blobs === undefined ? memoryRunBlob() : blobs();
    this.sizeCache(MIN_CACHE_SLOTS);
  }

  /** A new, empty record cache of `slots` (a power of two); what the old one held is read again. */
  private sizeCache(slots: number): void {
    this.cache = new Uint8Array(slots * RECORD_BYTES);
    this.cachedRefs = new Int32Array(slots).fill(-1);
    this.loaded.bytes = this.cache;
    this.loaded.ref = -1;
    this.cacheGrowsAt = slots < MAX_CACHE_SLOTS ? slots * CACHE_PAGES_PER_SLOT : Infinity;
  }

  /** The cache's slots for the pages held. */
  private fitCache(): void {
    let slots = this.cachedRefs.length;
    while (slots < MAX_CACHE_SLOTS && slots * CACHE_PAGES_PER_SLOT <= this.length) slots *= 2;
    if (slots !== this.cachedRefs.length) this.sizeCache(slots);
  }

  /** Bytes snapshotChunks() yields. */
  get snapshotByteLength(): number {
    return (HEAD_WORDS + 2 * this.highs.length) * 4 + this.bands.snapshotByteLength + this.length * (4 + RECORD_BYTES);
  }

  /**
   * The snapshot (layout above) in chunks of at most about `chunkBytes` (and at most
   * RECORDS_PER_SLICE records): the records stream from their blob through one buffer.
   */
  *snapshotChunks(chunkBytes: number): Generator<Uint8Array> {
    yield bytesOf(Uint32Array.from([MAGIC, VERSION, this.bands.bands, this.length, this.highs.length, ...this.highFrom, ...this.highs]));
    yield* this.bands.snapshotChunks(chunkBytes);
    for (let c = 0; c < this.lows.length; c++) yield* slicesOf(this.lows[c]!.subarray(0, Math.min(CHUNK, this.length - c * CHUNK)), chunkBytes);
    const per = Math.max(1, Math.min(RECORDS_PER_SLICE, this.length, Math.floor(chunkBytes / RECORD_BYTES)));
    const out = new Uint8Array(per * RECORD_BYTES);
    for (let ref = 0; ref < this.length; ) {
      const n = Math.min(per, this.length - ref);
      const slice = out.subarray(0, n * RECORD_BYTES);
      this.records.read(ref * RECORD_BYTES, slice);
      yield slice;
      ref += n;
    }
  }

  /**
   * The log of a snapshot that `source` holds exactly (snapshotChunks), its records and its keys'
   * runs in new blobs from `blobs` (in memory when absent). SNAPSHOT_INVALID when it is bad, or
   * holds another number of bands than `bands`; the blobs made so far are then disposed.
   */
  static readFrom(source: ByteSource, bands: number, blobs?: () => RunBlob): BandLog {
    const words = (n: number): Uint32Array => {
      if (n * 4 > source.remaining) throw invalid('truncated');
      const out = new Uint32Array(n);
      readSliced(source, bytesOf(out));
      return out;
    };
    const [magic, version, bandCount, length, highCount] = words(HEAD_WORDS) as unknown as number[];
    if (magic !== MAGIC || version !== VERSION) throw invalid('bad magic or version');
    if (bandCount !== bands) throw invalid(`holds ${bandCount} bands, not ${bands}`);
    if (highCount! < 1 || highCount! > Math.min(MAX_HIGH, length! + 1) || highCount! * 2 * 4 + length! * (4 + RECORD_BYTES) > source.remaining) throw invalid('truncated or bad counts');
    const high = words(2 * highCount!);
    const keys = SketchBands.readFrom(source, bands, blobs === undefined ? {} : { blobs });
    let log: BandLog | null = null;
    try {
      log = new BandLog(keys, blobs);
      log.readPages(source, high, highCount!, length!);
      if (keys.nextRef > length!) throw invalid(`the bands hold refs up to ${keys.nextRef - 1}, the log ${length} pages`);
    } catch (error) {
      if (log === null) keys.dispose();
      else log.dispose();
      throw error;
    }
    return log;
  }

  /** readFrom's part after the bands: the high words, the sequences and the records, checked. */
  private readPages(source: ByteSource, high: Uint32Array, highCount: number, length: number): void {
    this.highFrom.length = 0;
    this.highs.length = 0;
    for (let i = 0; i < highCount; i++) {
      const from = high[i]!;
      const h = high[highCount + i]!;
      // Rising refs (two at ref 0 when the first page's sequence is past 2^32), strictly rising highs.
      if (i === 0 ? from !== 0 || h >= MAX_HIGH : from < this.highFrom[i - 1]! || from >= length || h <= this.highs[i - 1]! || h >= MAX_HIGH) throw invalid(`bad high word ${i}`);
      this.highFrom.push(from);
      this.highs.push(h);
    }
    if (length * (4 + RECORD_BYTES) !== source.remaining) throw invalid(`its pages are ${source.remaining} bytes, not ${length * (4 + RECORD_BYTES)}`);
    let previous = -1;
    for (let c = 0; c * CHUNK < length; c++) {
      const n = Math.min(CHUNK, length - c * CHUNK);
      const lows = new Uint32Array(CHUNK);
      readSliced(source, bytesOf(lows.subarray(0, n)));
      this.lows.push(lows);
      this.length += n;
      for (let ref = c * CHUNK; ref < this.length; ref++) {
        const sequence = this.sequenceOf(ref);
        if (sequence <= previous) throw invalid(`page ${ref} is not decided after page ${ref - 1}`);
        previous = sequence;
      }
    }
    const slice = new Uint8Array(Math.min(RECORDS_PER_SLICE, length) * RECORD_BYTES);
    for (let ref = 0; ref < length; ) {
      const n = Math.min(RECORDS_PER_SLICE, length - ref);
      const records = slice.subarray(0, n * RECORD_BYTES);
      readSliced(source, records);
      for (let i = 0; i < n; i++) if (records[i * RECORD_BYTES + SHORT_AT]! > 1) throw invalid(`page ${ref + i} has a bad short flag`);
      this.records.append(records);
      ref += n;
    }
    this.fitCache();
  }

  /** Pages held. */
  get size(): number {
    return this.length;
  }

  /** Bytes of RAM held: the sequences, the keys' RAM part, and the blobs when they are in memory. */
  get byteLength(): number {
    let bytes = this.lows.length * CHUNK * 4 + this.highs.length * 16 + RECORD_BYTES + this.cache.byteLength + this.cachedRefs.byteLength + this.bands.byteLength;
    if (this.records instanceof MemoryBlobStore) bytes += this.records.heldBytes + this.bands.bytesOnDisk;
    return bytes;
  }

  /** Bytes of the blobs (on disk with a file tier): the records and the keys' runs. */
  get bytesOnDisk(): number {
    return this.records.byteLength + this.bands.bytesOnDisk;
  }

  /**
   * Holds a page decided at `sequence` (above every sequence held) under the first `count` of
   * `keys`; `sketch` is its sketch or the tail form (sketchTail): only the tail is kept.
   */
  add(hi: number, lo: number, sequence: number, short: boolean, sketch: Uint8Array, keys: ArrayLike<number>, count: number): void {
    const ref = this.length;
    const c = ref >>> CHUNK_BITS;
    if (c === this.lows.length) this.lows.push(new Uint32Array(CHUNK));
    const high = Math.floor(sequence / TWO_32);
    if (high !== this.highs[this.highs.length - 1]) {
      this.highFrom.push(ref);
      this.highs.push(high);
    }
    this.lows[c]![ref & CHUNK_MASK] = sequence - high * TWO_32;
    const record = this.scratch;
    for (let i = 0; i < 4; i++) {
      record[i] = hi >>> (8 * i);
      record[4 + i] = lo >>> (8 * i);
    }
    for (let i = 0; i < TAIL; i++) record[TAIL_AT + i] = sketch[MINHASH_BINS + i]!;
    record[SHORT_AT] = short ? 1 : 0;
    this.records.append(record);
    this.length = ref + 1;
    if (this.length === this.cacheGrowsAt) this.fitCache();
    this.bands.addKeys(ref, keys, count, 0);
  }

  /**
   * The refs held under any of the first `count` of `keys` (the chain rule), among the pages
   * decided before `beforeSequence`, into bands.found; returns how many.
   */
  candidates(keys: ArrayLike<number>, count: number, beforeSequence = Infinity): number {
    return this.bands.candidatesOfKeys(keys, count, null, beforeSequence === Infinity ? Infinity : this.firstRefFrom(beforeSequence));
  }

  /** The first ref decided at or after `sequence` (refs follow decision order). */
  private firstRefFrom(sequence: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sequenceOf(mid) < sequence) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  sequenceOf(ref: number): number {
    const from = this.highFrom;
    let i = from.length - 1;
    while (from[i]! > ref) i--;
    return this.highs[i]! * TWO_32 + this.lows[ref >>> CHUNK_BITS]![ref & CHUNK_MASK]!;
  }

  /**
   * Ref's record, as the log's BandRecord (valid until the next load): one read of the blob,
   * none when the record cache holds it.
   */
  load(ref: number): BandRecord {
    if (!(ref >= 0 && ref < this.length)) throw new RangeError(`band log: ref ${ref} is not held (0..${this.length})`);
    const slot = ref & (this.cachedRefs.length - 1);
    const at = slot * RECORD_BYTES;
    if (this.cachedRefs[slot] !== ref) {
      const read = this.scratch;
      this.records.read(ref * RECORD_BYTES, read);
      const cache = this.cache;
      for (let i = 0; i < RECORD_BYTES; i++) cache[at + i] = read[i]!;
      this.cachedRefs[slot] = ref;
    }
    const record = this.loaded;
    record.at = at;
    record.ref = ref;
    return record;
  }

  /** Drops the blobs (the log is not used again). */
  dispose(): void {
    this.bands.dispose();
    this.records.dispose();
  }
}
