/**
 * The page store's id → ref map: open addressing with linear probing over one
 * Uint32Array of ref + 1 per slot (0 = empty). The id's 64-bit hash is not in
 * the slot but in the page store's per-ref columns (RefHashes), where it is
 * kept anyway: 4 bytes per slot instead of 12, at the price of one read of
 * the ref's hash per occupied slot a probe passes. Load stays at or below
 * 70%; deletion shifts the following entries back (no tombstones), so lookups
 * stay short after any number of evictions.
 *
 * Ids are hashed in their stored form: UTF-8 turns a lone surrogate into
 * U+FFFD, so an id is keyed as its well-formed version (the same string for
 * every well-formed id).
 */
import { DedupError } from '../errors.js';
import { hashString64, type Hash64 } from './string-hash.js';

export const MIN_SLOTS = 1024;

/** The 64-bit id hash of each ref in the table. */
export interface RefHashes {
  hashHi(ref: number): number;
  hashLo(ref: number): number;
}

export function wellFormed(id: string): string {
  return (id as unknown as { isWellFormed(): boolean }).isWellFormed() ? id : (id as unknown as { toWellFormed(): string }).toWellFormed();
}

/** The 64-bit hash an id is keyed by (of its well-formed form), into `out`. */
export function idHash(id: string, out: Hash64): Hash64 {
  return hashString64(wellFormed(id), out);
}

function home(hi: number, lo: number, mask: number): number {
  return (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
}

export class IdTable {
  table: Uint32Array;
  slots: number;
  used = 0;

  constructor(
    private readonly keys: RefHashes,
    slots = MIN_SLOTS,
  ) {
    this.slots = slots;
    this.table = new Uint32Array(slots);
  }

  /** Adopts a decoded table (already checked: a power-of-two size, `used` filled slots, one empty at least). */
  static from(keys: RefHashes, table: Uint32Array, used: number): IdTable {
    const t = new IdTable(keys, 0);
    t.table = table;
    t.slots = table.length;
    t.used = used;
    return t;
  }

  get byteLength(): number {
    return this.table.byteLength;
  }

  /** The ref stored for the hash (hi, lo), or -1. */
  lookup(hi: number, lo: number): number {
    return this.table[this.probe(hi, lo)]! - 1;
  }

  /** Stores ref (whose hash the RefHashes give already) unless its hash is stored (then returns false and changes nothing). */
  tryInsert(ref: number): boolean {
    if ((this.used + 1) * 10 > this.slots * 7) this.rehash(this.slots * 2);
    const slot = this.probe(this.keys.hashHi(ref), this.keys.hashLo(ref));
    if (this.table[slot] !== 0) return false;
    this.table[slot] = ref + 1;
    this.used++;
    return true;
  }

  /** Removes ref, which must be stored. */
  remove(ref: number): void {
    const mask = this.slots - 1;
    let slot = home(this.keys.hashHi(ref), this.keys.hashLo(ref), mask);
    while (this.table[slot] !== ref + 1) {
      if (this.table[slot] === 0) throw new DedupError('INDEX_LIMIT', `page store: ref ${ref} is missing from its id table`);
      slot = (slot + 1) & mask;
    }
    this.deleteSlot(slot);
  }

  /** Shrinks to the smallest size at or below 35% load (after evictions). */
  shrink(): void {
    let slots = MIN_SLOTS;
    while (slots * 7 < this.used * 20) slots *= 2;
    if (slots < this.slots) this.rehash(slots);
  }

  /** The slot holding the hash, or the empty slot where it would go. */
  private probe(hi: number, lo: number): number {
    const table = this.table;
    const keys = this.keys;
    const mask = this.slots - 1;
    let slot = home(hi, lo, mask);
    for (;;) {
      const r = table[slot]!;
      if (r === 0) return slot;
      if (keys.hashLo(r - 1) === lo && keys.hashHi(r - 1) === hi) return slot;
      slot = (slot + 1) & mask;
    }
  }

  private homeOf(ref: number, mask: number): number {
    return home(this.keys.hashHi(ref), this.keys.hashLo(ref), mask);
  }

  /** Deletion by backward shift: an entry may move into the hole unless its home lies cyclically in (hole, j]. */
  private deleteSlot(hole: number): void {
    const table = this.table;
    const mask = this.slots - 1;
    let j = hole;
    for (;;) {
      j = (j + 1) & mask;
      if (table[j] === 0) break;
      const h = this.homeOf(table[j]! - 1, mask);
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
    const table = new Uint32Array(slots);
    const mask = slots - 1;
    for (let o = 0; o < old.length; o++) {
      const r = old[o]!;
      if (r === 0) continue;
      let slot = this.homeOf(r - 1, mask);
      while (table[slot] !== 0) slot = (slot + 1) & mask;
      table[slot] = r;
    }
    this.table = table;
    this.slots = slots;
  }
}
