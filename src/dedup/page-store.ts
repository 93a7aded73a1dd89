/**
 * What the decider remembers about the pages whose fingerprints it holds, in
 * typed arrays indexed by the index's dense refs (no object per page):
 *
 *   id → ref     open-addressing hash table keyed by a 64-bit hash of the id
 *   ref → id     UTF-8 bytes of the ids in one arena plus entry offsets
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
 * Bounded: when the decider evicts a fingerprint from the index it forgets
 * the page here too (forget / forgetBefore), so the store holds what the index
 * holds. The limit that follows: a page id redelivered after its fingerprint
 * was evicted is decided again, as a new page. Forgotten ids leave the hash
 * table at once; their arena bytes and per-ref slots are reclaimed by a
 * compaction once the forgotten outnumber the held (amortised O(1) each). An
 * id still named as the duplicated page of a held page keeps its bytes.
 * Per-ref slots (22 bytes) below the oldest held ref are reclaimed; those
 * above it stay until it goes, as in the index.
 *
 * Ids are matched by their 64-bit hash alone. With N ids the chance that two
 * distinct ids collide anywhere is about N²/2^65 (3·10^-6 at 10M ids); a
 * collision would make the second id reuse the first one's verdict.
 */
import { DedupError } from '../errors.js';
import { SKETCH_BINS, isKnownSketch, numbersAgreeAt, sketchSize, sketchesAgreeAt } from '../fingerprint/feature-sketch.js';
import { SketchBands } from './sketch-bands.js';
import { IdTable, MIN_SLOTS } from './id-table.js';
import { encodePageStore, decodePageStore, pageStoreSnapshotBytes, type PageStoreArrays } from './page-store-codec.js';
import { bufferSource, concatChunks, STREAM_CHUNK_BYTES, type ByteSource } from '../index/index.js';

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

/** A copy of a[from, to) in an array of at least `capacity` (and twice the kept length at most). */
function keep<T extends Uint8Array | Uint32Array | Float64Array>(a: T, from: number, to: number): T {
  const n = Math.max(0, to - from);
  const out = new (a.constructor as new (n: number) => T)(Math.max(16, n + (n >>> 1)));
  out.set(a.subarray(from, to));
  return out;
}

function alreadyRecorded(id: string): DedupError {
  return new DedupError('INDEX_LIMIT', `page id ${JSON.stringify(id.slice(0, 200))} is already recorded`);
}

export class PageStore {
  private ids: IdTable;

  private bytes: Uint8Array;
  private bytesUsed = 0;
  /** Start of entry i in `bytes`; entry i ends where entry i + 1 starts. */
  private entryStart: Uint32Array;
  private entries = 0;

  /** Per-ref fields, at index ref - base. ownEntry NO_ENTRY = not held. */
  private base = 0;
  private ownEntry: Uint32Array;
  private dupEntry: Uint32Array;
  private distances: Uint8Array;
  private flags: Uint8Array;
  private fetchedAt: Uint32Array;
  private sequences: Float64Array;
  /** Per-ref feature sketches (sketchBytes each) for the second stage; empty when it is off. */
  private sketches: Uint8Array;
  /** Bands over the sketches held (useBands), or null. */
  private bandIndex: SketchBands | null = null;
  private nextSeq = 0;
  /** One past the highest ref recorded. */
  private refLimit = 0;
  /** Refs forgotten since the last compaction. */
  private forgotten = 0;
  /** No ref in [base, cleared) is held: forgetBefore() resumes here, so repeated cuts cost what they forget. */
  private cleared = 0;

