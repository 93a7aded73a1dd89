/**
 * The page store against a Map oracle over random records, forgets, cuts,
 * compactions and snapshot round trips.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PageStore } from '../../../src/dedup/page-store.js';
import { idKeyTuning } from '../../../src/dedup/id-table.js';
import { memoryPageTier, type PageTier } from '../../../src/dedup/blob-store.js';
import { filePageTier } from '../../../src/storage/file-blob-store.js';
import { mulberry32Uint32 } from '../../support/rng.js';

const scratch = mkdtempSync(join(tmpdir(), 'page-store-test-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
/** The two tiers every property runs over: in memory, and scratch files (pread). */
const TIERS: [string, () => PageTier][] = [
  ['memory', memoryPageTier],
  ['file', () => filePageTier(scratch)],
];

const seeded = mulberry32Uint32;

/** What UTF-8 storage gives back: lone surrogates become U+FFFD. */
const stored = (id: string | null): string | null => (id === null ? null : (id as unknown as { toWellFormed(): string }).toWellFormed());

interface Row {
  id: string;
  dup: string | null;
  distance: number;
  flags: number;
  fetched: number;
  seq: number;
  sketch: Uint8Array | null;
}

/**
 * Ids are kept in RAM by a 32-bit key and confirmed by their bytes in the tier; with the key
 * narrowed to 10 bits, distinct ids share keys all the time, and every lookup must still find
 * its own id exactly.
 */
const KEY_WIDTHS: [string, number, number][] = [
  ['32-bit keys', 0xffffffff, 12],
  ['10-bit keys, shared by many ids', 0x3ff, 4],
];

for (const [tierName, makeTier] of TIERS) for (const [keyName, keyMask, trials] of KEY_WIDTHS) test(`property (${tierName} tier, ${keyName}): lookups, ids, duplicate names, fetch times, sketches and sequences survive forgets, cuts, compactions and snapshots`, () => {
  idKeyTuning.mask = keyMask;
  try {
    property(makeTier, trials);
  } finally {
    idKeyTuning.mask = 0xffffffff;
  }
});

