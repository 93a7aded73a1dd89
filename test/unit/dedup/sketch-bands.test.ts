/**
 * Sketch bands (sketch-bands.ts), kept by the page store: after any run of
 * recorded pages and evictions (a prefix cut, single pages), the candidates
 * of a sketch are exactly what the rule says, by brute force over the held
 * pages: for each band, the CHAIN_LIMIT newest held pages below the bound
 * that share it. Sketches are drawn from a few bases with some bins changed,
 * so bands are shared often, and by hundreds of pages when the bases are few.
 * The buffer's bound is drawn too (SketchBandsOptions.bufferEntries), down to
 * one entry, so that the entries go through many sorted runs, their merges
 * and their rewrites after evictions, in memory and in scratch files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PageStore } from '../../../src/dedup/page-store.js';
import { CHAIN_LIMIT, SketchBands, bandCheck, bandKey, fingerprintTuning } from '../../../src/dedup/sketch-bands.js';
import { bufferSource, concatChunks } from '../../../src/index/index.js';
import { mulberry32Uint32 } from '../../support/rng.js';
import { MINHASH_BINS, SKETCH_BINS, isKnownSketch } from '../../../src/fingerprint/feature-sketch.js';
import { bandCandidates, shareBand } from '../../support/sketch-bands-oracle.js';
import { filePageTier } from '../../../src/storage/file-blob-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The buffer's bound: the default (2^20: no run in these tests' sizes unless it is low), or low. */
const bufferBound = fc.constantFrom(undefined, 1, 5, 64, 700);

const op = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('add' as const), base: fc.nat(), changed: fc.uniqueArray(fc.nat(MINHASH_BINS - 1), { maxLength: 40 }), salt: fc.nat(254) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), share: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const), pick: fc.nat() }) },
);

type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

/**
 * Applies one generated op to the store: an add records page `ref` with a sketch of
 * bases[o.base] with up to `changedBins` of its bins changed (the other bands stay shared) and
 * returns ref + 1; a cut or a forget evicts. `sketches`, when given, keeps every sketch recorded.
 */
function applyOp(store: PageStore, o: Op, ref: number, bases: readonly Uint8Array[], changedBins: number, sketches?: Map<number, Uint8Array>): number {
  if (o.kind === 'add') {
    const sketch = new Uint8Array(bases[o.base % bases.length]!);
    for (const b of o.changed.slice(0, changedBins)) sketch[b] = (sketch[b]! + 1 + o.salt) & 0xff;
    store.record(ref, `p${ref}`, -1, 0, 0, 0, ref);
    store.setSketch(ref, sketch);
    sketches?.set(ref, sketch);
    return ref + 1;
  }
  if (o.kind === 'cut') store.forgetBefore(Math.floor(o.share * o.share * ref));
  else if (ref > 0) store.forget(o.pick % ref);
  return ref;
}

/** Runs fn with `keyBits` key bits at most in the runs' fingerprints (the rest from the checks). */
function withFingerprintKeyBits(keyBits: number, fn: () => void): void {
  const before = fingerprintTuning.keyBits;
  fingerprintTuning.keyBits = keyBits;
  try {
    fn();
  } finally {
    fingerprintTuning.keyBits = before;
  }
}

