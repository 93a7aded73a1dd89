import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DedupError } from '../../../src/errors.js';
import { createQueryResult, FingerprintIndex, planFromBlocks, planTables } from '../../../src/index/index.js';
import { assertSameAnswer, flipBits, Oracle, plantedQueries, rng } from './helpers.js';

const plan4 = planFromBlocks(3, [16, 16, 16, 16]);

function build(n: number, seed: number, compressed = false): { index: FingerprintIndex; oracle: Oracle } {
  const index = FingerprintIndex.create({ plan: plan4, compressed });
  const oracle = new Oracle();
  const next = rng(seed);
  for (let i = 0; i < n; i++) {
    const hi = next();
    const lo = next();
    index.insert(hi, lo);
    oracle.add(hi, lo);
  }
  return { index, oracle };
}

function checkAll(index: FingerprintIndex, oracle: Oracle, seed: number, count = 200): void {
  const next = rng(seed);
  for (const [hi, lo] of plantedQueries(oracle, 3, count, next)) assertSameAnswer(index, oracle, hi, lo, 3);
}

test('refs are dense from 0; fingerprintOf round-trips; size and byteLength', () => {
  const { index, oracle } = build(1000, 1);
  assert.equal(index.size, 1000);
  const out = new Uint32Array(2);
  for (let r = 0; r < 1000; r += 37) {
    assert.ok(index.fingerprintOf(r, out));
    assert.deepEqual([out[0], out[1]], [oracle.hi[r], oracle.lo[r]]);
  }
  assert.equal(index.fingerprintOf(1000, out), false);
  assert.equal(index.fingerprintOf(-1, out), false);
  assert.ok(index.byteLength > 0);
});

test('the same fingerprint inserted twice is found twice (simhash-py#53)', () => {
  const { index, oracle } = build(5000, 2);
  const a = index.insert(0x12345678, 0x9abcdef0);
  oracle.add(0x12345678, 0x9abcdef0);
  const b = index.insert(0x12345678, 0x9abcdef0);
  oracle.add(0x12345678, 0x9abcdef0);
  const out = createQueryResult(1);
  for (let round = 0; round < 2; round++) {
    const n = index.query(0x12345678, 0x9abcdef0, 0, out);
    const refs = [...out.refs.subarray(0, n)].sort((x, y) => x - y);
    assert.deepEqual(refs, [a, b]);
    assert.equal(index.nearest(0x12345678, 0x9abcdef0, 3), a, 'ties go to the smallest ref');
    assertSameAnswer(index, oracle, 0x12345679, 0x9abcdef0, 3);
    for (let i = 0; i < 600; i++) index.insert(i, i); // push them out of the buffer into runs
    for (let i = 0; i < 600; i++) oracle.add(i, i);
  }
});

test('all-zero fingerprint and a hot prefix (thousands sharing every block prefix)', () => {
  const index = FingerprintIndex.create({ plan: plan4 });
  const oracle = new Oracle();
  const next = rng(3);
  for (let i = 0; i < 4000; i++) {
    // Empty pages hash to 0; a template family differs only in a few low bits.
    const [hi, lo] = i % 3 === 0 ? [0, 0] : i % 3 === 1 ? flipBits(0, 0, 1 + (i % 4), next) : [next(), next()];
    index.insert(hi, lo);
    oracle.add(hi, lo);
  }
  const zeros = assertSameAnswer(index, oracle, 0, 0, 3);
  assert.ok(zeros > 2000);
  assertSameAnswer(index, oracle, 0, 0, 0);
  assertSameAnswer(index, oracle, 0xffffffff, 0xffffffff, 3);
  assertSameAnswer(index, oracle, 0, 0x0000000f, 3);
  assert.equal(index.nearest(0, 0, 3), 0);
  checkAll(index, oracle, 4);
});

test('queries interleaved with inserts see fresh inserts at once, across merges', () => {
  const plan = planTables({ k: 3, expectedSize: 1e6 });
  const index = FingerprintIndex.create({ plan });
  const oracle = new Oracle();
  const next = rng(5);
  for (let i = 0; i < 20_000; i++) {
    const hi = next();
    const lo = next();
    const ref = index.insert(hi, lo);
    oracle.add(hi, lo);
    if (i % 211 === 0 || (i & (i - 1)) === 0) {
      assert.equal(index.nearest(hi, lo, 0), ref);
      const [qh, ql] = flipBits(hi, lo, 3, next);
      assertSameAnswer(index, oracle, qh, ql, 3);
    }
  }
});

test('remove and removeBefore: answers exclude removed refs, before and after merges', () => {
  const { index, oracle } = build(30_000, 6);
  const next = rng(60);
  for (let i = 0; i < 3000; i++) {
    const r = next() % 30_000;
    assert.equal(index.remove(r), oracle.live[r]);
    oracle.live[r] = false;
  }
  assert.equal(index.remove(30_000), false);
  assert.equal(index.remove(1.5), false);
  assert.equal(index.size, oracle.live.filter(Boolean).length);
  checkAll(index, oracle, 61);
  // Removing a ref and querying its own fingerprint: gone.
  const out = createQueryResult();
  index.query(oracle.hi[123]!, oracle.lo[123]!, 0, out);
  const before = index.size;
  const alive = oracle.live[123]!;
  assert.equal(index.remove(123), alive);
  oracle.live[123] = false;
  assert.equal(index.size, before - (alive ? 1 : 0));
  assert.equal(index.fingerprintOf(123, new Uint32Array(2)), false);
  checkAll(index, oracle, 62);
  // FIFO eviction.
  const liveBelow = oracle.live.slice(0, 12_345).filter(Boolean).length;
  assert.equal(index.removeBefore(12_345), liveBelow);
  for (let r = 0; r < 12_345; r++) oracle.live[r] = false;
  assert.equal(index.removeBefore(100), 0);
  assert.equal(index.remove(5), false);
  checkAll(index, oracle, 63);
  for (let i = 0; i < 5000; i++) {
    const hi = next();
    const lo = next();
    index.insert(hi, lo);
    oracle.add(hi, lo);
  }
  assert.equal(index.removeBefore(29_000), oracle.live.slice(0, 29_000).filter(Boolean).length);
  for (let r = 0; r < 29_000; r++) oracle.live[r] = false;
  checkAll(index, oracle, 64);
  index.compact();
  checkAll(index, oracle, 65);
  assert.equal(index.size, oracle.live.filter(Boolean).length);
  const remaining = index.size;
  assert.equal(index.removeBefore(1e12), remaining);
  assert.equal(index.size, 0);
});

test('query k above plan.k is refused with PLAN_INVALID', () => {
  const { index } = build(10, 7);
  assert.throws(() => index.query(0, 0, 4, createQueryResult()), (e: unknown) => e instanceof DedupError && e.code === 'PLAN_INVALID');
  assert.throws(() => index.nearest(0, 0, -1), (e: unknown) => e instanceof DedupError && e.code === 'PLAN_INVALID');
});

test('query results are reused without allocation and grow when needed', () => {
  const index = FingerprintIndex.create({ plan: plan4 });
  for (let i = 0; i < 100; i++) index.insert(7, 7);
  const out = createQueryResult(2);
  assert.equal(index.query(7, 7, 0, out), 100);
  assert.ok(out.refs.length >= 100);
  assert.ok(out.candidates >= 100);
  const refs = out.refs;
  assert.equal(index.query(7, 6, 1, out), 100);
  assert.equal(out.refs, refs);
  assert.equal(index.query(1, 1, 1, out), 0);
});
