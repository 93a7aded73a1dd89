/**
 * What a decision reads from the page store's tier: each read is a system
 * call (pread) with a file tier, and a page-cache miss at 10M pages, so the
 * decision cost counts them. Checked over generated streams: a decision reads
 * no id twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Decider } from '../../../src/dedup/decider.js';
import { PageStore } from '../../../src/dedup/page-store.js';
import { memoryPageTier, type BlobStore, type PageTier } from '../../../src/dedup/blob-store.js';
import { SKETCH_BINS } from '../../../src/fingerprint/index.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { mulberry32Uint32 } from '../../support/rng.js';

const plan = planFromBlocks(3, [16, 16, 16, 16]);

/** A tier in memory that logs the positions read from its id blob. */
function countingTier(): { tier: PageTier; nameReads: number[] } {
  const inner = memoryPageTier();
  const nameReads: number[] = [];
  const names: BlobStore = {
    append: (bytes) => inner.names.append(bytes),
    read: (position, into) => {
      nameReads.push(position);
      inner.names.read(position, into);
    },
    get byteLength() {
      return inner.names.byteLength;
    },
    release: (position) => inner.names.release(position),
  };
  return { tier: { records: inner.records, names, runs: inner.runs }, nameReads };
}

test('a decision reads each id from the tier at most once (a duplicate names its page and its record copies that id: one read)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 0x7fffffff }), fc.integer({ min: 20, max: 200 }), (seed, n) => {
      const r = mulberry32Uint32(seed);
      const { tier, nameReads } = countingTier();
      const store = new PageStore(64, SKETCH_BINS, tier);
      const decider = new Decider({ index: FingerprintIndex.create({ plan }), store, k: 3, secondStage: { radius: 3, minSimilarity: 0.85, bands: 14 } });
      const kept: { hi: number; lo: number; sketch: Uint8Array }[] = [];
      let duplicates = 0;
      for (let i = 0; i < n; i++) {
        let hi = r();
        let lo = r();
        let sketch = new Uint8Array(SKETCH_BINS).map(() => r() & 0xff);
        // Half the pages are near or exact copies of an earlier one (0 to 3 bits, the same sketch).
        if (kept.length > 0 && r() % 2 === 0) {
          const base = kept[r() % kept.length]!;
          hi = base.hi;
          lo = base.lo;
          for (let f = r() % 4; f > 0; f--) lo = (lo ^ (1 << (r() % 32))) >>> 0;
          sketch = base.sketch.slice();
        }
        kept.push({ hi, lo, sketch });
        // Some ids come again (a redelivery: the recorded verdict, read back).
        const id = r() % 8 === 0 && i > 0 ? `page-${r() % i}` : `page-${i}`;
        nameReads.length = 0;
        const v = decider.decide({ id, hi, lo, short: false, fetchedAt: 0, sketch });
        if (v.verdict === 'duplicate' && !v.repeated) duplicates++;
        assert.equal(new Set(nameReads).size, nameReads.length, `decision ${i} (${v.verdict}${v.repeated ? ', repeated' : ''}) read an id twice: ${nameReads.join(', ')}`);
      }
      return duplicates > 0;
    }),
    { numRuns: 60 },
  );
});
