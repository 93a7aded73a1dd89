/**
 * Page store snapshot, version 7, little-endian:
 *
 *   u32 x 12: magic 'PGST', version, base, refLimit, slots, used,
 *             nextSequence (low 32 bits, high 21 bits), sketchBytes,
 *             name bytes (low 32 bits, high 16 bits), 0
 *   u8  flags[n]                         n = refLimit - base: HELD, and the page's flags (in its record too)
 *   f64 sequence[n]
 *   u32 idKey[n]                         id-table.ts
 *   u32 table[slots]                     ref + 1 per slot (0 = empty), any number of slots
 *   u8  record[n * (RECORD_HEAD + sketchBytes)]   the tier's records of refs base..refLimit,
 *                                        their name positions relative to the name bytes below
 *   u8  names[name bytes]                the tier's id bytes from the first record's on
 *
 * The RAM columns and the live part of the tier, as they are: a load copies
 * them in order, with nothing to rebuild but the relocation of name positions.
 * Version 6 is the same but for its table, a power of two in size: laid out
 * by the same homes (id-table.ts), it is read as it is.
 * Version 5 (a 64-bit id hash per ref, fetch times in RAM, 24-byte record
 * heads) is converted as it is read: its hash's low word is the key, its table
 * is laid out again, its fetch times go into the records. Versions 3 and 4
 * (the layout that kept ids and sketches in RAM) are still read
 * (decodeLegacyPageStore) and converted.
 *
 * Encoded in bounded chunks, decoded by exact pulls from a ByteSource after
 * the sizes are checked against the bytes left; every structural invariant a
 * lookup relies on (an empty slot exists, refs in range, name ranges inside
 * the name bytes) is checked, so a bad part is SNAPSHOT_INVALID, never a hang
 * or a wrong id. (The snapshot file adds a CRC-32 per part.)
 */
import { DedupError } from '../errors.js';
import { readSliced, type ByteSource } from '../index/index.js';
import { MAX_SLOTS, keyOfHash } from './id-table.js';

const MAGIC = 0x50475354; // 'PGST'
export const PAGE_STORE_VERSION = 7;
/** Version 6: this layout, with a power-of-two table. */
const VERSION_POWER_OF_TWO_TABLE = 6;
const VERSION_WITH_HASHES = 5;
/** Version 5's record head: no fetch time. */
const RECORD_HEAD_5 = 24;
const VERSION_WITH_SKETCHES = 4;
const VERSION_WITHOUT_SKETCHES = 3;
const MAX_SKETCH_BYTES = 256;
const HEAD_WORDS = 12;
const NO_ENTRY = 0xffffffff;
/** Refs per slice when a part streams. */
const SLICE = 1 << 14;

/** Bytes of a tier record before the sketch: own name (u48 position, u32 length), distance, dup flag, dup name, fetch time (u32 seconds, at FETCHED_AT). */
export const RECORD_HEAD = 28;
export const FETCHED_AT = 24;
/** Where a record keeps its page's flags (the flags column's bits below HELD). */
export const PAGE_FLAGS_AT = 18;
/** Flag bit of a held ref in the flags column (the page's own flags use the bits below it). */
export const HELD = 0x80;

export function invalid(message: string): DedupError {
  return new DedupError('SNAPSHOT_INVALID', `page store: ${message}`);
}

/** What the encoder reads from a page store. */
export interface PageStoreSource {
  base: number;
  refLimit: number;
  nextSeq: number;
  tableUsed: number;
  table: Uint32Array;
  sketchBytes: number;
  namesStart: number;
  namesEnd: number;
  flags(from: number, to: number, out: Uint8Array): void;
  sequences(from: number, to: number, out: Float64Array): void;
  keys(from: number, to: number, out: Uint32Array): void;
  /** Records of refs [from, to), name positions relative to namesStart. */
  records(from: number, to: number, out: Uint8Array): void;
  names(position: number, out: Uint8Array): void;
}

/** What the decoder fills, part by part, in order. */
export interface PageStoreSink {
  begin(head: PageStoreHead): void;
  flags(from: number, part: Uint8Array): void;
  sequences(from: number, part: Float64Array): void;
  keys(from: number, part: Uint32Array): void;
  /** laidOut: the table is laid out by the keys (versions 6 and 7); else its refs are to be entered again. */
  table(table: Uint32Array, laidOut: boolean): void;
  /** Records of refs from.. (in this version's layout), name positions relative to the snapshot's name bytes. */
  records(from: number, part: Uint8Array): void;
  names(part: Uint8Array): void;
}

export interface PageStoreHead {
  base: number;
  refLimit: number;
  slots: number;
  used: number;
  nextSeq: number;
  sketchBytes: number;
  nameBytes: number;
}

