/**
 * A second, per-page sketch of the same features the simhash uses, for a
 * second stage that confirms simhash candidates (measured in eval/, not wired
 * into the decider): one-permutation MinHash (Li, Owen & Zhang, NIPS 2012)
 * with SKETCH_BINS bins and rotation densification for empty bins (Shrivastava
 * & Li, ICML 2014), each bin keeping the low 8 bits of its minimum (b-bit
 * MinHash, Li & König, WWW 2010): 64 bytes per page, one hash per feature.
 *
 * Unlike 64 simhash bits, the fraction of equal bins estimates the Jaccard
 * similarity of the two pages' feature sets (weights ignored), which tells
 * "three words changed" from "a paragraph rewritten" on long pages.
 */
import { fmix } from './feature-hash.js';

export const SKETCH_BINS = 64;
const BIN_SHIFT = 26; // 32 - log2(64)
const SKETCH_SEED = 0x6a09e667;
const EMPTY = 0xffffffff;

const mins = new Uint32Array(SKETCH_BINS);

/** Writes the sketch of the feature set (entryA/entryB[0..count)) into out (SKETCH_BINS bytes). */
export function featureSketch(entryA: Int32Array | Uint32Array, entryB: Int32Array | Uint32Array, count: number, out: Uint8Array): void {
  mins.fill(EMPTY);
  for (let e = 0; e < count; e++) {
    const h = fmix(entryA[e]! ^ Math.imul(entryB[e]! ^ SKETCH_SEED, 0x9e3779b1));
    const bin = h >>> BIN_SHIFT;
    const value = fmix(h ^ entryB[e]!) >>> 0;
    if (value < mins[bin]!) mins[bin] = value;
  }
  for (let k = 0; k < SKETCH_BINS; k++) {
    let v = mins[k]!;
    // Densification: an empty bin borrows the next non-empty bin's value (rotation), salted by the distance.
    for (let step = 1; v === EMPTY && step < SKETCH_BINS && count > 0; step++) {
      const w = mins[(k + step) % SKETCH_BINS]!;
      if (w !== EMPTY) v = fmix(w + step) >>> 0;
    }
    out[k] = count === 0 ? 0 : v & 0xff;
  }
}

/** Equal bins of the sketch at a[aAt, aAt + SKETCH_BINS) and the sketch b. */
export function equalBins(a: Uint8Array, aAt: number, b: Uint8Array): number {
  let equal = 0;
  for (let k = 0; k < SKETCH_BINS; k++) if (a[aAt + k] === b[k]) equal++;
  return equal;
}

/** Estimated Jaccard similarity from the number of equal bins (b-bit correction for chance 8-bit agreement). */
export function similarityOfEqualBins(equal: number): number {
  const chance = 1 / 256;
  return Math.max(0, (equal / SKETCH_BINS - chance) / (1 - chance));
}

/** Estimated Jaccard similarity of two sketches. */
export function sketchSimilarity(a: Uint8Array, b: Uint8Array): number {
  return similarityOfEqualBins(equalBins(a, 0, b));
}

/**
 * The fewest equal bins whose estimated similarity is at least minSimilarity
 * (SKETCH_BINS + 1 when none is): a second stage compares counts, not
 * fractions, on its hot path.
 */
export function confirmingBins(minSimilarity: number): number {
  for (let equal = 0; equal <= SKETCH_BINS; equal++) if (similarityOfEqualBins(equal) >= minSimilarity) return equal;
  return SKETCH_BINS + 1;
}