// 8: the key's low byte (runs below 2^25 buckets); fewer: completed from the checks, as in the
// largest runs (2^25 buckets and more, from about 9.6M pages at 14 bands), here on small runs.
for (const keyBits of [8, 3, 0]) test(`the candidates of a sketch are the held pages that share one of its bands, through evictions and rebuilds (${keyBits} key bits in a fingerprint)`, () => withFingerprintKeyBits(keyBits, () => {
  // Hundreds of pages, so that the arrays are rebuilt as they grow and as the store compacts
  // after evictions; drawn from 64 bases, so that no key of a band is shared by more pages than
  // a probe looks at (CHAIN_LIMIT).
  let rebuiltAfterEviction = 0;
  fc.assert(
    fc.property(fc.constantFrom(2, 4, 7, 8, 14, 28), fc.array(fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS }), { minLength: 64, maxLength: 64 }), fc.array(op, { minLength: 300, maxLength: 400 }), bufferBound, (bands, bases, ops, bound) => {
      const store = new PageStore(16, SKETCH_BINS);
      store.bandBufferEntries = bound;
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
        // Runs are merged while a newer one is an eighth of the older: each is over eight times the next.
        const entries = store.bands!.entries;
        assert.ok(store.bands!.runCount <= 2 + Math.log(entries + 1) / Math.log(8), `${store.bands!.runCount} runs for ${entries} entries`);
      });
    }),
    { numRuns: keyBits === 8 ? 30 : 10, seed: 5 },
  );
  assert.ok(rebuiltAfterEviction > 10, `the store compacted ${rebuiltAfterEviction} times only`);
}));

for (const bound of [undefined, 3, 100]) test(`a store loaded with its pages builds the same bands (useBands on a restored store; buffer bound ${bound})`, () => {
  const store = new PageStore(16, SKETCH_BINS);
  store.bandBufferEntries = bound;
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
  loaded.bandBufferEntries = bound;
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

test('the candidates follow the band rule with hundreds of pages under one key, evictions and a bound on the refs', () => {
  // Few bases: every band key is shared by far more pages than CHAIN_LIMIT, so which pages count
  // is the rule's to say (the newest held ones below the bound), not the layout's. The layout
  // before this rule counted evicted pages toward the limit and stopped at a slot budget shared
  // by every band's keys: it found fewer held pages than the rule under evictions.
  let overLimit = 0;
  // Probes that met a run with a block of over 255 entries (its bucket starts kept 32 bits wide).
  let wideProbes = 0;
  fc.assert(
    fc.property(
      fc.constantFrom(2, 4, 7, 14, 28),
      fc.array(fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS }), { minLength: 1, maxLength: 4 }),
      fc.array(op, { minLength: 300, maxLength: 1200 }),
      fc.nat(),
      bufferBound,
      (bands, bases, ops, boundSeed, bound) => {
        const store = new PageStore(16, SKETCH_BINS);
        store.bandBufferEntries = bound;
        store.useBands(bands);
        const sketches = new Map<number, Uint8Array>();
        let ref = 0;
        ops.forEach((o, step) => {
          // Mostly one or two bins changed: the other bands stay shared.
          ref = applyOp(store, o, ref, bases, 2, sketches);
          if (step % 50 !== 49) return;
          // A page stored without a sketch (all zeros) is in no band.
          const held = [...sketches.keys()].filter((r) => store.holds(r) && isKnownSketch(sketches.get(r)!, 0));
          for (const probe of [...bases, ...[...sketches.values()].slice(-3)]) {
            for (const refsBelow of [Infinity, (boundSeed + step) % (ref + 1)]) {
              const want = bandCandidates(probe, held, (r) => sketches.get(r)!, bands, CHAIN_LIMIT, refsBelow);
              const n = store.bands!.candidates(probe, store, refsBelow);
              const got = [...store.bands!.found.subarray(0, n)].sort((x, y) => x - y);
              assert.deepEqual(got, want);
              if (held.filter((r) => r < refsBelow && shareBand(probe, sketches.get(r)!, bands)).length > CHAIN_LIMIT) overLimit++;
              if ((store.bands as unknown as { runs: { wide: Map<number, Uint32Array> }[] }).runs.some((run) => run.wide.size > 0)) wideProbes++;
            }
          }
        });
      },
    ),
    { numRuns: 40, seed: 7 },
  );
  assert.ok(overLimit > 100, `only ${overLimit} probes had more pages under a key than the limit`);
  assert.ok(wideProbes > 100, `only ${wideProbes} probes met a run with wide blocks`);
});

