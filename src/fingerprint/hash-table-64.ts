/**
 * Open-addressing tables keyed by a 64-bit hash given as two uint32 lanes,
 * stored in typed arrays (no object per entry, no string keys).
 *
 * - `StaticTable64`: built once (stop words, date words, IDF), read-only lookups.
 * - `FeatureCounter`: per-page counts of features, reset in O(1) by bumping a
 *   generation stamp, grown by doubling, iterated in insertion order so float
 *   weight sums are deterministic.
 */

function capacityFor(n: number): number {
  let cap = 16;
  while (cap < n * 2) cap *= 2;
  return cap;
}

/**
 * Tables of at most this many entries (the word tables, not the IDF table's ~270k) get four times
 * the slots: a few KB more for lookups that mostly miss (a word not on the stop list) and so
 * mostly stop at the first slot; at load 1/2 a miss reads 2.5 slots on average.
 */
const SPARSE_STATIC_MAX = 4096;

export class StaticTable64 {
  private readonly mask: number;
  private readonly keyA: Int32Array;
  private readonly keyB: Int32Array;
  private readonly used: Uint8Array;
  private readonly vals: Float64Array;
  size = 0;

  constructor(expected: number) {
    const cap = capacityFor(expected <= SPARSE_STATIC_MAX ? expected * 4 : expected);
    this.mask = cap - 1;
    this.keyA = new Int32Array(cap);
    this.keyB = new Int32Array(cap);
    this.used = new Uint8Array(cap);
    this.vals = new Float64Array(cap);
  }

  /** Inserts or overwrites. The table does not grow: size it with `expected`. */
  set(a: number, b: number, value: number): void {
    a |= 0;
    b |= 0;
    let i = (a ^ Math.imul(b, 0x9e3779b1)) & this.mask;
    while (this.used[i] === 1) {
      if (this.keyA[i] === a && this.keyB[i] === b) {
        this.vals[i] = value;
        return;
      }
      i = (i + 1) & this.mask;
    }
    if (this.size * 2 >= this.mask + 1) throw new RangeError('StaticTable64 is full');
    this.used[i] = 1;
    this.keyA[i] = a;
    this.keyB[i] = b;
    this.vals[i] = value;
    this.size++;
  }

  /** The value stored for (a, b), or `missing`. */
  get(a: number, b: number, missing: number): number {
    a |= 0;
    b |= 0;
    let i = (a ^ Math.imul(b, 0x9e3779b1)) & this.mask;
    while (this.used[i] === 1) {
      if (this.keyA[i] === a && this.keyB[i] === b) return this.vals[i]!;
      i = (i + 1) & this.mask;
    }
    return missing;
  }
}

/**
 * The feature counter keeps at most one entry per SLOTS_PER_ENTRY slots (load 1/4, grown by
 * doubling past it): a page's shingles are mostly new, and a new one probes until an empty slot.
 */
const SLOTS_PER_ENTRY = 4;
/**
 * A slot is four int32s side by side (generation stamp, key lanes A and B, entry number), so a
 * probe reads one cache line, not one in each of four arrays: a page's table outgrows the L1
 * cache (Chinese pages with jieba have thousands of features).
 */
const SLOT = 4;
/** Slots a counter keeps from one page to the next (2 MiB of slots). */
export const KEPT_SLOTS = 1 << 17;
const STAMP = 0;
const KEY_A = 1;
const KEY_B = 2;
const ENTRY = 3;

export class FeatureCounter {
  private mask = 0;
  private slots = new Int32Array(0);
  private gen = 1;
  /** Per-entry count and weight factor (the number weight, times the IDF for tfidf), indexed by entry number (insertion order). */
  countOf = new Uint32Array(0);
  extraOf = new Float64Array(0);
  /** The hashes per entry, for iteration. */
  entryA = new Int32Array(0);
  entryB = new Int32Array(0);
  size = 0;
  private readonly initialSlots: number;

  constructor(initialCapacity = 1024) {
    this.initialSlots = capacityFor((initialCapacity * SLOTS_PER_ENTRY) / 2);
    this.allocate(this.initialSlots);
  }

  private allocate(cap: number): void {
    this.mask = cap - 1;
    this.slots = new Int32Array(cap * SLOT);
    const entries = cap / SLOTS_PER_ENTRY;
    const countOf = new Uint32Array(entries);
    const extraOf = new Float64Array(entries);
    const entryA = new Int32Array(entries);
    const entryB = new Int32Array(entries);
    countOf.set(this.countOf.subarray(0, Math.min(this.size, entries)));
    extraOf.set(this.extraOf.subarray(0, Math.min(this.size, entries)));
    entryA.set(this.entryA.subarray(0, Math.min(this.size, entries)));
    entryB.set(this.entryB.subarray(0, Math.min(this.size, entries)));
    this.countOf = countOf;
    this.extraOf = extraOf;
    this.entryA = entryA;
    this.entryB = entryB;
    this.gen = 1;
  }

  reset(): void {
    this.size = 0;
    // Grown past KEPT_SLOTS for a huge page, the table goes back to its first size (entries are
    // numbered in insertion order whatever its size, so nothing read from it changes).
    if (this.mask + 1 > Math.max(KEPT_SLOTS, this.initialSlots)) {
      this.allocate(this.initialSlots);
      return;
    }
    this.gen++;
    // Stamps are int32s: wrap before the sign bit, clearing them (once per 2^31 pages).
    if (this.gen === 0x7fffffff) {
      this.slots.fill(0);
      this.gen = 1;
    }
  }

  /**
   * Counts one occurrence of (a, b). Returns the entry number, and whether it
   * is new via the sign: a new entry returns ~entry (negative).
   */
  add(a: number, b: number): number {
    a |= 0;
    b |= 0;
    const mask = this.mask;
    const gen = this.gen;
    const slots = this.slots;
    let i = (a ^ Math.imul(b, 0x9e3779b1)) & mask;
    for (;;) {
      const at = i * SLOT;
      if (slots[at + STAMP] !== gen) break;
      if (slots[at + KEY_A] === a && slots[at + KEY_B] === b) {
        const e = slots[at + ENTRY]!;
        this.countOf[e]!++;
        return e;
      }
      i = (i + 1) & mask;
    }
    const e = this.size++;
    const at = i * SLOT;
    slots[at + STAMP] = gen;
    slots[at + KEY_A] = a;
    slots[at + KEY_B] = b;
    slots[at + ENTRY] = e;
    this.countOf[e] = 1;
    this.entryA[e] = a;
    this.entryB[e] = b;
    if (this.size * SLOTS_PER_ENTRY >= mask + 1) this.grow();
    return ~e;
  }

  private grow(): void {
    const n = this.size;
    this.allocate((this.mask + 1) * 2);
    const mask = this.mask;
    const slots = this.slots;
    for (let e = 0; e < n; e++) {
      const a = this.entryA[e]!;
      const b = this.entryB[e]!;
      let i = (a ^ Math.imul(b, 0x9e3779b1)) & mask;
      while (slots[i * SLOT + STAMP] === 1) i = (i + 1) & mask;
      const at = i * SLOT;
      slots[at + STAMP] = 1;
      slots[at + KEY_A] = a;
      slots[at + KEY_B] = b;
      slots[at + ENTRY] = e;
    }
  }
}
