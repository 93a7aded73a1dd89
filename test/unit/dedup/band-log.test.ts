/**
 * A routed partition's band log against plain arrays: what it keeps per page
 * (fingerprint, sequence, short flag, sketch tail) over many chunks of refs,
 * with sequences that pass multiples of 2^32 (held as their low bits), and
 * the cut a probe "as of" a sequence makes; the same of a log loaded from
 * its snapshot.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BandLog } from '../../../src/dedup/band-log.js';
import { sketchTail } from '../../../src/dedup/index-partition.js';
import { SKETCH_BINS, numbersAgreeAt, sketchSize } from '../../../src/fingerprint/feature-sketch.js';
import { mulberry32Uint32 } from '../../support/rng.js';
import { bufferSource, concatChunks } from '../../../src/index/index.js';
import { DedupError } from '../../../src/errors.js';

interface Added { hi: number; lo: number; sequence: number; short: boolean; sketch: Uint8Array }

/** The log as loaded from its snapshot, streamed in small chunks. */
function reloaded(log: BandLog): BandLog {
  const bytes = concatChunks(log.snapshotChunks(1000));
  assert.equal(bytes.byteLength, log.snapshotByteLength);
  return BandLog.readFrom(bufferSource(bytes), log.bands.bands);
}

test('property: the band log gives back every page as added, and cuts a probe at the first page decided at or after a sequence', () => {
  for (let trial = 0; trial < 4; trial++) {
    const rand = mulberry32Uint32(900 + trial);
    const log = new BandLog(14);
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
    checkLog(reloaded(log), pages, rand);
  }
});

test('a log whose first page is decided past 2^32 (two high words at ref 0) loads from its snapshot; a bad short flag is SNAPSHOT_INVALID', () => {
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
  // The first page's short flag: after the head, the high words, the bands, and its fingerprint and sequence.
  const bytes = concatChunks(log.snapshotChunks(1 << 20));
  const at = (5 + 2 * 2) * 4 + log.bands.snapshotByteLength + 4_096 * 12;
  assert.equal(bytes[at], 1);
  bytes[at] = 2;
  assert.throws(() => BandLog.readFrom(bufferSource(bytes), 7), (e: unknown) => e instanceof DedupError && e.code === 'SNAPSHOT_INVALID');
});

function checkLog(log: BandLog, pages: Added[], rand: () => number): void {
  const n = pages.length;
  const keys = new Uint32Array(1);
  {
    assert.equal(log.size, n);
    for (let ref = 0; ref < n; ref++) {
      const p = pages[ref]!;
      assert.equal(log.hi(ref), p.hi);
      assert.equal(log.lo(ref), p.lo);
      assert.equal(log.sequenceOf(ref), p.sequence, `sequence of ref ${ref}`);
      assert.equal(log.isShort(ref), p.short);
      assert.equal(log.sizeOf(ref), sketchSize(p.sketch, 0));
      const other = pages[(ref * 7919) % n]!.sketch;
      assert.equal(log.numbersAgree(ref, other, sketchSize(other, 0)), numbersAgreeAt(p.sketch, 0, other));
      assert.equal(log.numbersAgree(ref, p.sketch, sketchSize(p.sketch, 0)), true);
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

test('the band log holds 21 bytes a page in RAM in whole chunks, not a doubled array', () => {
  const log = new BandLog(14);
  const sketch = new Uint8Array(SKETCH_BINS);
  const keys = [1];
  for (let i = 0; i < 100_000; i++) log.add(i, i, i, false, sketch, keys, 1);
  const columns = log.byteLength - log.bands.byteLength;
  // 25 chunks of 4,096 pages, 21 bytes each; a Float64 sequence column doubled to 131,072 held 33.
  assert.ok(columns / 100_000 < 21.6, `${(columns / 100_000).toFixed(1)} bytes a page`);
});