  /**
   * sketchBytes: bytes of feature sketch kept per page (SKETCH_BINS when the
   * second stage is on, else 0: nothing is allocated for it).
   */
  constructor(
    initialCapacity = 1024,
    readonly sketchBytes = 0,
  ) {
    let slots = MIN_SLOTS;
    while (slots < initialCapacity * 2) slots *= 2;
    this.ids = new IdTable(slots);
    this.bytes = new Uint8Array(initialCapacity * 24);
    this.entryStart = new Uint32Array(initialCapacity + 1);
    this.ownEntry = new Uint32Array(initialCapacity).fill(NO_ENTRY);
    this.dupEntry = new Uint32Array(initialCapacity);
    this.distances = new Uint8Array(initialCapacity);
    this.flags = new Uint8Array(initialCapacity);
    this.fetchedAt = new Uint32Array(initialCapacity);
    this.sequences = new Float64Array(initialCapacity);
    this.sketches = new Uint8Array(initialCapacity * sketchBytes);
  }

  /** The sequence number the next decided page gets. */
  get nextSequence(): number {
    return this.nextSeq;
  }

  sequenceOf(ref: number): number {
    return this.sequences[ref - this.base]!;
  }

  /** Page ids held (recorded and not forgotten). */
  get size(): number {
    return this.ids.used;
  }

  /** Page ids held, for metering (the same as size). */
  get idCount(): number {
    return this.ids.used;
  }

  /** No ref below this is held (refs below it have been forgotten or never recorded). */
  get lowRef(): number {
    return this.base;
  }

  /** Bytes allocated by the store. */
  get byteLength(): number {
    return (
      this.ids.byteLength +
      this.bytes.byteLength + this.entryStart.byteLength +
      this.ownEntry.byteLength + this.dupEntry.byteLength + this.distances.byteLength +
      this.flags.byteLength + this.fetchedAt.byteLength + this.sequences.byteLength + this.sketches.byteLength +
      (this.bandIndex?.byteLength ?? 0)
    );
  }

  /** The ref recorded for this page id, or -1 (never recorded, or forgotten). */
  lookup(id: string): number {
    return this.ids.lookup(id);
  }

  /** True when ref was recorded and not forgotten. */
  holds(ref: number): boolean {
    const i = ref - this.base;
    return Number.isInteger(ref) && i >= 0 && ref < this.refLimit && this.ownEntry[i] !== NO_ENTRY;
  }

  /**
   * Records a decided page. `duplicateOfRef` is the ref of the page it
   * duplicates (-1 for novel); the duplicated page's id is kept as a string
   * entry so the verdict can be told again after that page is evicted.
   */
  record(ref: number, id: string, duplicateOfRef: number, distance: number, flags: number, fetchedAtSeconds: number, sequence = this.nextSeq): void {
    this.checkRef(ref);
    const dup = duplicateOfRef < 0 ? NO_ENTRY : this.ownEntry[duplicateOfRef - this.base]!;
    if (!this.ids.tryInsert(id, ref)) throw alreadyRecorded(id);
    this.fill(ref, id, dup, distance, flags, fetchedAtSeconds, sequence);
  }

  /** As `record`, naming the duplicated page by id (changelog replay, where that page may be gone). */
  recordById(ref: number, id: string, duplicateOfId: string | null, distance: number, flags: number, fetchedAtSeconds: number, sequence: number): void {
    if (!this.recordByIdIfNew(ref, id, duplicateOfId, distance, flags, fetchedAtSeconds, sequence)) throw alreadyRecorded(id);
  }

  /** recordById unless the id is held already (then nothing changes and it returns false). */
  recordByIdIfNew(ref: number, id: string, duplicateOfId: string | null, distance: number, flags: number, fetchedAtSeconds: number, sequence: number): boolean {
    this.checkRef(ref);
    const dupRef = duplicateOfId === null ? -1 : this.ids.lookup(duplicateOfId);
    if (!this.ids.tryInsert(id, ref)) return false;
    const dup = duplicateOfId === null ? NO_ENTRY : dupRef >= 0 ? this.ownEntry[dupRef - this.base]! : this.addEntry(duplicateOfId);
    this.fill(ref, id, dup, distance, flags, fetchedAtSeconds, sequence);
    return true;
  }

  private checkRef(ref: number): void {
    if (!Number.isInteger(ref) || ref < this.refLimit || ref >= NO_ENTRY) {
      throw new DedupError('INDEX_LIMIT', `ref ${ref} is not above the refs recorded (${this.refLimit})`);
    }
  }

