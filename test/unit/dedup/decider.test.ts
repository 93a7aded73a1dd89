import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decider } from '../../../src/dedup/decider.js';
import { PageStore } from '../../../src/dedup/page-store.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { hammingDistance } from '../../../src/fingerprint/fingerprint-hex.js';
import { mulberry32Uint32 } from '../../support/rng.js';

const seeded = mulberry32Uint32;

function flip(hi: number, lo: number, bits: number[]): [number, number] {
  for (const b of bits) {
    if (b >= 32) hi = (hi ^ (1 << (b - 32))) >>> 0;
    else lo = (lo ^ (1 << b)) >>> 0;
  }
  return [hi, lo];
}

const plan = planFromBlocks(3, [16, 16, 16, 16]);
const newDecider = (k = 3, extra: Partial<ConstructorParameters<typeof Decider>[0]> = {}) =>
  new Decider({ index: FingerprintIndex.create({ plan }), k, ...extra });
const page = (id: string, hi: number, lo: number, short = false, fetchedAt = 0) => ({ id, hi, lo, short, fetchedAt });

test('novel, then duplicates at exactly k, not at k+1; exact copies at distance 0', () => {
  const d = newDecider();
  assert.equal(d.decide(page('a', 0x12345678, 0x9abcdef0)).verdict, 'novel');
  const [h3, l3] = flip(0x12345678, 0x9abcdef0, [1, 33, 60]);
  const atK = d.decide(page('b', h3, l3));
  assert.deepEqual([atK.verdict, atK.duplicateOf, atK.distance], ['duplicate', 'a', 3]);
  const [h4, l4] = flip(0x12345678, 0x9abcdef0, [2, 20, 40, 50]);
  // 4 bits from a, and from b: distance(b, this) is 7, so novel.
  assert.equal(hammingDistance(h3, l3, h4, l4), 7);
  assert.equal(d.decide(page('c', h4, l4)).verdict, 'novel');
  const copy = d.decide(page('d', 0x12345678, 0x9abcdef0));
  assert.deepEqual([copy.verdict, copy.duplicateOf, copy.distance], ['duplicate', 'a', 0]);
});

test('the closest earlier page wins; ties go to the earliest', () => {
  const d = newDecider();
  const [h2, l2] = flip(0, 0xff, [40, 41]);
  d.decide(page('far', h2, l2)); // 2 bits from the query below
  const [h1, l1] = flip(0, 0xff, [50]);
  d.decide(page('near', h1, l1)); // 1 bit
  const [h1b, l1b] = flip(0, 0xff, [51]);
  d.decide(page('near-later', h1b, l1b)); // also 1 bit, later
  const v = d.decide(page('q', 0, 0xff));
  assert.deepEqual([v.duplicateOf, v.distance], ['near', 1]);
});

test('a page id decided again gets its recorded verdict and changes nothing', () => {
  const d = newDecider();
  d.decide(page('a', 1, 2));
  const first = d.decide(page('b', 1, 3));
  const sizeBefore = d.index.size;
  // Same id, even with other content: the recorded verdict, never "duplicate of itself".
  const again = d.decide(page('b', 0xdeadbeef, 0xfeedface));
  assert.equal(again.repeated, true);
  assert.deepEqual([again.verdict, again.duplicateOf, again.distance], [first.verdict, first.duplicateOf, first.distance]);
  assert.equal(d.index.size, sizeBefore);
  const novelAgain = d.decide(page('a', 1, 2));
  assert.deepEqual([novelAgain.verdict, novelAgain.duplicateOf], ['novel', null]);
});

test('short pages match only exactly, in both directions', () => {
  const d = newDecider();
  d.decide(page('short-a', 0, 0b1111, true));
  assert.equal(d.decide(page('short-b', 0, 0b1110, true)).verdict, 'novel', 'short vs short at 1 bit');
  assert.equal(d.decide(page('long', 0, 0b1101, false)).verdict, 'novel', 'normal vs short at 1 bit');
  const exact = d.decide(page('short-c', 0, 0b1111, true));
  assert.deepEqual([exact.verdict, exact.duplicateOf, exact.distance], ['duplicate', 'short-a', 0]);
  const nearLong = d.decide(page('long-2', 0, 0b1100, false));
  assert.deepEqual([nearLong.verdict, nearLong.duplicateOf], ['duplicate', 'long']);
});