test('a probe skips reading a span whose entries are all of pages it found already, and finds the same pages in the same order', () => {
  // Near copies of held pages share several bands with them: each shared band's span in a run
  // is the one entry of that page, read once through the first band and then known. A holder
  // without sketches (holds alone) reads every span: both must find the band rule's pages, in
  // the same order, the first with no more reads.
  let skipped = 0;
  let readsKnown = 0;
  let readsAll = 0;
  fc.assert(
    fc.property(
      fc.constantFrom(7, 14, 28),
      fc.array(fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS }), { minLength: 16, maxLength: 64 }),
      fc.array(op, { minLength: 200, maxLength: 500 }),
      fc.constantFrom(1, 5, 64),
      fc.nat(),
      (bands, bases, ops, bound, seed) => {
        const store = new PageStore(16, SKETCH_BINS);
        store.bandBufferEntries = bound;
        store.useBands(bands);
        const sketches = new Map<number, Uint8Array>();
        const r = mulberry32Uint32(seed);
        const holdsOnly = { holds: (ref: number): boolean => store.holds(ref) };
        let ref = 0;
        ops.forEach((o, step) => {
          ref = applyOp(store, o, ref, bases, 4, sketches);
          if (step % 25 !== 24 || ref === 0) return;
          const held = [...sketches.keys()].filter((x) => store.holds(x));
          for (let q = 0; q < 6; q++) {
            // A near copy of a stored page: up to 3 bins changed.
            const probe = new Uint8Array(sketches.get(r() % ref)!);
            for (let c = r() % 4; c > 0; c--) probe[r() % MINHASH_BINS] = r() & 0xff;
            const refsBelow = q % 2 === 0 ? Infinity : r() % (ref + 1);
            const want = bandCandidates(probe, held, (x) => sketches.get(x)!, bands, CHAIN_LIMIT, refsBelow);
            const bandIndex = store.bands!;
            const before = bandIndex.diskReads;
            const skippedBefore = bandIndex.skippedReads;
            const known = [...bandIndex.found.subarray(0, bandIndex.candidates(probe, store, refsBelow))];
            readsKnown += bandIndex.diskReads - before;
            skipped += bandIndex.skippedReads - skippedBefore;
            const middle = bandIndex.diskReads;
            const all = [...bandIndex.found.subarray(0, bandIndex.candidates(probe, holdsOnly, refsBelow))];
            readsAll += bandIndex.diskReads - middle;
            assert.deepEqual(known, all);
            assert.deepEqual([...known].sort((x, y) => x - y), want);
          }
        });
      },
    ),
    { numRuns: 30, seed: 13 },
  );
  assert.ok(skipped > 200, `only ${skipped} reads skipped`);
  assert.ok(readsKnown + skipped === readsAll, `${readsKnown} reads + ${skipped} skipped, against ${readsAll} without the sketches`);
});

