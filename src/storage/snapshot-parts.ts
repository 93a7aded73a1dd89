/**
 * What the snapshot files (state-snapshot.ts: single mode's and a shard's;
 * partition-snapshot.ts: a routed index partition's) share:
 *
 *   u32 magic | u32 version | u32 header length | u32 CRC-32 of the header
 *   | header JSON (UTF-8)
 *   | part 1 | u32 CRC-32 of part 1 | ... | part n | u32 CRC-32 of part n
 *
 * The header carries every part's length and is validated field by field by
 * the file's own reader. Every byte is under a CRC-32 (one flipped byte is
 * always caught) and the length is exact, so a truncated or corrupted file is
 * SNAPSHOT_INVALID, never accepted and never another error.
 *
 * The parts stream through a file handle in chunks of a few MiB, the CRC
 * computed on the way: no buffer ever holds a whole part, so states past
 * Node's 2-4 GiB buffer limit work. A file is written to a temporary name,
 * fsynced and renamed (and the directory fsynced), so a crash leaves the
 * previous snapshot intact.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { DedupError } from '../errors.js';
import { validatePlan, type ByteSource, type TablePlan } from '../index/index.js';

const PREFIX_BYTES = 16;
const MAX_HEADER_BYTES = 16 << 20;

export function invalid(message: string, cause?: unknown): DedupError {
  return new DedupError('SNAPSHOT_INVALID', `snapshot: ${message}`, cause === undefined ? {} : { cause });
}

/** A Kafka offset or partition as a header holds it. */
export const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;

export function isCount(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

/** The header field `plan` checked as a table plan; throws SNAPSHOT_INVALID naming the fault. */
export function checkPlanField(plan: unknown): TablePlan {
  try {
    const p = plan as TablePlan;
    if (p === null || typeof p !== 'object' || !Array.isArray(p.tables) || !p.tables.every((t) => t !== null && typeof t === 'object')) {
      throw invalid('header.plan is not a table plan');
    }
    validatePlan(p);
    return p;
  } catch (error) {
    throw invalid(`header.plan is not a valid table plan: ${(error as Error).message}`, error);
  }
}

/** A table plan as one comparable string. */
export function planKey(plan: TablePlan): string {
  return JSON.stringify([plan.k, plan.blockWidths, plan.tables.map((t) => [t.blocks, t.prefixBits])]);
}

/** One part of a file being written: its bytes in chunks, and how many there must be. */
export interface PartWriter {
  readonly what: string;
  readonly bytes: number;
  chunks(chunkBytes: number): Iterable<Uint8Array>;
}

/**
 * Writes magic, version, `header` and the parts to `path` atomically; returns the bytes written.
 * The parts stream from the live state, so it must not change until the promise settles:
 * `stateMark` is compared before and after, and a change fails the write (SNAPSHOT_INVALID),
 * leaving the previous file in place.
 */
export async function writeSnapshotParts(path: string, magic: number, version: number, header: unknown, parts: readonly PartWriter[], chunkBytes: number, stateMark: () => string): Promise<number> {
  const json = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(PREFIX_BYTES);
  prefix.writeUInt32LE(magic, 0);
  prefix.writeUInt32LE(version, 4);
  prefix.writeUInt32LE(json.byteLength, 8);
  prefix.writeUInt32LE(crc32(json), 12);
  const temporary = `${path}.tmp-${process.pid}`;
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
    await write(prefix);
    await write(json);
    for (const part of parts) {
      let crc = 0;
      let length = 0;
      for (const chunk of part.chunks(chunkBytes)) {
        crc = crc32(chunk, crc);
        length += chunk.byteLength;
        await write(chunk);
      }
      if (length !== part.bytes) throw new DedupError('SNAPSHOT_INVALID', `snapshot: the ${part.what} part came out at ${length} bytes, not ${part.bytes}`);
      const trailer = Buffer.alloc(4);
      trailer.writeUInt32LE(crc, 0);
      await write(trailer);
    }
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

/** Decodes part i (in order) from a source holding exactly it; its CRC is checked after. */
export type PartReader = <T>(what: string, decode: (source: ByteSource) => T) => T;

/**
 * Reads the file at `path`: null when there is none; else its header (`validate` checks the
 * parsed JSON, `partBytes` gives the parts' lengths from it, which must add up to the file's)
 * and what `decode` makes of it, reading the parts in order. Anything bad is SNAPSHOT_INVALID.
 * Reads are synchronous, in chunks, straight into the state's own arrays (start-up work).
 */
export function readSnapshotParts<H, T>(
  path: string,
  magic: number,
  version: number,
  chunkBytes: number,
  validate: (parsed: unknown) => H,
  partBytes: (header: H) => number[],
  decode: (header: H, part: PartReader) => T,
): T | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw invalid(`cannot read ${path}: ${(error as Error).message}`, error);
  }
  try {
    const size = fstatSync(fd).size;
    const file = new FileSource(fd, 0, size, chunkBytes);
    if (size < PREFIX_BYTES) throw invalid('file is too short');
    const prefix = Buffer.alloc(PREFIX_BYTES);
    file.readInto(prefix);
    if (prefix.readUInt32LE(0) !== magic) throw invalid('bad magic number');
    const found = prefix.readUInt32LE(4);
    if (found !== version) throw invalid(`unknown version ${found}`);
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
    const header = validate(parsed);
    const lengths = partBytes(header);
    let end = PREFIX_BYTES + headerLength;
    for (const length of lengths) end += length + 4;
    if (end !== size) throw invalid(`file is ${size} bytes, its header says ${end}`);
    let at = PREFIX_BYTES + headerLength;
    let next = 0;
    const part: PartReader = (what, decodePart) => {
      const length = lengths[next++]!;
      const value = readPart(fd, at, length, chunkBytes, what, decodePart);
      at += length + 4;
      return value;
    };
    return decode(header, part);
  } catch (error) {
    if (error instanceof DedupError && error.code === 'SNAPSHOT_INVALID') throw error;
    throw invalid(`cannot read ${path}: ${(error as Error).message}`, error);
  } finally {
    closeSync(fd);
  }
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
