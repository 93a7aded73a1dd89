/**
 * Refs follow decision order in a store (a page recorded later gets a
 * higher ref and a higher sequence), so the refs recorded from a sequence on
 * are a suffix, found by binary search. Pure.
 */

/** What the search reads: each ref's sequence (forgotten refs keep theirs). */
export interface SequencedRefs {
  sequenceOf(ref: number): number;
}

/** The first ref in [lowRef, endRef) recorded at or after `sequence`; endRef when there is none. */
export function firstRefFrom(store: SequencedRefs, lowRef: number, endRef: number, sequence: number): number {
  let lo = lowRef;
  let hi = endRef;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (store.sequenceOf(mid) < sequence) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
