/**
 * Snapshot format, version 1: one buffer of little-endian uint32 words.
 *
 *   magic 'SHIX' (0x58494853), version, flags (bit 0: compressed; bit 1: table masks),
 *   plan words: k, b, width[b], t, then per table: prefixBits, m, block[m],
 *   minLive, nextRef, count (= nextRef - minLive),
 *   fingerprints: hi, lo for refs minLive .. nextRef - 1,
 *   removed bits: ceil(count / 32) words, bit i set = ref minLive + i removed,
 *   with flag bit 1 only, the table masks (an index partition's, each ref in the
 *   tables of its own mask): count masks of maskBytes(t) bytes each (1 up to 8
 *   tables, 2 up to 16, else 4), zero-padded to a whole word,
 *   checksum of every word before it.
 * A file without flag bit 1 (every one written before masks were held) loads
 * as it always did.
 *
 * The format streams: encodeSnapshotChunks() yields it in bounded chunks and
 * decodeSnapshotFrom() pulls it from a ByteSource straight into the index's
 * fingerprint chunks, with the checksum computed on the way.
 *
 * Tables are not stored: they are rebuilt (radix sort) on load, so a snapshot
 * cannot carry tables inconsistent with its fingerprints.
 */
import { DedupError } from '../errors.js';
import { validatePlan, type TablePlan } from './plan.js';
import { bytesOf, readSliced, slicesOf, STREAM_CHUNK_BYTES, type ByteSource } from './byte-stream.js';

export const SNAPSHOT_MAGIC = 0x58494853;
export const SNAPSHOT_VERSION = 1;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function corrupt(message: string, cause?: unknown): DedupError {
  return new DedupError('SNAPSHOT_INVALID', message, cause === undefined ? {} : { cause });
}

export function checksum(words: Uint32Array, n: number): number {
  const c = new Checksum();
  c.update(words, 0, n);
  return c.digest();
}

/** The snapshot checksum, fed word by word as the snapshot streams. */
export class Checksum {
  private a = 0x811c9dc5;
  private b = 0x27d4eb2f;
  update(words: Uint32Array, from: number, to: number): void {
    let a = this.a;
    let b = this.b;
    for (let i = from; i < to; i++) {
      const w = words[i]!;
      a = Math.imul(a ^ w, 0x9e3779b1);
      b = Math.imul(b + w, 0x85ebca77) ^ (b >>> 13);
    }
    this.a = a;
    this.b = b;
  }
  digest(): number {
    let a = this.a;
    a ^= a >>> 16;
    return (Math.imul(a, 0x7feb352d) ^ this.b) >>> 0;
  }
}

function planWords(plan: TablePlan): number[] {
  const w = [plan.k, plan.blockWidths.length, ...plan.blockWidths, plan.tables.length];
  for (const t of plan.tables) w.push(t.prefixBits, t.blocks.length, ...t.blocks);
  return w;
}

/** Bytes a ref's table mask takes in RAM and in a snapshot, for `tables` tables (at most 31). */
export function maskBytes(tables: number): 1 | 2 | 4 {
  return tables <= 8 ? 1 : tables <= 16 ? 2 : 4;
}

/** Words of the masks section for `count` refs (0 without masks). */
function maskWords(plan: TablePlan, count: number, masked: boolean): number {
  return masked ? Math.ceil((count * maskBytes(plan.tables.length)) / 4) : 0;
}

/** Bytes of the snapshot of an index with this plan and ref range (`masked`: with its table masks). */
export function snapshotByteLength(plan: TablePlan, minLive: number, nextRef: number, masked = false): number {
  const count = nextRef - minLive;
  return (3 + planWords(plan).length + 3 + count * 2 + ((count + 31) >>> 5) + maskWords(plan, count, masked) + 1) * 4;
}

/** Refs per slice of the masks section as it streams (a multiple of 4, so a slice is whole words). */
const MASK_SLICE = 1 << 16;

/**
 * Streams the snapshot in chunks of about `chunkBytes`. `read(ref, out)`
 * writes the fingerprint of ref into out and returns false when ref was
 * removed; `maskOf(ref)`, for an index with table masks, gives ref's mask.
 * Holds one slice of fingerprints (or masks) and the removed bits (count / 8
 * bytes), never the whole snapshot.
 */
