import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { SKETCH_BINS, featureSketch, sketchSimilarity } from '../../../src/fingerprint/feature-sketch.js';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { readFixture } from './fixtures.js';

function sketchOf(keys: number[]): Uint8Array {
  const a = Int32Array.from(keys, (k) => Math.imul(k, 0x2545f491));
  const b = Int32Array.from(keys, (k) => Math.imul(k ^ 0x5bd1e995, 0x27d4eb2f));
  const out = new Uint8Array(SKETCH_BINS);
  featureSketch(a, b, keys.length, out);
  return out;
}

describe('feature sketch (b-bit one-permutation MinHash)', () => {
  it('estimates the Jaccard similarity of feature sets', () => {
    fc.assert(
      fc.property(fc.integer({ min: 50, max: 2000 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 1e6 }), (n, share, offset) => {
        const shared = Math.round(n * share);
        const a = Array.from({ length: n }, (_, i) => offset + i);
        const b = [...a.slice(0, shared), ...Array.from({ length: n - shared }, (_, i) => offset + 10_000_000 + i)];
        const jaccard = shared / (2 * n - shared);
        const est = sketchSimilarity(sketchOf(a), sketchOf(b));
        // 64 bins: standard error at most 0.0625; allow four of them.
        assert.ok(Math.abs(est - jaccard) <= 0.25, `n=${n} J=${jaccard.toFixed(3)} est=${est.toFixed(3)}`);
      }),
      { numRuns: 300, seed: 21 },
    );
  });

  it('is 1 for the same page and does not depend on feature order', () => {
    const keys = Array.from({ length: 300 }, (_, i) => i * 7);
    assert.deepEqual(sketchOf(keys), sketchOf([...keys].reverse()));
    assert.equal(sketchSimilarity(sketchOf(keys), sketchOf(keys)), 1);
  });

  it('separates a few words changed from another page, on real pages', async () => {
    const fp = await createFingerprinter();
    const sketch = (html: string): Uint8Array => {
      fp.fingerprint({ html });
      const out = new Uint8Array(SKETCH_BINS);
      fp.featureSketch(out);
      return out;
    };
    const page = readFixture('python-fractions.html');
    const edited = page.replace('rational', 'irrational').replace('Fraction instance', 'fraction object');
    const other = readFixture('python-filecmp.html');
    assert.ok(sketchSimilarity(sketch(page), sketch(edited)) > 0.8);
    assert.ok(sketchSimilarity(sketch(page), sketch(other)) < 0.3);
  });
});
