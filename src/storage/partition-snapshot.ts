/**
 * The snapshot file of one routed index partition (src/dedup/index-partition.ts;
 * docs/architecture.md, "Sharded mode, routed by table prefix"): its state
 * and the log positions it includes, so that a partition taken on loads the
 * file, then reads dedup.order from `orderFrom` and its dedup.index partition
 * from `indexOffset`, instead of both logs from their start. `orderFrom` is at
 * or before `orderNext`: the first order record of a chunk whose verdicts
 * were not committed when the file was written (its owner may still wait for
 * a reply, which the partition answers again), with the holder's state as of
 * it (`pagesBefore`, `spanEnd`: src/dedup/order-resume.ts), so that the
 * holder need not read the order log from its start to rebuild them.
 *
 * Layout, version 2 (little-endian; the frame is snapshot-parts.ts's: magic,
 * version, header under a CRC-32, every part under its own, atomic write,
 * streaming in chunks of a few MiB):
 *   u32 magic 'DDPS' | u32 version | u32 header length | u32 CRC-32 of the header
 *   | header JSON (PartitionSnapshotHeader)
 *   | index part  | CRC-32   the index with its table masks (src/index/snapshot.ts, flag bit 1)
 *   | store part  | CRC-32   the page store (src/dedup/page-store-codec.ts)
 *   | bands part  | CRC-32   the band log, its records and its keys' runs (src/dedup/band-log.ts); empty without bands
 *
 * Version 1 held the band log's records as columns from RAM; such a file is
 * refused as SNAPSHOT_INVALID (unknown version), and the partition replays
 * its logs as it does without a file. A version 2 file written before the
 * resume point (no `orderFrom`, `pagesBefore`, `spanEnd`: the three come
 * together or not at all) still loads: the holder then reads the order log
 * from its start for that takeover, as it did when such files were written.
 *
 * Everything is copied as held but the index's tables (rebuilt by a radix
 * sort per table, as single mode's are) and the band runs' RAM part (rebuilt
 * from their entries as they are copied into the tier's blobs): nothing is
 * replayed. This module checks structure, types, CRCs and that the parts
 * agree with the header and each other; whether the file is one this
 * partition may use (cluster, topics, plan, k, second stage, fingerprint
 * version, partition counts) the caller decides from the header.
 */
import { STREAM_CHUNK_BYTES, FingerprintIndex, type TablePlan } from '../index/index.js';
import { PageStore } from '../dedup/page-store.js';
import { BandLog } from '../dedup/band-log.js';
import { memoryPageTier, type PageTier } from '../dedup/blob-store.js';
import { IndexPartition } from '../dedup/index-partition.js';
import type { SecondStage } from '../dedup/decider.js';
import type { IndexRouting } from '../dedup/routing.js';
import { SKETCH_BINS } from '../fingerprint/feature-sketch.js';
import type { OrderPoint } from '../dedup/order-resume.js';
import { checkPlanField, DECIMAL, invalid, isCount, planKey, readSnapshotParts, writeSnapshotParts } from './snapshot-parts.js';

const MAGIC = 0x53504444; // 'DDPS'
const VERSION = 2;
export const PARTITION_SNAPSHOT_SUFFIX = '.snapshot';

export interface PartitionSnapshotHeader {
  createdAt: string;
  clusterId: string;
  indexTopic: string;
  orderTopic: string;
  /** This partition, and the index topic's partition count (routing depends on it). */
  partition: number;
  indexPartitions: number;
  k: number;
  plan: TablePlan;
  /** The second stage the state was built with (null: none); must equal to be loaded. */
  secondStage: SecondStage | null;
  fingerprintVersion: string;
  /** Next dedup.order offset the partition applies; every order record before it is in the state. */
  orderNext: number;
  /**
   * The order offset a restore reads dedup.order from (at or before orderNext), and the holder's
   * state as of it: the pages ordered before it, and per input partition (decimal) the end of its
   * last applied chunk (decimal string). Absent in files written before them.
   */
  orderFrom?: number;
  pagesBefore?: number;
  spanEnd?: Record<string, string>;
  /** dedup.index offset (of this partition) from which a restore reads the log again, decimal string. */
  indexOffset: string;
  /** Filled in by the writer: the partition's position (IndexPartition.position). */
  position: number;
  /** Filled in by the writer: fingerprints in the index (table entries' pages) and pages in the band log. */
  pages: number;
  bandPages: number;
  /** Filled in by the writer: the parts' lengths in bytes (bandsBytes 0 without bands). */
  indexBytes: number;
  storeBytes: number;
  bandsBytes: number;
}

/** The fields the writer fills in. */
export type ComputedPartitionFields = 'position' | 'pages' | 'bandPages' | 'indexBytes' | 'storeBytes' | 'bandsBytes';

