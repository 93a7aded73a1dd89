import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DedupError } from '../../../src/errors.js';
import {
  describePlan,
  planFromBlocks,
  planTables,
  planTwoLevel,
  validatePlan,
  type TablePlan,
} from '../../../src/index/index.js';
import { compilePlan, key32 } from '../../../src/index/permutation.js';
import { rng } from './helpers.js';

const isPlanInvalid = (e: unknown): boolean => e instanceof DedupError && e.code === 'PLAN_INVALID';

test("the paper's designs for k = 3 (section 3.1.1)", () => {
  const four = planFromBlocks(3, [16, 16, 16, 16]);
  assert.equal(four.tables.length, 4);
  assert.deepEqual(four.tables.map((t) => t.prefixBits), [16, 16, 16, 16]);
  const ten = planFromBlocks(3, [13, 13, 13, 13, 12]);
  assert.equal(ten.tables.length, 10);
  assert.deepEqual([...new Set(ten.tables.map((t) => t.prefixBits))].sort(), [25, 26]);
  const twenty = planFromBlocks(3, [11, 11, 11, 11, 10, 10]);
  assert.equal(twenty.tables.length, 20);
  assert.deepEqual([...new Set(twenty.tables.map((t) => t.prefixBits))].sort(), [31, 32, 33]);
  const sixteen = planTwoLevel(3, 4, 4);
  assert.equal(sixteen.tables.length, 16);
  assert.deepEqual([...new Set(sixteen.tables.map((t) => t.prefixBits))], [28]);
  assert.equal(sixteen.blockWidths.reduce((a, b) => a + b, 0), 64);
  // 2^(34 - p) candidates per table at 8B fingerprints: 2^18, <= 2^9, 2^6, <= 2^3.
  assert.equal(describePlan(four, 2 ** 34).expectedCandidatesPerProbe, 4 * 2 ** 18);
  assert.equal(describePlan(sixteen, 2 ** 34).expectedCandidatesPerProbe, 16 * 2 ** 6);
  assert.equal(describePlan(twenty, 2 ** 34).minPrefixBits, 31);
});

test('planFromBlocks validates its input', () => {
  assert.throws(() => planFromBlocks(3, [32, 32]), isPlanInvalid);
  assert.throws(() => planFromBlocks(3, [16, 16, 16, 15]), isPlanInvalid);
  assert.throws(() => planFromBlocks(1, [0, 64]), isPlanInvalid);
  assert.throws(() => planFromBlocks(-1, [64]), isPlanInvalid);
  assert.throws(() => planFromBlocks(1.5, [32, 32]), isPlanInvalid);
  assert.equal(planFromBlocks(0, [64]).tables.length, 1);
});

test('validatePlan rejects plans that miss pairs or are malformed', () => {
  const good = planFromBlocks(2, [16, 16, 16, 16]);
  validatePlan(good);
  const bad = (p: unknown): void => assert.throws(() => validatePlan(p as TablePlan), isPlanInvalid, JSON.stringify(p));
  bad({ ...good, tables: good.tables.slice(1) });
  bad({ ...good, k: 3 });
  bad({ ...good, tables: [{ blocks: [0, 0], prefixBits: 16 }, ...good.tables] });
  bad({ ...good, tables: [{ blocks: [0, 9], prefixBits: 16 }] });
  bad({ ...good, tables: good.tables.map((t) => ({ ...t, prefixBits: 33 })) });
  bad({ ...good, tables: good.tables.map((t) => ({ ...t, prefixBits: 0 })) });
  bad({ ...good, tables: [] });
  bad({ ...good, blockWidths: [16, 16, 16] });
  bad(null);
  // A narrower prefix inside the chosen blocks is still exact.
  validatePlan({ ...good, tables: good.tables.map((t) => ({ ...t, prefixBits: 20 })) });
});

test('permutation: key32 is the top 32 bits of the permuted fingerprint', () => {
  const next = rng(1);
  const plans = [planFromBlocks(3, [11, 11, 11, 11, 10, 10]), planTwoLevel(3, 4, 4), planFromBlocks(2, [7, 20, 37])];
  for (const plan of plans) {
    const compiled = compilePlan(plan);
    const starts: number[] = [];
    plan.blockWidths.reduce((s, w) => (starts.push(s), s + w), 0);
    for (let trial = 0; trial < 200; trial++) {
      const hi = next();
      const lo = next();
      const bits = (BigInt(hi) << 32n) | BigInt(lo);
      const bit = (i: number): number => Number((bits >> BigInt(63 - i)) & 1n); // i = 0 is the MSB
      plan.tables.forEach((spec, t) => {
        const order = [...spec.blocks, ...plan.blockWidths.map((_, i) => i).filter((i) => !spec.blocks.includes(i))];
        let permuted = '';
        for (const i of order) for (let o = 0; o < plan.blockWidths[i]!; o++) permuted += bit(starts[i]! + o);
        assert.equal(key32(compiled.tables[t]!.segments, hi, lo), Number.parseInt(permuted.slice(0, 32), 2));
      });
    }
  }
});

test('planTables: valid plans for k = 0..7 across sizes, limits respected', () => {
  for (let k = 0; k <= 7; k++) {
    for (const n of [1, 1e4, 1e6, 1e7, 1e9, 8e9]) {
      const plan = planTables({ k, expectedSize: n });
      validatePlan(plan);
      assert.equal(plan.k, k);
      const cost = describePlan(plan, n);
      const capped = planTables({ k, expectedSize: n, maxTables: 10 });
      assert.ok(capped.tables.length <= 10 || k >= 6, `k=${k} n=${n}`);
      assert.ok(cost.bytesPerFingerprint > 8);
    }
  }
  // More data -> more prefix bits.
  const small = describePlan(planTables({ k: 3, expectedSize: 1e4 }), 1e4);
  const big = describePlan(planTables({ k: 3, expectedSize: 1e9 }), 1e9);
  assert.ok(big.minPrefixBits >= small.minPrefixBits);
  // A memory budget pushes the planner to fewer tables.
  const n = 1e8;
  const tight = planTables({ k: 3, expectedSize: n, memoryBudgetBytes: 40 * n });
  assert.ok(describePlan(tight, n).bytesPerFingerprint * n <= 40 * n);
  assert.ok(tight.tables.length <= 4);
  const minPrefix = planTables({ k: 3, expectedSize: 1e6, minPrefixBits: 25 });
  assert.ok(describePlan(minPrefix, 1e6).minPrefixBits >= 25);
});

test('planTables throws PLAN_INVALID when nothing fits', () => {
  assert.throws(() => planTables({ k: 3, expectedSize: 1e6, memoryBudgetBytes: 1e6 }), isPlanInvalid);
  assert.throws(() => planTables({ k: 3, expectedSize: 1e6, maxTables: 3 }), isPlanInvalid);
  assert.throws(() => planTables({ k: 3, expectedSize: 1e6, minPrefixBits: 60 }), isPlanInvalid);
  assert.throws(() => planTables({ k: -1, expectedSize: 1e6 }), isPlanInvalid);
  assert.throws(() => planTables({ k: 3, expectedSize: 0 }), isPlanInvalid);
});