function bodyBytes(version: number, n: number, slots: number, sketchBytes: number, nameBytes: number): number {
  const perRef = version === VERSION_WITH_HASHES ? 1 + 8 + 8 + 4 + RECORD_HEAD_5 : 1 + 8 + 4 + RECORD_HEAD;
  return n * (perRef + sketchBytes) + slots * 4 + nameBytes;
}

export function pageStoreSnapshotBytes(a: PageStoreSource): number {
  return HEAD_WORDS * 4 + bodyBytes(PAGE_STORE_VERSION, a.refLimit - a.base, a.table.length, a.sketchBytes, a.namesEnd - a.namesStart);
}

function view(a: Uint32Array | Float64Array | Uint8Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

export function* encodePageStore(a: PageStoreSource, chunkBytes: number): Generator<Uint8Array> {
  const head = new Uint32Array(HEAD_WORDS);
  const nameBytes = a.namesEnd - a.namesStart;
  head.set([MAGIC, PAGE_STORE_VERSION, a.base, a.refLimit, a.table.length, a.tableUsed, a.nextSeq % 2 ** 32, Math.floor(a.nextSeq / 2 ** 32), a.sketchBytes, nameBytes % 2 ** 32, Math.floor(nameBytes / 2 ** 32), 0]);
  yield view(head).slice();
  const recordBytes = RECORD_HEAD + a.sketchBytes;
  const refsPer = (bytesPerRef: number): number => Math.max(1, Math.min(SLICE * 16, Math.floor(chunkBytes / bytesPerRef)));
  function* column<T extends Uint8Array | Float64Array | Uint32Array>(make: (n: number) => T, fill: (from: number, to: number, out: T) => void, bytesPerRef: number): Generator<Uint8Array> {
    const step = refsPer(bytesPerRef);
    for (let from = a.base; from < a.refLimit; from += step) {
      const to = Math.min(a.refLimit, from + step);
      const out = make(to - from);
      fill(from, to, out);
      yield view(out);
    }
  }
  yield* column((n) => new Uint8Array(n), a.flags, 1);
  yield* column((n) => new Float64Array(n), a.sequences, 8);
  yield* column((n) => new Uint32Array(n), a.keys, 4);
  const table = view(a.table);
  const step = Math.max(8, chunkBytes - (chunkBytes % 8));
  for (let at = 0; at < table.byteLength; at += step) yield table.slice(at, Math.min(table.byteLength, at + step));
  yield* column((n) => new Uint8Array(n * recordBytes), a.records, recordBytes);
  for (let at = 0; at < nameBytes; at += step) {
    const out = new Uint8Array(Math.min(step, nameBytes - at));
    a.names(a.namesStart + at, out);
    yield out;
  }
}

/** Reads the head; versions 7, 6 and 5 are decoded into `sink` (5 converted), older versions return their head words for decodeLegacyPageStore. */
export function decodePageStore(source: ByteSource, sink: PageStoreSink): Uint32Array | null {
  if (source.remaining < HEAD_WORDS * 4) throw invalid('truncated snapshot');
  const head = new Uint32Array(HEAD_WORDS);
  source.readInto(view(head));
  const [magic, version, base, refLimit, slots, used, seqLo, seqHi, sketchBytes, namesLo, namesHi] = head as unknown as number[];
  if (magic !== MAGIC) throw invalid('bad magic number');
  if (version === VERSION_WITH_SKETCHES || version === VERSION_WITHOUT_SKETCHES) return head;
  if (version !== PAGE_STORE_VERSION && version !== VERSION_POWER_OF_TWO_TABLE && version !== VERSION_WITH_HASHES) throw invalid(`unknown version ${version}`);
  const v5 = version === VERSION_WITH_HASHES;
  if (sketchBytes! > MAX_SKETCH_BYTES) throw invalid(`bad sketch size ${sketchBytes}`);
  if (base! > refLimit! || refLimit! >= NO_ENTRY) throw invalid(`bad ref range ${base}..${refLimit}`);
  if (slots! < 16 || slots! > MAX_SLOTS || (version !== PAGE_STORE_VERSION && (slots! & (slots! - 1)) !== 0)) throw invalid('bad table size');
  if (used! >= slots! || head[11] !== 0 || seqHi! >= 2 ** 21 || namesHi! >= 2 ** 16) throw invalid('bad counts');
  const n = refLimit! - base!;
  const nameBytes = namesHi! * 2 ** 32 + namesLo!;
  const expected = bodyBytes(version!, n, slots!, sketchBytes!, nameBytes);
  if (source.remaining !== expected) throw invalid(source.remaining < expected ? 'truncated snapshot' : 'trailing bytes in snapshot');
  const h: PageStoreHead = { base: base!, refLimit: refLimit!, slots: slots!, used: used!, nextSeq: seqHi! * 2 ** 32 + seqLo!, sketchBytes: sketchBytes!, nameBytes };
  sink.begin(h);
  const column = <T extends Uint8Array | Float64Array | Uint32Array>(make: (n: number) => T, put: (from: number, part: T) => void): void => {
    for (let from = h.base; from < h.refLimit; from += SLICE) {
      const part = make(Math.min(SLICE, h.refLimit - from));
      readSliced(source, view(part));
      put(from, part);
    }
  };
  const flags = new Uint8Array(n);
  let held = 0;
  column((m) => new Uint8Array(m), (from, part) => {
    flags.set(part, from - h.base);
    for (let i = 0; i < part.length; i++) if ((part[i]! & HELD) !== 0) held++;
    sink.flags(from, part);
  });
  if (held !== h.used) throw invalid(`${held} pages held but ${h.used} ids in the table`);
  column((m) => new Float64Array(m), (from, part) => {
    for (let i = 0; i < part.length; i++) {
      const seq = part[i]!;
      if ((flags[from - h.base + i]! & HELD) !== 0 && !(Number.isInteger(seq) && seq >= 0 && seq < h.nextSeq)) throw invalid(`ref ${from + i} has a bad sequence number`);
    }
    sink.sequences(from, part);
  });
  if (v5) {
    column((m) => new Uint32Array(m * 2), (from, part) => {
      const keys = new Uint32Array(part.length >>> 1);
      for (let i = 0; i < keys.length; i++) keys[i] = keyOfHash(part[i * 2 + 1]!);
      sink.keys(from, keys);
    });
  } else {
    column((m) => new Uint32Array(m), (from, part) => sink.keys(from, part));
  }
  // Version 5's fetch times, until its records take them.
  const fetched = v5 ? new Uint32Array(n) : null;
  if (fetched !== null) column((m) => new Uint32Array(m), (from, part) => fetched.set(part, from - h.base));
  const table = new Uint32Array(h.slots);
  readSliced(source, view(table));
  const seen = new Uint8Array(n);
  let filled = 0;
  for (let s = 0; s < table.length; s++) {
    const r = table[s]!;
    if (r === 0) continue;
    filled++;
    const i = r - 1 - h.base;
    if (i < 0 || i >= n || (flags[i]! & HELD) === 0 || seen[i] === 1) throw invalid(`id table slot ${s} names a bad ref`);
    seen[i] = 1;
  }
  if (filled !== h.used) throw invalid(`id table holds ${filled} ids, not ${h.used}`);
  sink.table(table, !v5);
  const recordBytes = (v5 ? RECORD_HEAD_5 : RECORD_HEAD) + h.sketchBytes;
  const SLICE_RECORDS = Math.max(1, Math.floor((1 << 20) / recordBytes));
  for (let from = h.base; from < h.refLimit; from += SLICE_RECORDS) {
    const m = Math.min(SLICE_RECORDS, h.refLimit - from);
    const part = new Uint8Array(m * recordBytes);
    readSliced(source, part);
    const dv = new DataView(part.buffer);
    for (let i = 0; i < m; i++) {
      if ((flags[from - h.base + i]! & HELD) === 0) continue;
      const o = i * recordBytes;
      const own = dv.getUint32(o, true) + dv.getUint16(o + 4, true) * 2 ** 32;
      const dup = dv.getUint32(o + 12, true) + dv.getUint16(o + 16, true) * 2 ** 32;
      if (own + dv.getUint32(o + 8, true) > nameBytes || part[o + 6]! > 64 || part[o + 7]! > 1 || (part[o + 7] === 1 && dup + dv.getUint32(o + 20, true) > nameBytes)) {
        throw invalid(`ref ${from + i} has a bad record`);
      }
    }
    sink.records(from, fetched === null ? part : withFetchTimes(part, m, h.sketchBytes, fetched.subarray(from - h.base, from - h.base + m), flags.subarray(from - h.base, from - h.base + m)));
  }
  const step = 1 << 20;
  for (let at = 0; at < nameBytes; at += step) {
    const part = new Uint8Array(Math.min(step, nameBytes - at));
    readSliced(source, part);
    sink.names(part);
  }
  return null;
}

/** Version 5 records (no fetch time, no flags) in this version's layout, with the fetch times and flags given. */
function withFetchTimes(part: Uint8Array, m: number, sketchBytes: number, fetched: Uint32Array, flags: Uint8Array): Uint8Array {
  const from = RECORD_HEAD_5 + sketchBytes;
  const to = RECORD_HEAD + sketchBytes;
  const out = new Uint8Array(m * to);
  const v = new DataView(out.buffer);
  for (let i = 0; i < m; i++) {
    out.set(part.subarray(i * from, i * from + RECORD_HEAD_5), i * to);
    v.setUint32(i * to + FETCHED_AT, fetched[i]!, true);
    out[i * to + PAGE_FLAGS_AT] = flags[i]! & ~HELD;
    out.set(part.subarray(i * from + RECORD_HEAD_5, (i + 1) * from), i * to + RECORD_HEAD);
  }
  return out;
}

/** A version 3 or 4 snapshot (ids and sketches in RAM), as its arrays. */
export interface LegacyPageStore {
  base: number;
  refLimit: number;
  nextSeq: number;
  entryStart: Uint32Array;
  bytes: Uint8Array;
  sequences: Float64Array;
  ownEntry: Uint32Array;
  dupEntry: Uint32Array;
  fetchedAt: Uint32Array;
  distances: Uint8Array;
  flags: Uint8Array;
  sketchBytes: number;
  sketches: Uint8Array;
}

/** The body of a version 3 or 4 snapshot after its head (decodePageStore's return). */
export function decodeLegacyPageStore(source: ByteSource, head: Uint32Array): LegacyPageStore {
  const [, version, base, refLimit, entries, bytesUsed, slots, used, seqLo, seqHi, sketchBytes] = head as unknown as number[];
  if (sketchBytes! > (version === VERSION_WITH_SKETCHES ? MAX_SKETCH_BYTES : 0)) throw invalid(`bad sketch size ${sketchBytes}`);
  if (base! > refLimit! || refLimit! >= NO_ENTRY) throw invalid(`bad ref range ${base}..${refLimit}`);
  if (slots! < 16 || slots! > MAX_SLOTS || (slots! & (slots! - 1)) !== 0) throw invalid('bad table size');
  if (used! >= slots! || head[11] !== 0 || seqHi! >= 2 ** 21) throw invalid('bad counts');
  const n = refLimit! - base!;
  const expected = n * 8 + slots! * 12 + (entries! + 1) * 4 + n * 14 + bytesUsed! + n * sketchBytes!;
  if (source.remaining !== expected) throw invalid(source.remaining < expected ? 'truncated snapshot' : 'trailing bytes in snapshot');
  const read = <T extends Uint32Array | Float64Array | Uint8Array>(a: T): T => {
    readSliced(source, view(a));
    return a;
  };
  const sequences = read(new Float64Array(n));
  const table = read(new Uint32Array(slots! * 3));
  const a: LegacyPageStore = {
    base: base!,
    refLimit: refLimit!,
    nextSeq: seqHi! * 2 ** 32 + seqLo!,
    sequences,
    entryStart: read(new Uint32Array(entries! + 1)),
    ownEntry: read(new Uint32Array(n)),
    dupEntry: read(new Uint32Array(n)),
    fetchedAt: read(new Uint32Array(n)),
    distances: read(new Uint8Array(n)),
    flags: read(new Uint8Array(n)),
    bytes: read(new Uint8Array(bytesUsed!)),
    sketchBytes: sketchBytes!,
    sketches: read(new Uint8Array(n * sketchBytes!)),
  };
  checkLegacy(a, table, used!);
  return a;
}

function checkLegacy(a: LegacyPageStore, table: Uint32Array, tableUsed: number): void {
  const n = a.refLimit - a.base;
  const entries = a.entryStart.length - 1;
  if (a.entryStart[0] !== 0 || a.entryStart[entries] !== a.bytes.length) throw invalid('entry offsets do not span the id bytes');
  for (let e = 0; e < entries; e++) if (a.entryStart[e]! > a.entryStart[e + 1]!) throw invalid('entry offsets are not ascending');
  let held = 0;
  for (let i = 0; i < n; i++) {
    const own = a.ownEntry[i]!;
    if (own === NO_ENTRY) continue;
    held++;
    const dup = a.dupEntry[i]!;
    if (own >= entries || (dup !== NO_ENTRY && dup >= entries)) throw invalid(`ref ${a.base + i} names a missing entry`);
    const seq = a.sequences[i]!;
    if (!(Number.isInteger(seq) && seq >= 0 && seq < a.nextSeq)) throw invalid(`ref ${a.base + i} has a bad sequence number`);
    if (a.distances[i]! > 64) throw invalid(`ref ${a.base + i} has a bad distance`);
  }
  if (held !== tableUsed) throw invalid(`${held} pages held but ${tableUsed} ids in the table`);
  const seen = new Uint8Array(n);
  let filled = 0;
  for (let s = 0; s * 3 < table.length; s++) {
    const r = table[s * 3 + 2]!;
    if (r === 0) continue;
    filled++;
    const i = r - 1 - a.base;
    if (i < 0 || i >= n || a.ownEntry[i] === NO_ENTRY || seen[i] === 1) throw invalid(`id table slot ${s} names a bad ref`);
    seen[i] = 1;
  }
  if (filled !== tableUsed) throw invalid(`id table holds ${filled} ids, not ${tableUsed}`);
}
