/**
 * The snapshot file: the whole decider state (index + page store) plus the
 * changelog offsets it includes, so start-up = load the file, then replay
 * the changelog from those offsets.
 *
 * Layout, version 2 (little-endian):
 *   u32 magic 'DDSN' | u32 version | u32 header length | u32 CRC-32 of the header
 *   | header JSON (UTF-8)
 *   | index part  | u32 CRC-32 of the index part
 *   | store part  | u32 CRC-32 of the store part
 * The header carries the part lengths, the table plan, k and the offsets; it
 * is validated field by field. Every byte of the file is under a CRC-32 (one
 * flipped byte is always caught) and the length is exact, so a truncated or
 * corrupted file is SNAPSHOT_INVALID, never accepted and never another error.
 *
 * Both parts stream through a file handle in chunks of a few MiB, the CRC
 * computed on the way: no buffer ever holds a whole part, so states past
 * Node's 2-4 GiB buffer limit work. The file is written to a temporary name,
 * fsynced and renamed (and the directory fsynced), so a crash leaves the
 * previous snapshot intact. One file per shard: writeSnapshotFile /
 * readSnapshotFile take a path; writeSnapshot / readSnapshot a directory.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import { DedupError } from '../errors.js';
import { FingerprintIndex, STREAM_CHUNK_BYTES, validatePlan, type ByteSource, type TablePlan } from '../index/index.js';
import { PageStore } from '../dedup/page-store.js';
import type { PageTier } from '../dedup/blob-store.js';

const MAGIC = 0x4e534444; // 'DDSN'
const VERSION = 2;
const PREFIX_BYTES = 16;
const MAX_HEADER_BYTES = 16 << 20;
export const SNAPSHOT_FILE = 'dedup-state.snapshot';

export interface SnapshotHeader {
  createdAt: string;
  /** The Kafka cluster the offsets belong to: a snapshot is worthless against another one. */
  clusterId: string;
  changelogTopic: string;
  /** Next changelog offset per partition that this snapshot does NOT include (decimal strings). */
  offsets: Record<string, string>;
  k: number;
  plan: TablePlan;
  indexBytes: number;
  storeBytes: number;
  pages: number;
  /** The fingerprint definition of the fingerprints held (src/fingerprint/fingerprint-version.ts). */
  fingerprintVersion?: string;
}

export interface LoadedSnapshot {
  header: SnapshotHeader;
  index: FingerprintIndex;
  store: PageStore;
}

export interface SnapshotStreamOptions {
  /** Largest piece written or read at once. */
  chunkBytes?: number;
  /** Makes the (empty) tier the page store loads its records, ids and sketches into; in memory if absent. */
  pageTier?: () => PageTier;
}

function invalid(message: string, cause?: unknown): DedupError {
  return new DedupError('SNAPSHOT_INVALID', `snapshot: ${message}`, cause === undefined ? {} : { cause });
}

const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;

