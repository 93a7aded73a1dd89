/**
 * bulkInsert against sequential insert() and the brute-force oracle: the same
 * refs, the same snapshot bytes, the same answers, over many random sets
 * (clusters, exact duplicates, batch sizes around the buffer size), mixed
 * with single inserts and removals, in every run layout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createQueryResult, FingerprintIndex, planFromBlocks, planTwoLevel, type TablePlan } from '../../../src/index/index.js';
import { runTuning } from '../../../src/index/sorted-run.js';
import { tuning } from '../../../src/index/fingerprint-index.js';
import { assertSameAnswer, flipBits, Oracle, plantedQueries, rng } from './helpers.js';
import { Decider, type RestoredDecision } from '../../../src/dedup/decider.js';

function randomSet(n: number, next: () => number): [Uint32Array, Uint32Array] {
  const his = new Uint32Array(n);
  const los = new Uint32Array(n);
  const centres: [number, number][] = Array.from({ length: 6 }, () => [next(), next()]);
  for (let i = 0; i < n; i++) {
    const kind = next() % 10;
    if (kind < 3) [his[i], los[i]] = flipBits(...centres[next() % centres.length]!, next() % 6, next);
    else if (kind === 3 && i > 0) {
      const j = next() % i; // an exact duplicate of an earlier fingerprint
      his[i] = his[j]!;
      los[i] = los[j]!;
    } else {
      his[i] = next();
      los[i] = next();
    }
  }
  return [his, los];
}

const shared = createQueryResult(4);
function answer(index: FingerprintIndex, hi: number, lo: number, k: number): string {
  const n = index.query(hi, lo, k, shared);
  const pairs: string[] = [];
  for (let i = 0; i < n; i++) pairs.push(`${shared.refs[i]}:${shared.distances[i]}`);
  return pairs.sort().join(',');
}

function trial(plan: TablePlan, compressed: boolean, seed: number): void {
  const next = rng(seed);
  const bulk = FingerprintIndex.create({ plan, compressed });
  const seq = FingerprintIndex.create({ plan, compressed });
  const oracle = new Oracle();
  const steps = 2 + (next() % 5);
  for (let s = 0; s < steps; s++) {
    const sizes = [0, 1, tuning.bufferLimit - 1, tuning.bufferLimit, tuning.bufferLimit + 1, 700, 3000];
    const n = sizes[next() % sizes.length]!;
    const [his, los] = randomSet(n, next);
    const first = bulk.bulkInsert(his, los, n);
    assert.equal(first, seq.nextReference, 'first ref');
    for (let i = 0; i < n; i++) {
      assert.equal(seq.insert(his[i]!, los[i]!), first + i);
      oracle.add(his[i]!, los[i]!);
    }
    // Interleave single inserts and removals.
    for (let i = 0; i < next() % 40; i++) {
      const hi = next();
      const lo = next();
      assert.equal(bulk.insert(hi, lo), seq.insert(hi, lo));
      oracle.add(hi, lo);
    }
    if (oracle.hi.length > 0 && next() % 2 === 0) {
      for (let i = 0; i < 20; i++) {
        const r = next() % oracle.hi.length;
        assert.equal(bulk.remove(r), seq.remove(r));
        oracle.live[r] = false;
      }
    }
    assert.equal(bulk.nextReference, seq.nextReference);
    assert.equal(bulk.size, seq.size);
  }
  assert.deepEqual(bulk.toBuffer(), seq.toBuffer(), 'same fingerprints, refs and removals');
  if (oracle.hi.length === 0) return;
  for (const [hi, lo] of plantedQueries(oracle, plan.k, 60, next)) {
    assertSameAnswer(bulk, oracle, hi, lo, plan.k, `seed ${seed}`);
    assert.equal(answer(bulk, hi, lo, plan.k), answer(seq, hi, lo, plan.k));
  }
}

test('property: bulkInsert gives the refs, snapshot and answers of one-by-one inserts (many random sets)', () => {
  const plans = [planFromBlocks(3, [16, 16, 16, 16]), planFromBlocks(3, [13, 13, 13, 13, 12]), planTwoLevel(3, 4, 4), planFromBlocks(1, [32, 32])];
  for (let seed = 0; seed < 48; seed++) trial(plans[seed % plans.length]!, false, 500 + seed);
});

test('property: bulkInsert in the large and compressed run layouts', () => {
  const saved = runTuning.largeMin;
  runTuning.largeMin = 1500;
  try {
    for (let seed = 0; seed < 12; seed++) trial(planFromBlocks(3, [16, 16, 16, 16]), seed % 2 === 1, 900 + seed);
  } finally {
    runTuning.largeMin = saved;
  }
});

test('bulkInsert rejects a count outside its arrays', () => {
  const index = FingerprintIndex.create({ plan: planFromBlocks(3, [16, 16, 16, 16]) });
  assert.throws(() => index.bulkInsert(new Uint32Array(2), new Uint32Array(1), 2), RangeError);
  assert.throws(() => index.bulkInsert(new Uint32Array(2), new Uint32Array(2), -1), RangeError);
});

test('Decider.restoreBatch equals restore() one by one, repeated ids included', () => {
  const plan = planFromBlocks(3, [16, 16, 16, 16]);
  const next = rng(77);
  const batch: RestoredDecision[] = [];
  for (let i = 0; i < 2000; i++) {
    const id = `p${next() % 1500}`; // repeats within the batch
    batch.push({ page: { id, hi: next(), lo: next(), short: next() % 7 === 0, fetchedAt: (1_700_000_000 + (next() % 5000)) * 1000 }, duplicateOf: next() % 3 === 0 ? `p${next() % 1500}` : null, distance: next() % 4, sequence: i * 2 });
  }
  const a = new Decider({ index: FingerprintIndex.create({ plan }), k: 3, maxAgeSeconds: 1000 });
  const b = new Decider({ index: FingerprintIndex.create({ plan }), k: 3, maxAgeSeconds: 1000 });
  a.restore(batch[0]!.page, batch[0]!.duplicateOf, batch[0]!.distance, batch[0]!.sequence);
  b.restoreBatch(batch.slice(0, 1));
  for (const d of batch.slice(1)) a.restore(d.page, d.duplicateOf, d.distance, d.sequence);
  assert.equal(b.restoreBatch(batch.slice(1)), a.index.nextReference - 1);
  assert.deepEqual(b.index.toBuffer(), a.index.toBuffer());
  assert.deepEqual(b.store.toBuffer(), a.store.toBuffer());
  assert.equal(b.evict((1_700_000_000 + 3000) * 1000), a.evict((1_700_000_000 + 3000) * 1000));
  assert.deepEqual(b.store.toBuffer(), a.store.toBuffer());
});
