/**
 * Fingerprints every valid page of the corpus with one feature configuration
 * on a worker pool; pages whose result is `empty` become PAGE_EMPTY errors,
 * as in the product (they are dead-lettered, never indexed).
 */
import { createFingerprintPool, type FeatureOptions, type PageContent } from '../../src/fingerprint/index.js';
import type { FingerprintTable } from './nearest.js';

export async function fingerprintAll(
  ids: readonly string[],
  contents: readonly (PageContent | null)[],
  validationErrors: readonly (string | null)[],
  options: Readonly<FeatureOptions>,
  threads: number,
  prepare?: (html: string) => string,
): Promise<FingerprintTable> {
  const n = ids.length;
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  const short = new Uint8Array(n);
  const features = new Uint32Array(n);
  const errors = validationErrors.slice();
  const todo: number[] = [];
  for (let i = 0; i < n; i++) if (contents[i] !== null) todo.push(i);
  const pool = await createFingerprintPool({ threads, features: options });
  try {
    const results = await pool.fingerprintMany(
      todo.map((i) => {
        const c = contents[i]!;
        return prepare !== undefined && typeof c.html === 'string' ? { html: prepare(c.html) } : c;
      }),
    );
    results.forEach((r, at) => {
      const i = todo[at]!;
      if (r.empty) {
        errors[i] = 'PAGE_EMPTY: page has no text content to fingerprint';
        return;
      }
      hi[i] = r.hi;
      lo[i] = r.lo;
      short[i] = r.short ? 1 : 0;
      features[i] = r.features;
    });
  } finally {
    await pool.close();
  }
  return { ids, hi, lo, short, features, errors };
}
