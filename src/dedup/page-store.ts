/**
 * What the decider remembers about the pages whose fingerprints it holds,
 * indexed by the index's dense refs (no object per page), in two tiers:
 *
 *   RAM, per ref, in chunks of 4,096 refs (no doubling copies, no slack past
 *   the last chunk):
 *     the id's 32-bit key (4 bytes), for the id → ref table (4 bytes a slot
 *     at <= 70% load: the key lives here, not in the slot; a key that matches
 *     is confirmed by the id's bytes in the tier, id-table.ts);
 *     the decision sequence number ("earlier" in the verdict rule: refs follow
 *     insertion order, which changelog replay across partitions does not
 *     preserve; the sequence survives replay): nothing while the sequences of
 *     a chunk rise with its refs (single mode), else a 32-bit delta from the
 *     chunk's base (4 bytes; a map for the rare one that does not fit);
 *     whether it is held (1 bit).
 *   The tier (PageTier, blob-store.ts: a local file in the service), per ref
 *   one fixed-size record at (ref - first ref) x record size: where its id's
 *   bytes and the duplicated page's id bytes are in the name blob, the
 *   distance, the page's flags (short), the fetch time, and the feature sketch of the second stage. It
 *   is read only for a repeated id (or a key shared by chance), the id a
 *   verdict names, the candidates of the second stage (one read per
 *   candidate), and the fetch times of the blocks an age eviction scans (in
 *   ref order, 256 records a read; fetch-time-minima.ts keeps each block's
 *   minimum in RAM).
 *
 * Why: a page id decided again (a redelivery after a crash, a replay) must get
 * the verdict it got the first time, never "duplicate of itself"; and the
 * verdict of a duplicate names the earlier page by id.
 *
 * Bounded: when the decider evicts a fingerprint from the index it forgets
 * the page here too (forget / forgetBefore), so the store holds what the index
 * holds. The limit that follows: a page id redelivered after its fingerprint
 * was evicted is decided again, as a new page. Forgotten ids leave the hash
 * table at once; RAM chunks below the oldest held ref are freed by a
 * compaction once the forgotten outnumber the held, and the tier is told it
 * may drop the bytes below (the in-memory tier frees them; the file tier's
 * space comes back when the process restarts from a snapshot). A duplicate's
 * record keeps a copy of the duplicated page's id, so the verdict can be told
 * again after that page is evicted.
 *
 * Ids are matched exactly: by their 32-bit key in RAM, then by their bytes in
 * the tier.
 */
import { DedupError } from '../errors.js';
import { SKETCH_BINS, isKnownSketch, numbersAgreeAt, sketchSize, sketchesAgreeAt } from '../fingerprint/feature-sketch.js';
import { SketchBands } from './sketch-bands.js';
import { IdTable, idKey, keyOfHash, slotsFor, type RefKeys } from './id-table.js';
import { MemoryBlobStore, memoryPageTier, type PageTier } from './blob-store.js';
import {
  FETCHED_AT,
  HELD,
  PAGE_FLAGS_AT,
  RECORD_HEAD,
  decodeLegacyPageStore,
  decodePageStore,
  encodePageStore,
  invalid,
  pageStoreSnapshotBytes,
  type PageStoreHead,
  type PageStoreSource,
} from './page-store-codec.js';
import { bufferSource, concatChunks, STREAM_CHUNK_BYTES, type ByteSource } from '../index/index.js';
import type { Hash64 } from './string-hash.js';

export const NO_ENTRY = 0xffffffff;

/**
 * RAM bytes per page the store holds in steady state, for sizing: 4.1 to 8.1 in
 * the columns (id key 4, sequence 0 or 4, held 1 bit) and 4 per id-table slot
 * at 35-70% load (about 7.5). Ids, flags, fetch times and sketches are in the
 * tier.
 */
export function pageStoreBytesPerPage(): number {
  return 16;
}

/** Tier bytes per page, for sizing the local disk: the record and the id's bytes (a duplicate's record names its page's id again). */
export function pageStoreTierBytesPerPage(sketchBytes: number, averageIdBytes = 40): number {
  return RECORD_HEAD + sketchBytes + averageIdBytes * 1.2;
}

export const FLAG_SHORT = 1;
const PAGE_FLAGS = 0x7f;

