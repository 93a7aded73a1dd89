/**
 * A routed index partition's snapshot file (src/storage/partition-snapshot.ts).
 * As a property over seeded streams (near copies, short pages, clusters of
 * pages under one band key past the chain limit, enough band keys that each
 * partition's keys are in sorted runs and its buffer): a partition taken after
 * a random prefix of its entries, written and loaded (into a tier in memory
 * and into scratch files), then given the rest of the stream beside the
 * original, answers every apply, every more (the probe as of an earlier
 * sequence) and every confirm as the original does. And every truncation and
 * single-byte corruption of a real file is SNAPSHOT_INVALID, never accepted
 * and never another error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DedupError } from '../../../src/errors.js';
import { IndexPartition, sketchTail, type PartitionAnswer, type RoutedPage } from '../../../src/dedup/index-partition.js';
import { IndexRouting } from '../../../src/dedup/routing.js';
import { RECORD_BYTES, type BandLog } from '../../../src/dedup/band-log.js';
import { memoryPageTier, type PageTier } from '../../../src/dedup/blob-store.js';
import type { SecondStage } from '../../../src/dedup/decider.js';
import { planFromBlocks, type TablePlan } from '../../../src/index/index.js';
import { filePageTier } from '../../../src/storage/file-blob-store.js';
import { orderPointFields, orderPointOf, readPartitionSnapshot, writePartitionSnapshot, type PartitionSnapshotHeader } from '../../../src/storage/partition-snapshot.js';
import { damageLog, withHeader } from '../../support/snapshot-files.js';
import { mulberry32 } from '../../support/rng.js';
import { stream } from '../../support/routed-stream.js';

const scratch = mkdtempSync(join(tmpdir(), 'partition-snapshot-test-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

const PLAN = planFromBlocks(3, [16, 16, 16, 16]);
const STAGE: SecondStage = { radius: 3, minSimilarity: 0.85, bands: 14 };

interface Entry { page: RoutedPage; sequence: number }

/** The entries each of `partitions` partitions gets from a seeded stream, in the one order (ids sent again are answered elsewhere). */
function partitionLogs(seed: number, pages: number, partitions: number, plan: TablePlan, stage: SecondStage | null): { routing: IndexRouting; logs: Entry[][] } {
  const routing = new IndexRouting(plan, partitions, stage?.bands ?? 0);
  const logs: Entry[][] = Array.from({ length: partitions }, () => []);
  const seen = new Set<string>();
  let sequence = 0;
  for (const p of stream(seed, pages, 0.15)) {
    if (seen.has(p.id)) continue;
    seen.add(p.id);
    const seq = sequence++;
    for (const share of routing.route(p.hi, p.lo, stage === null ? null : p.sketch)) {
      const sketch = stage === null ? null : (share.tableMask & 1) !== 0 ? p.sketch : sketchTail(p.sketch);
      logs[share.partition]!.push({ page: { id: share.tableMask !== 0 ? p.id : null, hi: p.hi, lo: p.lo, short: p.short, fetchedAt: p.fetchedAt, sketch, tables: share.tableMask, bandKeys: share.bandKeys }, sequence: seq });
    }
  }
  return { routing, logs };
}

const header = (partition: number, partitions: number, plan: TablePlan, stage: SecondStage | null): Omit<PartitionSnapshotHeader, 'position' | 'pages' | 'bandPages' | 'indexBytes' | 'storeBytes' | 'bandsBytes'> => ({
  createdAt: '2026-01-02T03:04:05.000Z',
  clusterId: 'cluster-a',
  indexTopic: 'dedup.index',
  orderTopic: 'dedup.order',
  partition,
  indexPartitions: partitions,
  k: 3,
  plan,
  secondStage: stage,
  fingerprintVersion: 'v-test',
  orderNext: 1234,
  // The resume point in dedup.order: input partitions 0 and 3 have applied chunks before it.
  orderFrom: 1200,
  pagesBefore: 56789,
  spanEnd: { '0': '1000', '3': '98765432109876' },
  indexOffset: '98765432109',
});

const FIRST: PartitionAnswer = { id: null, distance: -1, sequence: -1, hi: 0, lo: 0 };

function isSnapshotInvalid(error: unknown): boolean {
  return error instanceof DedupError && error.code === 'SNAPSHOT_INVALID';
}

