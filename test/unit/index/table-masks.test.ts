/**
 * An index with table masks (an index partition of the routed design): each
 * fingerprint is in the tables of its own mask, a query names the tables it
 * reads, and a stored fingerprint within k is reported, once, exactly when
 * some table both name has all its chosen blocks equal for the pair. Checked
 * against brute force over generated streams, with queries taken while
 * fingerprints sit in the insertion buffer, in small runs and in merged
 * ones, so that what is reported never depends on where a fingerprint is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createQueryResult, FingerprintIndex, planFromBlocks, type TablePlan } from '../../../src/index/index.js';
import { hammingDistance } from '../../../src/fingerprint/fingerprint-hex.js';
import { DedupError } from '../../../src/errors.js';
import { flipBits, rng } from './helpers.js';

/** Block i of a fingerprint, blocks laid out from the top bit down (plan.ts). */
function block(plan: TablePlan, hi: number, lo: number, i: number): bigint {
  const v = (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
  let top = 64;
  for (let j = 0; j < i; j++) top -= plan.blockWidths[j]!;
  const width = plan.blockWidths[i]!;
  return (v >> BigInt(top - width)) & ((1n << BigInt(width)) - 1n);
}

/** Whether table t matches the pair: every block it chooses is equal. */
function tableMatches(plan: TablePlan, t: number, a: [number, number], b: [number, number]): boolean {
  return plan.tables[t]!.blocks.every((i) => block(plan, a[0], a[1], i) === block(plan, b[0], b[1], i));
}

function check(name: string, plan: TablePlan, n: number, seed: number): void {
  const next = rng(seed);
  const index = FingerprintIndex.create({ plan, tableMasks: true });
  const tables = plan.tables.length;
  const all = (1 << tables) - 1;
  const fps: [number, number][] = [];
  const masks: number[] = [];
  const out = createQueryResult(8);
  const centres: [number, number][] = Array.from({ length: 6 }, () => [next(), next()]);
  let reported = 0;
  let missedByMask = 0;
  const probe = (q: [number, number], queried: number, label: string): void => {
    const count = index.query(q[0], q[1], plan.k, out, queried);
    const got = new Map<number, number>();
    for (let i = 0; i < count; i++) {
      assert.ok(!got.has(out.refs[i]!), `${label}: ref ${out.refs[i]} reported twice`);
      got.set(out.refs[i]!, out.distances[i]!);
    }
    for (let r = 0; r < fps.length; r++) {
      const d = hammingDistance(q[0], q[1], fps[r]![0], fps[r]![1]);
      let through = false;
      for (let t = 0; t < tables && d <= plan.k; t++) if ((queried & masks[r]! & (1 << t)) !== 0 && tableMatches(plan, t, q, fps[r]!)) through = true;
      if (through) {
        assert.equal(got.get(r), d, `${label}: ref ${r} at distance ${d} (tables ${masks[r]!.toString(2)}, queried ${queried.toString(2)})`);
        reported++;
      } else {
        assert.ok(!got.has(r), `${label}: ref ${r} reported though no table both name matches it`);
        if (d <= plan.k) missedByMask++;
      }
    }
  };
  for (let i = 0; i < n; i++) {
    const c = centres[next() % centres.length]!;
    const fp = i % 3 === 0 ? flipBits(c[0], c[1], next() % (plan.k + 3), next) : ([next(), next()] as [number, number]);
    // Mostly one table, as a partition gets them; sometimes several, now and then none.
    const roll = next() % 10;
    const mask = roll === 0 ? 0 : roll < 7 ? 1 << next() % tables : next() & all;
    assert.equal(index.insert(fp[0], fp[1], mask), i);
    fps.push(fp);
    masks.push(mask);
    if (i % 13 === 0) {
      const queried = next() % 4 === 0 ? all : (next() & all) | (1 << next() % tables);
      probe(flipBits(fp[0], fp[1], next() % (plan.k + 1), next), queried, `${name}, after ${i + 1} inserts`);
    }
  }
  assert.ok(reported > 100 && missedByMask > 50, `${name}: ${reported} reported, ${missedByMask} within k but in no queried table of theirs`);
}

test('table masks: a fingerprint is found within k exactly through the tables both name (4 tables, k = 3)', () => {
  check('4 tables', planFromBlocks(3, [16, 16, 16, 16]), 4000, 11);
});

test('table masks: the same with 10 tables and with 28 (k = 6)', () => {
  check('10 tables', planFromBlocks(3, [13, 13, 13, 13, 12]), 3000, 12);
  check('28 tables', planFromBlocks(6, [8, 8, 8, 8, 8, 8, 8, 8]), 1500, 13);
});

test('an index without table masks refuses a fingerprint for some tables only, and one with them has no snapshot', () => {
  const plan = planFromBlocks(3, [16, 16, 16, 16]);
  assert.throws(() => FingerprintIndex.create({ plan }).insert(1, 2, 0b0010), RangeError);
  const masked = FingerprintIndex.create({ plan, tableMasks: true });
  masked.insert(1, 2, 0b0010);
  assert.throws(() => masked.toBuffer(), DedupError);
  assert.throws(() => masked.bulkInsert(new Uint32Array(300), new Uint32Array(300)), RangeError);
});