const CHUNK_BITS = 12;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;
/** A sequence delta that did not fit 32 bits: the sequence is in the overflow map. */
const SEQ_OVERFLOW = -0x80000000;
/** Records read at once when the sketches are read in ref order (building the bands). */
const BLOCK_RECORDS = 256;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const EMPTY8 = new Uint8Array(0);
const EMPTY32 = new Uint32Array(0);
const EMPTYI32 = new Int32Array(0);

function alreadyRecorded(id: string): DedupError {
  return new DedupError('INDEX_LIMIT', `page id ${JSON.stringify(id.slice(0, 200))} is already recorded`);
}

function u48(view: DataView, at: number): number {
  return view.getUint32(at, true) + view.getUint16(at + 4, true) * 2 ** 32;
}

function setU48(view: DataView, at: number, value: number): void {
  view.setUint32(at, value % 2 ** 32, true);
  view.setUint16(at + 4, Math.floor(value / 2 ** 32), true);
}

export class PageStore implements RefKeys {
  private ids: IdTable;
  private readonly hash: Hash64 = { hi: 0, lo: 0 };
  /** The id the id table is probed for (isProbedId), and its UTF-8 bytes once needed. */
  private probedId = '';
  private probedBytes: Uint8Array | null = null;
  private nameScratch = new Uint8Array(256);
  /** The id bytes ownName read last, and their ref (-1: none). */
  private lastNameRef = -1;
  private lastName: Uint8Array = EMPTY8;

  /** Per-ref columns, chunk c = ref >>> CHUNK_BITS (chunks wholly below base are empty). */
  private keyChunks: Uint32Array[] = [];
  /**
   * Sequence of ref = seqBase[c] + seqChunks[c][i] (i = ref's place in chunk c), or, while the
   * chunk's array is empty (every sequence recorded in it so far rose with the ref, as single
   * mode records them), seqBase[c] + i: 0 bytes a page then, 4 otherwise.
   */
  private seqChunks: Int32Array[] = [];
  private seqBase: number[] = [];
  private readonly seqOverflow = new Map<number, number>();
  /** Held refs, a bit each (CHUNK / 32 words a chunk). */
  private heldChunks: Uint32Array[] = [];

  /** No ref below base is held. */
  private base = 0;
  private nextSeq = 0;
  /** One past the highest ref recorded. */
  private refLimit = 0;
  /** Refs forgotten since the last compaction. */
  private forgotten = 0;
  /** No ref in [base, cleared) is held: forgetBefore() resumes here, so repeated cuts cost what they forget. */
  private cleared = 0;

  /** The tier: records of refs [tierFirst, tierLimit) at (ref - tierFirst) * recordBytes. */
  private readonly tier: PageTier;
  private readonly recordBytes: number;
  private tierFirst = 0;
  private tierLimit = 0;
  /** The record of the ref recorded last, until its sketch is set (or the next record): pendingRef, or -1. */
  private pending: Uint8Array;
  private readonly pendingView: DataView;
  private pendingRef = -1;
  /** The record read last, of scratchRef. */
  private readonly scratch: Uint8Array;
  private readonly scratchView: DataView;
  private scratchRef = -1;
  /** Records [blockFirst, blockFirst + BLOCK_RECORDS) read at once, for reads in ref order. */
  private block: Uint8Array = EMPTY8;
  private blockFirst = -1;
  private blockEnd = -1;

  /** Bands over the sketches held (useBands), or null. */
  private bandIndex: SketchBands | null = null;
  /** The bands' buffer bound (SketchBandsOptions.bufferEntries; tests set it low to make many runs). */
  bandBufferEntries: number | undefined = undefined;

  /**
   * sketchBytes: bytes of feature sketch kept per page (SKETCH_BINS when the
   * second stage is on, else 0). tier: where records, ids and sketches go
   * (in memory unless given).
   */
  constructor(
    initialCapacity = 1024,
    readonly sketchBytes = 0,
    tier: PageTier = memoryPageTier(),
  ) {
    this.ids = new IdTable(this, slotsFor(initialCapacity));
    this.tier = tier;
    this.tierFirst = tier.records.byteLength === 0 ? 0 : -1;
    this.recordBytes = RECORD_HEAD + sketchBytes;
    this.pending = new Uint8Array(this.recordBytes);
    this.pendingView = new DataView(this.pending.buffer);
    this.scratch = new Uint8Array(this.recordBytes);
    this.scratchView = new DataView(this.scratch.buffer);
    if (this.tierFirst < 0) throw new RangeError('a page store needs an empty tier');
  }

