import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DedupError } from '../../../src/errors.js';
import { FingerprintIndex, planFromBlocks, planTwoLevel } from '../../../src/index/index.js';
import { assertSameAnswer, Oracle, plantedQueries, rng } from './helpers.js';

function isSnapshotInvalid(e: unknown): boolean {
  return e instanceof DedupError && e.code === 'SNAPSHOT_INVALID';
}

for (const compressed of [false, true]) {
  test(`snapshot round trip gives identical answers${compressed ? ' (compressed)' : ''}`, () => {
    const plan = planTwoLevel(3, 4, 4);
    const index = FingerprintIndex.create({ plan, compressed });
    const oracle = new Oracle();
    const next = rng(11);
    for (let i = 0; i < 5000; i++) {
      const hi = next();
      const lo = next();
      index.insert(hi, lo);
      oracle.add(hi, lo);
    }
    for (let r = 0; r < 5000; r += 7) {
      index.remove(r);
      oracle.live[r] = false;
    }
    index.removeBefore(1000);
    for (let r = 0; r < 1000; r++) oracle.live[r] = false;
    const bytes = index.toBuffer();
    const copy = FingerprintIndex.fromBuffer(bytes);
    assert.equal(copy.size, index.size);
    assert.deepEqual(copy.plan, index.plan);
    assert.equal(copy.compressed, compressed);
    assert.equal(copy.insert(1, 2), index.insert(1, 2));
    oracle.add(1, 2);
    for (const [hi, lo] of plantedQueries(oracle, 3, 300, rng(12))) {
      assertSameAnswer(index, oracle, hi, lo, 3);
      assertSameAnswer(copy, oracle, hi, lo, 3);
    }
    // Unaligned copies decode too.
    const shifted = new Uint8Array(bytes.length + 1);
    shifted.set(bytes, 1);
    assert.equal(FingerprintIndex.fromBuffer(shifted.subarray(1)).size, index.size - 1);
  });
}

test('corrupt, truncated and unknown-version snapshots are rejected', () => {
  const index = FingerprintIndex.create({ plan: planFromBlocks(3, [16, 16, 16, 16]) });
  const next = rng(13);
  for (let i = 0; i < 300; i++) index.insert(next(), next());
  const good = index.toBuffer();
  assert.equal(FingerprintIndex.fromBuffer(good).size, 300);
  const cases: Uint8Array[] = [
    new Uint8Array(0),
    good.subarray(0, 12),
    good.subarray(0, good.length - 4),
    good.subarray(0, good.length - 1),
    good.subarray(0, 100),
    new Uint8Array([...good, 0, 0, 0, 0]),
  ];
  const flip = (at: number, mask = 1): Uint8Array => {
    const b = good.slice();
    b[at]! ^= mask;
    return b;
  };
  cases.push(flip(0), flip(4), flip(8), flip(12), flip(20), flip(200), flip(good.length - 30, 0x80), flip(good.length - 1));
  for (const [i, bad] of cases.entries()) {
    assert.throws(() => FingerprintIndex.fromBuffer(bad), isSnapshotInvalid, `case ${i}`);
  }
  assert.throws(() => FingerprintIndex.fromBuffer('nope' as unknown as Uint8Array), isSnapshotInvalid);
});

test('empty index round trips', () => {
  const index = FingerprintIndex.create({ plan: planFromBlocks(2, [22, 21, 21]) });
  const copy = FingerprintIndex.fromBuffer(index.toBuffer());
  assert.equal(copy.size, 0);
  assert.equal(copy.insert(5, 5), 0);
  assert.equal(copy.nearest(5, 4, 2), 0);
});
