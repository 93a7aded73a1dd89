/**
 * The product's verdict rule, by brute force over a whole stream's
 * fingerprints, so every k is decided from one pass:
 *
 *   a page is a duplicate iff some EARLIER page lies within k bits;
 *   duplicateOf = the closest such page, ties -> the earliest;
 *   pages that failed (errors) are not in the index;
 *   short pages match, and are matched, only at distance 0.
 *
 * The closest eligible earlier page does not depend on k, so one O(n^2) pass
 * gives the verdict for every k (src/dedup/decider.ts is the reference).
 */
import { popcount32 } from '../../src/fingerprint/fingerprint-hex.js';
import type { VerdictLine } from '../score.js';

export interface FingerprintTable {
  readonly ids: readonly string[];
  readonly hi: Uint32Array;
  readonly lo: Uint32Array;
  /** 1 = short page (matched only exactly). */
  readonly short: Uint8Array;
  /** Distinct features that went into each fingerprint. */
  readonly features: Uint32Array;
  /** Error verdict text, or null when the page was fingerprinted. */
  readonly errors: readonly (string | null)[];
}

export const NO_MATCH = 255;

export interface Nearest {
  /** Index of the closest eligible earlier page, -1 if none. */
  readonly ref: Int32Array;
  /** Its distance, NO_MATCH if none. */
  readonly distance: Uint8Array;
}

function eligible(t: FingerprintTable, i: number, j: number, d: number): boolean {
  return d === 0 || (t.short[i] === 0 && t.short[j] === 0);
}

/**
 * accept(i, j): a further condition on page j as page i's match (the second stage's check of
 * content numbers, which holds within k too); it does not depend on k either.
 */
export function nearestEarlier(t: FingerprintTable, accept?: (i: number, j: number) => boolean): Nearest {
  const n = t.ids.length;
  const ref = new Int32Array(n).fill(-1);
  const distance = new Uint8Array(n).fill(NO_MATCH);
  const { hi, lo } = t;
  for (let i = 0; i < n; i++) {
    if (t.errors[i] !== null) continue;
    let best = -1;
    let bestD = NO_MATCH;
    const h = hi[i]!;
    const l = lo[i]!;
    for (let j = 0; j < i; j++) {
      if (t.errors[j] !== null) continue;
      const d = popcount32((h ^ hi[j]!) >>> 0) + popcount32((l ^ lo[j]!) >>> 0);
      if (d < bestD && eligible(t, i, j, d) && (accept === undefined || accept(i, j))) {
        bestD = d;
        best = j;
      }
    }
    ref[i] = best;
    distance[i] = bestD;
  }
  return { ref, distance };
}

/** Verdict lines at threshold k, shaped like the batch CLI's. */
export function verdictsAtK(t: FingerprintTable, nearest: Nearest, k: number): VerdictLine[] {
  return t.ids.map((id, i) => {
    const error = t.errors[i];
    if (error !== null && error !== undefined) return { id, error };
    const d = nearest.distance[i]!;
    if (d <= k) return { id, verdict: 'duplicate', duplicateOf: t.ids[nearest.ref[i]!]!, distance: d };
    return { id, verdict: 'novel', duplicateOf: null, distance: null };
  });
}

/**
 * The distance that matters for each page: for a near-duplicate, to the
 * closest earlier page of its own cluster (the k it needs to be caught); for
 * any other page, to the closest earlier page at all (the k at which it
 * becomes a false positive). NO_MATCH when there is none (or errors).
 */
export function decisiveDistances(t: FingerprintTable, clusters: readonly string[], positive: readonly boolean[]): Uint8Array {
  const n = t.ids.length;
  const out = new Uint8Array(n).fill(NO_MATCH);
  for (let i = 0; i < n; i++) {
    if (t.errors[i] !== null) continue;
    let best = NO_MATCH;
    for (let j = 0; j < i; j++) {
      if (t.errors[j] !== null || (positive[i] && clusters[j] !== clusters[i])) continue;
      const d = popcount32((t.hi[i]! ^ t.hi[j]!) >>> 0) + popcount32((t.lo[i]! ^ t.lo[j]!) >>> 0);
      if (d < best && eligible(t, i, j, d)) best = d;
    }
    out[i] = best;
  }
  return out;
}
