/**
 * The snapshot file: round trips through a directory or a path, in chunks
 * smaller than its parts; and as properties over a real small snapshot, every
 * truncation and every single-byte corruption is SNAPSHOT_INVALID, never
 * accepted and never another error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { DedupError } from '../../../src/errors.js';
import { Decider } from '../../../src/dedup/decider.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { readSnapshot, readSnapshotFile, SNAPSHOT_FILE, writeSnapshot, writeSnapshotFile } from '../../../src/storage/state-snapshot.js';
import { damageLog, withHeader } from '../../support/snapshot-files.js';
import { mulberry32Uint32 } from '../../support/rng.js';

const seeded = mulberry32Uint32;

const plan = planFromBlocks(3, [16, 16, 16, 16]);

function decided(pages: number, seed: number): Decider {
  const d = new Decider({ index: FingerprintIndex.create({ plan }), k: 3 });
  const rand = seeded(seed);
  for (let i = 0; i < pages; i++) {
    const near = i > 0 && rand() % 4 === 0;
    const hi = near ? 0x1234 : rand();
    const lo = near ? (0x5678 ^ (1 << (rand() % 32))) >>> 0 : rand();
    d.decide({ id: `https://example.org/page/${i}?q=${rand() % 1000}`, hi, lo, short: rand() % 10 === 0, fetchedAt: 1_700_000_000_000 + i * 1000 });
  }
  return d;
}

const header = (d: Decider) => ({
  createdAt: '2026-01-02T03:04:05.000Z',
  clusterId: 'cluster-a',
  changelogTopic: 'simhash.fingerprints',
  offsets: { '0': '42', '1': '0', '17': '123456789012' },
  k: 3,
  plan,
  pages: d.store.size,
});

function isSnapshotInvalid(error: unknown): boolean {
  return error instanceof DedupError && error.code === 'SNAPSHOT_INVALID';
}

function sameState(a: Decider, b: { index: FingerprintIndex; store: Decider['store'] }, pages: number): void {
  assert.equal(b.index.size, a.index.size);
  assert.equal(b.store.size, a.store.size);
  assert.equal(b.store.nextSequence, a.store.nextSequence);
  const fa = new Uint32Array(2);
  const fb = new Uint32Array(2);
  for (let ref = 0; ref < pages; ref++) {
    assert.equal(b.index.fingerprintOf(ref, fb), a.index.fingerprintOf(ref, fa));
    assert.deepEqual(fb, fa);
    if (!a.store.holds(ref)) continue;
    const id = a.store.idOf(ref);
    assert.equal(b.store.lookup(id), ref);
    assert.equal(b.store.duplicateOfId(ref), a.store.duplicateOfId(ref));
    assert.equal(b.store.sequenceOf(ref), a.store.sequenceOf(ref));
    assert.equal(b.store.fetchedAtOf(ref), a.store.fetchedAtOf(ref));
    assert.equal(b.index.nearest(fa[0]!, fa[1]!, 3), a.index.nearest(fa[0]!, fa[1]!, 3));
  }
}

test('snapshot round trip through a directory: same state, same answers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-'));
  try {
    const d = decided(2000, 1);
    const bytes = await writeSnapshot(dir, header(d), d.index, d.store);
    assert.equal(bytes, readFileSync(join(dir, SNAPSHOT_FILE)).length);
    const loaded = await readSnapshot(dir);
    assert.ok(loaded);
    assert.deepEqual(loaded.header.offsets, header(d).offsets);
    sameState(d, loaded, 2000);
    assert.equal(await readSnapshot(join(dir, 'missing')), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('snapshot parts larger than the chunk size stream through (path variant, many chunks, unaligned ref range)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-'));
  try {
    // 70,000 pages cross a 65,536-ref storage chunk; a cut at an odd ref leaves minLive unaligned.
    const d = new Decider({ index: FingerprintIndex.create({ plan }), k: 3, maxFingerprints: 70_000 - 12_345 });
    const rand = seeded(2);
    for (let i = 0; i < 70_000; i++) d.decide({ id: `p${i}`, hi: rand(), lo: rand(), short: false, fetchedAt: i * 1000 });
    d.evict(70_000 * 1000);
    for (let r = 20_000; r < 20_100; r++) d.index.remove(r);
    const path = join(dir, 'shard-3.snapshot');
    for (const chunkBytes of [1000, 4096 + 4]) {
      await writeSnapshotFile(path, header(d), d.index, d.store, { chunkBytes });
      assert.ok(d.index.snapshotByteLength > 100 * chunkBytes && d.store.snapshotByteLength > 100 * chunkBytes);
      const loaded = await readSnapshotFile(path, { chunkBytes: chunkBytes * 3 + 1 });
      assert.ok(loaded);
      sameState(d, loaded, 70_000);
    }
    const whole = await readSnapshotFile(path);
    assert.ok(whole);
    assert.equal(whole.index.size, d.index.size);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Reads bytes as a snapshot file: 'ok', 'invalid', or the unexpected error. */
async function verdictOn(dir: string, bytes: Uint8Array): Promise<'ok' | 'invalid' | unknown> {
  writeFileSync(join(dir, SNAPSHOT_FILE), bytes);
  try {
    await readSnapshot(dir);
    return 'ok';
  } catch (error) {
    return isSnapshotInvalid(error) ? 'invalid' : error;
  }
}

