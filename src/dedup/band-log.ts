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
 * Pure: typed arrays only, no I/O.
 */
import { MINHASH_BINS, SKETCH_BINS, numbersAgreeAt, sketchSize } from '../fingerprint/feature-sketch.js';
import { SketchBands } from './sketch-bands.js';
import type { RunBlob } from './blob-store.js';

const TAIL = SKETCH_BINS - MINHASH_BINS;
const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;
const TWO_32 = 2 ** 32;

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

  /** `blobs`: new blobs for the keys' sorted runs (a page tier's scratch files in the service); in memory when absent. */
  constructor(bands: number, blobs?: () => RunBlob) {
    this.bands = new SketchBands(bands, blobs === undefined ? {} : { blobs });
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
