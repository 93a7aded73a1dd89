/**
 * Snapshot format, version 1: one buffer of little-endian uint32 words.
 *
 *   magic 'SHIX' (0x58494853), version, flags (bit 0: compressed),
 *   plan words: k, b, width[b], t, then per table: prefixBits, m, block[m],
 *   minLive, nextRef, count (= nextRef - minLive),
 *   fingerprints: hi, lo for refs minLive .. nextRef - 1,
 *   removed bits: ceil(count / 32) words, bit i set = ref minLive + i removed,
 *   checksum of every word before it.
 *
 * Tables are not stored: they are rebuilt (radix sort) on load, so a snapshot
 * cannot carry tables inconsistent with its fingerprints.
 */
import { DedupError } from '../errors.js';
import { validatePlan, type TablePlan } from './plan.js';

export const SNAPSHOT_MAGIC = 0x58494853;
export const SNAPSHOT_VERSION = 1;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function corrupt(message: string, cause?: unknown): DedupError {
  return new DedupError('SNAPSHOT_INVALID', message, cause === undefined ? {} : { cause });
}

export function checksum(words: Uint32Array, n: number): number {
  let a = 0x811c9dc5;
  let b = 0x27d4eb2f;
  for (let i = 0; i < n; i++) {
    const w = words[i]!;
    a = Math.imul(a ^ w, 0x9e3779b1);
    b = Math.imul(b + w, 0x85ebca77) ^ (b >>> 13);
  }
  a ^= a >>> 16;
  return (Math.imul(a, 0x7feb352d) ^ b) >>> 0;
}

function planWords(plan: TablePlan): number[] {
  const w = [plan.k, plan.blockWidths.length, ...plan.blockWidths, plan.tables.length];
  for (const t of plan.tables) w.push(t.prefixBits, t.blocks.length, ...t.blocks);
  return w;
}

export function encodeSnapshot(
  plan: TablePlan,
  compressed: boolean,
  minLive: number,
  nextRef: number,
  read: (ref: number, out: Uint32Array) => boolean,
): Uint8Array {
  if (!LITTLE_ENDIAN) throw new DedupError('SNAPSHOT_INVALID', 'snapshots need a little-endian platform');
  const head = [SNAPSHOT_MAGIC, SNAPSHOT_VERSION, compressed ? 1 : 0, ...planWords(plan)];
  const count = nextRef - minLive;
  const deadWords = (count + 31) >>> 5;
  const total = head.length + 3 + count * 2 + deadWords + 1;
  const words = new Uint32Array(total);
  words.set(head);
  let p = head.length;
  words[p++] = minLive;
  words[p++] = nextRef;
  words[p++] = count;
  const fpAt = p;
  const deadAt = fpAt + count * 2;
  const fp = new Uint32Array(2);
  for (let i = 0; i < count; i++) {
    const liveRef = read(minLive + i, fp);
    words[fpAt + i * 2] = fp[0]!;
    words[fpAt + i * 2 + 1] = fp[1]!;
    if (!liveRef) words[deadAt + (i >>> 5)]! |= 1 << (i & 31);
  }
  words[total - 1] = checksum(words, total - 1);
  return new Uint8Array(words.buffer);
}

export interface DecodedSnapshot {
  plan: TablePlan;
  compressed: boolean;
  minLive: number;
  nextRef: number;
  fps: Uint32Array;
  dead: Uint32Array;
}

export function decodeSnapshot(bytes: Uint8Array): DecodedSnapshot {
  if (!(bytes instanceof Uint8Array)) throw corrupt('snapshot must be a Uint8Array');
  if (!LITTLE_ENDIAN) throw corrupt('snapshots need a little-endian platform');
  if (bytes.byteLength < 16 || bytes.byteLength % 4 !== 0) throw corrupt(`snapshot length ${bytes.byteLength} is not a whole number of words`);
  const words =
    bytes.byteOffset % 4 === 0
      ? new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
      : new Uint32Array(Uint8Array.prototype.slice.call(bytes).buffer); // Buffer#slice is a view, not a copy
  if (words[0] !== SNAPSHOT_MAGIC) throw corrupt('not a fingerprint index snapshot (bad magic)');
  if (words[1] !== SNAPSHOT_VERSION) throw corrupt(`unknown snapshot version ${words[1]}`);
  const flags = words[2]!;
  if ((flags & ~1) !== 0) throw corrupt(`unknown snapshot flags ${flags}`);
  const n = words.length;
  let p = 3;
  const next = (): number => {
    if (p >= n - 1) throw corrupt('snapshot is truncated');
    return words[p++]!;
  };
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
  const deadWords = (count + 31) >>> 5;
  if (n !== p + count * 2 + deadWords + 1) throw corrupt(`snapshot is ${n < p + count * 2 + deadWords + 1 ? 'truncated' : 'too long'}`);
  if (checksum(words, n - 1) !== words[n - 1]) throw corrupt('snapshot checksum mismatch');
  const fps = words.subarray(p, p + count * 2);
  const dead = words.subarray(p + count * 2, p + count * 2 + deadWords);
  if (count % 32 !== 0 && deadWords > 0 && dead[deadWords - 1]! >>> (count % 32) !== 0) throw corrupt('snapshot has stray removed bits');
  return { plan, compressed: (flags & 1) === 1, minLive, nextRef, fps, dead };
}