function isCount(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

/** Checks every header field; returns it typed, or throws SNAPSHOT_INVALID naming the first bad field. */
export function validateSnapshotHeader(value: unknown): SnapshotHeader {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('header is not an object');
  const h = value as Record<string, unknown>;
  for (const field of ['createdAt', 'clusterId', 'changelogTopic'] as const) {
    if (typeof h[field] !== 'string') throw invalid(`header.${field} must be a string`);
  }
  if (!Number.isFinite(Date.parse(h.createdAt as string))) throw invalid('header.createdAt is not a date');
  const offsets = h.offsets;
  if (offsets === null || typeof offsets !== 'object' || Array.isArray(offsets)) throw invalid('header.offsets must be an object');
  for (const [partition, offset] of Object.entries(offsets)) {
    if (!DECIMAL.test(partition)) throw invalid(`header.offsets has a bad partition ${JSON.stringify(partition.slice(0, 40))}`);
    if (typeof offset !== 'string' || !DECIMAL.test(offset)) throw invalid(`header.offsets[${partition}] must be a decimal string, got ${JSON.stringify(offset)?.slice(0, 40)}`);
  }
  const plan = h.plan as TablePlan;
  try {
    if (plan === null || typeof plan !== 'object' || !Array.isArray(plan.tables) || !plan.tables.every((t) => t !== null && typeof t === 'object')) {
      throw invalid('header.plan is not a table plan');
    }
    validatePlan(plan);
  } catch (error) {
    throw invalid(`header.plan is not a valid table plan: ${(error as Error).message}`, error);
  }
  if (!(typeof h.k === 'number' && Number.isInteger(h.k) && h.k >= 0 && h.k <= plan.k)) throw invalid(`header.k must be an integer in 0..${plan.k}`);
  if (h.fingerprintVersion !== undefined && typeof h.fingerprintVersion !== 'string') throw invalid('header.fingerprintVersion must be a string');
  for (const field of ['indexBytes', 'storeBytes', 'pages'] as const) {
    if (!isCount(h[field])) throw invalid(`header.${field} must be a non-negative integer`);
  }
  return h as unknown as SnapshotHeader;
}

export async function writeSnapshot(dir: string, header: Omit<SnapshotHeader, 'indexBytes' | 'storeBytes'>, index: FingerprintIndex, store: PageStore): Promise<number> {
  await mkdir(dir, { recursive: true });
  return writeSnapshotFile(join(dir, SNAPSHOT_FILE), header, index, store);
}

/**
 * Writes the snapshot at `path` atomically; returns its size in bytes. The
 * parts stream from the live state, so the index and the store must not
 * change until the returned promise settles (decide nothing meanwhile); a
 * change seen at the end fails the write (SNAPSHOT_INVALID) and leaves the
 * previous file in place.
 */
export async function writeSnapshotFile(
  path: string,
  header: Omit<SnapshotHeader, 'indexBytes' | 'storeBytes'>,
  index: FingerprintIndex,
  store: PageStore,
  options: SnapshotStreamOptions = {},
): Promise<number> {
  const chunkBytes = options.chunkBytes ?? STREAM_CHUNK_BYTES;
  const full = validateSnapshotHeader({ ...header, indexBytes: index.snapshotByteLength, storeBytes: store.snapshotByteLength });
  const json = Buffer.from(JSON.stringify(full));
  const prefix = Buffer.alloc(PREFIX_BYTES);
  prefix.writeUInt32LE(MAGIC, 0);
  prefix.writeUInt32LE(VERSION, 4);
  prefix.writeUInt32LE(json.byteLength, 8);
  prefix.writeUInt32LE(crc32(json), 12);
  const temporary = `${path}.tmp-${process.pid}`;
  const stateMark = (): string => `${index.nextReference}:${index.size}:${store.size}:${store.nextSequence}`;
  const before = stateMark();
  const handle = await open(temporary, 'w');
  let written = 0;
  try {
    const write = async (bytes: Uint8Array): Promise<void> => {
      for (let at = 0; at < bytes.byteLength; ) {
        const { bytesWritten } = await handle.write(bytes, at, Math.min(bytes.byteLength - at, chunkBytes));
        at += bytesWritten;
      }
      written += bytes.byteLength;
    };
    const writePart = async (chunks: Iterable<Uint8Array>, expected: number, what: string): Promise<void> => {
      let crc = 0;
      let length = 0;
      for (const chunk of chunks) {
        crc = crc32(chunk, crc);
        length += chunk.byteLength;
        await write(chunk);
      }
      if (length !== expected) throw new DedupError('SNAPSHOT_INVALID', `snapshot: the ${what} part came out at ${length} bytes, not ${expected}`);
      const trailer = Buffer.alloc(4);
      trailer.writeUInt32LE(crc, 0);
      await write(trailer);
    };
    await write(prefix);
    await write(json);
    await writePart(index.snapshotChunks(chunkBytes), full.indexBytes, 'index');
    await writePart(store.snapshotChunks(chunkBytes), full.storeBytes, 'page store');
    if (stateMark() !== before) throw new DedupError('SNAPSHOT_INVALID', 'snapshot: the state changed while it was written');
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  await rename(temporary, path);
  await syncDirectory(dirname(path));
  return written;
}

/** Makes the rename durable. Some platforms cannot open a directory for fsync; the rename is still atomic there. */
async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
  } catch {
    return;
  }
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

/** Returns null when there is no snapshot; throws SNAPSHOT_INVALID when there is a bad one. */
export async function readSnapshot(dir: string, options: SnapshotStreamOptions = {}): Promise<LoadedSnapshot | null> {
  return readSnapshotFile(join(dir, SNAPSHOT_FILE), options);
}

/**
 * Reads the snapshot at `path`: null when there is none, SNAPSHOT_INVALID when
 * it is bad in any way. Reads are synchronous, in chunks, straight into the
 * state's own arrays (start-up work, before the consumer joins its group).
 */
export async function readSnapshotFile(path: string, options: SnapshotStreamOptions = {}): Promise<LoadedSnapshot | null> {
  const chunkBytes = options.chunkBytes ?? STREAM_CHUNK_BYTES;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw invalid(`cannot read ${path}: ${(error as Error).message}`, error);
  }
  try {
    return readOpened(fd, chunkBytes, options.pageTier);
  } catch (error) {
    if (error instanceof DedupError && error.code === 'SNAPSHOT_INVALID') throw error;
    throw invalid(`cannot read ${path}: ${(error as Error).message}`, error);
  } finally {
    closeSync(fd);
  }
}