test('property: truncations and single-byte corruptions of a real snapshot (all of prefix, header and part borders, a seeded sample of the rest) are SNAPSHOT_INVALID', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-'));
  try {
    const d = decided(60, 3);
    await writeSnapshot(dir, header(d), d.index, d.store);
    const good = readFileSync(join(dir, SNAPSHOT_FILE));
    assert.equal(await verdictOn(dir, good), 'ok');
    const { accepted, other, record } = damageLog();
    // Every position in the prefix and header, around each part boundary and
    // the end, plus a seeded sample of the rest (hundreds of each).
    const headerEnd = 16 + good.readUInt32LE(8);
    const header_ = JSON.parse(good.subarray(16, headerEnd).toString('utf8')) as { indexBytes: number; storeBytes: number };
    const borders = [headerEnd, headerEnd + header_.indexBytes, headerEnd + header_.indexBytes + 4, good.length - 4, good.length];
    const rand = seeded(4);
    const positions = new Set<number>();
    for (let at = 0; at < headerEnd + 64; at++) positions.add(at);
    for (const b of borders) for (let at = b - 12; at < b + 12; at++) if (at >= 0 && at < good.length) positions.add(at);
    while (positions.size < headerEnd + 64 + 600) positions.add(rand() % good.length);
    for (const length of positions) record(`truncated to ${length}`, await verdictOn(dir, good.subarray(0, length)));
    record('one byte appended', await verdictOn(dir, Buffer.concat([good, Buffer.from([0])])));
    for (const at of positions) {
      const bad = Buffer.from(good);
      const mask = 1 + (rand() % 255);
      bad[at]! ^= mask;
      record(`byte ${at} ^ ${mask}`, await verdictOn(dir, bad));
    }
    assert.deepEqual(other, [], 'errors other than SNAPSHOT_INVALID');
    assert.deepEqual(accepted, [], 'corrupt snapshots accepted');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a header with bad fields is SNAPSHOT_INVALID even under a good checksum', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-'));
  try {
    const d = decided(30, 5);
    await writeSnapshot(dir, header(d), d.index, d.store);
    const good = readFileSync(join(dir, SNAPSHOT_FILE));
    assert.equal(await verdictOn(dir, withHeader(good, () => undefined)), 'ok');
    const edits: [string, (h: Record<string, unknown>) => void][] = [
      ['offset not decimal', (h) => (h.offsets = { '0': '12x' })],
      ['offset a number', (h) => (h.offsets = { '0': 12 })],
      ['offset negative', (h) => (h.offsets = { '0': '-1' })],
      ['offset fractional', (h) => (h.offsets = { '0': '1.5' })],
      ['partition not decimal', (h) => (h.offsets = { p: '1' })],
      ['offsets an array', (h) => (h.offsets = ['1'])],
      ['plan missing', (h) => delete h.plan],
      ['plan tables not objects', (h) => (h.plan = { k: 3, blockWidths: [16, 16, 16, 16], tables: [1, 2] })],
      ['plan does not cover k', (h) => (h.plan = { k: 3, blockWidths: [32, 32], tables: [{ blocks: [0], prefixBits: 32 }] })],
      ['plan differs from the index part', (h) => (h.plan = planFromBlocks(3, [13, 13, 13, 13, 12]))],
      ['k above the plan', (h) => (h.k = 4)],
      ['k a string', (h) => (h.k = '3')],
      ['createdAt not a date', (h) => (h.createdAt = 'yesterday')],
      ['clusterId missing', (h) => delete h.clusterId],
      ['indexBytes negative', (h) => (h.indexBytes = -4)],
      ['storeBytes fractional', (h) => (h.storeBytes = 1.5)],
      ['indexBytes off by 4', (h) => (h.indexBytes = (h.indexBytes as number) + 4)],
      ['header an array', (h) => Object.setPrototypeOf(h, Array.prototype)],
    ];
    for (const [label, edit] of edits) {
      const bytes = label === 'header an array' ? Buffer.from('') : withHeader(good, edit);
      if (label === 'header an array') {
        const json = Buffer.from('[1,2]');
        const prefix = Buffer.from(good.subarray(0, 16));
        prefix.writeUInt32LE(json.length, 8);
        prefix.writeUInt32LE(zlib.crc32(json), 12);
        assert.equal(await verdictOn(dir, Buffer.concat([prefix, json, good.subarray(16 + good.readUInt32LE(8))])), 'invalid', label);
        continue;
      }
      assert.equal(await verdictOn(dir, bytes), 'invalid', label);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the writer refuses a header it would not read back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-'));
  try {
    const d = decided(5, 6);
    await assert.rejects(writeSnapshot(dir, { ...header(d), offsets: { '0': 'NaN' } }, d.index, d.store), isSnapshotInvalid);
    assert.equal(await readSnapshot(dir), null, 'nothing written');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a state changed while its snapshot streams fails the write and keeps the previous file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'snap-'));
  try {
    const d = decided(3000, 10);
    const path = join(dir, 'shard.snapshot');
    await writeSnapshotFile(path, header(d), d.index, d.store);
    const before = readFileSync(path);
    const writing = writeSnapshotFile(path, header(d), d.index, d.store, { chunkBytes: 512 });
    d.decide({ id: 'during', hi: 1, lo: 2, short: false, fetchedAt: 0 });
    await assert.rejects(writing, isSnapshotInvalid);
    assert.deepEqual(readFileSync(path), before);
    assert.deepEqual(readdirSync(dir), ['shard.snapshot'], 'no temporary file left');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
