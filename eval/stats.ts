/**
 * Confidence intervals for the harness's rates, so a figure says how far it
 * may be from the rate on a stream the harness has never seen.
 *
 * Wilson score interval (Wilson 1927; Brown, Cai & DasGupta 2001 recommend it
 * over the normal approximation for small counts and rates near 0 or 1): for
 * k successes in n trials and z = 1.96 (95%),
 *
 *   centre = (p + z²/2n) / (1 + z²/n)
 *   half   = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)
 *
 * It treats pages as independent draws, which near-duplicates of one original
 * are not quite; the interval is a lower bound on the real uncertainty.
 */
export const Z95 = 1.959963984540054;

export function wilsonInterval(k: number, n: number, z = Z95): [number, number] | null {
  if (n === 0) return null;
  const p = k / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z / denom) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