  /** Writes ref's fields (its id is in the id table already). */
  private fill(ref: number, id: string, dupEntry: number, distance: number, flags: number, fetchedAtSeconds: number, sequence: number): void {
    const i = ref - this.base;
    if (i >= this.ownEntry.length) {
      const need = i + 1;
      const old = this.ownEntry.length;
      this.ownEntry = grow(this.ownEntry, need);
      this.ownEntry.fill(NO_ENTRY, old);
      this.dupEntry = grow(this.dupEntry, need);
      this.distances = grow(this.distances, need);
      this.flags = grow(this.flags, need);
      this.fetchedAt = grow(this.fetchedAt, need);
      this.sequences = grow(this.sequences, need);
    }
    this.ownEntry[i] = this.addEntry(id);
    this.dupEntry[i] = dupEntry;
    this.distances[i] = distance;
    this.flags[i] = flags;
    this.fetchedAt[i] = fetchedAtSeconds >>> 0;
    this.sequences[i] = sequence;
    if (sequence >= this.nextSeq) this.nextSeq = sequence + 1;
    this.refLimit = ref + 1;
  }

  idOf(ref: number): string {
    return this.entryText(this.ownEntry[ref - this.base]!);
  }

  duplicateOfId(ref: number): string | null {
    const entry = this.dupEntry[ref - this.base]!;
    return entry === NO_ENTRY ? null : this.entryText(entry);
  }

  distanceOf(ref: number): number {
    return this.distances[ref - this.base]!;
  }

  flagsOf(ref: number): number {
    return this.flags[ref - this.base]!;
  }

  fetchedAtOf(ref: number): number {
    return this.fetchedAt[ref - this.base]!;
  }

  /** Stores ref's feature sketch (sketchBytes bytes; null = unknown, kept as zeros, which match nothing but chance). */
  setSketch(ref: number, sketch: Uint8Array | null | undefined): void {
    const b = this.sketchBytes;
    if (b === 0) return;
    const at = (ref - this.base) * b;
    // Grown here, not with the per-ref arrays: their capacities drift apart (restores, compaction).
    this.sketches = grow(this.sketches, at + b);
    if (sketch == null) this.sketches.fill(0, at, at + b);
    else {
      if (sketch.length !== b) throw new DedupError('INDEX_LIMIT', `a feature sketch is ${b} bytes, not ${sketch.length}`);
      this.sketches.set(sketch, at);
      // An unknown sketch (zeros) is in no band: it would share every band with every other.
      if (this.bandIndex !== null && isKnownSketch(sketch, 0)) this.bandIndex.add(ref, sketch, this.base);
    }
  }

  /**
   * Keeps the sketches of the pages held in `bands` bands (sketch-bands.ts), for the second
   * stage's candidates beyond the simhash radius; 0 = none. Builds them from the sketches held
   * (a loaded snapshot's, say), so it can be called on any store that keeps sketches.
   */
  useBands(bands: number): void {
    if (bands === 0) {
      this.bandIndex = null;
      return;
    }
    if (this.sketchBytes !== SKETCH_BINS) throw new RangeError(`sketch bands need ${SKETCH_BINS}-byte sketches in the page store`);
    if (this.bandIndex?.bands === bands) return;
    const index = new SketchBands(bands);
    for (let ref = this.base; ref < this.refLimit; ref++) {
      if (this.holds(ref) && this.holdsSketch(ref)) index.add(ref, this.sketchOf(ref), this.base);
    }
    this.bandIndex = index;
  }

  /** The sketch bands (useBands), or null. */
  get bands(): SketchBands | null {
    return this.bandIndex;
  }


