/**
 * What the decider remembers about every page it has decided, in typed arrays
 * indexed by the index's dense refs (no object per page):
 *
 *   id → ref     open-addressing hash table keyed by a 64-bit hash of the id
 *   ref → id     UTF-8 bytes of every id in one growing buffer plus offsets
 *   ref → verdict  the duplicated page (as a string entry), distance, flags,
 *                  fetch time (seconds) for age eviction, and the decision
 *                  sequence number ("earlier" in the verdict rule: refs follow
 *                  insertion order, which changelog replay across partitions
 *                  does not preserve; the sequence survives replay)
 *
 * Why: a page id decided again (a redelivery after a crash, a replay) must get
 * the verdict it got the first time, never "duplicate of itself"; and the
 * verdict of a duplicate names the earlier page by id.
 *
 * Ids are matched by their 64-bit hash alone. With N ids the chance that two
 * distinct ids collide anywhere is about N²/2^65 (3·10^-6 at 10M ids); a
 * collision would make the second id reuse the first one's verdict.
 *
 * Evicting a fingerprint from the index keeps its entry here, so a late
 * redelivery of an evicted page still gets its old verdict; the cost is about
 * 26 bytes plus the id's length per page ever decided (see docs/index.md).
 */
import { DedupError } from '../errors.js';
import { hashString64, type Hash64 } from './string-hash.js';

export const NO_ENTRY = 0xffffffff;

/**
 * Bytes per page the store holds in steady state, for sizing: about 54 fixed
 * (hash table at <= 70% load, offsets, verdict fields, sequence) plus the id's
 * UTF-8 bytes. Measured 77.6 B/page at 1M pages with 24-byte ids, growth slack
 * included; a snapshot costs about 75 B/page.
 */
export function pageStoreBytesPerPage(averageIdBytes = 24): number {
  return 54 + averageIdBytes;
}
export const FLAG_SHORT = 1;

const MAGIC = 0x50475354; // 'PGST'
const VERSION = 2;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function grow<T extends Uint8Array | Uint32Array | Float64Array>(array: T, needed: number): T {
  if (needed <= array.length) return array;
  let size = Math.max(16, array.length);
  while (size < needed) size *= 2;
  const next = new (array.constructor as new (n: number) => T)(size);
  next.set(array);
  return next;
}

export class PageStore {
  private tableHi: Uint32Array;
  private tableLo: Uint32Array;
  /** ref + 1; 0 marks an empty slot. */
  private tableRef: Uint32Array;
  private tableUsed = 0;

  private bytes: Uint8Array;
  private bytesUsed = 0;
  /** Start of entry i in `bytes`; entry i ends where entry i + 1 starts. */
  private entryStart: Uint32Array;
  private entries = 0;

  private ownEntry: Uint32Array;
  private dupEntry: Uint32Array;
  private distances: Uint8Array;
  private flags: Uint8Array;
  private fetchedAt: Uint32Array;
  private sequences: Float64Array;
  private nextSeq = 0;
  /** One past the highest ref recorded. */
  private refLimit = 0;

  private readonly scratch: Hash64 = { hi: 0, lo: 0 };

  constructor(initialCapacity = 1024) {
    let slots = 1024;
    while (slots < initialCapacity * 2) slots *= 2;
    this.tableHi = new Uint32Array(slots);
    this.tableLo = new Uint32Array(slots);
    this.tableRef = new Uint32Array(slots);
    this.bytes = new Uint8Array(initialCapacity * 24);
    this.entryStart = new Uint32Array(initialCapacity + 1);
    this.ownEntry = new Uint32Array(initialCapacity);
    this.dupEntry = new Uint32Array(initialCapacity);
    this.distances = new Uint8Array(initialCapacity);
    this.flags = new Uint8Array(initialCapacity);
    this.fetchedAt = new Uint32Array(initialCapacity);
    this.sequences = new Float64Array(initialCapacity);
  }

  /** The sequence number the next decided page gets. */
  get nextSequence(): number {
    return this.nextSeq;
  }

  sequenceOf(ref: number): number {
    return this.sequences[ref]!;
  }

  /** Pages recorded. */
  get size(): number {
    return this.tableUsed;
  }

  get byteLength(): number {
    return (
      this.tableHi.byteLength + this.tableLo.byteLength + this.tableRef.byteLength +
      this.bytes.byteLength + this.entryStart.byteLength +
      this.ownEntry.byteLength + this.dupEntry.byteLength + this.distances.byteLength +
      this.flags.byteLength + this.fetchedAt.byteLength + this.sequences.byteLength
    );
  }

