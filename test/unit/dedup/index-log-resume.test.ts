import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { IndexLogResume } from '../../../src/dedup/index-log-resume.js';

/**
 * A log of records about chunks, as one dedup.index partition holds them: the restore must read
 * again every record of a chunk not committed and every entries record not applied, and nothing
 * needs what comes before the offset it gives.
 */
const logArb = fc.array(
  fc.record({
    inputPartition: fc.integer({ min: 0, max: 3 }),
    chunk: fc.integer({ min: 0, max: 30 }),
    entries: fc.boolean(),
  }),
  { maxLength: 200 },
);

test('the resume offset is at or before every record of an uncommitted chunk and every unapplied entries record', () => {
  fc.assert(
    fc.property(logArb, fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 4, maxLength: 4 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 5 }), (log, committedChunks, appliedShare, skipped) => {
      const resume = new IndexLogResume();
      // Records about no chunk (skipped ones) move the next offset only.
      for (let i = 0; i < skipped; i++) resume.read(i);
      const records = log.map((r, i) => ({ ...r, offset: skipped + i }));
      for (const r of records) resume.seen({ inputPartition: r.inputPartition, firstOffset: BigInt(r.chunk * 10) }, r.offset);
      const committed = (p: number): bigint => BigInt(committedChunks[p]! * 10);
      const unapplied = records.filter((r) => r.entries && r.offset >= Math.floor(appliedShare * records.length)).map((r) => r.offset);
      const from = resume.resumeOffset(committed, unapplied);
      assert.ok(from <= skipped + records.length, 'never past the log read');
      for (const r of records) {
        if (BigInt(r.chunk * 10) >= committed(r.inputPartition)) assert.ok(from <= r.offset, `record ${r.offset} of an uncommitted chunk is read again`);
      }
      for (const offset of unapplied) assert.ok(from <= offset, `unapplied entries at ${offset} are read again`);
      // Tight: it is one of the needed records, or the end of what was read.
      const needed = [...unapplied, ...records.filter((r) => BigInt(r.chunk * 10) >= committed(r.inputPartition)).map((r) => r.offset)];
      assert.equal(from, needed.length === 0 ? skipped + records.length : Math.min(...needed));
    }),
    { numRuns: 300 },
  );
});

test('chunks committed are forgotten: what is remembered follows the uncommitted chunks, not the log', () => {
  const resume = new IndexLogResume();
  let committedUpTo = 0n;
  for (let chunk = 0; chunk < 10_000; chunk++) {
    // Entries, then a confirmation and a request for more of the same chunk.
    for (let k = 0; k < 3; k++) resume.seen({ inputPartition: 0, firstOffset: BigInt(chunk * 20) }, chunk * 3 + k);
    if (chunk % 100 === 99) {
      committedUpTo = BigInt((chunk - 4) * 20);
      resume.prune(() => committedUpTo);
      assert.ok(resume.chunks <= 5, `${resume.chunks} chunks remembered with 5 uncommitted`);
    }
  }
  // The last prune committed up to chunk 9,995: the restore reads from that chunk's first record.
  assert.equal(committedUpTo, 9_995n * 20n);
  assert.equal(resume.resumeOffset(() => committedUpTo, []), 9_995 * 3);
});
