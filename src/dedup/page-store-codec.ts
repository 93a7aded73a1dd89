/**
 * Page store snapshot, version 4, little-endian:
 *
 *   u32 x 12: magic 'PGST', version, base, refLimit, entries, bytesUsed,
 *             slots, used, nextSequence (low 32 bits, high 21 bits),
 *             sketchBytes (0, or SKETCH_BINS with the second stage), 0
 *   f64 sequence[n]                      n = refLimit - base
 *   u32 table[slots * 3]: per slot the id's hash (hi, lo) and ref + 1 (0 = empty)
 *   u32 entryStart[entries + 1]
 *   u32 ownEntry[n], dupEntry[n], fetchedAt[n]
 *   u8  distance[n], flags[n]
 *   u8  id bytes[bytesUsed]
 *   u8  sketch[n * sketchBytes]
 *
 * Version 3 (no sketches; word 10 is 0) is still read.
 *
 * Encoded in bounded chunks, decoded by exact pulls from a ByteSource after
 * the sizes are checked against the bytes left; every structural invariant a
 * lookup relies on (an empty slot exists, refs and entries in range, entry
 * offsets ascending) is checked, so a bad part is SNAPSHOT_INVALID, never a
 * hang or a wrong id. (The snapshot file adds a CRC-32 per part.)
 */
import { DedupError } from '../errors.js';
import { readSliced, type ByteSource } from '../index/index.js';

const MAGIC = 0x50475354; // 'PGST'
const VERSION = 4;
const VERSION_WITHOUT_SKETCHES = 3;
const MAX_SKETCH_BYTES = 256;
const HEAD_WORDS = 12;
const NO_ENTRY = 0xffffffff;
const MAX_SLOTS = 2 ** 30;

export interface PageStoreArrays {
  base: number;
  refLimit: number;
  nextSeq: number;
  tableUsed: number;
  table: Uint32Array;
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

function invalid(message: string): DedupError {
  return new DedupError('SNAPSHOT_INVALID', `page store: ${message}`);
}

function bodyBytes(n: number, slots: number, entries: number, bytesUsed: number, sketchBytes: number): number {
  return n * 8 + slots * 12 + (entries + 1) * 4 + n * 14 + bytesUsed + n * sketchBytes;
}

export function pageStoreSnapshotBytes(a: PageStoreArrays): number {
  return HEAD_WORDS * 4 + bodyBytes(a.refLimit - a.base, a.table.length / 3, a.entryStart.length - 1, a.bytes.length, a.sketchBytes);
}

function view(a: Uint32Array | Float64Array | Uint8Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

export function* encodePageStore(a: PageStoreArrays, chunkBytes: number): Generator<Uint8Array> {
  const head = new Uint32Array(HEAD_WORDS);
  head.set([MAGIC, VERSION, a.base, a.refLimit, a.entryStart.length - 1, a.bytes.length, a.table.length / 3, a.tableUsed, a.nextSeq % 2 ** 32, Math.floor(a.nextSeq / 2 ** 32), a.sketchBytes]);
  yield view(head);
  const step = Math.max(8, chunkBytes - (chunkBytes % 8));
  for (const part of [a.sequences, a.table, a.entryStart, a.ownEntry, a.dupEntry, a.fetchedAt, a.distances, a.flags, a.bytes, a.sketches]) {
    const bytes = view(part);
    for (let at = 0; at < bytes.byteLength; at += step) yield bytes.subarray(at, Math.min(bytes.byteLength, at + step));
  }
}

export function decodePageStore(source: ByteSource): PageStoreArrays {
  if (source.remaining < HEAD_WORDS * 4) throw invalid('truncated snapshot');
  const head = new Uint32Array(HEAD_WORDS);
  source.readInto(view(head));
  const [magic, version, base, refLimit, entries, bytesUsed, slots, used, seqLo, seqHi, sketchBytes] = head as unknown as number[];
  if (magic !== MAGIC) throw invalid('bad magic number');
  if (version !== VERSION && version !== VERSION_WITHOUT_SKETCHES) throw invalid(`unknown version ${version}`);
  if (sketchBytes! > (version === VERSION ? MAX_SKETCH_BYTES : 0)) throw invalid(`bad sketch size ${sketchBytes}`);
  if (base! > refLimit! || refLimit! >= NO_ENTRY) throw invalid(`bad ref range ${base}..${refLimit}`);
  if (slots! < 16 || slots! > MAX_SLOTS || (slots! & (slots! - 1)) !== 0) throw invalid('bad table size');
  if (used! >= slots! || head[11] !== 0 || seqHi! >= 2 ** 21) throw invalid('bad counts');
  const n = refLimit! - base!;
  const expected = bodyBytes(n, slots!, entries!, bytesUsed!, sketchBytes!);
  if (source.remaining !== expected) throw invalid(source.remaining < expected ? 'truncated snapshot' : 'trailing bytes in snapshot');
  const read = <T extends Uint32Array | Float64Array | Uint8Array>(a: T): T => {
    readSliced(source, view(a));
    return a;
  };
  const a: PageStoreArrays = {
    base: base!,
    refLimit: refLimit!,
    nextSeq: seqHi! * 2 ** 32 + seqLo!,
    tableUsed: used!,
    sequences: read(new Float64Array(n)),
    table: read(new Uint32Array(slots! * 3)),
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
  check(a);
  return a;
}

function check(a: PageStoreArrays): void {
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
  if (held !== a.tableUsed) throw invalid(`${held} pages held but ${a.tableUsed} ids in the table`);
  const seen = new Uint8Array(n);
  let filled = 0;
  for (let s = 0; s * 3 < a.table.length; s++) {
    const r = a.table[s * 3 + 2]!;
    if (r === 0) continue;
    filled++;
    const i = r - 1 - a.base;
    if (i < 0 || i >= n || a.ownEntry[i] === NO_ENTRY || seen[i] === 1) throw invalid(`id table slot ${s} names a bad ref`);
    seen[i] = 1;
  }
  if (filled !== a.tableUsed) throw invalid(`id table holds ${filled} ids, not ${a.tableUsed}`);
}
