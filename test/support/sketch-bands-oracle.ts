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
