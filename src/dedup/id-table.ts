/**
 * The page store's id → ref map: open addressing with linear probing over one
 * Uint32Array of ref + 1 per slot (0 = empty). The slot holds no key: each
 * ref's 32-bit id key is in the page store's per-ref column (RefKeys), 4
 * bytes a page, and a key that matches is confirmed against the id's bytes
 * in the tier (RefKeys.isId). So ids are matched exactly, and RAM holds 4
 * bytes a page of key where a 64-bit hash took 8. Of the key's 32 bits the
 * slot's position already implies log2(slots), so in a table of 2^24 slots a
 * probe past an occupied slot reads the tier about once in 256 (a lookup
 * passes two to four slots): about one decision in a hundred reads an id it
 * did not need. Distinct ids may share a key; the table holds them all.
 * Load stays at or below 70%; deletion shifts the following entries back
 * (no tombstones), so lookups stay short after any number of evictions.
 *
 * The table has any number of slots, not a power of two: a key's home is the
 * top of its mixed hash scaled to the size (for a power of two, exactly its
 * top bits, the layout version 6 snapshots hold). A table grows to 50% load
 * when it passes 70% (1.4 times the slots), so it holds 5.7 to 8 bytes a
 * page; doubling held 5.7 to 11.4 (10.7 at 100M pages, in 2^28 slots).
 *
 * Ids are hashed in their stored form: UTF-8 turns a lone surrogate into
 * U+FFFD, so an id is keyed as its well-formed version (the same string for
 * every well-formed id).
 */
import { DedupError } from '../errors.js';
import { hashString64, type Hash64 } from './string-hash.js';

export const MIN_SLOTS = 1024;
/** The most slots a table has: 4 GiB of slots, about 750M ids at 70% load. */
export const MAX_SLOTS = 2 ** 30;

/** Each held ref's id key, and its id, for the table. */
export interface RefKeys {
  /** The 32-bit key of ref's id (idKey). */
  keyOf(ref: number): number;
  /** Whether ref's id is the id being probed (read from the tier). */
  isProbedId(ref: number): boolean;
}

/** Internal: the bits of the id key kept (tests narrow it so that distinct ids share keys). */
export const idKeyTuning = { mask: 0xffffffff };

export function wellFormed(id: string): string {
  return (id as unknown as { isWellFormed(): boolean }).isWellFormed() ? id : (id as unknown as { toWellFormed(): string }).toWellFormed();
}

/** The 32-bit key an id is stored by: a half of the 64-bit hash of its well-formed form. */
export function idKey(id: string, scratch: Hash64): number {
  return (hashString64(wellFormed(id), scratch).lo & idKeyTuning.mask) >>> 0;
}

/** The key a 64-bit id hash (a version 5 snapshot's column) gives. */
export function keyOfHash(lo: number): number {
  return (lo & idKeyTuning.mask) >>> 0;
}

/** The home slot: the top of a multiplicative hash of the key, scaled to the table (so not the bits a narrowed key lacks). */
export function home(key: number, slots: number): number {
  const h = Math.imul(key, 0x9e3779b1) >>> 0;
  // floor(h * slots / 2^32), exact: each 16-bit half of h times slots stays below 2^53.
  return Math.floor(((h >>> 16) * slots + Math.floor(((h & 0xffff) * slots) / 65536)) / 65536);
}

/** The slots a table of `used` ids is given when it is sized: 50% load, at least MIN_SLOTS, at most MAX_SLOTS. */
export function slotsFor(used: number): number {
  return Math.min(MAX_SLOTS, Math.max(MIN_SLOTS, used * 2));
}

export class IdTable {
  table: Uint32Array;
  slots: number;
  used = 0;

  constructor(
    private readonly keys: RefKeys,
    slots = MIN_SLOTS,
  ) {
    this.slots = slots;
    this.table = new Uint32Array(slots);
  }

