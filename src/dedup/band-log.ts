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
 * id, no table entries, no page-store record: about 21 bytes a page and 6 to 9
 * per key, where a page-store record and four table entries cost several times
 * that and a string id besides.
 *
 * Pure: typed arrays only, no I/O.
 */
import { MINHASH_BINS, SKETCH_BINS, numbersAgreeAt, sketchSize } from '../fingerprint/feature-sketch.js';
import { SketchBands } from './sketch-bands.js';
import type { RunBlob } from './blob-store.js';

const TAIL = SKETCH_BINS - MINHASH_BINS;

export class BandLog {
  readonly bands: SketchBands;
  private fps = new Uint32Array(2 * 256);
  private sequences = new Float64Array(256);
  private shorts = new Uint8Array(256);
  private tails = new Uint8Array(TAIL * 256);
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
    return this.fps.byteLength + this.sequences.byteLength + this.shorts.byteLength + this.tails.byteLength + this.bands.byteLength;
  }

  /**
   * Holds a page decided at `sequence` (above every sequence held) under the first `count` of
   * `keys`; `sketch` is its sketch or the tail form (sketchTail): only the tail is kept.
   */
  add(hi: number, lo: number, sequence: number, short: boolean, sketch: Uint8Array, keys: ArrayLike<number>, count: number): void {
    const ref = this.length;
    if (ref === this.sequences.length) this.grow();
    this.fps[2 * ref] = hi;
    this.fps[2 * ref + 1] = lo;
    this.sequences[ref] = sequence;
    this.shorts[ref] = short ? 1 : 0;
    const tails = this.tails;
    for (let i = 0; i < TAIL; i++) tails[TAIL * ref + i] = sketch[MINHASH_BINS + i]!;
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
      if (this.sequences[mid]! < sequence) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  hi(ref: number): number {
    return this.fps[2 * ref]!;
  }

  lo(ref: number): number {
    return this.fps[2 * ref + 1]!;
  }

  sequenceOf(ref: number): number {
    return this.sequences[ref]!;
  }

  isShort(ref: number): boolean {
    return this.shorts[ref] === 1;
  }

  // The tail sits where bins MINHASH_BINS.. of a whole sketch would, so the sketch readers take
  // it at an offset MINHASH_BINS before it (they read only the tail's bins).

  /** The size recorded in ref's sketch (feature-sketch.ts sketchSize). */
  sizeOf(ref: number): number {
    return sketchSize(this.tails, TAIL * ref - MINHASH_BINS);
  }

  /** Whether ref's sketch and `sketch` (of `size`) have the same content numbers (numbersAgreeAt). */
  numbersAgree(ref: number, sketch: Uint8Array, size: number): boolean {
    return numbersAgreeAt(this.tails, TAIL * ref - MINHASH_BINS, sketch, size);
  }

  private grow(): void {
    const capacity = this.sequences.length * 2;
    const fps = new Uint32Array(2 * capacity);
    fps.set(this.fps);
    this.fps = fps;
    const sequences = new Float64Array(capacity);
    sequences.set(this.sequences);
    this.sequences = sequences;
    const shorts = new Uint8Array(capacity);
    shorts.set(this.shorts);
    this.shorts = shorts;
    const tails = new Uint8Array(TAIL * capacity);
    tails.set(this.tails);
    this.tails = tails;
  }
}
