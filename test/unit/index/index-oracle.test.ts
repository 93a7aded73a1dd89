import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FingerprintIndex,
  planFromBlocks,
  planTables,
  planTwoLevel,
  type TablePlan,
} from '../../../src/index/index.js';
import { assertSameAnswer, flipBits, Oracle, plantedQueries, rng } from './helpers.js';

function paperPlans(): [string, TablePlan][] {
  return [
    ['4 tables (4 x 16)', planFromBlocks(3, [16, 16, 16, 16])],
    ['10 tables (13,13,13,13,12)', planFromBlocks(3, [13, 13, 13, 13, 12])],
    ['16 tables (4 x 16 then 4 x 12)', planTwoLevel(3, 4, 4)],
    ['20 tables (11,11,11,11,10,10)', planFromBlocks(3, [11, 11, 11, 11, 10, 10])],
  ];
}

function plannerPlans(): [string, TablePlan][] {
  const out: [string, TablePlan][] = [];
  for (let k = 0; k <= 7; k++) {
    for (const n of [1e3, 1e6, 1e9]) out.push([`planner k=${k} N=${n}`, planTables({ k, expectedSize: n })]);
  }
  return out;
}

/** Uniform fingerprints plus clusters around a few centres (many pairs within k). */
function fill(index: FingerprintIndex, oracle: Oracle, n: number, k: number, seed: number, probeEvery = 0): void {
  const next = rng(seed);
  const centres: [number, number][] = [];
  for (let i = 0; i < 8; i++) centres.push([next(), next()]);
  for (let i = 0; i < n; i++) {
    let hi: number;
    let lo: number;
    if (i % 5 === 0) {
      const c = centres[next() % centres.length]!;
      [hi, lo] = flipBits(c[0], c[1], next() % (k + 3), next);
    } else {
      hi = next();
      lo = next();
    }
    const ref = index.insert(hi, lo);
    assert.equal(ref, oracle.add(hi, lo));
    if (probeEvery > 0 && i % probeEvery === 0) {
      assertSameAnswer(index, oracle, hi, lo, k, `fresh insert ${ref}`);
      const [qh, ql] = flipBits(hi, lo, k, next);
      assertSameAnswer(index, oracle, qh, ql, k, `fresh insert ${ref} +${k}`);
    }
  }
}

for (const [name, plan] of [...paperPlans(), ...plannerPlans()]) {
  test(`oracle: ${name} (k=${plan.k}, ${plan.tables.length} tables)`, () => {
    const index = FingerprintIndex.create({ plan });
    const oracle = new Oracle();
    const k = plan.k;
    fill(index, oracle, 3000, k, 1000 + k * 7 + plan.tables.length, 97);
    const next = rng(42 + k);
    for (const [hi, lo] of plantedQueries(oracle, k, 300, next)) {
      for (let kk = 0; kk <= k; kk++) assertSameAnswer(index, oracle, hi, lo, kk, `${name} kk=${kk}`);
    }
  });
}

for (const [name, plan] of paperPlans().slice(0, 1)) {
  for (const compressed of [false, true]) {
    test(`oracle, large merged runs: ${name}${compressed ? ', compressed' : ''}`, () => {
      const index = FingerprintIndex.create({ plan, compressed });
      const oracle = new Oracle();
      fill(index, oracle, 270_000, 3, 7, 20_011);
      const next = rng(9);
      const queries = plantedQueries(oracle, 3, 120, next);
      for (const [hi, lo] of queries) assertSameAnswer(index, oracle, hi, lo, 3, name);
      index.compact();
      for (const [hi, lo] of queries) assertSameAnswer(index, oracle, hi, lo, 3, `${name} compacted`);
      const perFp = index.byteLength / index.size;
      const limit = plan.tables.length === 4 ? (compressed ? 28 : 40) : 8.2 + plan.tables.length * 8;
      assert.ok(perFp <= limit, `bytes/fp ${perFp} > ${limit}`);
    });
  }
}

test('oracle, large-run layouts on small data, every paper design and short/long prefixes', async (t) => {
  const { runTuning } = await import('../../../src/index/sorted-run.js');
  const saved = runTuning.largeMin;
  runTuning.largeMin = 1500;
  try {
    const plans: [string, TablePlan][] = [
      ...paperPlans(),
      ['k=7, 8 x 8 (8-bit prefixes)', planFromBlocks(7, [8, 8, 8, 8, 8, 8, 8, 8])],
      ['k=1, 2 x 32 (32-bit prefixes)', planFromBlocks(1, [32, 32])],
      ['k=0, one 64-bit block', planFromBlocks(0, [64])],
      ['k=5, planner at 1e9', planTables({ k: 5, expectedSize: 1e9 })],
    ];
    for (const [name, plan] of plans) {
      // Large runs keep 24-bit refs below a span of 2^24; a span limit of 2500 makes the runs of
      // this data both narrow and wide (and merges of one with the other).
      for (const [layout, compressed, narrowSpan] of [['', false, 1 << 24], [', narrow and wide refs', false, 2500], [', compressed', true, 1 << 24]] as const) {
        await t.test(`${name}${layout}`, () => {
          runTuning.narrowSpan = narrowSpan;
          const index = FingerprintIndex.create({ plan, compressed });
          const oracle = new Oracle();
          fill(index, oracle, 6000, plan.k, 77 + plan.tables.length, 1999);
          const next = rng(78);
          const queries = plantedQueries(oracle, plan.k, 80, next);
          for (const [hi, lo] of queries) assertSameAnswer(index, oracle, hi, lo, plan.k, name);
          for (let r = 0; r < 6000; r += 5) {
            index.remove(r);
            oracle.live[r] = false;
          }
          index.removeBefore(700);
          for (let r = 0; r < 700; r++) oracle.live[r] = false;
          for (const [hi, lo] of queries) assertSameAnswer(index, oracle, hi, lo, plan.k, `${name} after removals`);
          index.compact();
          for (const [hi, lo] of queries) assertSameAnswer(index, oracle, hi, lo, plan.k, `${name} compacted`);
          const copy = FingerprintIndex.fromBuffer(index.toBuffer());
          for (const [hi, lo] of queries.slice(0, 20)) assertSameAnswer(copy, oracle, hi, lo, plan.k, `${name} restored`);
        });
      }
    }
  } finally {
    runTuning.largeMin = saved;
    runTuning.narrowSpan = 1 << 24;
  }
});