  /** The ref recorded for this page id, or -1. */
  lookup(id: string): number {
    const h = hashString64(id, this.scratch);
    const mask = this.tableRef.length - 1;
    let slot = (h.lo ^ Math.imul(h.hi, 0x9e3779b1)) & mask;
    for (;;) {
      const stored = this.tableRef[slot]!;
      if (stored === 0) return -1;
      if (this.tableHi[slot] === h.hi && this.tableLo[slot] === h.lo) return stored - 1;
      slot = (slot + 1) & mask;
    }
  }

  /**
   * Records a decided page. `duplicateOfRef` is the ref of the page it
   * duplicates (-1 for novel); the duplicated page's id is kept as a string
   * entry so the verdict can be told again after that page is evicted.
   */
  record(ref: number, id: string, duplicateOfRef: number, distance: number, flags: number, fetchedAtSeconds: number, sequence = this.nextSeq): void {
    const dup = duplicateOfRef < 0 ? NO_ENTRY : this.ownEntry[duplicateOfRef]!;
    this.recordWithEntry(ref, id, dup, distance, flags, fetchedAtSeconds, sequence);
  }

  /** As `record`, naming the duplicated page by id (changelog replay, where that page may be gone). */
  recordById(ref: number, id: string, duplicateOfId: string | null, distance: number, flags: number, fetchedAtSeconds: number, sequence: number): void {
    let dup = NO_ENTRY;
    if (duplicateOfId !== null) {
      const dupRef = this.lookup(duplicateOfId);
      dup = dupRef >= 0 ? this.ownEntry[dupRef]! : this.addEntry(duplicateOfId);
    }
    this.recordWithEntry(ref, id, dup, distance, flags, fetchedAtSeconds, sequence);
  }

  private recordWithEntry(ref: number, id: string, dupEntry: number, distance: number, flags: number, fetchedAtSeconds: number, sequence: number): void {
    if (this.lookup(id) >= 0) {
      throw new DedupError('INDEX_LIMIT', `page id ${JSON.stringify(id.slice(0, 200))} is already recorded`);
    }
    if (ref >= this.ownEntry.length) {
      const need = ref + 1;
      this.ownEntry = grow(this.ownEntry, need);
      this.dupEntry = grow(this.dupEntry, need);
      this.distances = grow(this.distances, need);
      this.flags = grow(this.flags, need);
      this.fetchedAt = grow(this.fetchedAt, need);
      this.sequences = grow(this.sequences, need);
    }
    this.ownEntry[ref] = this.addEntry(id);
    this.dupEntry[ref] = dupEntry;
    this.distances[ref] = distance;
    this.flags[ref] = flags;
    this.fetchedAt[ref] = fetchedAtSeconds >>> 0;
    this.sequences[ref] = sequence;
    if (sequence >= this.nextSeq) this.nextSeq = sequence + 1;
    if (ref + 1 > this.refLimit) this.refLimit = ref + 1;
    this.insertKey(id, ref);
  }

  idOf(ref: number): string {
    return this.entryText(this.ownEntry[ref]!);
  }

  duplicateOfId(ref: number): string | null {
    const entry = this.dupEntry[ref]!;
    return entry === NO_ENTRY ? null : this.entryText(entry);
  }

  distanceOf(ref: number): number {
    return this.distances[ref]!;
  }

  flagsOf(ref: number): number {
    return this.flags[ref]!;
  }

  fetchedAtOf(ref: number): number {
    return this.fetchedAt[ref]!;
  }

  private addEntry(text: string): number {
    // Worst case UTF-8 is 3 bytes per UTF-16 code unit.
    this.bytes = grow(this.bytes, this.bytesUsed + text.length * 3);
    const { written } = encoder.encodeInto(text, this.bytes.subarray(this.bytesUsed));
    this.entryStart = grow(this.entryStart, this.entries + 2);
    this.entryStart[this.entries] = this.bytesUsed;
    this.bytesUsed += written;
    this.entryStart[this.entries + 1] = this.bytesUsed;
    return this.entries++;
  }

  private entryText(entry: number): string {
    return decoder.decode(this.bytes.subarray(this.entryStart[entry]!, this.entryStart[entry + 1]!));
  }

  private insertKey(id: string, ref: number): void {
    if ((this.tableUsed + 1) * 10 > this.tableRef.length * 7) this.rehash(this.tableRef.length * 2);
    const h = hashString64(id, this.scratch);
    this.place(h.hi, h.lo, ref + 1);
    this.tableUsed++;
  }

