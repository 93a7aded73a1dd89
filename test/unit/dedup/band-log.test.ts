/**
 * A routed partition's band log against plain arrays: what it keeps per page
 * (fingerprint, sequence, short flag, sketch tail) over many chunks of refs,
 * with sequences that pass multiples of 2^32 (held as their low bits), and
 * the cut a probe "as of" a sequence makes; the same of a log loaded from
 * its snapshot.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sketchTail } from '../../../src/dedup/index-partition.js';
import { MINHASH_BINS, SKETCH_BINS, numbersAgreeAt, sketchSize } from '../../../src/fingerprint/feature-sketch.js';
import { mulberry32Uint32 } from '../../support/rng.js';
import { bufferSource, concatChunks } from '../../../src/index/index.js';
import { DedupError } from '../../../src/errors.js';
import { BandLog, RECORD_BYTES } from '../../../src/dedup/band-log.js';
import type { RunBlob } from '../../../src/dedup/blob-store.js';
import { filePageTier } from '../../../src/storage/file-blob-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Added { hi: number; lo: number; sequence: number; short: boolean; sketch: Uint8Array }

const scratch = mkdtempSync(join(tmpdir(), 'band-log-test-'));
const tier = filePageTier(scratch);
process.on('exit', () => {
  tier.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** The log as loaded from its snapshot, streamed in small chunks (its records in `blobs`). */
function reloaded(log: BandLog, blobs?: () => RunBlob): BandLog {
  const bytes = concatChunks(log.snapshotChunks(1000));
  assert.equal(bytes.byteLength, log.snapshotByteLength);
  return BandLog.readFrom(bufferSource(bytes), log.bands.bands, blobs);
}

test('property: the band log gives back every page as added, and cuts a probe at the first page decided at or after a sequence', () => {
  for (let trial = 0; trial < 4; trial++) {
    const rand = mulberry32Uint32(900 + trial);
    // Records in memory, then in a scratch file (as the service keeps them), alternately.
    const blobs = trial % 2 === 0 ? undefined : tier.runs;
    const log = new BandLog(14, blobs);
    const pages: { hi: number; lo: number; sequence: number; short: boolean; sketch: Uint8Array }[] = [];
    const keys = new Uint32Array(1);
    let sequence = trial * 2 ** 32 - 5_000;
    const n = 9_000 + (rand() % 6_000);
    for (let i = 0; i < n; i++) {
      // Gaps as a partition sees them (other partitions' pages between), some past a multiple of 2^32.
      sequence = Math.max(0, sequence) + 1 + (rand() % 50 === 0 ? rand() * 3 : rand() % 40);
      const sketch = new Uint8Array(SKETCH_BINS);
      for (let b = 0; b < SKETCH_BINS; b++) sketch[b] = rand() & 0xff;
      const page = { hi: rand(), lo: rand(), sequence, short: rand() % 5 === 0, sketch };
      keys[0] = rand() % 64;
      log.add(page.hi, page.lo, page.sequence, page.short, i % 2 === 0 ? sketchTail(sketch) : sketch, keys, 1);
      pages.push(page);
    }
    assert.ok(pages[pages.length - 1]!.sequence > (trial + 1) * 2 ** 32, 'the sequences pass 2^32');
    checkLog(log, pages, rand);
    checkLog(reloaded(log, blobs), pages, rand);
  }
});

test('a log whose first page is decided past 2^32 (two high words at ref 0) loads from its snapshot; a bad short flag or version 1 is SNAPSHOT_INVALID', () => {
  const rand = mulberry32Uint32(77);
  const log = new BandLog(7);
  const pages: Added[] = [];
  const keys = new Uint32Array(1);
  for (let i = 0; i < 5_000; i++) {
    const sketch = new Uint8Array(SKETCH_BINS);
    for (let b = 0; b < SKETCH_BINS; b++) sketch[b] = rand() & 0xff;
    const page = { hi: rand(), lo: rand(), sequence: 2 ** 32 + 10 + 3 * i, short: i % 3 === 0, sketch };
    keys[0] = rand() % 64;
    log.add(page.hi, page.lo, page.sequence, page.short, sketch, keys, 1);
    pages.push(page);
  }
  checkLog(reloaded(log), pages, rand);
  // The first page's short flag: after the head, the high words, the bands, the sequences, and its record's other fields.
  const bytes = concatChunks(log.snapshotChunks(1 << 20));
  const at = (5 + 2 * 2) * 4 + log.bands.snapshotByteLength + 5_000 * 4 + RECORD_BYTES - 1;
  assert.equal(bytes[at], 1);
  bytes[at] = 2;
  assert.throws(() => BandLog.readFrom(bufferSource(bytes), 7), (e: unknown) => e instanceof DedupError && e.code === 'SNAPSHOT_INVALID');
  // A band part of version 1 (per-chunk columns) is refused, not read as records.
  bytes[at] = 1;
  assert.equal(bytes[4], 2);
  bytes[4] = 1;
  assert.throws(() => BandLog.readFrom(bufferSource(bytes), 7), (e: unknown) => e instanceof DedupError && e.code === 'SNAPSHOT_INVALID');
});