test('runs in scratch files (the file tier, read with pread) give the candidates runs in memory give', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sketch-bands-'));
  try {
    fc.assert(
      fc.property(
        fc.constantFrom(7, 14),
        fc.array(fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS }), { minLength: 2, maxLength: 16 }),
        fc.array(op, { minLength: 200, maxLength: 600 }),
        fc.constantFrom(1, 9, 200),
        (bands, bases, ops, bound) => {
          const tier = filePageTier(dir);
          const onFile = new PageStore(16, SKETCH_BINS, tier);
          const inMemory = new PageStore(16, SKETCH_BINS);
          for (const store of [onFile, inMemory]) {
            store.bandBufferEntries = bound;
            store.useBands(bands);
          }
          let ref = 0;
          try {
            ops.forEach((o, step) => {
              applyOp(inMemory, o, ref, bases, 3);
              ref = applyOp(onFile, o, ref, bases, 3);
              if (step % 40 !== 39) return;
              for (const probe of bases) {
                const a = [...onFile.bands!.found.subarray(0, onFile.bands!.candidates(probe, onFile))].sort((x, y) => x - y);
                const b = [...inMemory.bands!.found.subarray(0, inMemory.bands!.candidates(probe, inMemory))].sort((x, y) => x - y);
                assert.deepEqual(a, b);
              }
            });
            assert.ok(onFile.bands!.runCount > 0 || onFile.bands!.entries === 0);
          } finally {
            tier.close();
          }
        },
      ),
      { numRuns: 25, seed: 11 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Two different contents of band `band` whose bandKey is the same: a birthday search over seeded
 * random bins (about 2^16 draws for a 32-bit key; bands of 4 bins or more, so that there are
 * more contents than keys).
 */
function keyCollision(seed: number, band: number, bands: number): [Uint8Array, Uint8Array] {
  const rows = MINHASH_BINS / bands;
  const r = mulberry32Uint32(seed);
  const seen = new Map<number, Uint8Array>();
  for (;;) {
    const bins = new Uint8Array(rows).map(() => r() & 0xff);
    const sketch = new Uint8Array(SKETCH_BINS);
    sketch.set(bins, band * rows);
    const key = bandKey(sketch, band, rows);
    const other = seen.get(key);
    if (other !== undefined && other.some((b, i) => b !== bins[i])) return [other, bins];
    seen.set(key, bins);
  }
}

/**
 * Two sketches whose band `seed % bands` has the same key but other bins (keyCollision), and every
 * other bin differs between them, so they share no band; with the rows, and the generator that
 * drew them (for more pages).
 */
function collidingSketches(seed: number, bands: number): { a: Uint8Array; b: Uint8Array; band: number; rows: number; r: () => number } {
  const rows = MINHASH_BINS / bands;
  const band = seed % bands;
  const [stored, probed] = keyCollision(seed, band, bands);
  const r = mulberry32Uint32(seed ^ 0x5bd1e995);
  const a = new Uint8Array(SKETCH_BINS).map(() => r() & 0x7f);
  const b = a.map((x) => x | 0x80);
  a.set(stored, band * rows);
  b.set(probed, band * rows);
  return { a, b, band, rows, r };
}

test('a page whose band only hashes like the probe\'s (a 32-bit key collision) is no candidate, in the buffer and in the runs', () => {
  // At 10M pages, 14 bands put 140M keys in 2^32 values: a page's 14 keys met about 0.46
  // unrelated pages, each a disk read of its record to turn it down.
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 0x7fffffff }), fc.constantFrom(2, 4, 7, 14), fc.constantFrom(undefined, 1, 3), fc.nat(40), (seed, bands, bound, later) => {
      const { a, b, band, rows, r } = collidingSketches(seed, bands);
      assert.equal(bandKey(a, band, rows), bandKey(b, band, rows));
      assert.equal(shareBand(a, b, bands), false);
      const store = new PageStore(16, SKETCH_BINS);
      store.bandBufferEntries = bound;
      store.useBands(bands);
      const sketches: Uint8Array[] = [];
      const add = (sketch: Uint8Array): void => {
        const ref = sketches.length;
        store.record(ref, `p${ref}`, -1, 0, 0, 0);
        store.setSketch(ref, sketch);
        sketches.push(sketch);
      };
      add(a);
      // Later pages (unrelated, or copies of the probe's other bands) push `a` into the runs.
      for (let i = 0; i < later; i++) add(new Uint8Array(SKETCH_BINS).map(() => r() & 0xff));
      const n = store.bands!.candidates(b, store);
      const found = Array.from(store.bands!.found.subarray(0, n)).sort((x, y) => x - y);
      const held = sketches.map((_, ref) => ref);
      assert.deepEqual(found, bandCandidates(b, held, (ref) => sketches[ref]!, bands, CHAIN_LIMIT));
      assert.ok(!found.includes(0));
    }),
    { numRuns: 40 },
  );
});