export function* encodeSnapshotChunks(
  plan: TablePlan,
  compressed: boolean,
  minLive: number,
  nextRef: number,
  read: (ref: number, out: Uint32Array) => boolean,
  chunkBytes = STREAM_CHUNK_BYTES,
  maskOf: ((ref: number) => number) | null = null,
): Generator<Uint8Array> {
  if (!LITTLE_ENDIAN) throw new DedupError('SNAPSHOT_INVALID', 'snapshots need a little-endian platform');
  const sum = new Checksum();
  const count = nextRef - minLive;
  const flags = (compressed ? 1 : 0) | (maskOf !== null ? 2 : 0);
  const head = new Uint32Array([SNAPSHOT_MAGIC, SNAPSHOT_VERSION, flags, ...planWords(plan), minLive, nextRef, count]);
  sum.update(head, 0, head.length);
  yield bytesOf(head);
  const dead = new Uint32Array((count + 31) >>> 5);
  const sliceRefs = Math.max(1, Math.floor(chunkBytes / 8));
  const slice = new Uint32Array(Math.min(count, sliceRefs) * 2);
  const fp = new Uint32Array(2);
  for (let from = 0; from < count; from += sliceRefs) {
    const n = Math.min(sliceRefs, count - from);
    for (let j = 0; j < n; j++) {
      const i = from + j;
      if (!read(minLive + i, fp)) dead[i >>> 5]! |= 1 << (i & 31);
      slice[j * 2] = fp[0]!;
      slice[j * 2 + 1] = fp[1]!;
    }
    sum.update(slice, 0, n * 2);
    yield bytesOf(slice.subarray(0, n * 2));
  }
  sum.update(dead, 0, dead.length);
  yield* slicesOf(dead, chunkBytes);
  if (maskOf !== null) {
    const width = maskBytes(plan.tables.length);
    const sliceMasks = Math.min(MASK_SLICE, Math.max(4, Math.floor(chunkBytes / width) & ~3));
    const words = new Uint32Array(Math.ceil((Math.min(count, sliceMasks) * width) / 4));
    const masks = width === 1 ? new Uint8Array(words.buffer) : width === 2 ? new Uint16Array(words.buffer) : words;
    for (let from = 0; from < count; from += sliceMasks) {
      const n = Math.min(sliceMasks, count - from);
      const used = Math.ceil((n * width) / 4);
      words.fill(0, used - 1, used);
      for (let j = 0; j < n; j++) masks[j] = maskOf(minLive + from + j);
      sum.update(words, 0, used);
      yield bytesOf(words.subarray(0, used));
    }
  }
  yield bytesOf(new Uint32Array([sum.digest()]));
}

/** Where a decoder puts the fingerprints it reads: views of the index's own storage. */
export interface SnapshotTarget {
  /** `masked`: the snapshot holds table masks (masks() is called for them after the removed bits). */
  begin(plan: TablePlan, compressed: boolean, minLive: number, nextRef: number, masked: boolean): void;
  /** hi, lo interleaved for refs [ref, ref + count); count never crosses a 2^16-ref chunk. */
  fingerprints(ref: number, count: number): Uint32Array;
  /** The table masks of refs [ref, ref + count), each within the plan's tables; count never crosses a 2^16-ref chunk. */
  masks?(ref: number, masks: Uint8Array | Uint16Array | Uint32Array): void;
}

const REF_CHUNK = 1 << 16;

/**
 * Reads one index snapshot from `source`, which must hold exactly it. Every
 * size is checked against the bytes left before anything is allocated.
 * Returns the removed-ref bits (bit i = ref minLive + i).
 */