  private place(hi: number, lo: number, refPlusOne: number): void {
    const mask = this.tableRef.length - 1;
    let slot = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
    while (this.tableRef[slot] !== 0) slot = (slot + 1) & mask;
    this.tableHi[slot] = hi;
    this.tableLo[slot] = lo;
    this.tableRef[slot] = refPlusOne;
  }

  private rehash(slots: number): void {
    const { tableHi, tableLo, tableRef } = this;
    this.tableHi = new Uint32Array(slots);
    this.tableLo = new Uint32Array(slots);
    this.tableRef = new Uint32Array(slots);
    for (let i = 0; i < tableRef.length; i++) {
      if (tableRef[i] !== 0) this.place(tableHi[i]!, tableLo[i]!, tableRef[i]!);
    }
  }

  /** One buffer: magic, version, counts, then the arrays (trimmed to what is used). */
  toBuffer(): Uint8Array {
    const n = this.refLimit;
    const parts: Uint8Array[] = [
      u32bytes(new Uint32Array([MAGIC, VERSION, n, this.entries, this.bytesUsed, this.tableRef.length, this.tableUsed, 0])),
      new Uint8Array(this.sequences.buffer, this.sequences.byteOffset, n * 8),
      u32bytes(this.tableHi), u32bytes(this.tableLo), u32bytes(this.tableRef),
      u32bytes(this.entryStart.subarray(0, this.entries + 1)),
      u32bytes(this.ownEntry.subarray(0, n)), u32bytes(this.dupEntry.subarray(0, n)), u32bytes(this.fetchedAt.subarray(0, n)),
      this.distances.subarray(0, n), this.flags.subarray(0, n), this.bytes.subarray(0, this.bytesUsed),
    ];
    const total = parts.reduce((sum, p) => sum + p.byteLength, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.byteLength;
    }
    return out;
  }

  static fromBuffer(buffer: Uint8Array): PageStore {
    const reader = new Reader(buffer);
    const [magic, version, n, entries, bytesUsed, slots, used] = reader.u32(8);
    if (magic !== MAGIC) throw new DedupError('SNAPSHOT_INVALID', 'page store: bad magic number');
    if (version !== VERSION) throw new DedupError('SNAPSHOT_INVALID', `page store: unknown version ${version}`);
    if (slots === 0 || (slots & (slots - 1)) !== 0) throw new DedupError('SNAPSHOT_INVALID', 'page store: bad table size');
    const store = new PageStore(1);
    store.sequences = grow(new Float64Array(copyBytes(reader.bytes(n! * 8)).buffer), n!);
    for (let i = 0; i < n!; i++) if (store.sequences[i]! >= store.nextSeq) store.nextSeq = store.sequences[i]! + 1;
    store.tableHi = reader.u32(slots!);
    store.tableLo = reader.u32(slots!);
    store.tableRef = reader.u32(slots!);
    store.tableUsed = used!;
    store.entryStart = grow(reader.u32(entries! + 1), entries! + 2);
    store.entries = entries!;
    store.ownEntry = grow(reader.u32(n!), n!);
    store.dupEntry = grow(reader.u32(n!), n!);
    store.fetchedAt = grow(reader.u32(n!), n!);
    store.distances = grow(copyBytes(reader.bytes(n!)), n!);
    store.flags = grow(copyBytes(reader.bytes(n!)), n!);
    store.bytes = grow(copyBytes(reader.bytes(bytesUsed!)), bytesUsed!);
    store.bytesUsed = bytesUsed!;
    store.refLimit = n!;
    reader.end();
    return store;
  }
}

/**
 * A real copy. (Buffer#slice returns a view of the same memory, unlike
 * Uint8Array#slice, and the snapshot arrives as a Buffer.)
 */
function copyBytes(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.byteLength);
  out.set(bytes);
  return out;
}

function u32bytes(a: Uint32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Bounds-checked sequential reader over a snapshot buffer. */
class Reader {
  private at = 0;
  constructor(private readonly buffer: Uint8Array) {}

  u32(count: number): Uint32Array {
    // Copy to an aligned buffer: the snapshot may start at any offset.
    return new Uint32Array(copyBytes(this.bytes(count * 4)).buffer);
  }

  bytes(count: number): Uint8Array {
    if (!Number.isInteger(count) || count < 0 || this.at + count > this.buffer.byteLength) {
      throw new DedupError('SNAPSHOT_INVALID', 'page store: truncated snapshot');
    }
    const out = this.buffer.subarray(this.at, this.at + count);
    this.at += count;
    return out;
  }

  end(): void {
    if (this.at !== this.buffer.byteLength) throw new DedupError('SNAPSHOT_INVALID', 'page store: trailing bytes in snapshot');
  }
}
