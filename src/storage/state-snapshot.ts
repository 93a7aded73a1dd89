/**
 * The snapshot file: the whole decider state (index + page store) plus the
 * changelog offsets it includes, so start-up = load the file, then replay
 * the changelog from those offsets.
 *
 * Layout, version 2 (little-endian; the frame is snapshot-parts.ts's):
 *   u32 magic 'DDSN' | u32 version | u32 header length | u32 CRC-32 of the header
 *   | header JSON (UTF-8)
 *   | index part  | u32 CRC-32 of the index part
 *   | store part  | u32 CRC-32 of the store part
 * The header carries the part lengths, the table plan, k and the offsets; it
 * is validated field by field. Every byte is under a CRC-32, the length is
 * exact, the parts stream in chunks of a few MiB, and the file is written
 * atomically (snapshot-parts.ts). One file per shard: writeSnapshotFile /
 * readSnapshotFile take a path; writeSnapshot / readSnapshot a directory.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FingerprintIndex, STREAM_CHUNK_BYTES, type TablePlan } from '../index/index.js';
import { PageStore } from '../dedup/page-store.js';
import type { PageTier } from '../dedup/blob-store.js';
import { checkPlanField, DECIMAL, invalid, isCount, planKey, readSnapshotParts, writeSnapshotParts } from './snapshot-parts.js';

const MAGIC = 0x4e534444; // 'DDSN'
const VERSION = 2;
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
  const plan = checkPlanField(h.plan);
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
  const full = validateSnapshotHeader({ ...header, indexBytes: index.snapshotByteLength, storeBytes: store.snapshotByteLength });
  return writeSnapshotParts(
    path,
    MAGIC,
    VERSION,
    full,
    [
      { what: 'index', bytes: full.indexBytes, chunks: (n) => index.snapshotChunks(n) },
      { what: 'page store', bytes: full.storeBytes, chunks: (n) => store.snapshotChunks(n) },
    ],
    options.chunkBytes ?? STREAM_CHUNK_BYTES,
    () => `${index.nextReference}:${index.size}:${store.size}:${store.nextSequence}`,
  );
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
  return readSnapshotParts(
    path,
    MAGIC,
    VERSION,
    options.chunkBytes ?? STREAM_CHUNK_BYTES,
    validateSnapshotHeader,
    (header) => [header.indexBytes, header.storeBytes],
    (header, part) => {
      const index = part('index', (source) => FingerprintIndex.readFrom(source));
      const store = part('page store', (source) => PageStore.readFrom(source, options.pageTier?.()));
      if (planKey(index.plan) !== planKey(header.plan)) throw invalid('the index part holds another table plan than the header');
      if (index.hasTableMasks) throw invalid('the index part holds table masks (an index partition\'s), which this state has not');
      return { header, index, store };
    },
  );
}
