import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Decider } from '../../../src/dedup/decider.js';
import { FingerprintIndex, planTables } from '../../../src/index/index.js';
import { Rng } from '../../../eval/corpus/prng.js';
import { decisiveDistances, nearestEarlier, NO_MATCH, verdictsAtK, type FingerprintTable } from '../../../eval/sweep/nearest.js';

/** A stream with clusters of fingerprints a few bits apart, some short pages, some errors. */
function randomStream(seed: string, n: number): { table: FingerprintTable; clusters: string[] } {
  const rng = new Rng(seed);
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  const short = new Uint8Array(n);
  const features = new Uint32Array(n);
  const errors: (string | null)[] = [];
  const clusters: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0 && rng.chance(0.5)) {
      const j = rng.int(0, i - 1);
      hi[i] = hi[j]!;
      lo[i] = lo[j]!;
      for (let f = rng.int(0, 6); f > 0; f--) {
        const bit = rng.int(0, 63);
        if (bit < 32) lo[i] = (lo[i]! ^ (1 << bit)) >>> 0;
        else hi[i] = (hi[i]! ^ (1 << (bit - 32))) >>> 0;
      }
      clusters.push(clusters[j]!);
    } else {
      hi[i] = rng.nextUint32();
      lo[i] = rng.nextUint32();
      clusters.push(`c${i}`);
    }
    short[i] = rng.chance(0.1) ? 1 : 0;
    features[i] = short[i] ? 10 : 100;
    errors.push(rng.chance(0.05) ? 'PAGE_EMPTY: x' : null);
  }
  return { table: { ids: Array.from({ length: n }, (_, i) => `p${i}`), hi, lo, short, features, errors }, clusters };
}

describe('nearestEarlier', () => {
  it('gives the product decider\u2019s verdicts for every k (the decider is the oracle)', () => {
    const { table } = randomStream('nearest-oracle', 400);
    const nearest = nearestEarlier(table);
    for (const k of [0, 1, 3, 5, 7]) {
      const decider = new Decider({ index: FingerprintIndex.create({ plan: planTables({ k, expectedSize: 1000 }), initialCapacity: 512 }), k });
      const ours = verdictsAtK(table, nearest, k);
      table.ids.forEach((id, i) => {
        if (table.errors[i] !== null) {
          assert.equal(ours[i]!.error, table.errors[i]);
          return;
        }
        const v = decider.decide({ id, hi: table.hi[i]!, lo: table.lo[i]!, short: table.short[i] === 1, fetchedAt: i * 1000 });
        assert.deepEqual(
          { verdict: ours[i]!.verdict, duplicateOf: ours[i]!.duplicateOf, distance: ours[i]!.distance },
          { verdict: v.verdict, duplicateOf: v.duplicateOf, distance: v.distance },
          `k=${k} page ${id}`,
        );
      });
    }
  });

  it('prefers the closest page, then the earliest, and never matches a short page above distance 0', () => {
    const table: FingerprintTable = {
      ids: ['a', 'b', 'c', 'd', 'e'],
      hi: Uint32Array.from([0, 0, 0, 0, 0]),
      lo: Uint32Array.from([0b111, 0b011, 0b001, 0b001, 0b011]),
      short: Uint8Array.from([0, 0, 0, 1, 0]),
      features: Uint32Array.from([50, 50, 50, 5, 50]),
      errors: [null, null, null, null, null],
    };
    const n = nearestEarlier(table);
    assert.deepEqual([...n.ref], [-1, 0, 1, 2, 1]);
    assert.deepEqual([...n.distance], [NO_MATCH, 1, 1, 0, 0]);
    const shortFirst: FingerprintTable = { ...table, short: Uint8Array.from([1, 0, 0, 0, 0]) };
    assert.deepEqual([...nearestEarlier(shortFirst).ref], [-1, -1, 1, 2, 1]);
  });
});

describe('decisiveDistances', () => {
  it('is the distance to the own cluster for near-duplicates and to anything for negatives', () => {
    const table: FingerprintTable = {
      ids: ['a', 'b', 'c'],
      hi: Uint32Array.from([0, 0, 0]),
      lo: Uint32Array.from([0b0000, 0b0001, 0b1111]),
      short: new Uint8Array(3),
      features: new Uint32Array(3),
      errors: [null, null, null],
    };
    // c is a near-duplicate of a (cluster A); b is a distinct page (cluster B).
    const d = decisiveDistances(table, ['A', 'B', 'A'], [false, false, true]);
    assert.deepEqual([...d], [NO_MATCH, 1, 4]);
  });
});

describe('content sketch second stage', () => {
  it('confirms a candidate only when the estimated Jaccard reaches the threshold', async () => {
    const { contentSketches, estimatedJaccard, sketchConfirmedVerdicts } = await import('../../../eval/sweep/content-sketch.js');
    const prose = (words: string[]): string => `<p>${words.join(' ')}</p>`;
    const base = Array.from({ length: 200 }, (_, i) => `word${i}`);
    const edited = base.map((w, i) => (i === 100 ? 'changed' : w));
    const rewritten = base.map((w, i) => (i >= 60 && i < 140 ? `other${i}` : w));
    const sketches = contentSketches([{ html: prose(base) }, { html: prose(edited) }, { html: prose(rewritten) }]);
    assert.equal(estimatedJaccard(sketches, 0, 0), 1);
    assert.ok(estimatedJaccard(sketches, 0, 1) > 0.8);
    assert.ok(estimatedJaccard(sketches, 0, 2) < 0.7);
    const table: FingerprintTable = {
      ids: ['a', 'b', 'c'],
      hi: new Uint32Array(3),
      lo: Uint32Array.from([0, 1, 3]),
      short: new Uint8Array(3),
      features: new Uint32Array(3),
      errors: [null, null, null],
    };
    const v = sketchConfirmedVerdicts(table, sketches, 3, 0.8);
    assert.equal(v[1]!.duplicateOf, 'a');
    assert.equal(v[2]!.verdict, 'novel', 'within 3 bits of a and b, but a rewritten paragraph away in content');
    assert.equal(sketchConfirmedVerdicts(table, sketches, 3, 0)[2]!.duplicateOf, 'b');
  });
});
