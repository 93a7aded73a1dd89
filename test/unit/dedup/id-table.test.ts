/**
 * The page store's id table on its own: against a Map over random inserts,
 * removals and shrinks (keys narrowed so that distinct ids share them), the
 * RAM it holds per id at every size, and the homes that version 6 snapshots
 * were laid out by.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdTable, MIN_SLOTS, home, type RefKeys } from '../../../src/dedup/id-table.js';
import { mulberry32Uint32 } from '../../support/rng.js';

/** Refs' keys and ids in plain arrays; the probed id is set before each call. */
class Refs implements RefKeys {
  readonly keys: number[] = [];
  readonly ids: number[] = [];
  probed = -1;
  constructor(private readonly keyMask: number) {}
  keyOf(ref: number): number {
    return this.keys[ref]!;
  }
  isProbedId(ref: number): boolean {
    return this.ids[ref] === this.probed;
  }
  keyFor(id: number): number {
    return ((Math.imul(id, 0x85ebca6b) ^ (id >>> 13)) & this.keyMask) >>> 0;
  }
  lookup(table: IdTable, id: number): number {
    this.probed = id;
    return table.lookup(this.keyFor(id));
  }
  insert(table: IdTable, ref: number, id: number): boolean {
    this.keys[ref] = this.keyFor(id);
    this.ids[ref] = id;
    this.probed = id;
    return table.tryInsert(ref);
  }
}

for (const [name, keyMask] of [['32-bit keys', 0xffffffff], ['6-bit keys, shared by many ids', 0x3f]] as const) {
  test(`property (${name}): lookups, inserts, removals and shrinks agree with a Map`, () => {
    for (let trial = 0; trial < 8; trial++) {
      const rand = mulberry32Uint32(700 + trial);
      const refs = new Refs(keyMask);
      const table = new IdTable(refs, MIN_SLOTS + (rand() % 3) * 333);
      const oracle = new Map<number, number>();
      let nextRef = 0;
      const steps = 2_000 + (rand() % 20_000);
      for (let s = 0; s < steps; s++) {
        const op = rand() % 100;
        const id = rand() % 6_000;
        if (op < 60) {
          const ref = nextRef++;
          const stored = oracle.has(id);
          assert.equal(refs.insert(table, ref, id), !stored, `insert of ${id}`);
          if (!stored) oracle.set(id, ref);
        } else if (op < 90) {
          const ref = oracle.get(id);
          if (ref === undefined) continue;
          table.remove(ref);
          oracle.delete(id);
        } else if (op < 93) {
          table.shrink();
        } else {
          assert.equal(refs.lookup(table, id), oracle.get(id) ?? -1, `lookup of ${id}`);
        }
        assert.equal(table.used, oracle.size);
        assert.ok(table.used * 10 <= table.slots * 7, `load ${table.used}/${table.slots}`);
      }
      for (let id = 0; id < 6_000; id++) assert.equal(refs.lookup(table, id), oracle.get(id) ?? -1, `lookup of ${id} at the end`);
      const rebuilt = IdTable.rebuilt(refs, table.table, table.used);
      for (const [id, ref] of oracle) assert.equal(refs.lookup(rebuilt, id), ref, `lookup of ${id} after a rebuild`);
    }
  });
}

test('a table that grew to n ids holds 4 bytes a slot at 50-70% load, for every n: at most 8 bytes an id', () => {
  const refs = new Refs(0xffffffff);
  const table = new IdTable(refs);
  let worst = 0;
  for (let n = 1; n <= 300_000; n++) {
    assert.equal(refs.insert(table, n - 1, n), true);
    if (n >= MIN_SLOTS / 2) worst = Math.max(worst, table.table.byteLength / n);
  }
  // Doubling held up to 4 / 0.35 = 11.4 bytes an id (10.5 at 100,000 ids, 10.7 at 100M).
  assert.ok(worst <= 8, `${worst.toFixed(2)} bytes an id at the worst size`);
  for (let n = 1; n <= 300_000; n += 997) assert.equal(refs.lookup(table, n), n - 1);
});

test('evictions that leave a table below 35% load shrink it to 50%', () => {
  const refs = new Refs(0xffffffff);
  const table = new IdTable(refs);
  for (let r = 0; r < 100_000; r++) refs.insert(table, r, r + 1);
  for (let r = 0; r < 80_000; r++) table.remove(r);
  table.shrink();
  assert.equal(table.slots, 40_000);
  for (let r = 80_000; r < 100_000; r++) assert.equal(refs.lookup(table, r + 1), r);
  table.shrink();
  assert.equal(table.slots, 40_000, 'a table at 50% load is left alone');
});

test('at a power-of-two size a key’s home is the top bits of its mixed hash, the layout version 6 snapshots hold', () => {
  const rand = mulberry32Uint32(11);
  for (let bits = 4; bits <= 30; bits++) {
    for (let i = 0; i < 2_000; i++) {
      const key = rand();
      assert.equal(home(key, 2 ** bits), Math.imul(key, 0x9e3779b1) >>> (32 - bits));
    }
  }
  for (let i = 0; i < 20_000; i++) {
    const slots = 16 + (rand() % 2 ** 30);
    const h = home(rand(), slots);
    assert.ok(Number.isInteger(h) && h >= 0 && h < slots, `home ${h} of ${slots} slots`);
  }
});
