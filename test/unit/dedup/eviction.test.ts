/**
 * Eviction as a property: after any sequence of decisions (fetch times in any
 * order, redeliveries), evict calls and snapshot round trips, the index and
 * the page store hold exactly the pages a brute-force oracle holds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decider } from '../../../src/dedup/decider.js';
import { PageStore } from '../../../src/dedup/page-store.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { memoryPageTier, type PageTier } from '../../../src/dedup/blob-store.js';
import { filePageTier } from '../../../src/storage/file-blob-store.js';
import { mulberry32Uint32 } from '../../support/rng.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const scratch = mkdtempSync(join(tmpdir(), 'eviction-test-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

const seeded = mulberry32Uint32;

const plan = planFromBlocks(3, [16, 16, 16, 16]);
const T0 = 1_700_000_000;

/** What should be held: ref → fetch second, id → ref. */
class Oracle {
  fetched: number[] = [];
  held: boolean[] = [];
  ids: string[] = [];
  byId = new Map<string, number>();
  record(ref: number, id: string, seconds: number): void {
    this.fetched[ref] = seconds;
    this.held[ref] = true;
    this.ids[ref] = id;
    this.byId.set(id, ref);
  }
  drop(ref: number): void {
    if (!this.held[ref]) return;
    this.held[ref] = false;
    this.byId.delete(this.ids[ref]!);
  }
  get live(): number {
    return this.held.filter(Boolean).length;
  }
  evict(nowMs: number, maxFingerprints: number, maxAgeSeconds: number): void {
    const next = this.held.length;
    if (maxFingerprints > 0 && this.live > maxFingerprints) for (let r = 0; r < next - maxFingerprints; r++) this.drop(r);
    if (maxAgeSeconds > 0) {
      const cutoff = Math.floor(nowMs / 1000) - maxAgeSeconds;
      for (let r = 0; r < next; r++) if (this.held[r] && this.fetched[r]! < cutoff) this.drop(r);
    }
  }
}

function fetchSecond(i: number, rand: () => number): number {
  const roll = rand() % 100;
  if (roll < 3) return T0 + 10_000_000 + (rand() % 1000); // far future
  if (roll < 6) return rand() % T0; // far past
  if (roll === 6) return 0xffffffff;
  if (roll === 7) return 0;
  return T0 + i - (rand() % 200); // roughly in order, with jitter
}

function assertSame(d: Decider, oracle: Oracle, label: string): void {
  const fp = new Uint32Array(2);
  const next = d.index.nextReference;
  assert.equal(next, oracle.held.length, `${label}: refs handed out`);
  for (let ref = 0; ref < next; ref++) {
    const want = oracle.held[ref] === true;
    assert.equal(d.index.fingerprintOf(ref, fp), want, `${label}: index holds ref ${ref} (fetched ${oracle.fetched[ref]})`);
    assert.equal(d.store.holds(ref), want, `${label}: page store holds ref ${ref}`);
  }
  assert.equal(d.index.size, oracle.live, `${label}: index size`);
  assert.equal(d.pageIds, oracle.live, `${label}: ids held`);
  for (const [id, ref] of oracle.byId) assert.equal(d.store.lookup(id), ref, `${label}: lookup ${id}`);
}

/** Fetch times live in the page store's tier records: the property runs over both tiers (scratch files read with pread). */
const TIERS: [string, () => PageTier, number][] = [
  ['memory', memoryPageTier, 40],
  ['file', () => filePageTier(scratch), 12],
];

