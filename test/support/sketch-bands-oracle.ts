import { MINHASH_BINS } from '../../src/fingerprint/feature-sketch.js';

/** Whether two sketches have all the bins of one of `bands` equal-width bands equal (the rule of sketch-bands.ts, by brute force). */
export function shareBand(a: Uint8Array, b: Uint8Array, bands: number): boolean {
  if (bands === 0) return false;
  const rows = MINHASH_BINS / bands;
  for (let band = 0; band < bands; band++) {
    let equal = true;
    for (let r = band * rows; r < (band + 1) * rows && equal; r++) if (a[r] !== b[r]) equal = false;
    if (equal) return true;
  }
  return false;
}

/** Whether band `band` of two sketches has all its bins equal. */
export function sameBand(a: Uint8Array, b: Uint8Array, bands: number, band: number): boolean {
  const rows = MINHASH_BINS / bands;
  for (let r = band * rows; r < (band + 1) * rows; r++) if (a[r] !== b[r]) return false;
  return true;
}

/**
 * The band rule by brute force: for each band, the `limit` newest refs among `held` (ascending)
 * below `refsBelow` whose band equals the probe's; their union, ascending.
 */
export function bandCandidates(probe: Uint8Array, held: readonly number[], sketchOf: (ref: number) => Uint8Array, bands: number, limit: number, refsBelow = Infinity): number[] {
  const out = new Set<number>();
  for (let band = 0; band < bands; band++) {
    let taken = 0;
    for (let i = held.length - 1; i >= 0 && taken < limit; i--) {
      const ref = held[i]!;
      if (ref >= refsBelow || !sameBand(probe, sketchOf(ref), bands, band)) continue;
      out.add(ref);
      taken++;
    }
  }
  return [...out].sort((x, y) => x - y);
}