/** Both partitions answer alike: `more` from the start for `asked` entries (the probe as of their sequences), `confirm` of their sequences against a sketch. */
function sameAnswers(a: IndexPartition, b: IndexPartition, asked: Entry[], sketches: (Uint8Array | null)[], label: string): void {
  for (const { page, sequence } of asked) {
    assert.deepEqual(b.more(page, sequence, FIRST, 1000), a.more(page, sequence, FIRST, 1000), `${label}: more for sequence ${sequence}`);
    for (const sketch of sketches) {
      const fa = new Uint32Array(2);
      const fb = new Uint32Array(2);
      assert.equal(b.confirm(sequence, sketch, fb), a.confirm(sequence, sketch, fa), `${label}: confirm of ${sequence}`);
      assert.deepEqual(fb, fa);
    }
  }
}

test('property: a partition loaded from its snapshot after any prefix answers every apply, more and confirm of the rest as the original (tiers in memory and in files; band keys in the buffer and in runs)', async () => {
  const seen = { runs: 0, buffered: 0, unsettled: 0, confirmed: 0, snapshots: 0 };
  for (let seed = 1; seed <= 6; seed++) {
    const r = mulberry32(seed * 31);
    const partitions = 1 + (seed % 3);
    const { routing, logs } = partitionLogs(seed * 7919, 2500, partitions, PLAN, STAGE);
    for (let q = 0; q < partitions; q++) {
      const log = logs[q]!;
      const cut = Math.floor(log.length * (0.2 + 0.8 * r()));
      const files = seed % 2 === 0 ? filePageTier(join(scratch, `original-${seed}-${q}`)) : null;
      const original = new IndexPartition(q, PLAN, 3, STAGE, routing, files ?? memoryPageTier());
      for (let i = 0; i < cut; i++) original.apply(log[i]!.page, log[i]!.sequence);
      const path = join(scratch, `partition-${seed}-${q}.snapshot`);
      const bytes = await writePartitionSnapshot(path, header(q, partitions, PLAN, STAGE), original, { chunkBytes: seed % 2 === 0 ? 1000 : 4 << 20 });
      assert.equal(bytes, readFileSync(path).length);
      seen.snapshots++;
      const loadedFiles = seed % 2 === 1 ? filePageTier(join(scratch, `loaded-${seed}-${q}`)) : null;
      const got = await readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: STAGE, routing, tier: loadedFiles ?? memoryPageTier(), chunkBytes: 4096 + 4 });
      assert.ok(got);
      const loaded = got.state;
      assert.equal(got.header.position, original.position);
      assert.equal(got.header.orderNext, 1234);
      assert.equal(got.header.indexOffset, '98765432109');
      const point = orderPointOf(got.header)!;
      assert.deepEqual({ offset: point.offset, pagesBefore: point.pagesBefore, spanEnd: [...point.spanEnd] }, { offset: 1200, pagesBefore: 56789, spanEnd: [[0, 1000n], [3, 98765432109876n]] });
      assert.equal(loaded.position, original.position);
      assert.equal(loaded.size, original.size);
      // The band keys' layout is the one written: the same runs, on disk in the tier, and the same buffer.
      const [ob, lb] = [original.bands!.bands, loaded.bands!.bands];
      assert.equal(lb.runCount, ob.runCount);
      assert.equal(lb.bytesOnDisk, ob.bytesOnDisk);
      assert.equal(lb.entries, ob.entries);
      // RAM: the runs' and the buffer's as written (the original's probe scratch may have grown since).
      assert.ok(lb.byteLength <= ob.byteLength && lb.byteLength > ob.byteLength - 4096, `${lb.byteLength} B of RAM, ${ob.byteLength} before`);
      if (ob.runCount > 0) seen.runs++;
      if (ob.entries * 12 > ob.bytesOnDisk) seen.buffered++;
      assert.equal(loaded.bands!.bytesOnDisk, original.bands!.bytesOnDisk);
      for (let ref = 0; ref < original.bands!.size; ref += 7) {
        assert.equal(loaded.bands!.sequenceOf(ref), original.bands!.sequenceOf(ref), `band page ${ref}: sequence`);
        // A record as the loaded log reads it from its blob, byte for byte the original's.
        const record = (bands: BandLog): Uint8Array => {
          const r = bands.load(ref);
          return r.bytes.slice(r.at, r.at + RECORD_BYTES);
        };
        assert.deepEqual(record(loaded.bands!), record(original.bands!), `band page ${ref}: record`);
      }
      // The prefix, asked again, as of each entry's sequence.
      const sketches = (): (Uint8Array | null)[] => [log[Math.floor(r() * log.length)]!.page.sketch, null];
      const sample = (to: number, n: number): Entry[] => Array.from({ length: Math.min(n, to) }, () => log[Math.floor(r() * to)]!);
      sameAnswers(original, loaded, sample(cut, 60), sketches(), `seed ${seed}, partition ${q}, prefix`);
      // The rest of the stream, to both.
      for (let i = cut; i < log.length; i++) {
        const { page, sequence } = log[i]!;
        const a = original.apply(page, sequence);
        const b = loaded.apply(page, sequence);
        assert.deepEqual(b, a, `seed ${seed}, partition ${q}: apply of sequence ${sequence}`);
        seen.unsettled += a.unsettled.length;
        if (i % 25 === 0) sameAnswers(original, loaded, sample(i + 1, 3), sketches(), `seed ${seed}, partition ${q}, after ${i}`);
        // Round two asks a candidate's home (this partition when it holds it) with the page's sketch.
        for (const c of a.unsettled) {
          const id = original.confirm(c.sequence, page.sketch);
          assert.equal(loaded.confirm(c.sequence, page.sketch), id, `seed ${seed}, partition ${q}: confirm of candidate ${c.sequence}`);
          if (id !== null) seen.confirmed++;
        }
      }
      assert.equal(loaded.bands!.bands.runCount, original.bands!.bands.runCount);
      files?.close();
      loadedFiles?.close();
    }
  }
  assert.ok(seen.runs >= 4 && seen.buffered >= 4 && seen.unsettled > 200 && seen.confirmed > 10, JSON.stringify(seen));
});

