/**
 * A prototype second stage (not in the product): a MinHash sketch (64 x 32
 * bits = 256 bytes per page) of the 5-token shingles of the page's text after
 * the eval-side density filter, so a simhash candidate can be confirmed by
 * estimated Jaccard similarity of the content, which tells "a few words
 * changed" from "a paragraph rewritten" better than any 64-bit distance.
 */
import { popcount32 } from '../../src/fingerprint/fingerprint-hex.js';
import { SKETCH_BINS, createFingerprinter, sketchSimilarity, type PageContent } from '../../src/fingerprint/index.js';
import { visibleText } from '../corpus/html-text.js';
import { HASHES, shingleSet, signature } from '../corpus/overlap-filter.js';
import type { VerdictLine } from '../score.js';
import { dropChromeShapedBlocks } from './density-filter.js';
import { NO_MATCH, type FingerprintTable } from './nearest.js';
import { isKnownSketch, numbersAgreeAt } from '../../src/fingerprint/feature-sketch.js';

export function contentSketches(contents: readonly (PageContent | null)[]): Uint32Array {
  const out = new Uint32Array(contents.length * HASHES);
  contents.forEach((c, i) => {
    if (c === null) return;
    const text = typeof c.html === 'string' ? visibleText(dropChromeShapedBlocks(c.html)) : (c.text ?? '');
    out.set(signature(shingleSet(text)), i * HASHES);
  });
  return out;
}

export function estimatedJaccard(sketches: Uint32Array, i: number, j: number): number {
  let agree = 0;
  for (let h = 0; h < HASHES; h++) if (sketches[i * HASHES + h] === sketches[j * HASHES + h]) agree++;
  return agree / HASHES;
}

/** Candidates within k1 bits (product rule for short pages) confirmed by estimated Jaccard >= threshold. */
export function sketchConfirmedVerdicts(t: FingerprintTable, sketches: Uint32Array, k1: number, threshold: number): VerdictLine[] {
  return confirmedVerdicts(t, (i, j) => estimatedJaccard(sketches, i, j), k1, threshold);
}

/**
 * The product's b-bit feature sketch (src/fingerprint/feature-sketch.ts) of every page under the
 * default features, SKETCH_BINS bytes per page (zeros for pages that are not fingerprinted).
 */
export async function featureSketches(contents: readonly (PageContent | null)[]): Promise<Uint8Array> {
  const fp = await createFingerprinter();
  const out = new Uint8Array(contents.length * SKETCH_BINS);
  contents.forEach((c, i) => {
    if (c === null) return;
    fp.fingerprint(c);
    fp.featureSketch(out.subarray(i * SKETCH_BINS, (i + 1) * SKETCH_BINS));
  });
  return out;
}

/**
 * Whether pages i and j pass the second stage's check of content numbers (src/dedup/decider.ts):
 * the same content numbers (numbersAgreeAt), or a sketch unknown on either side (zeros in every bin).
 */
export function sameContentNumbers(sketches: Uint8Array, i: number, j: number): boolean {
  const a = i * SKETCH_BINS;
  const b = j * SKETCH_BINS;
  if (!isKnownSketch(sketches, a) || !isKnownSketch(sketches, b)) return true;
  return numbersAgreeAt(sketches, a, sketches.subarray(b, b + SKETCH_BINS));
}

export function featureSketchSimilarity(sketches: Uint8Array, i: number, j: number): number {
  return sketchSimilarity(sketches.subarray(i * SKETCH_BINS, (i + 1) * SKETCH_BINS), sketches.subarray(j * SKETCH_BINS, (j + 1) * SKETCH_BINS));
}

/** Candidates within k1 bits (product rule for short pages) confirmed by similarity(i, j) >= threshold. */
export function confirmedVerdicts(t: FingerprintTable, similarity: (i: number, j: number) => number, k1: number, threshold: number): VerdictLine[] {
  const out: VerdictLine[] = [];
  for (let i = 0; i < t.ids.length; i++) {
    const id = t.ids[i]!;
    const error = t.errors[i];
    if (error !== null && error !== undefined) {
      out.push({ id, error });
      continue;
    }
    let best = -1;
    let bestD = NO_MATCH;
    for (let j = 0; j < i; j++) {
      if (t.errors[j] !== null) continue;
      const d = popcount32((t.hi[i]! ^ t.hi[j]!) >>> 0) + popcount32((t.lo[i]! ^ t.lo[j]!) >>> 0);
      if (d > k1 || d >= bestD) continue;
      if (d > 0 && (t.short[i] !== 0 || t.short[j] !== 0)) continue;
      if (d > 0 && similarity(i, j) < threshold) continue;
      best = j;
      bestD = d;
    }
    out.push(best < 0 ? { id, verdict: 'novel', duplicateOf: null, distance: null } : { id, verdict: 'duplicate', duplicateOf: t.ids[best]!, distance: bestD });
  }
  return out;
}