function checkLog(log: BandLog, pages: Added[], rand: () => number): void {
  const n = pages.length;
  const keys = new Uint32Array(1);
  {
    assert.equal(log.size, n);
    for (let ref = 0; ref < n; ref++) {
      const p = pages[ref]!;
      // Loaded in a scattered order, so that a read is not always the one after the last.
      const record = log.load(ref % 2 === 0 ? ref : n - ref);
      const q = pages[record.ref]!;
      assert.equal(record.hi, q.hi);
      assert.equal(record.lo, q.lo);
      assert.equal(log.sequenceOf(ref), p.sequence, `sequence of ref ${ref}`);
      assert.equal(record.isShort, q.short);
      assert.equal(record.size, sketchSize(q.sketch, 0));
      const other = pages[(ref * 7919) % n]!.sketch;
      assert.equal(record.numbersAgree(other, sketchSize(other, 0)), numbersAgreeAt(q.sketch, 0, other));
      assert.equal(record.numbersAgree(q.sketch, sketchSize(q.sketch, 0)), true);
    }
    // A probe as of a sequence is the keys' probe over the refs below the first page decided at or after it.
    let cutShort = 0;
    for (let probe = 0; probe < 300; probe++) {
      keys[0] = rand() % 64;
      const before = pages[rand() % n]!.sequence + (rand() % 3) - 1;
      const cut = [...log.bands.found.subarray(0, log.candidates(keys, 1, before))];
      const firstLater = pages.findIndex((p) => p.sequence >= before);
      const bound = firstLater < 0 ? n : firstLater;
      assert.deepEqual(cut, [...log.bands.found.subarray(0, log.bands.candidatesOfKeys(keys, 1, null, bound))], `keys as of ${before}`);
      assert.ok(cut.every((ref) => pages[ref]!.sequence < before));
      if (bound < n) cutShort++;
    }
    assert.ok(cutShort > 200);
  }
}

test('the band log keeps 4 bytes a page in RAM (the sequences) and its records in a blob of the tier', () => {
  const n = 100_000;
  const sketch = new Uint8Array(SKETCH_BINS);
  const keys = [1];
  const inFile = new BandLog(14, tier.runs);
  const inMemory = new BandLog(14);
  let half = 0;
  for (let i = 0; i < n; i++) {
    if (i === n / 2) half = inFile.byteLength - inFile.bands.byteLength;
    sketch[MINHASH_BINS] = i & 0xff;
    inFile.add(i, i, i, false, sketch, keys, 1);
    inMemory.add(i, i, i, false, sketch, keys, 1);
  }
  // RAM grows by chunks of 4,096 sequences' low words (the per-page columns held 21 bytes a
  // page); the record cache stops growing at 16,384 records (344 KiB).
  const ram = inFile.byteLength - inFile.bands.byteLength;
  assert.ok((ram - half) / (n / 2) < 4.2, `${((ram - half) / (n / 2)).toFixed(2)} bytes a page in RAM`);
  assert.ok(ram < n * 4.2 + 16_384 * 21 + 1_000, `${ram} bytes of RAM`);
  assert.equal(inFile.bytesOnDisk - inFile.bands.bytesOnDisk, n * RECORD_BYTES);
  // In a memory tier the records are RAM, and byteLength says so.
  assert.ok(inMemory.byteLength - inMemory.bands.byteLength - inMemory.bands.bytesOnDisk >= n * (4 + RECORD_BYTES));
  for (const ref of [0, 4_095, 4_096, n - 1]) {
    const a = inFile.load(ref);
    // The tail's first bin (bytes 8.. of a record) as added.
    assert.deepEqual([a.hi, a.lo, a.size, a.isShort, a.bytes[a.at + 8]], [ref, ref, sketchSize(sketch, 0), false, ref & 0xff]);
  }
  assert.throws(() => inFile.load(n), RangeError);
  inFile.dispose();
});
