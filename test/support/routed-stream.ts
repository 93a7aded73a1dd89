/**
 * Seeded page streams for the routed index's tests (routed-decisions, partition
 * snapshots): new pages, near copies within and beyond k, ids sent again,
 * short pages, and a template sketch shared by a share of the pages, so that
 * hundreds of pages sit under one band key (more than a probe looks at).
 */
import { SKETCH_BINS } from '../../src/fingerprint/index.js';
import { mulberry32 as rng } from './rng.js';

export interface Page { id: string; hi: number; lo: number; short: boolean; fetchedAt: number; sketch: Uint8Array }

export const randomWord = (r: () => number): number => (r() * 2 ** 32) >>> 0;
export const randomSketch = (r: () => number): Uint8Array => Uint8Array.from({ length: SKETCH_BINS }, () => Math.floor(r() * 256));

export function flip(r: () => number, hi: number, lo: number, flips: number): [number, number] {
  for (let f = 0; f < flips; f++) {
    const bit = Math.floor(r() * 64);
    if (bit < 32) hi = (hi ^ (1 << bit)) >>> 0;
    else lo = (lo ^ (1 << (bit - 32))) >>> 0;
  }
  return [hi, lo];
}

/**
 * A stream with a template: `templated` of the pages share most of one sketch (a band key
 * shared by hundreds of pages) with random fingerprints, so only the bands connect them.
 */
export function stream(seed: number, n: number, templated: number): Page[] {
  const r = rng(seed);
  const template = randomSketch(r);
  const pages: Page[] = [];
  for (let i = 0; i < n; i++) {
    const roll = r();
    const fetchedAt = 1_700_000_000_000 + i;
    if (roll < templated) {
      const sketch = template.slice();
      // A few bins changed: most bands stay the template's, the overlap stays high or not.
      for (let c = Math.floor(r() * 12); c > 0; c--) sketch[Math.floor(r() * SKETCH_BINS)] = Math.floor(r() * 256);
      pages.push({ id: `p${i}`, hi: randomWord(r), lo: randomWord(r), short: r() < 0.05, fetchedAt, sketch });
      continue;
    }
    if (roll < templated + 0.35 || pages.length === 0) {
      pages.push({ id: `p${i}`, hi: randomWord(r), lo: randomWord(r), short: r() < 0.05, fetchedAt, sketch: randomSketch(r) });
      continue;
    }
    const base = pages[Math.floor(r() * pages.length)]!;
    if (roll < templated + 0.45) {
      // An id sent again: the same page, or another fingerprint under the same id.
      pages.push(r() < 0.5 ? { ...base } : { ...base, hi: randomWord(r), sketch: randomSketch(r) });
      continue;
    }
    const [hi, lo] = flip(r, base.hi, base.lo, Math.floor(r() * 9));
    const sketch = base.sketch.slice();
    for (let c = r() < 0.6 ? Math.floor(r() * 8) : Math.floor(r() * SKETCH_BINS); c > 0; c--) sketch[Math.floor(r() * SKETCH_BINS)] = Math.floor(r() * 256);
    pages.push({ id: `p${i}`, hi, lo, short: r() < 0.05 ? !base.short : base.short, fetchedAt, sketch });
  }
  return pages;
}