  /**
   * Whether ref's sketch and `sketch` agree (feature-sketch.ts, sketchesAgreeAt): an overlap of
   * `minOverlap` or more, or one script's text replaced with another's; `size` is
   * sketchSize(sketch), read once per probe.
   */
  sketchesAgree(ref: number, sketch: Uint8Array, size: number, minOverlap: number): boolean {
    return sketchesAgreeAt(this.sketches, (ref - this.base) * this.sketchBytes, sketch, minOverlap, size);
  }

  /** The size recorded in ref's sketch (its page's distinct shingles; feature-sketch.ts). */
  sketchSize(ref: number): number {
    return sketchSize(this.sketches, (ref - this.base) * this.sketchBytes);
  }

  /** Whether ref's sketch and `sketch` (of `size`) have the same content numbers (feature-sketch.ts, numbersAgreeAt). */
  numbersAgree(ref: number, sketch: Uint8Array, size: number): boolean {
    return numbersAgreeAt(this.sketches, (ref - this.base) * this.sketchBytes, sketch, size);
  }

  /** Whether ref's sketch is known: a stored sketch of zeros in every bin is none (setSketch without one). */
  holdsSketch(ref: number): boolean {
    return isKnownSketch(this.sketches, (ref - this.base) * this.sketchBytes);
  }

  /** A view of ref's sketch (valid until the store changes). */
  sketchOf(ref: number): Uint8Array {
    const at = (ref - this.base) * this.sketchBytes;
    return this.sketches.subarray(at, at + this.sketchBytes);
  }

  /** Forgets one page (its fingerprint left the index). False when it was not held. */
  forget(ref: number): boolean {
    if (!this.holds(ref)) return false;
    this.unlink(ref);
    this.maybeCompact();
    return true;
  }

  /** Forgets every held page with a ref below `ref`; returns how many. */
  forgetBefore(ref: number): number {
    const end = Math.min(Math.floor(ref), this.refLimit);
    let n = 0;
    for (let r = Math.max(this.base, this.cleared); r < end; r++) {
      if (this.ownEntry[r - this.base] !== NO_ENTRY) {
        this.unlink(r);
        n++;
      }
    }
    if (end > this.cleared) this.cleared = end;
    if (n > 0) this.maybeCompact();
    return n;
  }

  private unlink(ref: number): void {
    const i = ref - this.base;
    this.ids.remove(this.entryText(this.ownEntry[i]!), ref);
    this.ownEntry[i] = NO_ENTRY;
    this.forgotten++;
  }

  private maybeCompact(): void {
    if (this.forgotten > Math.max(4096, this.ids.used)) this.compact();
  }