  keyOf(ref: number): number {
    return this.keyChunks[ref >>> CHUNK_BITS]![ref & CHUNK_MASK]!;
  }

  isProbedId(ref: number): boolean {
    const bytes = (this.probedBytes ??= encoder.encode(this.probedId));
    const v = this.recordOf(ref);
    const length = v.getUint32(8, true);
    if (length !== bytes.length) return false;
    if (this.nameScratch.length < length) this.nameScratch = new Uint8Array(length * 2);
    const name = this.nameScratch.subarray(0, length);
    this.tier.names.read(u48(v, 0), name);
    for (let i = 0; i < length; i++) if (name[i] !== bytes[i]) return false;
    return true;
  }

  /** Sets the id the id table is probed for; returns its key. */
  private probing(id: string): number {
    this.probedId = id;
    this.probedBytes = null;
    return idKey(id, this.hash);
  }

  /** The sequence number the next decided page gets. */
  get nextSequence(): number {
    return this.nextSeq;
  }

  sequenceOf(ref: number): number {
    const c = ref >>> CHUNK_BITS;
    const deltas = this.seqChunks[c]!;
    if (deltas.length === 0) return this.seqBase[c]! + (ref & CHUNK_MASK);
    const d = deltas[ref & CHUNK_MASK]!;
    return d === SEQ_OVERFLOW ? this.seqOverflow.get(ref)! : this.seqBase[c]! + d;
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

  /** Bytes of RAM the store holds: its columns, id table and bands, and the tier when that is in memory. */
  get byteLength(): number {
    let bytes = this.ids.byteLength + this.pending.byteLength + this.scratch.byteLength + this.block.byteLength;
    for (let c = 0; c < this.keyChunks.length; c++) {
      bytes += this.keyChunks[c]!.byteLength + this.seqChunks[c]!.byteLength + this.heldChunks[c]!.byteLength + 8;
    }
    bytes += this.seqOverflow.size * 40 + this.nameScratch.byteLength;
    for (const blob of [this.tier.records, this.tier.names]) if (blob instanceof MemoryBlobStore) bytes += blob.heldBytes;
    // The bands' runs are in memory too when the tier is (memoryPageTier).
    const runsInMemory = this.tier.records instanceof MemoryBlobStore ? (this.bandIndex?.bytesOnDisk ?? 0) : 0;
    return bytes + (this.bandIndex?.byteLength ?? 0) + runsInMemory;
  }

  /** Bytes appended to the tier (the disk a file tier takes, until a restart from a snapshot compacts it). */
  get tierByteLength(): number {
    return this.tier.records.byteLength + this.tier.names.byteLength + (this.bandIndex?.bytesOnDisk ?? 0);
  }

  /** The ref recorded for this page id, or -1 (never recorded, or forgotten). */
  lookup(id: string): number {
    return this.ids.lookup(this.probing(id));
  }

  /** True when ref was recorded and not forgotten. */
  holds(ref: number): boolean {
    return Number.isInteger(ref) && ref >= this.base && ref < this.refLimit && this.heldBit(ref);
  }

  private heldBit(ref: number): boolean {
    const i = ref & CHUNK_MASK;
    return ((this.heldChunks[ref >>> CHUNK_BITS]![i >>> 5]! >>> (i & 31)) & 1) !== 0;
  }

  private setHeld(ref: number, held: boolean): void {
    const i = ref & CHUNK_MASK;
    const words = this.heldChunks[ref >>> CHUNK_BITS]!;
    if (held) words[i >>> 5]! |= 1 << (i & 31);
    else words[i >>> 5]! &= ~(1 << (i & 31));
  }

  /**
   * Records a decided page. `duplicateOfRef` is the ref of the page it
   * duplicates (-1 for novel); the duplicated page's id is copied into this
   * page's record, so the verdict can be told again after that page is evicted.
   */
  record(ref: number, id: string, duplicateOfRef: number, distance: number, flags: number, fetchedAtSeconds: number, sequence = this.nextSeq): void {
    this.checkRef(ref);
    const dup = duplicateOfRef >= 0 && this.holds(duplicateOfRef) ? this.ownName(duplicateOfRef) : null;
    if (!this.claim(ref, id)) throw alreadyRecorded(id);
    this.fill(ref, encoder.encode(id), dup, distance, flags, fetchedAtSeconds, sequence);
  }

  /** As `record`, naming the duplicated page by id (changelog replay, where that page may be gone). */
  recordById(ref: number, id: string, duplicateOfId: string | null, distance: number, flags: number, fetchedAtSeconds: number, sequence: number): void {
    if (!this.recordByIdIfNew(ref, id, duplicateOfId, distance, flags, fetchedAtSeconds, sequence)) throw alreadyRecorded(id);
  }

  /** recordById unless the id is held already (then nothing changes and it returns false). */
  recordByIdIfNew(ref: number, id: string, duplicateOfId: string | null, distance: number, flags: number, fetchedAtSeconds: number, sequence: number): boolean {
    this.checkRef(ref);
    if (!this.claim(ref, id)) return false;
    this.fill(ref, encoder.encode(id), duplicateOfId === null ? null : encoder.encode(duplicateOfId), distance, flags, fetchedAtSeconds, sequence);
    return true;
  }

  private checkRef(ref: number): void {
    if (!Number.isInteger(ref) || ref < this.refLimit || ref >= NO_ENTRY) {
      throw new DedupError('INDEX_LIMIT', `ref ${ref} is not above the refs recorded (${this.refLimit})`);
    }
  }

  /** Allocates the chunks up to ref's. */
  private ensureChunk(ref: number): void {
    const c = ref >>> CHUNK_BITS;
    while (this.keyChunks.length <= c) {
      const below = this.keyChunks.length < this.base >>> CHUNK_BITS;
      this.keyChunks.push(below ? EMPTY32 : new Uint32Array(CHUNK));
      this.seqChunks.push(EMPTYI32);
      this.seqBase.push(Number.NaN);
      this.heldChunks.push(below ? EMPTY32 : new Uint32Array(CHUNK >>> 5));
    }
  }

  /** Writes id's key at ref and enters ref in the id table; false when the id is held already. */
  private claim(ref: number, id: string): boolean {
    this.ensureChunk(ref);
    this.keyChunks[ref >>> CHUNK_BITS]![ref & CHUNK_MASK] = this.probing(id);
    return this.ids.tryInsert(ref);
  }

  private setSequence(ref: number, value: number): void {
    const c = ref >>> CHUNK_BITS;
    const sequence = Number.isFinite(value) ? value : 0;
    const i = ref & CHUNK_MASK;
    if (Number.isNaN(this.seqBase[c]!)) this.seqBase[c] = sequence - i;
    let deltas = this.seqChunks[c]!;
    if (deltas.length === 0) {
      if (sequence === this.seqBase[c]! + i) return;
      // The first sequence of this chunk that does not rise with the ref: keep deltas from now on.
      deltas = new Int32Array(CHUNK);
      for (let j = 0; j < CHUNK; j++) deltas[j] = j;
      this.seqChunks[c] = deltas;
    }
    const d = sequence - this.seqBase[c]!;
    if (d > SEQ_OVERFLOW && d <= 0x7fffffff) deltas[i] = d;
    else {
      deltas[i] = SEQ_OVERFLOW;
      this.seqOverflow.set(ref, sequence);
    }
  }

  /** Writes ref's fields (its id is in the id table already) and stages its record. */
  private fill(ref: number, own: Uint8Array, dup: Uint8Array | null, distance: number, flags: number, fetchedAtSeconds: number, sequence: number): void {
    this.commit();
    const i = ref & CHUNK_MASK;
    const c = ref >>> CHUNK_BITS;
    this.setSequence(ref, sequence);
    this.setHeld(ref, true);
    const names = this.tier.names;
    const r = this.pending;
    const v = this.pendingView;
    r.fill(0);
    setU48(v, 0, names.append(own));
    v.setUint32(8, own.length, true);
    r[6] = distance;
    r[PAGE_FLAGS_AT] = flags & PAGE_FLAGS;
    v.setUint32(FETCHED_AT, fetchedAtSeconds >>> 0, true);
    if (dup !== null) {
      r[7] = 1;
      setU48(v, 12, names.append(dup));
      v.setUint32(20, dup.length, true);
    }
    this.pendingRef = ref;
    if (sequence >= this.nextSeq) this.nextSeq = sequence + 1;
    this.refLimit = ref + 1;
    if (this.sketchBytes === 0) this.commit();
  }

  /** Appends the staged record (after empty records for refs skipped, which name no bytes). */
  private commit(): void {
    const ref = this.pendingRef;
    if (ref < 0) return;
    this.pendingRef = -1;
    if (this.tierLimit < ref) {
      const gap = new Uint8Array(this.recordBytes);
      // An empty record points where the next name starts, so name positions never fall in ref order.
      gap.set(this.pending.subarray(0, 6));
      for (let r = this.tierLimit; r < ref; r++) this.tier.records.append(gap);
    }
    this.tier.records.append(this.pending);
    this.tierLimit = ref + 1;
  }

  /** ref's record (valid until the next read). */
  private recordOf(ref: number): DataView {
    if (ref === this.pendingRef) return this.pendingView;
    if (ref !== this.scratchRef) {
      if (!(ref >= this.tierFirst && ref < this.tierLimit)) throw new RangeError(`ref ${ref} has no record`);
      if (ref >= this.blockFirst && ref < this.blockEnd) {
        const o = (ref - this.blockFirst) * this.recordBytes;
        this.scratch.set(this.block.subarray(o, o + this.recordBytes));
      } else {
        this.tier.records.read((ref - this.tierFirst) * this.recordBytes, this.scratch);
      }
      this.scratchRef = ref;
    }
    return this.scratchView;
  }

  /** As recordOf, reading BLOCK_RECORDS at once: for a walk in ref order. */
  private recordInOrder(ref: number): DataView {
    if (ref !== this.pendingRef && !(ref >= this.blockFirst && ref < this.blockEnd)) {
      const n = Math.min(BLOCK_RECORDS, this.tierLimit - ref);
      if (n > 0) {
        if (this.block.length !== BLOCK_RECORDS * this.recordBytes) this.block = new Uint8Array(BLOCK_RECORDS * this.recordBytes);
        this.tier.records.read((ref - this.tierFirst) * this.recordBytes, this.block.subarray(0, n * this.recordBytes));
        this.blockFirst = ref;
        this.blockEnd = ref + n;
        this.scratchRef = -1;
      }
    }
    return this.recordOf(ref);
  }

  private nameAt(position: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    this.tier.names.read(position, out);
    return out;
  }

  /**
   * ref's id bytes (not to be changed by the caller). The last one read is kept: a duplicate's
   * verdict names its page (idOf) and its record copies that page's id (record), one read for
   * both. A ref's id never changes and refs are not reused, so the copy cannot go stale.
   */
  private ownName(ref: number): Uint8Array {
    if (ref === this.lastNameRef) return this.lastName;
    const v = this.recordOf(ref);
    const name = this.nameAt(u48(v, 0), v.getUint32(8, true));
    this.lastNameRef = ref;
    this.lastName = name;
    return name;
  }

  idOf(ref: number): string {
    return decoder.decode(this.ownName(ref));
  }

  duplicateOfId(ref: number): string | null {
    const v = this.recordOf(ref);
    if (v.getUint8(7) !== 1) return null;
    return decoder.decode(this.nameAt(u48(v, 12), v.getUint32(20, true)));
  }

  distanceOf(ref: number): number {
    return this.recordOf(ref).getUint8(6);
  }

  flagsOf(ref: number): number {
    return this.recordOf(ref).getUint8(PAGE_FLAGS_AT);
  }

  /** ref's fetch time (seconds), from its record: read with the records after it, for a scan in ref order (an age eviction's). */
  fetchedAtOf(ref: number): number {
    return this.recordInOrder(ref).getUint32(FETCHED_AT, true);
  }

  /**
   * Stores the feature sketch of the page recorded last (sketchBytes bytes; null = unknown, kept
   * as zeros, which match nothing but chance) and writes its record to the tier.
   */
  setSketch(ref: number, sketch: Uint8Array | null | undefined): void {
    const b = this.sketchBytes;
    if (b === 0) return;
    if (ref !== this.pendingRef) throw new RangeError(`setSketch: ref ${ref} is not the page recorded last`);
    if (sketch != null) {
      if (sketch.length !== b) throw new DedupError('INDEX_LIMIT', `a feature sketch is ${b} bytes, not ${sketch.length}`);
      this.pending.set(sketch, RECORD_HEAD);
    }
    // An unknown sketch (zeros) is in no band: it would share every band with every other.
    if (sketch != null && this.bandIndex !== null && isKnownSketch(sketch, 0)) this.bandIndex.add(ref, sketch, this.base);
    this.commit();
  }

  /**
   * Keeps the sketches of the pages held in `bands` bands (sketch-bands.ts), for the second
   * stage's candidates beyond the simhash radius; 0 = none. Builds them from the sketches held
   * (a loaded snapshot's, say), so it can be called on any store that keeps sketches.
   */
  useBands(bands: number): void {
    if (bands === 0) {
      this.bandIndex?.dispose();
      this.bandIndex = null;
      return;
    }
    if (this.sketchBytes !== SKETCH_BINS) throw new RangeError(`sketch bands need ${SKETCH_BINS}-byte sketches in the page store`);
    if (this.bandIndex?.bands === bands) return;
    this.commit();
    this.bandIndex?.dispose();
    const index = new SketchBands(bands, { blobs: this.tier.runs, bufferEntries: this.bandBufferEntries });
    for (let ref = this.base; ref < this.refLimit; ref++) {
      if (!this.holds(ref)) continue;
      const sketch = this.sketchInOrder(ref);
      if (isKnownSketch(sketch, 0)) index.add(ref, sketch, this.base);
    }
    this.bandIndex = index;
  }

  /** The sketch bands (useBands), or null. */
  get bands(): SketchBands | null {
    return this.bandIndex;
  }

  /** ref's sketch, read with the records around it (useBands walks the refs in order). */
  private sketchInOrder(ref: number): Uint8Array {
    this.recordInOrder(ref);
    return this.sketchBuffer(ref);
  }

  /** The buffer holding ref's sketch at RECORD_HEAD after a recordOf(ref). */
  private sketchBuffer(ref: number): Uint8Array {
    return (ref === this.pendingRef ? this.pending : this.scratch).subarray(RECORD_HEAD, this.recordBytes);
  }

  private recordBuffer(ref: number): Uint8Array {
    this.recordOf(ref);
    return ref === this.pendingRef ? this.pending : this.scratch;
  }

  /**
   * Whether ref's sketch and `sketch` agree (feature-sketch.ts, sketchesAgreeAt): an overlap of
   * `minOverlap` or more, or one script's text replaced with another's; `size` is
   * sketchSize(sketch), read once per probe.
   */
  sketchesAgree(ref: number, sketch: Uint8Array, size: number, minOverlap: number): boolean {
    return sketchesAgreeAt(this.recordBuffer(ref), RECORD_HEAD, sketch, minOverlap, size);
  }

  /** The size recorded in ref's sketch (its page's distinct shingles; feature-sketch.ts). */
  sketchSize(ref: number): number {
    return sketchSize(this.recordBuffer(ref), RECORD_HEAD);
  }

  /** Whether ref's sketch and `sketch` (of `size`) have the same content numbers (feature-sketch.ts, numbersAgreeAt). */
  numbersAgree(ref: number, sketch: Uint8Array, size: number): boolean {
    return numbersAgreeAt(this.recordBuffer(ref), RECORD_HEAD, sketch, size);
  }

  /** Whether ref's sketch is known: a stored sketch of zeros in every bin is none (setSketch without one). */
  holdsSketch(ref: number): boolean {
    return isKnownSketch(this.recordBuffer(ref), RECORD_HEAD);
  }

  /** ref's sketch (a view, valid until the store is read or changed again). */
  sketchOf(ref: number): Uint8Array {
    this.recordOf(ref);
    return this.sketchBuffer(ref);
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
      if (this.heldBit(r)) {
        this.unlink(r);
        n++;
      }
    }
    if (end > this.cleared) this.cleared = end;
    if (n > 0) this.maybeCompact();
    return n;
  }