function property(makeTier: () => PageTier, trials: number): void {
  for (let trial = 0; trial < trials; trial++) {
    const rand = seeded(50 + trial);
    const sketchBytes = trial % 3 === 0 ? 0 : 64;
    let store = new PageStore(trial % 2 === 0 ? 4 : 1024, sketchBytes, makeTier());
    const rows = new Map<number, Row>();
    const everId = new Set<string>();
    let ref = 0;
    let low = 0;
    const steps = 3000 + (rand() % 12_000);
    for (let s = 0; s < steps; s++) {
      const op = rand() % 100;
      if (op < 70) {
        // Some ids end in a lone surrogate (half of the emoji).
        const id = `id-${trial}-${s}-${'é中🙂'.slice(0, rand() % 5)}`;
        const held = [...rows.keys()];
        const dupRef = held.length > 0 && rand() % 2 === 0 ? held[rand() % held.length]! : -1;
        ref += 1 + (rand() % 3 === 0 ? rand() % 3 : 0); // refs may skip
        let sketch: Uint8Array | null = null;
        if (sketchBytes > 0 && rand() % 4 !== 0) {
          sketch = new Uint8Array(sketchBytes);
          for (let b = 0; b < sketchBytes; b++) sketch[b] = rand() & 0xff;
        }
        // Sequences mostly rise with refs; some jump by more than 32 bits, or back (a replay across partitions).
        const seq = rand() % 50 === 0 ? s + 2 ** 33 + (rand() % 1000) : rand() % 20 === 0 ? Math.max(0, s - 500) : s;
        const row: Row = { id, dup: dupRef >= 0 ? rows.get(dupRef)!.id : null, distance: rand() % 4, flags: rand() % 2, fetched: rand(), seq, sketch };
        store.record(ref, id, dupRef, row.distance, row.flags, row.fetched, row.seq);
        if (sketchBytes > 0 && rand() % 8 !== 0) store.setSketch(ref, sketch);
        else row.sketch = null;
        rows.set(ref, row);
        everId.add(id);
      } else if (op < 90) {
        const held = [...rows.keys()];
        if (held.length === 0) continue;
        const r = held[rand() % held.length]!;
        assert.equal(store.forget(r), true);
        assert.equal(store.forget(r), false);
        rows.delete(r);
      } else if (op < 97) {
        const cut = low + (rand() % (ref - low + 2));
        let n = 0;
        for (const r of [...rows.keys()]) if (r < cut) (rows.delete(r), n++);
        assert.equal(store.forgetBefore(cut), n);
        low = Math.max(low, cut);
      } else {
        store = PageStore.fromBuffer(store.toBuffer(), makeTier());
      }
    }
    assert.equal(store.size, rows.size);
    for (const [r, row] of rows) {
      assert.equal(store.lookup(row.id), r, row.id);
      assert.equal(store.holds(r), true);
      assert.equal(store.idOf(r), stored(row.id));
      assert.equal(store.duplicateOfId(r), stored(row.dup));
      assert.equal(store.distanceOf(r), row.distance);
      assert.equal(store.flagsOf(r), row.flags);
      assert.equal(store.fetchedAtOf(r), row.fetched >>> 0);
      assert.equal(store.sequenceOf(r), row.seq);
      if (sketchBytes > 0) assert.deepEqual(store.sketchOf(r), row.sketch ?? new Uint8Array(sketchBytes), `sketch of ${r}`);
    }
    const heldIds = new Set([...rows.values()].map((r) => r.id));
    for (const id of everId) if (!heldIds.has(id)) assert.equal(store.lookup(id), -1, `${id} forgotten`);
    assert.ok(store.lowRef <= Math.min(...rows.keys(), ref + 1));
    // A re-recorded forgotten id is new, and the sequence continues.
    const copy = PageStore.fromBuffer(store.toBuffer(), makeTier());
    assert.equal(copy.nextSequence, store.nextSequence);
    assert.equal(copy.size, store.size);
    assert.deepEqual(copy.toBuffer(), store.toBuffer(), 'a loaded snapshot writes the same snapshot');
    for (const [r, row] of rows) assert.equal(copy.lookup(row.id), r, `${row.id} after a load`);
  }
}

test('compaction reclaims the bytes of forgotten ids, keeping the ones still named as duplicated pages', () => {
  const store = new PageStore(4);
  for (let i = 0; i < 20_000; i++) store.record(i, `page-${i}-${'x'.repeat(40)}`, i > 0 ? i - 1 : -1, 1, 0, i, i);
  const full = store.byteLength;
  assert.equal(store.forgetBefore(19_990), 19_990);
  store.compact();
  assert.ok(store.byteLength < full / 20, `${store.byteLength} of ${full} bytes left`);
  assert.equal(store.lowRef, 19_990);
  assert.equal(store.duplicateOfId(19_990), `page-19989-${'x'.repeat(40)}`, 'the duplicated page is named after it is forgotten');
  assert.equal(store.lookup(`page-19989-${'x'.repeat(40)}`), -1);
  store.record(20_000, `page-19989-${'x'.repeat(40)}`, 19_999, 0, 0, 0);
  assert.equal(store.lookup(`page-19989-${'x'.repeat(40)}`), 20_000);
  assert.throws(() => store.record(19_999, 'late', -1, 0, 0, 0), { code: 'INDEX_LIMIT' });
});

