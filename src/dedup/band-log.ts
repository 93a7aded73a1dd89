/**
 * The band entries one index partition holds (index-partition.ts): per page
 * that some band key routed here, its fingerprint, global sequence, whether
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
 * id, no table entries, no page-store record: 21 bytes a page and 6 to 9
 * per key, where a page-store record and four table entries cost several times
 * that and a string id besides.
 *
 * The columns are chunks of 4,096 pages, so that RAM follows the pages held
 * (a doubled array held up to twice that, and copied it all to grow), and a
 * sequence is held as its low 32 bits: sequences rise with the refs, so their
 * high bits change only at a few refs, kept apart (highFrom).
 *
 * Snapshot (snapshotChunks, readFrom), little-endian: u32 magic 'BDLG',
 * version 1, bands, pages, high count h; u32 highFrom[h], highs[h]; the
 * bands' snapshot (sketch-bands.ts SKETCH_BANDS_LAYOUT); then per chunk of
 * 4,096 pages (n in the last), its columns as held: u32 fps[2n], lows[n],
 * u8 shorts[n], tails[8n]. A load copies the columns and checks what a probe
 * relies on: sequences rising with the refs, flags 0 or 1, no band entry of a
 * page not held.
 *
 * Pure: typed arrays only, no I/O.
 */
import { MINHASH_BINS, SKETCH_BINS, numbersAgreeAt, sketchSize } from '../fingerprint/feature-sketch.js';
import { SketchBands } from './sketch-bands.js';
import type { RunBlob } from './blob-store.js';
import { bytesOf, readSliced, type ByteSource } from '../index/byte-stream.js';
import { DedupError } from '../errors.js';

const TAIL = SKETCH_BINS - MINHASH_BINS;
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;
const TWO_32 = 2 ** 32;
const MAGIC = 0x474c4442; // 'BDLG'
const VERSION = 1;
const HEAD_WORDS = 5;
/** Bytes a page takes in a snapshot's columns. */
const PAGE_BYTES = 8 + 4 + 1 + TAIL;
/** Sequences are below 2^53: their high words below 2^21. */
const MAX_HIGH = 2 ** 21;

function invalid(message: string): DedupError {
  return new DedupError('SNAPSHOT_INVALID', `band log snapshot: ${message}`);
}

export class BandLog {
  readonly bands: SketchBands;
  /** Per chunk of CHUNK refs: fingerprints (hi, lo), sequences' low 32 bits, short flags, sketch tails. */
  private readonly fps: Uint32Array[] = [];
  private readonly lows: Uint32Array[] = [];
  private readonly shorts: Uint8Array[] = [];
  private readonly tails: Uint8Array[] = [];
  /** The refs from which the sequences' high bits are highs[i] (rising; one entry until 2^32 pages). */
  private readonly highFrom: number[] = [0];
  private readonly highs: number[] = [0];
  private length = 0;

  /**
   * `blobs`: new blobs for the keys' sorted runs (a page tier's scratch files in the service); in
   * memory when absent. `bands` as SketchBands: those (a snapshot's, readFrom).
   */
  constructor(bands: number | SketchBands, blobs?: () => RunBlob) {
    this.bands = typeof bands === 'number' ? new SketchBands(bands, blobs === undefined ? {} : { blobs }) : bands;
  }

  /** Bytes snapshotChunks() yields. */
  get snapshotByteLength(): number {
    return (HEAD_WORDS + 2 * this.highs.length) * 4 + this.length * PAGE_BYTES + this.bands.snapshotByteLength;
  }

  /** The snapshot (layout above) in chunks of at most about `chunkBytes` (a chunk of pages' columns is about 84 KiB). */
  *snapshotChunks(chunkBytes: number): Generator<Uint8Array> {
    yield bytesOf(Uint32Array.from([MAGIC, VERSION, this.bands.bands, this.length, this.highs.length, ...this.highFrom, ...this.highs]));
    yield* this.bands.snapshotChunks(chunkBytes);
    for (let c = 0; c < this.fps.length; c++) {
      const n = Math.min(CHUNK, this.length - c * CHUNK);
      yield bytesOf(this.fps[c]!.subarray(0, 2 * n));
      yield bytesOf(this.lows[c]!.subarray(0, n));
      yield this.shorts[c]!.subarray(0, n);
      yield this.tails[c]!.subarray(0, TAIL * n);
    }
  }