function readOpened(fd: number, chunkBytes: number, pageTier?: () => PageTier): LoadedSnapshot {
  const size = fstatSync(fd).size;
  const file = new FileSource(fd, 0, size, chunkBytes);
  if (size < PREFIX_BYTES) throw invalid('file is too short');
  const prefix = Buffer.alloc(PREFIX_BYTES);
  file.readInto(prefix);
  if (prefix.readUInt32LE(0) !== MAGIC) throw invalid('bad magic number');
  const version = prefix.readUInt32LE(4);
  if (version !== VERSION) throw invalid(`unknown version ${version}`);
  const headerLength = prefix.readUInt32LE(8);
  if (headerLength > MAX_HEADER_BYTES || PREFIX_BYTES + headerLength > size) throw invalid('truncated header');
  const json = Buffer.alloc(headerLength);
  file.readInto(json);
  if (crc32(json) !== prefix.readUInt32LE(12)) throw invalid('header checksum mismatch');
  let parsed: unknown;
  try {
    parsed = JSON.parse(json.toString('utf8'));
  } catch (error) {
    throw invalid('header is not JSON', error);
  }
  const header = validateSnapshotHeader(parsed);
  const indexAt = PREFIX_BYTES + headerLength;
  const storeAt = indexAt + header.indexBytes + 4;
  if (storeAt + header.storeBytes + 4 !== size) throw invalid(`file is ${size} bytes, its header says ${storeAt + header.storeBytes + 4}`);
  const index = readPart(fd, indexAt, header.indexBytes, chunkBytes, 'index', (source) => FingerprintIndex.readFrom(source));
  const store = readPart(fd, storeAt, header.storeBytes, chunkBytes, 'page store', (source) => PageStore.readFrom(source, pageTier?.()));
  if (planKey(index.plan) !== planKey(header.plan)) throw invalid('the index part holds another table plan than the header');
  return { header, index, store };
}

function planKey(plan: TablePlan): string {
  return JSON.stringify([plan.k, plan.blockWidths, plan.tables.map((t) => [t.blocks, t.prefixBits])]);
}

function readPart<T>(fd: number, at: number, length: number, chunkBytes: number, what: string, decode: (source: ByteSource) => T): T {
  const source = new FileSource(fd, at, length, chunkBytes);
  let value: T;
  try {
    value = decode(source);
  } catch (error) {
    if (error instanceof DedupError && error.code === 'SNAPSHOT_INVALID') throw error;
    throw invalid(`the ${what} part does not decode: ${(error as Error).message}`, error);
  }
  if (source.remaining !== 0) throw invalid(`the ${what} part has trailing bytes`);
  const trailer = Buffer.alloc(4);
  new FileSource(fd, at + length, 4, chunkBytes).readInto(trailer);
  if (trailer.readUInt32LE(0) !== source.crc) throw invalid(`${what} part checksum mismatch`);
  return value;
}

/** One byte range of the file, read in order through a small read-ahead buffer, its CRC-32 kept as it goes. */
class FileSource implements ByteSource {
  crc = 0;
  private position: number;
  private readonly end: number;
  private readonly ahead: Buffer;
  private aheadAt = 0;
  private aheadEnd = 0;
  constructor(private readonly fd: number, start: number, length: number, private readonly chunkBytes: number) {
    this.position = start;
    this.end = start + length;
    this.ahead = Buffer.allocUnsafe(Math.min(length, chunkBytes, 64 << 10));
  }

  get remaining(): number {
    return this.end - this.position;
  }

  readInto(target: Uint8Array): void {
    const length = target.byteLength;
    if (length > this.remaining) throw invalid('part is truncated');
    let at = 0;
    const buffered = this.aheadEnd - this.aheadAt;
    if (buffered > 0) {
      const n = Math.min(length, buffered);
      target.set(this.ahead.subarray(this.aheadAt, this.aheadAt + n));
      this.aheadAt += n;
      this.position += n;
      at = n;
    }
    const rest = length - at;
    if (rest > 0 && rest < this.ahead.length) {
      // Small pulls (a part's head words) come from one read ahead.
      const want = Math.min(this.ahead.length, this.end - this.position);
      this.readFully(this.ahead, 0, want, this.position);
      target.set(this.ahead.subarray(0, rest), at);
      this.aheadAt = rest;
      this.aheadEnd = want;
      this.position += rest;
    } else if (rest > 0) {
      this.readFully(target, at, rest, this.position);
      this.position += rest;
    }
    this.crc = crc32(target, this.crc);
  }

  private readFully(target: Uint8Array, offset: number, length: number, filePosition: number): void {
    for (let at = offset; at < offset + length; ) {
      const n = readSync(this.fd, target, at, Math.min(offset + length - at, this.chunkBytes), filePosition);
      if (n === 0) throw invalid('file is truncated');
      at += n;
      filePosition += n;
    }
  }
}