test('a partition without a second stage (no bands part) round trips; a missing file is null; a tier in use is refused', async () => {
  const { routing, logs } = partitionLogs(5, 800, 2, PLAN, null);
  const original = new IndexPartition(1, PLAN, 3, null, routing);
  for (const { page, sequence } of logs[1]!.slice(0, 500)) original.apply(page, sequence);
  const path = join(scratch, 'no-stage.snapshot');
  await writePartitionSnapshot(path, header(1, 2, PLAN, null), original);
  const got = await readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: null, routing });
  assert.ok(got);
  assert.equal(got.header.bandsBytes, 0);
  assert.equal(got.state.bands, null);
  for (const { page, sequence } of logs[1]!.slice(500)) assert.deepEqual(got.state.apply(page, sequence), original.apply(page, sequence));
  assert.equal(await readPartitionSnapshot(join(scratch, 'missing.snapshot'), { plan: PLAN, k: 3, secondStage: null, routing }), null);
  const used = memoryPageTier();
  used.records.append(new Uint8Array(1));
  await assert.rejects(readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: null, routing, tier: used }), RangeError);
  // Made for another second stage or plan: refused, not built.
  await assert.rejects(readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: STAGE, routing }), isSnapshotInvalid);
  await assert.rejects(readPartitionSnapshot(path, { plan: planFromBlocks(3, [13, 13, 13, 13, 12]), k: 3, secondStage: null, routing }), isSnapshotInvalid);
});

/** A small partition with bands, its band keys in a run and in the buffer, written to `dir`. */
async function smallSnapshot(dir: string): Promise<{ path: string; routing: IndexRouting; good: Buffer }> {
  const { routing, logs } = partitionLogs(11, 500, 1, PLAN, STAGE);
  const state = new IndexPartition(0, PLAN, 3, STAGE, routing);
  for (const { page, sequence } of logs[0]!) state.apply(page, sequence);
  assert.ok(state.bands!.bands.runCount > 0 && state.bands!.bands.entries * 12 > state.bands!.bands.bytesOnDisk, 'band keys in a run and in the buffer');
  const path = join(dir, 'p.snapshot');
  await writePartitionSnapshot(path, header(0, 1, PLAN, STAGE), state);
  return { path, routing, good: readFileSync(path) };
}

test('a file of version 1 (the band log\'s records as RAM columns then) is SNAPSHOT_INVALID, not read as version 2', async () => {
  const dir = mkdtempSync(join(scratch, 'version-'));
  const { path, routing, good } = await smallSnapshot(dir);
  assert.equal(good.readUInt32LE(4), 2);
  const old = Buffer.from(good);
  old.writeUInt32LE(1, 4);
  writeFileSync(path, old);
  await assert.rejects(readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: STAGE, routing }), isSnapshotInvalid);
  writeFileSync(path, good);
  assert.ok(await readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: STAGE, routing }));
});

