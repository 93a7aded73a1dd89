import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hammingDistance } from '../../../src/fingerprint/fingerprint-hex.js';
import { batchQuery, findAllPairs, planFromBlocks, planTables, planTwoLevel, type TablePlan } from '../../../src/index/index.js';
import { flipBits, rng } from './helpers.js';

/** n fingerprints: random, plus near copies at 0..k+1 bits of earlier ones, plus zeros. */
function dataset(n: number, k: number, seed: number): { hi: Uint32Array; lo: Uint32Array } {
  const next = rng(seed);
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % 3 === 0) {
      const j = next() % i;
      [hi[i], lo[i]] = flipBits(hi[j]!, lo[j]!, next() % (k + 2), next);
    } else if (i % 50 === 1) {
      hi[i] = 0;
      lo[i] = 0;
    } else {
      hi[i] = next();
      lo[i] = next();
    }
  }
  return { hi, lo };
}

function bruteAllPairs(hi: Uint32Array, lo: Uint32Array, k: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < hi.length; i++) {
    for (let j = i + 1; j < hi.length; j++) {
      const d = hammingDistance(hi[i]!, lo[i]!, hi[j]!, lo[j]!);
      if (d <= k) out.push(`${i},${j},${d}`);
    }
  }
  return out;
}

const plans: [string, TablePlan | undefined][] = [
  ['default plan', undefined],
  ['4 tables', planFromBlocks(3, [16, 16, 16, 16])],
  ['10 tables', planFromBlocks(3, [13, 13, 13, 13, 12])],
  ['16 tables', planTwoLevel(3, 4, 4)],
  ['20 tables', planFromBlocks(3, [11, 11, 11, 11, 10, 10])],
];

for (const [name, plan] of plans) {
  test(`findAllPairs matches brute force: ${name}`, () => {
    const { hi, lo } = dataset(2500, 3, 21);
    for (const k of [0, 1, 3]) {
      const got = findAllPairs(hi, lo, k, plan);
      const rows = [...got.a].map((a, i) => `${a},${got.b[i]},${got.distance[i]}`);
      assert.deepEqual(rows, bruteAllPairs(hi, lo, k), `k=${k}`);
    }
  });
}

test('findAllPairs for k = 0..7 with planner plans', () => {
  for (let k = 0; k <= 7; k++) {
    const { hi, lo } = dataset(800, k, 30 + k);
    const got = findAllPairs(hi, lo, k);
    const rows = [...got.a].map((a, i) => `${a},${got.b[i]},${got.distance[i]}`);
    assert.deepEqual(rows, bruteAllPairs(hi, lo, k), `k=${k}`);
  }
});

test('findAllPairs on empty and single inputs', () => {
  assert.equal(findAllPairs(new Uint32Array(0), new Uint32Array(0), 3).a.length, 0);
  assert.equal(findAllPairs(new Uint32Array(1), new Uint32Array(1), 3).a.length, 0);
  const two = findAllPairs(new Uint32Array(2), new Uint32Array(2), 0);
  assert.deepEqual([...two.a, ...two.b, ...two.distance], [0, 1, 0]);
});

test('batchQuery streams chunks past the query tables, sorted and deduped', () => {
  const k = 3;
  const stored = dataset(6000, k, 40);
  const next = rng(41);
  const qn = 700;
  const qhi = new Uint32Array(qn);
  const qlo = new Uint32Array(qn);
  for (let i = 0; i < qn; i++) {
    const j = next() % stored.hi.length;
    [qhi[i], qlo[i]] = i % 4 === 3 ? [next(), next()] : flipBits(stored.hi[j]!, stored.lo[j]!, next() % (k + 2), next);
  }
  qhi[0] = 0;
  qlo[0] = 0;
  for (const plan of [planFromBlocks(3, [16, 16, 16, 16]), planTables({ k: 3, expectedSize: qn })]) {
    for (const kk of [0, 2, 3]) {
      const m = batchQuery(plan, { hi: qhi, lo: qlo }, kk);
      // Three chunks with explicit refs (offset by 1e6), the last one scanned twice.
      const refs = Uint32Array.from({ length: stored.hi.length }, (_, i) => 1_000_000 + i);
      for (const [a, z] of [[0, 2000], [2000, 4500], [4500, 6000], [4500, 6000]] as const) {
        m.scan(stored.hi.subarray(a, z), stored.lo.subarray(a, z), refs.subarray(a, z));
      }
      assert.equal(m.scanned, 7500);
      const r = m.results();
      const got = [...r.queryIndex].map((q, i) => `${q},${r.storedRef[i]},${r.distance[i]}`);
      const want: string[] = [];
      for (let q = 0; q < qn; q++) {
        for (let s = 0; s < stored.hi.length; s++) {
          const d = hammingDistance(qhi[q]!, qlo[q]!, stored.hi[s]!, stored.lo[s]!);
          if (d <= kk) want.push(`${q},${1_000_000 + s},${d}`);
        }
      }
      assert.deepEqual(got, want, `k=${kk}`);
    }
  }
});

test('batchQuery without refs numbers stored fingerprints by stream position', () => {
  const m = batchQuery(planFromBlocks(1, [32, 32]), { hi: Uint32Array.of(5), lo: Uint32Array.of(5) }, 1);
  m.scan(Uint32Array.of(1, 5), Uint32Array.of(1, 5));
  m.scan(Uint32Array.of(5), Uint32Array.of(4));
  const r = m.results();
  assert.deepEqual([...r.queryIndex], [0, 0]);
  assert.deepEqual([...r.storedRef], [1, 2]);
  assert.deepEqual([...r.distance], [0, 1]);
});