  private unlink(ref: number): void {
    this.ids.remove(ref);
    this.setHeld(ref, false);
    this.forgotten++;
  }

  private maybeCompact(): void {
    if (this.forgotten > Math.max(4096, this.ids.used)) this.compact();
  }

  /**
   * Moves base up to the oldest held ref, frees the RAM chunks below it, lets
   * the tier free the bytes below its record and names, and shrinks the id table.
   */
  compact(): void {
    this.forgotten = 0;
    let low = Math.max(this.base, this.cleared);
    while (low < this.refLimit && !this.holds(low)) low++;
    this.base = low;
    for (let c = 0; c < low >>> CHUNK_BITS && c < this.keyChunks.length; c++) {
      if (this.keyChunks[c]!.length === 0) continue;
      this.keyChunks[c] = EMPTY32;
      this.seqChunks[c] = EMPTYI32;
      this.heldChunks[c] = EMPTY32;
    }
    for (const r of this.seqOverflow.keys()) if (r < low) this.seqOverflow.delete(r);
    this.commit();
    if (low < this.tierLimit) {
      const names = u48(this.recordOf(low), 0);
      this.tier.records.release((low - this.tierFirst) * this.recordBytes);
      this.tier.names.release(names);
    }
    this.ids.shrink();
  }

  private source(): PageStoreSource {
    this.commit();
    if (this.tierLimit < this.refLimit) {
      // Refs past the last recorded one (a converted old snapshot): empty records naming the end.
      const gap = new Uint8Array(this.recordBytes);
      setU48(new DataView(gap.buffer), 0, this.tier.names.byteLength);
      for (let r = this.tierLimit; r < this.refLimit; r++) this.tier.records.append(gap);
      this.tierLimit = this.refLimit;
    }
    const store = this;
    const base = this.base;
    const namesStart = base < this.tierLimit ? u48(this.recordOf(base), 0) : this.tier.names.byteLength;
    const R = this.recordBytes;
    const each = (from: number, to: number, put: (c: number, i: number, k: number) => void): void => {
      for (let ref = from; ref < to; ref++) put(ref >>> CHUNK_BITS, ref & CHUNK_MASK, ref - from);
    };
    return {
      base,
      refLimit: this.refLimit,
      nextSeq: this.nextSeq,
      tableUsed: this.ids.used,
      table: this.ids.table,
      sketchBytes: this.sketchBytes,
      namesStart,
      namesEnd: this.tier.names.byteLength,
      flags: (from, to, out) => each(from, to, (_c, _i, k) => (out[k] = (store.holds(from + k) ? HELD : 0) | store.recordInOrder(from + k).getUint8(PAGE_FLAGS_AT))),
      sequences: (from, to, out) => each(from, to, (_c, _i, k) => (out[k] = store.sequenceOf(from + k))),
      keys: (from, to, out) => each(from, to, (c, i, k) => (out[k] = this.keyChunks[c]![i]!)),
      records: (from, to, out) => {
        this.tier.records.read((from - this.tierFirst) * R, out);
        const v = new DataView(out.buffer, out.byteOffset, out.byteLength);
        for (let k = 0; k < to - from; k++) {
          const o = k * R;
          setU48(v, o, u48(v, o) - namesStart);
          if (out[o + 7] === 1) setU48(v, o + 12, u48(v, o + 12) - namesStart);
        }
      },
      names: (position, out) => this.tier.names.read(position, out),
    };
  }