test('the resume point round trips through the header; a file written without one (before it existed) loads, and gives none', async () => {
  const dir = mkdtempSync(join(scratch, 'resume-'));
  const { path, routing, good } = await smallSnapshot(dir);
  const read = async (bytes: Buffer) => {
    writeFileSync(path, bytes);
    return (await readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: STAGE, routing }))!.header;
  };
  const point = { offset: 7, pagesBefore: 0, spanEnd: new Map<number, bigint>() };
  const none = await read(withHeader(good, (h) => Object.assign(h, orderPointFields(point))));
  assert.deepEqual(orderPointOf(none), point);
  // An older file of this version: its header has no resume point.
  const old = await read(withHeader(good, (h) => (delete h.orderFrom, delete h.pagesBefore, delete h.spanEnd)));
  assert.equal(old.orderNext, 1234);
  assert.equal(orderPointOf(old), null);
  // At orderNext: every chunk was committed when it was written.
  assert.equal(orderPointOf(await read(withHeader(good, (h) => (h.orderFrom = h.orderNext))))!.offset, 1234);
});

test('property: truncations and single-byte corruptions of a real partition snapshot (all of prefix, header and part borders, a seeded sample of the rest) are SNAPSHOT_INVALID', async () => {
  const dir = mkdtempSync(join(scratch, 'damage-'));
  const { path, routing, good } = await smallSnapshot(dir);
  const verdictOn = async (bytes: Uint8Array): Promise<unknown> => {
    writeFileSync(path, bytes);
    const tier = filePageTier(join(dir, 'tier'));
    try {
      await readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: STAGE, routing, tier });
      return 'ok';
    } catch (error) {
      return isSnapshotInvalid(error) ? 'invalid' : error;
    } finally {
      tier.close();
    }
  };
  assert.equal(await verdictOn(good), 'ok');
  const { accepted, other, record } = damageLog();
  const headerEnd = 16 + good.readUInt32LE(8);
  const h = JSON.parse(good.subarray(16, headerEnd).toString('utf8')) as PartitionSnapshotHeader;
  const storeAt = headerEnd + h.indexBytes + 4;
  const bandsAt = storeAt + h.storeBytes + 4;
  const borders = [headerEnd, storeAt - 4, storeAt, bandsAt - 4, bandsAt, good.length - 4, good.length];
  const rand = mulberry32(4);
  const positions = new Set<number>();
  for (let at = 0; at < headerEnd + 64; at++) positions.add(at);
  for (const b of borders) for (let at = b - 12; at < b + 12; at++) if (at >= 0 && at < good.length) positions.add(at);
  // Each part's inside: its head words and a sample of the rest.
  for (const [from, length] of [[headerEnd, h.indexBytes], [storeAt, h.storeBytes], [bandsAt, h.bandsBytes]] as const) {
    for (let at = from; at < from + 96; at++) positions.add(at);
    for (let i = 0; i < 100; i++) positions.add(from + Math.floor(rand() * length));
  }
  for (const length of positions) record(`truncated to ${length}`, await verdictOn(good.subarray(0, length)));
  record('one byte appended', await verdictOn(Buffer.concat([good, Buffer.from([0])])));
  for (const at of positions) {
    const bad = Buffer.from(good);
    const mask = 1 + Math.floor(rand() * 255);
    bad[at]! ^= mask;
    record(`byte ${at} ^ ${mask}`, await verdictOn(bad));
  }
  assert.deepEqual(other, [], 'errors other than SNAPSHOT_INVALID');
  assert.deepEqual(accepted, [], 'corrupt snapshots accepted');
  assert.deepEqual(readdirSync(join(dir, 'tier')), [], 'the scratch files are unlinked');
});

