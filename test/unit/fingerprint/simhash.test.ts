import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BYTE_HISTOGRAM_MIN, Simhash } from '../../../src/fingerprint/simhash.js';
import { seeded } from './fixtures.js';

/** The paper's definition, literally, with BigInt: 64 counters, +w for a 1 bit, -w for a 0 bit, bit = counter > 0. */
function referenceSimhash(features: { hash: bigint; weight: number }[]): bigint {
  const v = new Array<number>(64).fill(0);
  for (const { hash, weight } of features) {
    for (let i = 0; i < 64; i++) v[i]! += (hash >> BigInt(i)) & 1n ? weight : -weight;
  }
  let out = 0n;
  for (let i = 0; i < 64; i++) if (v[i]! > 0) out |= 1n << BigInt(i);
  return out;
}

describe('simhash', () => {
  it('matches a BigInt reference on seeded random feature sets', () => {
    const rnd = seeded(42);
    const simhash = new Simhash();
    const out = new Uint32Array(2);
    for (let trial = 0; trial < 300; trial++) {
      // Both paths: bit walking below BYTE_HISTOGRAM_MIN features, byte histograms above.
      const n = trial % 2 === 0 ? Math.floor(rnd() * BYTE_HISTOGRAM_MIN) : BYTE_HISTOGRAM_MIN + Math.floor(rnd() * 3000);
      const features: { hi: number; lo: number; weight: number }[] = [];
      for (let i = 0; i < n; i++) {
        // Integer and dyadic weights keep float sums exact, so ties are real ties.
        const kind = Math.floor(trial / 2) % 3;
        const weight = kind === 0 ? 1 : kind === 1 ? 1 + Math.floor(rnd() * 5) : Math.floor(rnd() * 16) / 4 + 0.25;
        features.push({ hi: (rnd() * 2 ** 32) >>> 0, lo: (rnd() * 2 ** 32) >>> 0, weight });
      }
      simhash.compute(
        Int32Array.from(features, (f) => f.hi | 0),
        Int32Array.from(features, (f) => f.lo | 0),
        Float64Array.from(features, (f) => f.weight),
        n,
        out,
      );
      const got = (BigInt(out[0]!) << 32n) | BigInt(out[1]!);
      const want = referenceSimhash(features.map((f) => ({ hash: (BigInt(f.hi) << 32n) | BigInt(f.lo), weight: f.weight })));
      assert.equal(got, want, `trial ${trial}`);
    }
  });

  it('gives 0 for ties and for no features, on both paths', () => {
    const simhash = new Simhash();
    const out = new Uint32Array(2);
    const run = (hi: number[], lo: number[], w: number[], copies: number): number[] => {
      const H = Int32Array.from({ length: hi.length * copies }, (_, i) => hi[i % hi.length]! | 0);
      const L = Int32Array.from({ length: lo.length * copies }, (_, i) => lo[i % lo.length]! | 0);
      const W = Float64Array.from({ length: w.length * copies }, (_, i) => w[i % w.length]!);
      simhash.compute(H, L, W, H.length, out);
      return [...out];
    };
    for (const copies of [1, BYTE_HISTOGRAM_MIN]) {
      assert.deepEqual(run([], [], [], copies), [0, 0]);
      assert.deepEqual(run([0xffffffff, 0], [0xffffffff, 0], [1, 1], copies), [0, 0]);
      assert.deepEqual(run([0x80000000, 0], [1, 0], [2, 1], copies), [0x80000000, 1]);
    }
  });
});
