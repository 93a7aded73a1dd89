/**
 * An index with table masks (an index partition of the routed design): each
 * fingerprint is in the tables of its own mask, a query names the tables it
 * reads, and a stored fingerprint within k is reported, once, exactly when
 * some table both name has all its chosen blocks equal for the pair. Checked
 * against brute force over generated streams, with queries taken while
 * fingerprints sit in the insertion buffer, in small runs and in merged
 * ones, so that what is reported never depends on where a fingerprint is;
 * half-way, the index is replaced by its snapshot loaded back (masks and all),
 * which must go on answering and inserting as the oracle says.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createQueryResult, FingerprintIndex, planFromBlocks, type TablePlan } from '../../../src/index/index.js';
import { hammingDistance } from '../../../src/fingerprint/fingerprint-hex.js';
import { DedupError } from '../../../src/errors.js';
import { checksum } from '../../../src/index/snapshot.js';
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
  let index = FingerprintIndex.create({ plan, tableMasks: true });
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
    if (i === n >> 1) {
      // A restore mid-stream: the loaded index holds the masks, and answers (and inserts) on.
      const loaded = FingerprintIndex.fromBuffer(index.toBuffer());
      assert.ok(loaded.hasTableMasks);
      assert.equal(loaded.nextReference, index.nextReference);
      sameAnswers(index, loaded, fps, plan, next, `${name}, loaded after ${i + 1} inserts`);
      index = loaded;
    }
    if (i % 13 === 0) {
      const queried = next() % 4 === 0 ? all : (next() & all) | (1 << next() % tables);
      probe(flipBits(fp[0], fp[1], next() % (plan.k + 1), next), queried, `${name}, after ${i + 1} inserts`);
    }
  }
  assert.ok(reported > 100 && missedByMask > 50, `${name}: ${reported} reported, ${missedByMask} within k but in no queried table of theirs`);
}

/** Every query of `queries` near stored fingerprints, over random table sets, answers alike in a and b (refs and distances, as sets). */
function sameAnswers(a: FingerprintIndex, b: FingerprintIndex, fps: [number, number][], plan: TablePlan, next: () => number, label: string): void {
  const all = (1 << plan.tables.length) - 1;
  const outA = createQueryResult(8);
  const outB = createQueryResult(8);
  const pairs = (out: typeof outA, n: number): string[] => Array.from({ length: n }, (_, i) => `${out.refs[i]}:${out.distances[i]}`).sort();
  for (let q = 0; q < 300; q++) {
    const base = fps[next() % fps.length]!;
    const probe = flipBits(base[0], base[1], next() % (plan.k + 1), next);
    const queried = q % 5 === 0 ? all : (next() & all) | (1 << next() % plan.tables.length);
    const na = a.query(probe[0], probe[1], plan.k, outA, queried);
    const nb = b.query(probe[0], probe[1], plan.k, outB, queried);
    assert.deepEqual(pairs(outB, nb), pairs(outA, na), `${label}: query ${q}`);
  }
}

test('table masks: a fingerprint is found within k exactly through the tables both name (4 tables, k = 3)', () => {
  check('4 tables', planFromBlocks(3, [16, 16, 16, 16]), 4000, 11);
});

test('table masks: the same with 10 tables and with 28 (k = 6)', () => {
  check('10 tables', planFromBlocks(3, [13, 13, 13, 13, 12]), 3000, 12);
  check('28 tables', planFromBlocks(6, [8, 8, 8, 8, 8, 8, 8, 8]), 1500, 13);
});

test('an index without table masks refuses a fingerprint for some tables only; one with them takes insert() only', () => {
  const plan = planFromBlocks(3, [16, 16, 16, 16]);
  assert.throws(() => FingerprintIndex.create({ plan }).insert(1, 2, 0b0010), RangeError);
  const masked = FingerprintIndex.create({ plan, tableMasks: true });
  masked.insert(1, 2, 0b0010);
  assert.throws(() => masked.bulkInsert(new Uint32Array(300), new Uint32Array(300)), RangeError);
});

test('a masked snapshot round trip: removed refs, a cut ref range across 2^16-ref chunks, masks of 1, 2 and 4 bytes; a mask naming a missing table is SNAPSHOT_INVALID', () => {
  for (const [plan, n] of [
    [planFromBlocks(3, [16, 16, 16, 16]), 140_000],
    [planFromBlocks(3, [13, 13, 13, 13, 12]), 20_000],
    [planFromBlocks(6, [8, 8, 8, 8, 8, 8, 8, 8]), 5_000],
  ] as const) {
    const next = rng(n);
    const index = FingerprintIndex.create({ plan, tableMasks: true });
    const all = (2 ** plan.tables.length - 1) >>> 0;
    const fps: [number, number][] = [];
    for (let i = 0; i < n; i++) {
      const fp: [number, number] = i > 0 && next() % 3 === 0 ? flipBits(fps[next() % i]![0], fps[next() % i]![1], next() % 4, next) : [next(), next()];
      index.insert(fp[0], fp[1], (next() & all) | (1 << next() % plan.tables.length));
      fps.push(fp);
    }
    for (let i = 0; i < 50; i++) index.remove(next() % n);
    index.removeBefore(Math.floor(n / 3) + 7);
    const bytes = index.toBuffer();
    assert.equal(bytes.byteLength, index.snapshotByteLength);
    const loaded = FingerprintIndex.fromBuffer(bytes);
    assert.equal(loaded.size, index.size);
    sameAnswers(index, loaded, fps, plan, next, `${plan.tables.length} tables`);
    // Inserts go on from the same ref, into the same tables.
    for (let i = 0; i < 600; i++) {
      const [hi, lo] = flipBits(fps[next() % n]![0], fps[next() % n]![1], next() % 4, next);
      const tables = 1 << next() % plan.tables.length;
      assert.equal(loaded.insert(hi, lo, tables), index.insert(hi, lo, tables));
      fps.push([hi, lo]);
    }
    sameAnswers(index, loaded, fps, plan, next, `${plan.tables.length} tables, after more inserts`);
    // The last mask word: a bit above the plan's tables, with the checksum made right again, is refused.
    const bad = bytes.slice();
    const words = new Uint32Array(bad.buffer, 0, bad.byteLength / 4);
    words[words.length - 2] = (words[words.length - 2]! | 0x80000000) >>> 0;
    words[words.length - 1] = checksum(words, words.length - 1);
    assert.throws(() => FingerprintIndex.fromBuffer(bad), (e: unknown) => e instanceof DedupError && e.code === 'SNAPSHOT_INVALID');
  }
});
