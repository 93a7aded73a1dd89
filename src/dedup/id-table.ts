/**
 * The page store's id → ref map: open addressing with linear probing over one
 * Uint32Array, three words per slot (the id's 64-bit hash as hi, lo, then
 * ref + 1, 0 = empty), so a probe reads one cache line. Load stays at or
 * below 70%; deletion shifts the following entries back (no tombstones), so
 * lookups stay short after any number of evictions.
 *
 * Ids are hashed in their stored form: UTF-8 turns a lone surrogate into
 * U+FFFD, so an id is keyed as its well-formed version (the same string for
 * every well-formed id) and can be found again from the stored bytes.
 */
import { DedupError } from '../errors.js';
import { hashString64, type Hash64 } from './string-hash.js';

export const MIN_SLOTS = 1024;

function wellFormed(id: string): string {
  return (id as unknown as { isWellFormed(): boolean }).isWellFormed() ? id : (id as unknown as { toWellFormed(): string }).toWellFormed();
}

function home(hi: number, lo: number, mask: number): number {
  return (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
}

export class IdTable {
  table: Uint32Array;
  slots: number;
  used = 0;
  /** The hash of the id last probed. */
  private readonly hash: Hash64 = { hi: 0, lo: 0 };

  constructor(slots = MIN_SLOTS) {
    this.slots = slots;
    this.table = new Uint32Array(slots * 3);
  }

  /** Adopts a decoded table (already checked: a power-of-two size, `used` filled slots, one empty at least). */
  static from(table: Uint32Array, used: number): IdTable {
    const t = new IdTable(0);
    t.table = table;
    t.slots = table.length / 3;
    t.used = used;
    return t;
  }

  get byteLength(): number {
    return this.table.byteLength;
  }

  /** The ref stored for id, or -1. */
  lookup(id: string): number {
    return this.table[this.probe(id) * 3 + 2]! - 1;
  }

  /** Stores id → ref unless id is stored already (then returns false and changes nothing). */
  tryInsert(id: string, ref: number): boolean {
    if ((this.used + 1) * 10 > this.slots * 7) this.rehash(this.slots * 2);
    const o = this.probe(id) * 3;
    if (this.table[o + 2] !== 0) return false;
    this.table[o] = this.hash.hi;
    this.table[o + 1] = this.hash.lo;
    this.table[o + 2] = ref + 1;
    this.used++;
    return true;
  }

  /** Removes id, which must map to ref. */
  remove(id: string, ref: number): void {
    hashString64(wellFormed(id), this.hash);
    const mask = this.slots - 1;
    let slot = home(this.hash.hi, this.hash.lo, mask);
    while (this.table[slot * 3 + 2] !== ref + 1) {
      if (this.table[slot * 3 + 2] === 0) throw new DedupError('INDEX_LIMIT', `page store: ref ${ref} is missing from its id table`);
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

  /** The slot holding id's hash, or the empty slot where it would go. */
  private probe(id: string): number {
    const h = hashString64(wellFormed(id), this.hash);
    const table = this.table;
    const mask = this.slots - 1;
    let slot = home(h.hi, h.lo, mask);
    for (;;) {
      const o = slot * 3;
      if (table[o + 2] === 0) return slot;
      if (table[o] === h.hi && table[o + 1] === h.lo) return slot;
      slot = (slot + 1) & mask;
    }
  }

  /** Deletion by backward shift: an entry may move into the hole unless its home lies cyclically in (hole, j]. */
  private deleteSlot(hole: number): void {
    const table = this.table;
    const mask = this.slots - 1;
    let j = hole;
    for (;;) {
      j = (j + 1) & mask;
      if (table[j * 3 + 2] === 0) break;
      const h = home(table[j * 3]!, table[j * 3 + 1]!, mask);
      const stays = hole <= j ? hole < h && h <= j : hole < h || h <= j;
      if (stays) continue;
      table.copyWithin(hole * 3, j * 3, j * 3 + 3);
      hole = j;
    }
    table.fill(0, hole * 3, hole * 3 + 3);
    this.used--;
  }

  private rehash(slots: number): void {
    const old = this.table;
    const table = new Uint32Array(slots * 3);
    const mask = slots - 1;
    for (let o = 0; o < old.length; o += 3) {
      if (old[o + 2] === 0) continue;
      let slot = home(old[o]!, old[o + 1]!, mask);
      while (table[slot * 3 + 2] !== 0) slot = (slot + 1) & mask;
      table.set(old.subarray(o, o + 3), slot * 3);
    }
    this.table = table;
    this.slots = slots;
  }
}