export function decodeSnapshotFrom(source: ByteSource, target: SnapshotTarget): Uint32Array {
  if (!LITTLE_ENDIAN) throw corrupt('snapshots need a little-endian platform');
  const sum = new Checksum();
  const word = new Uint32Array(1);
  const wordBytes = bytesOf(word);
  const next = (): number => {
    if (source.remaining < 8) throw corrupt('snapshot is truncated');
    source.readInto(wordBytes);
    sum.update(word, 0, 1);
    return word[0]!;
  };
  if (source.remaining < 16 || source.remaining % 4 !== 0) throw corrupt(`snapshot length ${source.remaining} is not a whole number of words`);
  if (next() !== SNAPSHOT_MAGIC) throw corrupt('not a fingerprint index snapshot (bad magic)');
  const version = next();
  if (version !== SNAPSHOT_VERSION) throw corrupt(`unknown snapshot version ${version}`);
  const flags = next();
  if ((flags & ~3) !== 0) throw corrupt(`unknown snapshot flags ${flags}`);
  const masked = (flags & 2) !== 0;
  const k = next();
  const b = next();
  if (b > 64) throw corrupt(`snapshot plan has ${b} blocks`);
  const blockWidths: number[] = [];
  for (let i = 0; i < b; i++) blockWidths.push(next());
  const t = next();
  if (t > 4096) throw corrupt(`snapshot plan has ${t} tables`);
  const tables: { blocks: number[]; prefixBits: number }[] = [];
  for (let i = 0; i < t; i++) {
    const prefixBits = next();
    const m = next();
    if (m > 64) throw corrupt(`snapshot table ${i} has ${m} blocks`);
    const blocks: number[] = [];
    for (let j = 0; j < m; j++) blocks.push(next());
    tables.push({ blocks, prefixBits });
  }
  const plan: TablePlan = { k, blockWidths, tables };
  try {
    validatePlan(plan);
  } catch (error) {
    throw corrupt('snapshot holds an invalid plan', error);
  }
  const minLive = next();
  const nextRef = next();
  const count = next();
  if (minLive > nextRef || count !== nextRef - minLive) throw corrupt('snapshot ref range is inconsistent');
  if (masked && (t > 31 || target.masks === undefined)) throw corrupt(`snapshot holds table masks of ${t} tables, which this index cannot take`);
  const deadWords = (count + 31) >>> 5;
  const expected = (count * 2 + deadWords + maskWords(plan, count, masked) + 1) * 4;
  if (source.remaining !== expected) throw corrupt(`snapshot is ${source.remaining < expected ? 'truncated' : 'too long'}`);
  target.begin(plan, (flags & 1) === 1, minLive, nextRef, masked);
  for (let ref = minLive; ref < nextRef; ) {
    const n = Math.min(nextRef - ref, REF_CHUNK - (ref % REF_CHUNK));
    const view = target.fingerprints(ref, n);
    readSliced(source, bytesOf(view));
    sum.update(view, 0, view.length);
    ref += n;
  }
  const dead = new Uint32Array(deadWords);
  readSliced(source, bytesOf(dead));
  sum.update(dead, 0, deadWords);
  if (masked) readMasks(source, sum, t, minLive, nextRef, target.masks!.bind(target));
  source.readInto(wordBytes);
  if (sum.digest() !== word[0]) throw corrupt('snapshot checksum mismatch');
  if (count % 32 !== 0 && deadWords > 0 && dead[deadWords - 1]! >>> (count % 32) !== 0) throw corrupt('snapshot has stray removed bits');
  return dead;
}

/** The masks section into `put`, slice by slice; a mask naming a table the plan lacks, or stray padding, is corrupt. */
function readMasks(source: ByteSource, sum: Checksum, tables: number, minLive: number, nextRef: number, put: (ref: number, masks: Uint8Array | Uint16Array | Uint32Array) => void): void {
  const width = maskBytes(tables);
  const all = (2 ** tables - 1) >>> 0;
  const count = nextRef - minLive;
  const words = new Uint32Array(Math.ceil((Math.min(count, MASK_SLICE) * width) / 4));
  const masks = width === 1 ? new Uint8Array(words.buffer) : width === 2 ? new Uint16Array(words.buffer) : words;
  for (let from = 0; from < count; ) {
    // Slices of MASK_SLICE refs from minLive; the target's 2^16-ref chunks are cut out of them.
    const n = Math.min(MASK_SLICE, count - from);
    const used = Math.ceil((n * width) / 4);
    readSliced(source, bytesOf(words.subarray(0, used)));
    sum.update(words, 0, used);
    for (let j = 0; j < n; j++) if ((masks[j]! & ~all) !== 0) throw corrupt(`snapshot mask of ref ${minLive + from + j} names tables the plan lacks`);
    for (let j = n; j < (used * 4) / width; j++) if (masks[j] !== 0) throw corrupt('snapshot has stray mask bits');
    for (let j = 0; j < n; ) {
      const ref = minLive + from + j;
      const m = Math.min(n - j, REF_CHUNK - (ref % REF_CHUNK));
      put(ref, masks.subarray(j, j + m));
      j += m;
    }
    from += n;
  }
}
