// The fingerprint's hot-path pieces against plain references, over generated inputs: the split hash
// round (key, mixKey, FOLD_KEY), the feature counter's table, and TextBuffer's native string copy, the simhash's folded histograms.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FOLD, FOLD_KEY } from '../../../src/fingerprint/char-class.js';
import { key, mix, mixKey } from '../../../src/fingerprint/feature-hash.js';
import { FeatureCounter } from '../../../src/fingerprint/hash-table-64.js';
import { BYTE_HISTOGRAM_MIN, Simhash } from '../../../src/fingerprint/simhash.js';
import { TextBuffer } from '../../../src/fingerprint/text-buffer.js';

/** Murmur3's body round as the reference writes it (Appleby's MurmurHash3_x86_32), in one piece. */
function murmurRound(h: number, k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

describe('split hash round', () => {
  it('mix and mixKey(key) are the Murmur3 round for any state and value', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (h, k) => {
        assert.equal(mix(h, k), murmurRound(h, k));
        assert.equal(mixKey(h, key(k)), murmurRound(h, k));
      }),
      { numRuns: 2000 },
    );
  });

  it('FOLD_KEY holds the key of every folded code unit', () => {
    for (let c = 0; c < 65536; c++) if (FOLD_KEY[c] !== key(FOLD[c]!)) assert.fail(`FOLD_KEY[${c}]`);
  });
});

describe('FeatureCounter', () => {
  it('counts as a Map does, in insertion order, across growth and pages', () => {
    // Keys drawn from a small pool so that repeats (and, with few bits, probe chains) are common.
    const key64 = fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3 })).map(([x, y]) => [Math.imul(x, 0x01000193) | 0, y - 2] as const);
    const page = fc.array(fc.oneof(key64, fc.tuple(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }))), { maxLength: 3000, size: 'max' });
    fc.assert(
      fc.property(fc.array(page, { minLength: 1, maxLength: 4 }), (pages) => {
        const counter = new FeatureCounter(16);
        for (const keys of pages) {
          counter.reset();
          const oracle = new Map<string, { entry: number; count: number }>();
          for (const [a, b] of keys) {
            const id = `${a},${b}`;
            const seen = oracle.get(id);
            const e = counter.add(a, b);
            if (seen === undefined) {
              assert.equal(e, ~oracle.size);
              oracle.set(id, { entry: oracle.size, count: 1 });
            } else {
              assert.equal(e, seen.entry);
              seen.count++;
            }
          }
          assert.equal(counter.size, oracle.size);
          for (const [id, { entry, count }] of oracle) {
            assert.equal(`${counter.entryA[entry]},${counter.entryB[entry]}`, id);
            assert.equal(counter.countOf[entry], count);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('TextBuffer.setString', () => {
  it('stores every code unit of any string (lone surrogates included), short or long, into a reused buffer', () => {
    const unit = fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0xd800, max: 0xdfff }));
    const text = fc.array(unit, { maxLength: 600, size: 'max' }).map((units) => String.fromCharCode(...units));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 5 }), (texts) => {
        const buffer = new TextBuffer(8);
        for (const s of texts) {
          buffer.setString(s);
          assert.equal(buffer.length, s.length);
          for (let i = 0; i < s.length; i++) if (buffer.units[i] !== s.charCodeAt(i)) assert.fail(`unit ${i} of ${JSON.stringify(s)}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('Simhash with whole weights', () => {
  it('folds the byte histograms to the same fingerprint as the ordered sums', () => {
    const feature = fc.tuple(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 40 }));
    // Few features take the bit walk, which ignores the flag; many take the histograms (size 'max':
    // fast-check's default sizes stay far below BYTE_HISTOGRAM_MIN). Hashes from a small pool too.
    const pool = fc.constantFrom(0, -1, 0x0f0f0f0f, 0x55555555, 0x7fffffff, -(2 ** 31));
    const some = fc.array(fc.oneof(feature, fc.tuple(pool, pool, fc.integer({ min: 1, max: 3 }))), { minLength: 0, maxLength: BYTE_HISTOGRAM_MIN + 50, size: 'max' });
    // Each feature beside its complement of the same weight ties every counter; a few more break some ties.
    const features = fc.tuple(some, fc.array(feature, { maxLength: 3 })).map(([fs, extra]) => [...fs, ...fs.map(([h, l, w]) => [~h, ~l, w] as const), ...extra]);
    const simhash = new Simhash();
    fc.assert(
      fc.property(features, (fs) => {
        const hi = Int32Array.from(fs, (f) => f[0]);
        const lo = Int32Array.from(fs, (f) => f[1]);
        const w = Float64Array.from(fs, (f) => f[2]);
        const ordered = new Uint32Array(2);
        const folded = new Uint32Array(2);
        simhash.compute(hi, lo, w, fs.length, ordered, false);
        simhash.compute(hi, lo, w, fs.length, folded, true);
        assert.deepEqual(folded, ordered);
      }),
      { numRuns: 400 },
    );
  });
});