test('a key collision whose check differs costs no disk read once the fingerprint holds check bits', () => {
  // The largest runs (2^25 buckets and more) keep fewer than 8 key bits below their buckets and
  // complete the fingerprint from the check: an entry whose key only collides with the probe's
  // then matches its fingerprint 1 time in 2^(8 - key bits), not always, and is not read.
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 0x7fffffff }), fc.constantFrom(2, 4, 7, 14), (seed, bands) => {
      const { a, b, band, rows } = collidingSketches(seed, bands);
      fc.pre(((bandCheck(a, band, rows) ^ bandCheck(b, band, rows)) & 0xff) !== 0);
      const reads = (keyBits: number): number =>
        withFingerprintKeyBitsResult(keyBits, () => {
          const store = new PageStore(16, SKETCH_BINS);
          store.bandBufferEntries = 1;
          store.useBands(bands);
          // Copies of `a` until the buffer is written out as a run: every entry of the probe's
          // band key is then in a run, under a's check.
          for (let ref = 0; store.bands!.runCount === 0; ref++) {
            store.record(ref, `p${ref}`, -1, 0, 0, 0);
            store.setSketch(ref, a);
          }
          const before = store.bands!.diskReads;
          assert.equal(store.bands!.candidates(b, store), 0);
          return store.bands!.diskReads - before;
        });
      // With the key's low byte alone the colliding entry is read (and turned down by its check).
      assert.ok(reads(8) >= 1);
      assert.equal(reads(0), 0);
    }),
    { numRuns: 40, seed: 24 },
  );
});

function withFingerprintKeyBitsResult<T>(keyBits: number, fn: () => T): T {
  let out: T | undefined;
  withFingerprintKeyBits(keyBits, () => {
    out = fn();
  });
  return out as T;
}

test('property: bands loaded from their snapshot (many runs, entries dropped below a rising low ref, the buffer) give every probe the candidates the original gives, and go on alike', () => {
  let mostRuns = 0;
  for (const seed of [1, 2, 3, 4]) {
    const rand = mulberry32Uint32(4400 + seed);
    const templates = Array.from({ length: 6 }, () => Uint8Array.from({ length: SKETCH_BINS }, () => rand() & 0xff));
    const sketchOf = (): Uint8Array => {
      const s = templates[rand() % templates.length]!.slice();
      for (let c = rand() % 20; c > 0; c--) s[rand() % MINHASH_BINS] = rand() & 0xff;
      return s;
    };
    const original = new SketchBands(14, { bufferEntries: 150 + seed * 100 });
    let ref = 0;
    let lowRef = 0;
    const add = (bands: SketchBands[], n: number): void => {
      for (let i = 0; i < n; i++, ref++) {
        const sketch = sketchOf();
        if (seed !== 1 && rand() % 10 === 0) lowRef = Math.max(lowRef, ref - 300 - (rand() % 300));
        for (const b of bands) b.add(ref, sketch, lowRef);
      }
    };
    add([original], 2000 + seed * 217);
    mostRuns = Math.max(mostRuns, original.runCount);
    const bytes = concatChunks(original.snapshotChunks(777));
    assert.equal(bytes.byteLength, original.snapshotByteLength);
    const loaded = SketchBands.readFrom(bufferSource(bytes), 14, { bufferEntries: 150 + seed * 100 });
    assert.equal(loaded.runCount, original.runCount);
    assert.equal(loaded.entries, original.entries);
    assert.equal(loaded.bytesOnDisk, original.bytesOnDisk);
    const same = (label: string): void => {
      for (let probe = 0; probe < 200; probe++) {
        const sketch = sketchOf();
        const below = rand() % 3 === 0 ? Infinity : rand() % (ref + 1);
        const a = [...original.found.subarray(0, original.candidates(sketch, null, below))];
        const b = [...loaded.found.subarray(0, loaded.candidates(sketch, null, below))];
        assert.deepEqual(b, a, `${label}, seed ${seed}, probe ${probe}`);
      }
    };
    same('loaded');
    add([original, loaded], 1500);
    same('after more adds');
    assert.throws(() => SketchBands.readFrom(bufferSource(bytes), 7), /bands/);
  }
  assert.ok(mostRuns >= 2, `at most ${mostRuns} runs`);
});