  /**
   * Drops the per-ref slots below the oldest held ref, copies the arena
   * keeping only entries a held page names, and shrinks the id table.
   */
  compact(): void {
    this.forgotten = 0;
    let low = Math.max(this.base, this.cleared);
    while (low < this.refLimit && this.ownEntry[low - this.base] === NO_ENTRY) low++;
    const from = low - this.base;
    const to = this.refLimit - this.base;
    this.ownEntry = keep(this.ownEntry, from, to);
    this.ownEntry.fill(NO_ENTRY, to - from);
    this.dupEntry = keep(this.dupEntry, from, to);
    this.distances = keep(this.distances, from, to);
    this.flags = keep(this.flags, from, to);
    this.fetchedAt = keep(this.fetchedAt, from, to);
    this.sequences = keep(this.sequences, from, to);
    this.sketches = keep(this.sketches, from * this.sketchBytes, to * this.sketchBytes);
    this.base = low;
    const n = to - from;
    // Arena: held entries in first-use order.
    const remap = new Uint32Array(this.entries).fill(NO_ENTRY);
    const oldStart = this.entryStart;
    const oldBytes = this.bytes;
    let entries = 0;
    let bytesUsed = 0;
    const move = (e: number): number => {
      if (e === NO_ENTRY) return NO_ENTRY;
      if (remap[e] === NO_ENTRY) {
        remap[e] = entries++;
        bytesUsed += oldStart[e + 1]! - oldStart[e]!;
      }
      return remap[e]!;
    };
    for (let i = 0; i < n; i++) {
      if (this.ownEntry[i] === NO_ENTRY) continue;
      this.ownEntry[i] = move(this.ownEntry[i]!);
      this.dupEntry[i] = move(this.dupEntry[i]!);
    }
    const bytes = new Uint8Array(Math.max(64, bytesUsed + (bytesUsed >>> 1)));
    const entryStart = new Uint32Array(Math.max(16, entries + (entries >>> 1) + 2));
    let at = 0;
    // Entries are renumbered in first-use order; lay out their bytes in that order.
    const oldOf = new Uint32Array(entries);
    for (let e = 0; e < this.entries; e++) if (remap[e] !== NO_ENTRY) oldOf[remap[e]!] = e;
    for (let e = 0; e < entries; e++) {
      const old = oldOf[e]!;
      const len = oldStart[old + 1]! - oldStart[old]!;
      entryStart[e] = at;
      bytes.set(oldBytes.subarray(oldStart[old]!, oldStart[old]! + len), at);
      at += len;
    }
    entryStart[entries] = at;
    this.bytes = bytes;
    this.entryStart = entryStart;
    this.entries = entries;
    this.bytesUsed = at;
    this.ids.shrink();
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

  private arrays(): PageStoreArrays {
    const n = this.refLimit - this.base;
    return {
      base: this.base,
      refLimit: this.refLimit,
      nextSeq: this.nextSeq,
      tableUsed: this.ids.used,
      table: this.ids.table,
      entryStart: this.entryStart.subarray(0, this.entries + 1),
      bytes: this.bytes.subarray(0, this.bytesUsed),
      sequences: this.sequences.subarray(0, n),
      ownEntry: this.ownEntry.subarray(0, n),
      dupEntry: this.dupEntry.subarray(0, n),
      fetchedAt: this.fetchedAt.subarray(0, n),
      distances: this.distances.subarray(0, n),
      flags: this.flags.subarray(0, n),
      sketchBytes: this.sketchBytes,
      sketches: this.sketches.subarray(0, n * this.sketchBytes),
    };
  }

  /** Bytes snapshotChunks() yields in all. */
  get snapshotByteLength(): number {
    return pageStoreSnapshotBytes(this.arrays());
  }

  /** The snapshot (format in page-store-codec.ts) in chunks of at most `chunkBytes`. */
  snapshotChunks(chunkBytes = STREAM_CHUNK_BYTES): Generator<Uint8Array> {
    return encodePageStore(this.arrays(), chunkBytes);
  }

  /** The whole snapshot in one buffer (see snapshotChunks() for large stores). */
  toBuffer(): Uint8Array {
    return concatChunks(this.snapshotChunks());
  }

  static fromBuffer(buffer: Uint8Array): PageStore {
    return PageStore.readFrom(bufferSource(buffer, 'page store'));
  }

  /** Reads a snapshot that fills `source` exactly; every structural invariant is checked. */
  static readFrom(source: ByteSource): PageStore {
    const a = decodePageStore(source);
    const store = new PageStore(1, a.sketchBytes);
    const n = a.refLimit - a.base;
    store.base = a.base;
    store.refLimit = a.refLimit;
    store.nextSeq = a.nextSeq;
    store.ids = IdTable.from(a.table, a.tableUsed);
    store.entries = a.entryStart.length - 1;
    store.entryStart = grow(a.entryStart, store.entries + 2);
    store.bytes = grow(a.bytes, a.bytes.length + 1);
    store.bytesUsed = a.bytes.length;
    store.sequences = grow(a.sequences, n + 1);
    store.ownEntry = grow(a.ownEntry, n + 1);
    store.ownEntry.fill(NO_ENTRY, n);
    store.dupEntry = grow(a.dupEntry, n + 1);
    store.fetchedAt = grow(a.fetchedAt, n + 1);
    store.distances = grow(a.distances, n + 1);
    store.flags = grow(a.flags, n + 1);
    store.sketches = grow(a.sketches, (n + 1) * a.sketchBytes);
    return store;
  }
}