export interface PartitionSnapshotMake {
  plan: TablePlan;
  k: number;
  secondStage: SecondStage | null;
  routing: IndexRouting | null;
  /**
   * Where the loaded page store and band runs go: a new, empty tier (the holder's scratch files),
   * which the returned partition then owns as one it was made with; in memory when absent. After
   * a SNAPSHOT_INVALID it holds what was loaded so far: close it and make a new one.
   */
  tier?: PageTier;
  chunkBytes?: number;
}

function isSecondStage(x: unknown): x is SecondStage {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return false;
  const s = x as Record<string, unknown>;
  const known = new Set(['radius', 'minSimilarity', 'bands']);
  return (
    Object.keys(s).every((key) => known.has(key)) &&
    isCount(s.radius) &&
    typeof s.minSimilarity === 'number' &&
    Number.isFinite(s.minSimilarity) &&
    (s.bands === undefined || isCount(s.bands))
  );
}

/** The resume point's fields: all three or none; orderFrom not past orderNext; spanEnd's keys partitions and values offsets, in decimal. */
function checkOrderResume(h: Record<string, unknown>): void {
  const present = ['orderFrom', 'pagesBefore', 'spanEnd'].filter((field) => h[field] !== undefined);
  if (present.length === 0) return;
  if (present.length !== 3) throw invalid(`header.orderFrom, header.pagesBefore and header.spanEnd come together, got ${present.join(', ')}`);
  for (const field of ['orderFrom', 'pagesBefore'] as const) {
    if (!isCount(h[field])) throw invalid(`header.${field} must be a non-negative integer`);
  }
  if ((h.orderFrom as number) > (h.orderNext as number)) throw invalid('header.orderFrom must not be past header.orderNext');
  const spanEnd = h.spanEnd;
  if (spanEnd === null || typeof spanEnd !== 'object' || Array.isArray(spanEnd)) throw invalid('header.spanEnd must be an object');
  for (const [partition, end] of Object.entries(spanEnd)) {
    if (!DECIMAL.test(partition) || !isCount(Number(partition))) throw invalid(`header.spanEnd has a key that is not a partition: ${JSON.stringify(partition).slice(0, 40)}`);
    if (typeof end !== 'string' || !DECIMAL.test(end)) throw invalid(`header.spanEnd.${partition} must be a decimal string, got ${JSON.stringify(end)?.slice(0, 40)}`);
  }
}

/** The header's resume point in dedup.order, or null for a file written without one. */
export function orderPointOf(header: PartitionSnapshotHeader): OrderPoint | null {
  if (header.orderFrom === undefined || header.pagesBefore === undefined || header.spanEnd === undefined) return null;
  return { offset: header.orderFrom, pagesBefore: header.pagesBefore, spanEnd: new Map(Object.entries(header.spanEnd).map(([p, end]) => [Number(p), BigInt(end)])) };
}

/** A resume point as the header holds it. */
export function orderPointFields(point: OrderPoint): { orderFrom: number; pagesBefore: number; spanEnd: Record<string, string> } {
  return { orderFrom: point.offset, pagesBefore: point.pagesBefore, spanEnd: Object.fromEntries([...point.spanEnd].map(([p, end]) => [String(p), end.toString()])) };
}

/** Checks every header field; returns it typed, or throws SNAPSHOT_INVALID naming the first bad field. */
export function validatePartitionSnapshotHeader(value: unknown): PartitionSnapshotHeader {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid('header is not an object');
  const h = value as Record<string, unknown>;
  for (const field of ['createdAt', 'clusterId', 'indexTopic', 'orderTopic', 'fingerprintVersion'] as const) {
    if (typeof h[field] !== 'string') throw invalid(`header.${field} must be a string`);
  }
  if (!Number.isFinite(Date.parse(h.createdAt as string))) throw invalid('header.createdAt is not a date');
  for (const field of ['partition', 'indexPartitions', 'orderNext', 'position', 'pages', 'bandPages', 'indexBytes', 'storeBytes', 'bandsBytes'] as const) {
    if (!isCount(h[field])) throw invalid(`header.${field} must be a non-negative integer`);
  }
  if (!((h.partition as number) < (h.indexPartitions as number))) throw invalid('header.partition must be below header.indexPartitions');
  checkOrderResume(h);
  if (typeof h.indexOffset !== 'string' || !DECIMAL.test(h.indexOffset)) throw invalid(`header.indexOffset must be a decimal string, got ${JSON.stringify(h.indexOffset)?.slice(0, 40)}`);
  const plan = checkPlanField(h.plan);
  if (!(typeof h.k === 'number' && Number.isInteger(h.k) && h.k >= 0 && h.k <= plan.k)) throw invalid(`header.k must be an integer in 0..${plan.k}`);
  if (h.secondStage !== null && !isSecondStage(h.secondStage)) throw invalid('header.secondStage must be null or a second stage (radius, minSimilarity, bands)');
  return h as unknown as PartitionSnapshotHeader;
}