  /** Bytes snapshotChunks() yields in all. */
  get snapshotByteLength(): number {
    return pageStoreSnapshotBytes(this.source());
  }

  /** The snapshot (format in page-store-codec.ts) in chunks of at most about `chunkBytes`. */
  snapshotChunks(chunkBytes = STREAM_CHUNK_BYTES): Generator<Uint8Array> {
    return encodePageStore(this.source(), chunkBytes);
  }

  /** The whole snapshot in one buffer (see snapshotChunks() for large stores). */
  toBuffer(): Uint8Array {
    return concatChunks(this.snapshotChunks());
  }

  static fromBuffer(buffer: Uint8Array, tier?: PageTier): PageStore {
    return PageStore.readFrom(bufferSource(buffer, 'page store'), tier);
  }

  /**
   * Reads a snapshot that fills `source` exactly into a store over `tier` (empty; in memory
   * unless given); every structural invariant is checked.
   */
  static readFrom(source: ByteSource, tier: PageTier = memoryPageTier()): PageStore {
    if (tier.records.byteLength !== 0 || tier.names.byteLength !== 0) throw new RangeError('a page store needs an empty tier');
    let store: PageStore | null = null;
    let namesBase = 0;
    let used = 0;
    const legacy = decodePageStore(source, {
      begin: (h: PageStoreHead) => {
        const s = new PageStore(1, h.sketchBytes, tier);
        s.base = h.base;
        s.cleared = h.base;
        s.refLimit = h.refLimit;
        s.nextSeq = h.nextSeq;
        s.tierFirst = h.base;
        s.tierLimit = h.refLimit;
        if (h.refLimit > 0) s.ensureChunk(h.refLimit - 1);
        namesBase = tier.names.byteLength;
        used = h.used;
        store = s;
      },
      flags: (from, part) => {
        const s = store!;
        for (let k = 0; k < part.length; k++) if ((part[k]! & HELD) !== 0) s.setHeld(from + k, true);
      },
      sequences: (from, part) => {
        const s = store!;
        for (let k = 0; k < part.length; k++) {
          s.setSequence(from + k, part[k]!);
        }
      },
      keys: (from, part) => {
        const s = store!;
        for (let k = 0; k < part.length; k++) s.keyChunks[(from + k) >>> CHUNK_BITS]![(from + k) & CHUNK_MASK] = part[k]!;
      },
      table: (table, laidOut) => {
        const s = store!;
        // A version 5 table is laid out by the 64-bit hashes: its refs are entered again by their keys.
        s.ids = laidOut ? IdTable.from(s, table, used) : IdTable.rebuilt(s, table, used);
      },
      records: (_from, part) => {
        const s = store!;
        const R = s.recordBytes;
        const v = new DataView(part.buffer, part.byteOffset, part.byteLength);
        for (let o = 0; o < part.length; o += R) {
          setU48(v, o, u48(v, o) + namesBase);
          if (part[o + 7] === 1) setU48(v, o + 12, u48(v, o + 12) + namesBase);
        }
        tier.records.append(part);
      },
      names: (part) => {
        tier.names.append(part);
      },
    });
    if (legacy !== null) return PageStore.fromLegacy(decodeLegacyPageStore(source, legacy), tier);
    const restored = store as PageStore | null;
    if (restored === null) throw invalid('snapshot is empty');
    return restored;
  }

