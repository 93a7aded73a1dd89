/**
 * The page store against a Map oracle over random records, forgets, cuts,
 * compactions and snapshot round trips.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PageStore } from '../../../src/dedup/page-store.js';

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** What UTF-8 storage gives back: lone surrogates become U+FFFD. */
const stored = (id: string | null): string | null => (id === null ? null : (id as unknown as { toWellFormed(): string }).toWellFormed());

interface Row {
  id: string;
  dup: string | null;
  distance: number;
  flags: number;
  fetched: number;
  seq: number;
}

test('property: lookups, ids, duplicate names and sequences survive forgets, cuts, compactions and snapshots', () => {
  for (let trial = 0; trial < 12; trial++) {
    const rand = seeded(50 + trial);
    let store = new PageStore(trial % 2 === 0 ? 4 : 1024);
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
        const row: Row = { id, dup: dupRef >= 0 ? rows.get(dupRef)!.id : null, distance: rand() % 4, flags: rand() % 2, fetched: rand(), seq: s };
        store.record(ref, id, dupRef, row.distance, row.flags, row.fetched, row.seq);
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
        store = PageStore.fromBuffer(store.toBuffer());
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
    }
    const heldIds = new Set([...rows.values()].map((r) => r.id));
    for (const id of everId) if (!heldIds.has(id)) assert.equal(store.lookup(id), -1, `${id} forgotten`);
    assert.ok(store.lowRef <= Math.min(...rows.keys(), ref + 1));
    // A re-recorded forgotten id is new, and the sequence continues.
    const copy = PageStore.fromBuffer(store.toBuffer());
    assert.equal(copy.nextSequence, store.nextSequence);
    assert.equal(copy.size, store.size);
  }
});

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
