/**
 * Sketch bands (sketch-bands.ts), kept by the page store: after any run of
 * recorded pages and evictions (a prefix cut, single pages), the candidates
 * of a sketch are exactly the pages held that share one of its bands, as a
 * brute force over the held pages says. Sketches are drawn from a few bases
 * with some bins changed, so bands are shared often.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PageStore } from '../../../src/dedup/page-store.js';
import { CHAIN_LIMIT } from '../../../src/dedup/sketch-bands.js';
import { MINHASH_BINS, SKETCH_BINS } from '../../../src/fingerprint/feature-sketch.js';
import { shareBand } from '../../support/sketch-bands-oracle.js';

const op = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('add' as const), base: fc.nat(), changed: fc.uniqueArray(fc.nat(MINHASH_BINS - 1), { maxLength: 40 }), salt: fc.nat(254) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), share: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const), pick: fc.nat() }) },
);

test('the candidates of a sketch are the held pages that share one of its bands, through evictions and rebuilds', () => {
  // Hundreds of pages, so that the arrays are rebuilt as they grow and as the store compacts
  // after evictions; drawn from 64 bases, so that no key of a band is shared by more pages than
  // a probe looks at (CHAIN_LIMIT).
  let rebuiltAfterEviction = 0;
  fc.assert(
    fc.property(fc.constantFrom(2, 4, 7, 8, 14, 28), fc.array(fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS }), { minLength: 64, maxLength: 64 }), fc.array(op, { minLength: 300, maxLength: 400 }), (bands, bases, ops) => {
      const store = new PageStore(16, SKETCH_BINS);
      store.useBands(bands);
      const sketches = new Map<number, Uint8Array>();
      let ref = 0;
      let lowRef = 0;
      ops.forEach((o, step) => {
        if (o.kind === 'add') {
          const sketch = new Uint8Array(bases[o.base % bases.length]!);
          for (const b of o.changed) sketch[b] = (sketch[b]! + 1 + o.salt) & 0xff;
          store.record(ref, `p${ref}`, -1, 0, 0, 0, ref);
          store.setSketch(ref, sketch);
          sketches.set(ref, sketch);
          ref++;
        } else if (o.kind === 'cut') {
          store.forgetBefore(Math.floor(o.share * ref));
          // The store compacts itself once thousands are forgotten; here, at every cut.
          store.compact();
        } else if (ref > 0) {
          store.forget(o.pick % ref);
        }
        // The store reclaims the slots below its oldest page now and then (lowRef moves up), and
        // the bands rebuild without the refs below it at their next page.
        if (store.lowRef > lowRef) {
          lowRef = store.lowRef;
          rebuiltAfterEviction++;
        }
        if (step % 25 !== 24) return;
        // Probe with a few bases and the newest sketches.
        for (const probe of [...bases.slice(0, 4), ...[...sketches.values()].slice(-4)]) {
          const want = [...sketches.keys()].filter((r) => store.holds(r) && shareBand(probe, sketches.get(r)!, bands));
          const n = store.bands!.candidates(probe);
          const got = [...store.bands!.found.subarray(0, n)].filter((r) => store.holds(r));
          assert.deepEqual(got.sort((x, y) => x - y), want);
        }
      });
    }),
    { numRuns: 30, seed: 5 },
  );
  assert.ok(rebuiltAfterEviction > 10, `the store compacted ${rebuiltAfterEviction} times only`);
});

test('a store loaded with its pages builds the same bands (useBands on a restored store)', () => {
  const store = new PageStore(16, SKETCH_BINS);
  const sketches: Uint8Array[] = [];
  for (let ref = 0; ref < 300; ref++) {
    const sketch = new Uint8Array(SKETCH_BINS);
    for (let b = 0; b < SKETCH_BINS; b++) sketch[b] = (ref % 7) * 31 + (b < 8 ? 0 : ref);
    store.record(ref, `p${ref}`, -1, 0, 0, 0, ref);
    store.setSketch(ref, sketch);
    sketches.push(sketch);
  }
  store.forgetBefore(100);
  const loaded = PageStore.fromBuffer(store.toBuffer());
  loaded.useBands(7);
  store.useBands(7);
  for (const probe of sketches) {
    const a = [...store.bands!.found.subarray(0, store.bands!.candidates(probe))].filter((r) => store.holds(r)).sort((x, y) => x - y);
    const b = [...loaded.bands!.found.subarray(0, loaded.bands!.candidates(probe))].filter((r) => loaded.holds(r)).sort((x, y) => x - y);
    assert.deepEqual(b, a);
    // The first band (bins 0..7) is shared by the refs with the same ref % 7: 200 held / 7 each, over the chain limit.
    assert.ok(a.length >= Math.min(CHAIN_LIMIT, 28), `${a.length} candidates`);
  }
});