  /**
   * The log of a snapshot that `source` holds exactly (snapshotChunks), its keys' runs in new
   * blobs from `blobs` (in memory when absent). SNAPSHOT_INVALID when it is bad, or holds another
   * number of bands than `bands`.
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
    if (highCount! < 1 || highCount! > Math.min(MAX_HIGH, length! + 1) || highCount! * 2 * 4 + length! * PAGE_BYTES > source.remaining) throw invalid('truncated or bad counts');
    const high = words(2 * highCount!);
    const keys = SketchBands.readFrom(source, bands, blobs === undefined ? {} : { blobs });
    const log = new BandLog(keys);
    try {
      log.readColumns(source, high, highCount!, length!);
      if (keys.nextRef > length!) throw invalid(`the bands hold refs up to ${keys.nextRef - 1}, the log ${length} pages`);
    } catch (error) {
      keys.dispose();
      throw error;
    }
    return log;
  }

  /** readFrom's part after the bands: the high words, then the columns, checked. */
  private readColumns(source: ByteSource, high: Uint32Array, highCount: number, length: number): void {
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
    if (length * PAGE_BYTES !== source.remaining) throw invalid(`its columns are ${source.remaining} bytes, not ${length * PAGE_BYTES}`);
    let previous = -1;
    for (let c = 0; c * CHUNK < length; c++) {
      const n = Math.min(CHUNK, length - c * CHUNK);
      const fps = new Uint32Array(2 * CHUNK);
      const lows = new Uint32Array(CHUNK);
      const shorts = new Uint8Array(CHUNK);
      const tails = new Uint8Array(TAIL * CHUNK);
      readSliced(source, bytesOf(fps.subarray(0, 2 * n)));
      readSliced(source, bytesOf(lows.subarray(0, n)));
      readSliced(source, shorts.subarray(0, n));
      readSliced(source, tails.subarray(0, TAIL * n));
      this.fps.push(fps);
      this.lows.push(lows);
      this.shorts.push(shorts);
      this.tails.push(tails);
      this.length += n;
      for (let ref = c * CHUNK; ref < this.length; ref++) {
        if (shorts[ref & CHUNK_MASK]! > 1) throw invalid(`page ${ref} has a bad short flag`);
        const sequence = this.sequenceOf(ref);
        if (sequence <= previous) throw invalid(`page ${ref} is not decided after page ${ref - 1}`);
        previous = sequence;
      }
    }
  }

  /** Pages held. */
  get size(): number {
    return this.length;
  }

  get byteLength(): number {
    return this.fps.length * CHUNK * (8 + 4 + 1 + TAIL) + this.highs.length * 16 + this.bands.byteLength;
  }

  /**
   * Holds a page decided at `sequence` (above every sequence held) under the first `count` of
   * `keys`; `sketch` is its sketch or the tail form (sketchTail): only the tail is kept.
   */
  add(hi: number, lo: number, sequence: number, short: boolean, sketch: Uint8Array, keys: ArrayLike<number>, count: number): void {
    const ref = this.length;
    const c = ref >>> CHUNK_BITS;
    const at = ref & CHUNK_MASK;
    if (c === this.fps.length) {
      this.fps.push(new Uint32Array(2 * CHUNK));
      this.lows.push(new Uint32Array(CHUNK));
      this.shorts.push(new Uint8Array(CHUNK));
      this.tails.push(new Uint8Array(TAIL * CHUNK));
    }
    this.fps[c]![2 * at] = hi;
    this.fps[c]![2 * at + 1] = lo;
    const high = Math.floor(sequence / TWO_32);
    if (high !== this.highs[this.highs.length - 1]) {
      this.highFrom.push(ref);
      this.highs.push(high);
    }
    this.lows[c]![at] = sequence - high * TWO_32;
    this.shorts[c]![at] = short ? 1 : 0;
    const tails = this.tails[c]!;
    for (let i = 0; i < TAIL; i++) tails[TAIL * at + i] = sketch[MINHASH_BINS + i]!;
    this.length = ref + 1;
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

  hi(ref: number): number {
    return this.fps[ref >>> CHUNK_BITS]![2 * (ref & CHUNK_MASK)]!;
  }

  lo(ref: number): number {
    return this.fps[ref >>> CHUNK_BITS]![2 * (ref & CHUNK_MASK) + 1]!;
  }

  sequenceOf(ref: number): number {
    const from = this.highFrom;
    let i = from.length - 1;
    while (from[i]! > ref) i--;
    return this.highs[i]! * TWO_32 + this.lows[ref >>> CHUNK_BITS]![ref & CHUNK_MASK]!;
  }

  isShort(ref: number): boolean {
    return this.shorts[ref >>> CHUNK_BITS]![ref & CHUNK_MASK] === 1;
  }

  // The tail sits where bins MINHASH_BINS.. of a whole sketch would, so the sketch readers take
  // it at an offset MINHASH_BINS before it (they read only the tail's bins).

  /** The size recorded in ref's sketch (feature-sketch.ts sketchSize). */
  sizeOf(ref: number): number {
    return sketchSize(this.tails[ref >>> CHUNK_BITS]!, TAIL * (ref & CHUNK_MASK) - MINHASH_BINS);
  }

  /** Whether ref's sketch and `sketch` (of `size`) have the same content numbers (numbersAgreeAt). */
  numbersAgree(ref: number, sketch: Uint8Array, size: number): boolean {
    return numbersAgreeAt(this.tails[ref >>> CHUNK_BITS]!, TAIL * (ref & CHUNK_MASK) - MINHASH_BINS, sketch, size);
  }
}
