/**
 * Seeded synthetic index contents for the restart benchmarks: ids p0..pN-1,
 * random 64-bit fingerprints, 10% of the pages 1-3 bits from an earlier page
 * and recorded as its duplicate. The snapshot case and the changelog producer
 * use the same generator, so both restart paths rebuild the same state. Each
 * page has a feature sketch too (random; a near-duplicate's keeps most of its
 * page's bins), which the restarts carry when the second stage is on.
 */
import { mulberry32 } from '../../src/mulberry32.js';
import { MINHASH_BINS, SKETCH_BINS } from '../../src/fingerprint/feature-sketch.js';

export const NEAR_DUPLICATE_RATE = 0.1;
export const BASE_TIME_MS = Date.UTC(2026, 10, 1);

export interface SyntheticPage {
  id: string;
  hi: number;
  lo: number;
  duplicateOf: string | null;
  distance: number;
  fetchedAt: number;
  sequence: number;
  /** SKETCH_BINS bytes, valid until the next page is drawn. */
  sketch: Uint8Array;
}

/** Page i's own sketch, from its index alone (a near-duplicate recomputes its page's). */
function ownSketch(i: number, out: Uint8Array): void {
  let h = Math.imul(i + 1, 0x9e3779b1) >>> 0;
  for (let b = 0; b < SKETCH_BINS; b++) {
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + 0x6d2b79f5;
    out[b] = (h >>> 24) & 0xff;
  }
}

/** Seeded synthetic pages; also used by the changelog producer so both restarts see the same state. */
export function* syntheticPages(count: number, seed: number): Generator<SyntheticPage> {
  const rand = mulberry32(seed);
  const his = new Uint32Array(count);
  const los = new Uint32Array(count);
  const u32 = () => (rand() * 4294967296) >>> 0;
  const sketch = new Uint8Array(SKETCH_BINS);
  for (let i = 0; i < count; i++) {
    let hi = u32();
    let lo = u32();
    let duplicateOf: string | null = null;
    let distance = 0;
    if (i > 0 && rand() < NEAR_DUPLICATE_RATE) {
      const j = Math.floor(rand() * i);
      hi = his[j]!;
      lo = los[j]!;
      distance = 1 + Math.floor(rand() * 3);
      const flipped = new Set<number>();
      while (flipped.size < distance) flipped.add(Math.floor(rand() * 64));
      for (const bit of flipped) {
        if (bit < 32) hi = (hi ^ (1 << bit)) >>> 0;
        else lo = (lo ^ (1 << (bit - 32))) >>> 0;
      }
      duplicateOf = `p${j}`;
      ownSketch(j, sketch);
      // A few bins differ, as a few edited words change them; the digest of numbers stays.
      for (let k = 0; k < distance; k++) sketch[(i + 7 * k) % MINHASH_BINS] ^= 0x5a;
    } else ownSketch(i, sketch);
    his[i] = hi;
    los[i] = lo;
    yield { id: `p${i}`, hi, lo, duplicateOf, distance, fetchedAt: BASE_TIME_MS + i * 10, sequence: i, sketch };
  }
}

