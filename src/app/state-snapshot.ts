/**
 * The snapshot file: the whole decider state (index + page store) plus the
 * changelog offsets it includes, so start-up = load the file, then replay
 * the changelog from those offsets.
 *
 * Layout (little-endian):
 *   u32 magic 'DDSN' | u32 version | u32 header length | header JSON (UTF-8)
 *   | index bytes | page store bytes
 * The header carries the byte lengths, the table plan, k and the offsets. The
 * file is written to a temporary name, fsynced and renamed, so a crash leaves
 * the previous snapshot intact.
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { DedupError } from '../errors.js';
import { FingerprintIndex, type TablePlan } from '../index/index.js';
import { PageStore } from '../dedup/page-store.js';

const MAGIC = 0x4e534444; // 'DDSN'
const VERSION = 1;
export const SNAPSHOT_FILE = 'dedup-state.snapshot';

export interface SnapshotHeader {
  createdAt: string;
  /** The Kafka cluster the offsets belong to: a snapshot is worthless against another one. */
  clusterId: string;
  changelogTopic: string;
  /** Next changelog offset per partition that this snapshot does NOT include. */
  offsets: Record<string, string>;
  k: number;
  plan: TablePlan;
  indexBytes: number;
  storeBytes: number;
  pages: number;
}

export interface LoadedSnapshot {
  header: SnapshotHeader;
  index: FingerprintIndex;
  store: PageStore;
}

export async function writeSnapshot(dir: string, header: Omit<SnapshotHeader, 'indexBytes' | 'storeBytes'>, index: FingerprintIndex, store: PageStore): Promise<number> {
  await mkdir(dir, { recursive: true });
  const indexBytes = index.toBuffer();
  const storeBytes = store.toBuffer();
  const json = Buffer.from(JSON.stringify({ ...header, indexBytes: indexBytes.byteLength, storeBytes: storeBytes.byteLength }));
  const prefix = Buffer.alloc(12);
  prefix.writeUInt32LE(MAGIC, 0);
  prefix.writeUInt32LE(VERSION, 4);
  prefix.writeUInt32LE(json.byteLength, 8);
  const target = join(dir, SNAPSHOT_FILE);
  const temporary = `${target}.tmp-${process.pid}`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writev([prefix, json, indexBytes, storeBytes]);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, target);
  return prefix.byteLength + json.byteLength + indexBytes.byteLength + storeBytes.byteLength;
}

/** Returns null when there is no snapshot; throws SNAPSHOT_INVALID when there is a bad one. */
export async function readSnapshot(dir: string): Promise<LoadedSnapshot | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(join(dir, SNAPSHOT_FILE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new DedupError('SNAPSHOT_INVALID', `cannot read snapshot: ${(error as Error).message}`, { cause: error });
  }
  if (bytes.length < 12 || bytes.readUInt32LE(0) !== MAGIC) throw new DedupError('SNAPSHOT_INVALID', 'snapshot: bad magic number');
  const version = bytes.readUInt32LE(4);
  if (version !== VERSION) throw new DedupError('SNAPSHOT_INVALID', `snapshot: unknown version ${version}`);
  const headerLength = bytes.readUInt32LE(8);
  if (12 + headerLength > bytes.length) throw new DedupError('SNAPSHOT_INVALID', 'snapshot: truncated header');
  let header: SnapshotHeader;
  try {
    header = JSON.parse(bytes.subarray(12, 12 + headerLength).toString('utf8')) as SnapshotHeader;
  } catch (error) {
    throw new DedupError('SNAPSHOT_INVALID', 'snapshot: header is not JSON', { cause: error });
  }
  const start = 12 + headerLength;
  if (start + header.indexBytes + header.storeBytes !== bytes.length) throw new DedupError('SNAPSHOT_INVALID', 'snapshot: length does not match its header');
  const index = FingerprintIndex.fromBuffer(bytes.subarray(start, start + header.indexBytes));
  const store = PageStore.fromBuffer(bytes.subarray(start + header.indexBytes));
  return { header, index, store };
}