test('a header with bad fields, or counts its parts do not hold, is SNAPSHOT_INVALID even under a good checksum', async () => {
  const dir = mkdtempSync(join(scratch, 'header-'));
  const { path, routing, good } = await smallSnapshot(dir);
  const read = async (bytes: Buffer): Promise<string> => {
    writeFileSync(path, bytes);
    try {
      await readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: STAGE, routing });
      return 'ok';
    } catch (error) {
      return isSnapshotInvalid(error) ? 'invalid' : String(error);
    }
  };
  assert.equal(await read(withHeader(good, () => undefined)), 'ok');
  const edits: [string, (h: Record<string, unknown>) => void][] = [
    ['indexOffset a number', (h) => (h.indexOffset = 12)],
    ['orderFrom past orderNext', (h) => (h.orderFrom = (h.orderNext as number) + 1)],
    ['orderFrom fractional', (h) => (h.orderFrom = 1.5)],
    ['orderFrom without the others', (h) => (delete h.pagesBefore, delete h.spanEnd)],
    ['spanEnd missing', (h) => delete h.spanEnd],
    ['pagesBefore negative', (h) => (h.pagesBefore = -1)],
    ['pagesBefore a string', (h) => (h.pagesBefore = '5')],
    ['spanEnd an array', (h) => (h.spanEnd = ['1000'])],
    ['spanEnd null', (h) => (h.spanEnd = null)],
    ['spanEnd an end a number', (h) => (h.spanEnd = { '0': 1000 })],
    ['spanEnd an end negative', (h) => (h.spanEnd = { '0': '-1' })],
    ['spanEnd a key not a partition', (h) => (h.spanEnd = { p0: '1000' })],
    ['spanEnd a key with a leading zero', (h) => (h.spanEnd = { '03': '1000' })],
    ['indexOffset negative', (h) => (h.indexOffset = '-1')],
    ['orderNext fractional', (h) => (h.orderNext = 1.5)],
    ['partition past the count', (h) => (h.partition = h.indexPartitions)],
    ['indexPartitions a string', (h) => (h.indexPartitions = '1')],
    ['secondStage without radius', (h) => (h.secondStage = { minSimilarity: 0.85, bands: 14 })],
    ['secondStage with a stray field', (h) => (h.secondStage = { ...(h.secondStage as object), extra: 1 })],
    ['secondStage another', (h) => (h.secondStage = { radius: 3, minSimilarity: 0.8, bands: 14 })],
    ['plan missing', (h) => delete h.plan],
    ['plan another', (h) => (h.plan = planFromBlocks(3, [13, 13, 13, 13, 12]))],
    ['k above the plan', (h) => (h.k = 4)],
    ['fingerprintVersion missing', (h) => delete h.fingerprintVersion],
    ['createdAt not a date', (h) => (h.createdAt = 'yesterday')],
    ['position behind the pages held', (h) => (h.position = 0)],
    ['pages off by one', (h) => (h.pages = (h.pages as number) + 1)],
    ['bandPages off by one', (h) => (h.bandPages = (h.bandPages as number) - 1)],
    ['indexBytes off by 4', (h) => (h.indexBytes = (h.indexBytes as number) + 4)],
    ['bandsBytes off by 4, storeBytes too', (h) => ((h.bandsBytes = (h.bandsBytes as number) - 4), (h.storeBytes = (h.storeBytes as number) + 4))],
  ];
  for (const [label, edit] of edits) assert.equal(await read(withHeader(good, edit)), 'invalid', label);
});

test('the writer refuses a header it would not read back, and a state applied to while it streams; the previous file stays', async () => {
  const dir = mkdtempSync(join(scratch, 'writer-'));
  const { routing, logs } = partitionLogs(12, 600, 1, PLAN, STAGE);
  const state = new IndexPartition(0, PLAN, 3, STAGE, routing);
  const log = logs[0]!;
  for (const { page, sequence } of log.slice(0, 400)) state.apply(page, sequence);
  const path = join(dir, 'p.snapshot');
  await assert.rejects(writePartitionSnapshot(path, { ...header(0, 1, PLAN, STAGE), indexOffset: 'NaN' }, state), isSnapshotInvalid);
  await assert.rejects(writePartitionSnapshot(path, { ...header(0, 1, PLAN, STAGE), secondStage: { ...STAGE, bands: 7 } }, state), isSnapshotInvalid);
  assert.deepEqual(readdirSync(dir), [], 'nothing written');
  await writePartitionSnapshot(path, header(0, 1, PLAN, STAGE), state);
  const before = readFileSync(path);
  const writing = writePartitionSnapshot(path, header(0, 1, PLAN, STAGE), state, { chunkBytes: 512 });
  state.apply(log[400]!.page, log[400]!.sequence);
  await assert.rejects(writing, isSnapshotInvalid);
  assert.deepEqual(readFileSync(path), before);
  assert.deepEqual(readdirSync(dir), ['p.snapshot'], 'no temporary file left');
});