/** The rows test/fixtures/page-store/version-4.bin was written from (by the layout that kept ids and sketches in RAM). */
function legacyRows(): { ref: number; id: string; dup: number; distance: number; flags: number; fetched: number; seq: number; sketch: Uint8Array }[] {
  const rows = [];
  for (let i = 0; i < 40; i++) {
    const sketch = new Uint8Array(64);
    for (let b = 0; b < 64; b++) sketch[b] = (i * 31 + b * 7) & 0xff;
    rows.push({ ref: i + (i > 20 ? 3 : 0), id: `legacy-${i}-é中`, dup: i % 3 === 2 ? i - 1 : -1, distance: i % 5, flags: i % 4 === 0 ? 1 : 0, fetched: 1_700_000_000 + i, seq: 100 + i * 2, sketch });
  }
  return rows;
}

for (const [tierName, makeTier] of TIERS) test(`a version 4 snapshot (ids and sketches in RAM) loads into the ${tierName} tier with every record`, () => {
  const bytes = readFileSync(join(process.cwd(), 'test/fixtures/page-store/version-4.bin'));
  const store = PageStore.fromBuffer(new Uint8Array(bytes), makeTier());
  const rows = legacyRows();
  assert.equal(store.size, 37);
  rows.forEach((row, i) => {
    if (i === 0 || i === 1 || i === 5) {
      assert.equal(store.lookup(row.id), -1);
      return;
    }
    assert.equal(store.lookup(row.id), row.ref);
    assert.equal(store.idOf(row.ref), row.id);
    // A duplicate still names its page after that page is forgotten (rows 1 and 5).
    assert.equal(store.duplicateOfId(row.ref), row.dup >= 0 ? rows[row.dup]!.id : null);
    assert.equal(store.distanceOf(row.ref), row.distance);
    assert.equal(store.flagsOf(row.ref), row.flags);
    assert.equal(store.fetchedAtOf(row.ref), row.fetched);
    assert.equal(store.sequenceOf(row.ref), row.seq);
    assert.deepEqual(store.sketchOf(row.ref), row.sketch);
  });
  assert.equal(store.nextSequence, 100 + 39 * 2 + 1);
  // And it writes version 5, which loads to the same store.
  const again = PageStore.fromBuffer(store.toBuffer(), makeTier());
  assert.deepEqual(again.toBuffer(), store.toBuffer());
});

/** The rows test/fixtures/page-store/version-5.bin was written from (by the layout with 64-bit id hashes and fetch times in RAM). */
function version5Rows(): { ref: number; id: string; dup: number; distance: number; flags: number; fetched: number; seq: number; sketch: Uint8Array }[] {
  const rows = [];
  for (let i = 0; i < 60; i++) {
    const sketch = new Uint8Array(64);
    for (let b = 0; b < 64; b++) sketch[b] = (i * 29 + b * 11) & 0xff;
    const id = `v5-${i}-é中${i % 7 === 0 ? '\ud83d' : ''}`;
    rows.push({ ref: i + (i > 30 ? 5 : 0), id, dup: i % 4 === 3 ? i - 2 : -1, distance: i % 6, flags: i % 5 === 0 ? 1 : 0, fetched: 1_700_000_000 + i * 977 + (i === 40 ? 90_000 : 0), seq: i % 9 === 8 ? 2 ** 33 + i : 200 + i * 3, sketch });
  }
  return rows;
}