/** The bands a second stage keeps (0: none). */
const bandsOf = (stage: SecondStage | null): number => stage?.bands ?? 0;

/**
 * Writes `state` with `header` to `path` atomically; returns the bytes written. The parts
 * stream from the live state: apply nothing to it until the promise settles (a change seen at
 * the end fails the write with SNAPSHOT_INVALID and leaves the previous file in place).
 */
export async function writePartitionSnapshot(
  path: string,
  header: Omit<PartitionSnapshotHeader, ComputedPartitionFields>,
  state: IndexPartition,
  options: { chunkBytes?: number } = {},
): Promise<number> {
  const { index, store, bands } = state;
  const full = validatePartitionSnapshotHeader({
    ...header,
    position: state.position,
    pages: index.size,
    bandPages: bands?.size ?? 0,
    indexBytes: index.snapshotByteLength,
    storeBytes: store.snapshotByteLength,
    bandsBytes: bands?.snapshotByteLength ?? 0,
  });
  if (planKey(full.plan) !== planKey(index.plan)) throw invalid('header.plan is not the plan of the partition written');
  if (bandsOf(full.secondStage) !== (bands?.bands.bands ?? 0)) throw invalid('header.secondStage does not have the bands of the partition written');
  return writeSnapshotParts(
    path,
    MAGIC,
    VERSION,
    full,
    [
      { what: 'index', bytes: full.indexBytes, chunks: (n) => index.snapshotChunks(n) },
      { what: 'page store', bytes: full.storeBytes, chunks: (n) => store.snapshotChunks(n) },
      { what: 'bands', bytes: full.bandsBytes, chunks: (n) => bands?.snapshotChunks(n) ?? [] },
    ],
    options.chunkBytes ?? STREAM_CHUNK_BYTES,
    () => `${state.position}:${index.nextReference}:${index.size}:${store.size}:${store.nextSequence}:${bands?.size ?? 0}`,
  );
}

/**
 * The snapshot at `path` as a new IndexPartition, or null when there is no file. Throws
 * SNAPSHOT_INVALID when it is damaged in any way, or was built with another plan, k or second
 * stage than `make` gives (the caller compares the header first; this only refuses to build a
 * partition its state does not fit).
 */
export async function readPartitionSnapshot(path: string, make: PartitionSnapshotMake): Promise<{ header: PartitionSnapshotHeader; state: IndexPartition } | null> {
  const tier = make.tier ?? memoryPageTier();
  if (tier.records.byteLength !== 0 || tier.names.byteLength !== 0) throw new RangeError('a partition snapshot loads into an empty tier');
  return readSnapshotParts(
    path,
    MAGIC,
    VERSION,
    make.chunkBytes ?? STREAM_CHUNK_BYTES,
    validatePartitionSnapshotHeader,
    (header) => [header.indexBytes, header.storeBytes, header.bandsBytes],
    (header, part) => {
      if (planKey(header.plan) !== planKey(make.plan) || header.k !== make.k || JSON.stringify(header.secondStage) !== JSON.stringify(make.secondStage)) {
        throw invalid('the state was built with another plan, k or second stage');
      }
      const bands = bandsOf(header.secondStage);
      if (bands === 0 && header.bandsBytes !== 0) throw invalid('a state without bands has a bands part');
      const index = part('index', (source) => FingerprintIndex.readFrom(source));
      if (!index.hasTableMasks || planKey(index.plan) !== planKey(header.plan)) throw invalid('the index part is not a partition index over the header\'s plan');
      const store = part('page store', (source) => PageStore.readFrom(source, tier));
      const log = part('bands', (source) => (bands === 0 ? null : BandLog.readFrom(source, bands, tier.runs)));
      try {
        if (store.sketchBytes !== (header.secondStage === null ? 0 : SKETCH_BINS)) throw invalid(`the page store keeps ${store.sketchBytes} sketch bytes a page`);
        if (index.size !== header.pages || store.size !== header.pages || (log?.size ?? 0) !== header.bandPages) throw invalid('the parts hold other counts than the header');
        // Every ref the index hands out is a page-store record (record()), and the positions follow both.
        if (store.nextSequence > header.position || (log !== null && log.size > 0 && log.sequenceOf(log.size - 1) >= header.position)) throw invalid('the state holds pages at or past its position');
        const state = IndexPartition.fromParts(header.partition, make.plan, make.k, make.secondStage, make.routing, { index, store, bands: log, position: header.position });
        return { header, state };
      } catch (error) {
        log?.dispose();
        throw error;
      }
    },
  );
}