  /** Adopts a decoded table laid out by this table's homes (already checked: `used` filled slots, one empty at least). */
  static from(keys: RefKeys, table: Uint32Array, used: number): IdTable {
    const t = new IdTable(keys, 0);
    t.table = table;
    t.slots = table.length;
    t.used = used;
    return t;
  }

  /** A table of `slots` slots holding the refs a table of any layout held (its slots: ref + 1, or 0). */
  static rebuilt(keys: RefKeys, old: Uint32Array, used: number): IdTable {
    const t = new IdTable(keys, old.length);
    t.place(old);
    t.used = used;
    return t;
  }

  get byteLength(): number {
    return this.table.byteLength;
  }

  /** The ref stored for the probed id (RefKeys.isProbedId) of this key, or -1. */
  lookup(key: number): number {
    return this.table[this.probe(key)]! - 1;
  }

  /** Stores ref (whose key the RefKeys give already, and whose id is the probed one) unless the id is stored (then returns false and changes nothing). */
  tryInsert(ref: number): boolean {
    if ((this.used + 1) * 10 > this.slots * 7) {
      if (this.slots >= MAX_SLOTS) throw new DedupError('INDEX_LIMIT', `page store: the id table holds ${this.used} ids, as many as ${MAX_SLOTS} slots take; shard the index`);
      this.rehash(slotsFor(this.used + 1));
    }
    const slot = this.probe(this.keys.keyOf(ref));
    if (this.table[slot] !== 0) return false;
    this.table[slot] = ref + 1;
    this.used++;
    return true;
  }

  /** Removes ref, which must be stored. */
  remove(ref: number): void {
    const slots = this.slots;
    let slot = home(this.keys.keyOf(ref), slots);
    while (this.table[slot] !== ref + 1) {
      if (this.table[slot] === 0) throw new DedupError('INDEX_LIMIT', `page store: ref ${ref} is missing from its id table`);
      if (++slot === slots) slot = 0;
    }
    this.deleteSlot(slot);
  }

  /** Shrinks to 50% load once evictions leave it below 35%. */
  shrink(): void {
    const slots = slotsFor(this.used);
    if (slots * 10 < this.slots * 7) this.rehash(slots);
  }

  /** The slot holding the probed id, or the empty slot where it would go. */
  private probe(key: number): number {
    const table = this.table;
    const keys = this.keys;
    const slots = this.slots;
    let slot = home(key, slots);
    for (;;) {
      const r = table[slot]!;
      if (r === 0) return slot;
      if (keys.keyOf(r - 1) === key && keys.isProbedId(r - 1)) return slot;
      if (++slot === slots) slot = 0;
    }
  }

  /** Deletion by backward shift: an entry may move into the hole unless its home lies cyclically in (hole, j]. */
  private deleteSlot(hole: number): void {
    const table = this.table;
    const slots = this.slots;
    let j = hole;
    for (;;) {
      if (++j === slots) j = 0;
      if (table[j] === 0) break;
      const h = home(this.keys.keyOf(table[j]! - 1), slots);
      const stays = hole <= j ? hole < h && h <= j : hole < h || h <= j;
      if (stays) continue;
      table[hole] = table[j]!;
      hole = j;
    }
    table[hole] = 0;
    this.used--;
  }

  private rehash(slots: number): void {
    const old = this.table;
    this.table = new Uint32Array(slots);
    this.slots = slots;
    this.place(old);
  }

  /** Enters every ref of `old` (ref + 1 per slot) by its key, without comparing ids (they are distinct). */
  private place(old: Uint32Array): void {
    const table = this.table;
    const slots = this.slots;
    for (let o = 0; o < old.length; o++) {
      const r = old[o]!;
      if (r === 0) continue;
      let slot = home(this.keys.keyOf(r - 1), slots);
      while (table[slot] !== 0) if (++slot === slots) slot = 0;
      table[slot] = r;
    }
  }
}