for (const [tierName, makeTier, trials] of TIERS) test(`property (${tierName} tier): age and capacity eviction equal a brute-force oracle for fetch times in any order`, () => {
  for (let trial = 0; trial < trials; trial++) {
    const rand = seeded(1000 + trial);
    const maxAgeSeconds = [0, 50, 300, 5000][trial % 4]!;
    const maxFingerprints = trial % 3 === 0 ? 0 : 100 + (rand() % 2000);
    let d = new Decider({ index: FingerprintIndex.create({ plan }), store: new PageStore(1024, 0, makeTier()), k: 3, maxAgeSeconds, maxFingerprints });
    const oracle = new Oracle();
    const pages = 500 + (rand() % 3000);
    let now = T0 * 1000;
    for (let i = 0; i < pages; i++) {
      // Sometimes a redelivery of an earlier id: its recorded verdict while held, a new page once evicted.
      const again = i > 0 && rand() % 10 === 0;
      const id = again ? oracle.ids[rand() % oracle.ids.length]! : `p${i}`;
      const seconds = fetchSecond(i, rand);
      const wasHeld = oracle.byId.has(id);
      const ref = d.index.nextReference;
      const v = d.decide({ id, hi: rand(), lo: rand(), short: false, fetchedAt: seconds * 1000 });
      assert.equal(v.repeated, wasHeld, `trial ${trial}: ${id} repeated`);
      if (!wasHeld) oracle.record(ref, id, seconds);
      if (rand() % 50 === 0) {
        // Mostly forward in time, sometimes back.
        now += (rand() % 400) * 1000 - (rand() % 8 === 0 ? 300_000 : 0);
        d.evict(now);
        oracle.evict(now, maxFingerprints, maxAgeSeconds);
        assertSame(d, oracle, `trial ${trial} page ${i}`);
      }
      if (rand() % 400 === 0) {
        d = new Decider({ index: FingerprintIndex.fromBuffer(d.index.toBuffer()), store: PageStore.fromBuffer(d.store.toBuffer(), makeTier()), k: 3, maxAgeSeconds, maxFingerprints });
        assertSame(d, oracle, `trial ${trial} after a snapshot round trip`);
      }
    }
    now += 20_000_000_000;
    d.evict(now);
    oracle.evict(now, maxFingerprints, maxAgeSeconds);
    assertSame(d, oracle, `trial ${trial} at the end`);
  }
});

test('a page dated far in the future does not shield the stale pages after it', () => {
  const d = new Decider({ index: FingerprintIndex.create({ plan }), k: 3, maxAgeSeconds: 3600 });
  const rand = seeded(8);
  d.decide({ id: 'future', hi: rand(), lo: rand(), short: false, fetchedAt: (T0 + 86_400 * 365) * 1000 });
  for (let i = 0; i < 1001; i++) d.decide({ id: `stale-${i}`, hi: rand(), lo: rand(), short: false, fetchedAt: (T0 + i) * 1000 });
  d.decide({ id: 'fresh', hi: rand(), lo: rand(), short: false, fetchedAt: (T0 + 10_000) * 1000 });
  assert.equal(d.evict((T0 + 10_000) * 1000), 1001);
  assert.equal(d.index.size, 2);
  assert.equal(d.store.lookup('future'), 0);
  assert.equal(d.store.lookup('stale-0'), -1);
  assert.ok(d.store.lookup('fresh') >= 0);
});

test('the page store stays bounded under a sliding window, and its meters follow', () => {
  const d = new Decider({ index: FingerprintIndex.create({ plan }), k: 3, maxFingerprints: 1000 });
  const rand = seeded(9);
  let afterWarmUp = 0;
  for (let i = 0; i < 60_000; i++) {
    d.decide({ id: `https://example.org/a/fairly/long/path/${i}`, hi: rand(), lo: rand(), short: false, fetchedAt: i * 1000 });
    if (i % 100 === 99) d.evict(i * 1000);
    if (i === 9_999) afterWarmUp = d.pageStoreBytes;
  }
  assert.equal(d.pageIds, 1000);
  assert.equal(d.store.idCount, 1000);
  // Growth from 10,000 to 60,000 decided pages: none beyond slack (the store holds 1,000 pages either way).
  assert.ok(d.pageStoreBytes <= afterWarmUp * 1.5, `${d.pageStoreBytes} bytes after 60,000 pages vs ${afterWarmUp} after 10,000`);
  assert.ok(d.pageStoreBytes < 400_000, `${d.pageStoreBytes} bytes for 1,000 pages`);
  assert.equal(d.pageStoreBytes, d.store.byteLength);
});
