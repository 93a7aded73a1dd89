/**
 * mulberry32: a small, fast, seeded PRNG, good enough for generated pages and
 * test data (not for anything secret). The one copy the demo feed, the tests
 * and the benchmarks share, so a seed names the same stream everywhere.
 */

/** 32-bit unsigned integers. */
export function mulberry32Uint32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Floats in [0, 1): the integers above over 2^32. */
export function mulberry32(seed: number): () => number {
  const next = mulberry32Uint32(seed);
  return () => next() / 4294967296;
}