test('verdicts equal a brute-force oracle on a seeded stream with planted neighbours', () => {
  const rand = seeded(99);
  const d = newDecider();
  const seen: { id: string; hi: number; lo: number; seq: number }[] = [];
  for (let i = 0; i < 3000; i++) {
    let hi = rand();
    let lo = rand();
    if (seen.length > 0 && rand() % 3 === 0) {
      const base = seen[rand() % seen.length]!;
      const bits = Array.from({ length: rand() % 6 }, () => rand() % 64);
      [hi, lo] = flip(base.hi, base.lo, bits);
    }
    const v = d.decide(page(`p${i}`, hi, lo));
    let best: (typeof seen)[number] | null = null;
    let bestDistance = 99;
    for (const s of seen) {
      const dist = hammingDistance(s.hi, s.lo, hi, lo);
      if (dist <= 3 && dist < bestDistance) {
        best = s;
        bestDistance = dist;
      }
    }
    assert.equal(v.duplicateOf, best?.id ?? null, `page ${i}`);
    if (best) assert.equal(v.distance, bestDistance);
    seen.push({ id: `p${i}`, hi, lo, seq: i });
  }
});

test('restore re-applies recorded verdicts, and ties follow the decision sequence, not replay order', () => {
  const d = newDecider();
  const [h, l] = flip(7, 7, [9]);
  const [h2, l2] = flip(7, 7, [10]);
  // Replayed out of order: the later decision (sequence 5) arrives first.
  d.restore(page('second', h2, l2), null, 0, 5);
  d.restore(page('first', h, l), null, 0, 2);
  const v = d.decide(page('q', 7, 7));
  assert.deepEqual([v.duplicateOf, v.distance], ['first', 1]);
  assert.equal(v.sequence, 6, 'new decisions continue after the highest restored sequence');
  // Restoring a duplicate whose target is not in the index keeps its name.
  d.restore(page('dup', 1, 1), 'evicted-page', 2, 7);
  const again = d.decide(page('dup', 1, 1));
  assert.deepEqual([again.duplicateOf, again.distance, again.repeated], ['evicted-page', 2, true]);
});

test('capacity and age eviction drop the oldest fingerprints and their page records together', () => {
  const d = newDecider(3, { maxFingerprints: 100, maxAgeSeconds: 3600 });
  const rand = seeded(5);
  for (let i = 0; i < 250; i++) d.decide(page(`p${i}`, rand(), rand(), false, 1_000_000_000 + i * 1000));
  d.evict(1_000_000_000 + 250 * 1000);
  assert.equal(d.index.size, 100);
  assert.equal(d.pageIds, 100, 'the page store holds what the index holds');
  // p0 is gone from the index and from the page store: redelivered, it is decided again as a new page.
  const fp = new Uint32Array(2);
  assert.equal(d.index.fingerprintOf(0, fp), false);
  assert.equal(d.store.lookup('p0'), -1);
  const again = d.decide(page('p0', 0, 0, false, 1_000_000_000 + 250 * 1000));
  assert.equal(again.repeated, false);
  assert.equal(d.decide(page('p249', 0, 0)).repeated, true, 'a held page is still idempotent');
  // Age: everything fetched more than an hour before "now" goes.
  // now = 1,003,800 s: the cutoff is 1,000,200 s, so pages fetched before p200 go.
  d.evict(1_000_000_000 + 3_800_000);
  assert.equal(d.index.size, 51, 'p200..p249 and the redelivered p0');
  assert.equal(d.pageIds, 51);
});

test('page store: snapshot round trip, ids with any characters', () => {
  const d = newDecider();
  const ids = ['a', 'é', '中文页面', 'x'.repeat(1000), 'emoji-🙂', ''.padEnd(3, 'q')];
  ids.forEach((id, i) => d.decide(page(id, i === 3 ? 0 : i * 1000, 5)));
  const copy = PageStore.fromBuffer(Buffer.concat([Buffer.alloc(3), Buffer.from(d.store.toBuffer())]).subarray(3));
  for (const id of ids) {
    const ref = copy.lookup(id);
    assert.ok(ref >= 0, id);
    assert.equal(copy.idOf(ref), id);
    assert.equal(copy.duplicateOfId(ref), d.store.duplicateOfId(d.store.lookup(id)));
    assert.equal(copy.sequenceOf(ref), d.store.sequenceOf(d.store.lookup(id)));
  }
  assert.equal(copy.lookup('missing'), -1);
  assert.throws(() => PageStore.fromBuffer(d.store.toBuffer().subarray(0, 40)), { code: 'SNAPSHOT_INVALID' });
  const bad = d.store.toBuffer().slice();
  bad[0] = 0;
  assert.throws(() => PageStore.fromBuffer(bad), { code: 'SNAPSHOT_INVALID' });
});

test('page store grows past its initial capacity', () => {
  const store = new PageStore(4);
  for (let i = 0; i < 5000; i++) store.record(i, `id-${i}`, i > 0 ? i - 1 : -1, 1, 0, i);
  for (let i = 0; i < 5000; i += 499) {
    assert.equal(store.lookup(`id-${i}`), i);
    assert.equal(store.duplicateOfId(i), i > 0 ? `id-${i - 1}` : null);
  }
  assert.throws(() => store.record(5000, 'id-7', -1, 0, 0, 0), { code: 'INDEX_LIMIT' });
});