for (const [tierName, makeTier] of TIERS) test(`a version 5 snapshot (64-bit id hashes, fetch times in RAM) loads into the ${tierName} tier with every record`, () => {
  const bytes = readFileSync(join(process.cwd(), 'test/fixtures/page-store/version-5.bin'));
  const store = PageStore.fromBuffer(new Uint8Array(bytes), makeTier());
  const rows = version5Rows();
  assert.equal(store.size, 57);
  rows.forEach((row, i) => {
    if (i === 0 || i === 2 || i === 33) {
      assert.equal(store.lookup(row.id), -1);
      assert.equal(store.holds(row.ref), false);
      return;
    }
    assert.equal(store.lookup(row.id), row.ref, row.id);
    assert.equal(store.idOf(row.ref), stored(row.id));
    assert.equal(store.duplicateOfId(row.ref), row.dup >= 0 ? stored(rows[row.dup]!.id) : null);
    assert.equal(store.distanceOf(row.ref), row.distance);
    assert.equal(store.flagsOf(row.ref), row.flags);
    assert.equal(store.fetchedAtOf(row.ref), row.fetched);
    assert.equal(store.sequenceOf(row.ref), row.seq);
    assert.deepEqual(store.sketchOf(row.ref), row.sketch);
  });
  // It writes version 7, which loads to the same store; a new id and a forgotten one are recorded anew.
  const again = PageStore.fromBuffer(store.toBuffer(), makeTier());
  assert.equal(new DataView(again.toBuffer().buffer).getUint32(4, true), 7);
  assert.deepEqual(again.toBuffer(), store.toBuffer());
  again.record(100, rows[2]!.id, rows[3]!.ref, 1, 0, 5, 10_000);
  assert.equal(again.lookup(rows[2]!.id), 100);
  assert.equal(again.lookup(rows[3]!.id), rows[3]!.ref);
});

test('with a file tier, the RAM a page costs is its id key, sequence, held bit and id-table slot: ids, flags, fetch times and sketches stay out', () => {
  const tier = filePageTier(scratch);
  const store = new PageStore(1024, 64, tier);
  const n = 100_000;
  const sketch = new Uint8Array(64).fill(7);
  for (let i = 0; i < n; i++) {
    store.record(i, `https://example.org/a/fairly/long/path/to/page-${i}.html`, i % 10 === 9 ? i - 1 : -1, 2, 0, i, i);
    store.setSketch(i, sketch);
  }
  const perPage = store.byteLength / n;
  // 4.1 bytes of columns (a 32-bit key, a held bit), 4 per id-table slot at 50-70% load (6.6 here):
  // 10.7. A power-of-two table (35-70% load, 10.5 here) made it 14.7; a flags byte 15.6, a 64-bit
  // hash and a fetch time 21.8, and before that the ids and sketches were in RAM.
  assert.ok(perPage < 12, `${perPage.toFixed(1)} B of RAM per page`);
  assert.ok(store.tierByteLength / n > 64 + 40, 'the tier holds the sketches and the ids');
  assert.equal(store.idOf(12_345), 'https://example.org/a/fairly/long/path/to/page-12345.html');
  assert.equal(store.duplicateOfId(12_349), 'https://example.org/a/fairly/long/path/to/page-12348.html');
  tier.close();
});

test('a version 6 snapshot (a power-of-two id table) loads as it is; a version 6 table of another size is refused', () => {
  const withVersion = (buffer: Uint8Array, version: number): Uint8Array => {
    const copy = buffer.slice();
    new DataView(copy.buffer).setUint32(4, version, true);
    return copy;
  };
  const store = new PageStore(512, 64);
  for (let i = 0; i < 300; i++) store.record(i, `https://example.org/v6/${i}`, -1, 0, 0, i, i);
  const v6 = withVersion(store.toBuffer(), 6);
  assert.equal(new DataView(v6.buffer).getUint32(16, true), 1024, 'the table is a power of two');
  const loaded = PageStore.fromBuffer(v6);
  for (let i = 0; i < 300; i++) assert.equal(loaded.lookup(`https://example.org/v6/${i}`), i);
  assert.deepEqual(loaded.toBuffer(), store.toBuffer(), 'it writes version 7, with the same table');

  for (let i = 300; i < 1_000; i++) store.record(i, `https://example.org/v6/${i}`, -1, 0, 0, i, i);
  const grown = store.toBuffer();
  assert.notEqual(new DataView(grown.buffer).getUint32(16, true) & (new DataView(grown.buffer).getUint32(16, true) - 1), 0, 'the grown table is not a power of two');
  assert.equal(PageStore.fromBuffer(grown).lookup('https://example.org/v6/999'), 999);
  assert.throws(() => PageStore.fromBuffer(withVersion(grown, 6)), /bad table size/);
});