  /** A store from a version 3 or 4 snapshot's arrays, each held page recorded anew (same refs, ids, sequences). */
  private static fromLegacy(a: ReturnType<typeof decodeLegacyPageStore>, tier: PageTier): PageStore {
    const store = new PageStore(1024, a.sketchBytes, tier);
    store.base = a.base;
    store.cleared = a.base;
    store.tierFirst = a.base;
    store.tierLimit = a.base;
    store.refLimit = a.base;
    const text = (e: number): Uint8Array => a.bytes.slice(a.entryStart[e]!, a.entryStart[e + 1]!);
    for (let i = 0; i < a.refLimit - a.base; i++) {
      const own = a.ownEntry[i]!;
      if (own === NO_ENTRY) continue;
      const ref = a.base + i;
      const id = decoder.decode(text(own));
      if (!store.claim(ref, id)) throw invalid(`id ${JSON.stringify(id.slice(0, 200))} is held twice`);
      const dup = a.dupEntry[i]!;
      store.fill(ref, text(own), dup === NO_ENTRY ? null : text(dup), a.distances[i]!, a.flags[i]!, a.fetchedAt[i]!, a.sequences[i]!);
      if (a.sketchBytes > 0) store.pending.set(a.sketches.subarray(i * a.sketchBytes, (i + 1) * a.sketchBytes), RECORD_HEAD);
      store.commit();
    }
    store.refLimit = Math.max(store.refLimit, a.refLimit);
    store.nextSeq = Math.max(store.nextSeq, a.nextSeq);
    return store;
  }
}
