import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AnswerAgain } from '../../../src/dedup/answer-again.js';

/**
 * A holder reads the order log forward and, when another partition is taken on, seeks back
 * (to the start, or to a snapshot's resume point) and reads on from there; a partition restored
 * from a snapshot taken at `snapshotAt` answers again the records below it whose chunks are not
 * committed. Generated: the log's length, the snapshot's point, the uncommitted records, and the
 * seeks back (after how many records read, to where).
 */
const readingArb = fc
  .record({
    length: fc.integer({ min: 1, max: 120 }),
    snapshotAt: fc.integer({ min: 0, max: 120 }),
    undecided: fc.array(fc.integer({ min: 0, max: 119 }), { maxLength: 40 }),
    seeks: fc.array(fc.record({ after: fc.integer({ min: 1, max: 200 }), to: fc.integer({ min: 0, max: 119 }) }), { maxLength: 6 }),
  })
  .map((r) => ({ ...r, snapshotAt: Math.min(r.snapshotAt, r.length), undecided: new Set(r.undecided.filter((o) => o < r.length)) }));

test('a partition restored from a snapshot answers each uncommitted chunk below its point once, however often the order log is read again', () => {
  fc.assert(
    fc.property(readingArb, ({ length, snapshotAt, undecided, seeks }) => {
      const again = new AnswerAgain(snapshotAt);
      const answered = new Map<number, number>();
      const pending = [...seeks].sort((a, b) => a.after - b.after);
      let read = 0;
      for (let offset = 0; offset < length; offset++) {
        // The record at `offset`: its owner may still wait (uncommitted), and the partition passes it.
        if (undecided.has(offset) && again.wants(offset)) answered.set(offset, (answered.get(offset) ?? 0) + 1);
        again.passed(offset);
        read++;
        // Another partition taken on: the log is read again from an earlier offset.
        if (pending.length > 0 && read >= pending[0]!.after) {
          const { to } = pending.shift()!;
          if (to <= offset) offset = to - 1;
        }
      }
      for (const [offset, times] of answered) assert.equal(times, 1, `the record at ${offset} was answered ${times} times`);
      const expected = [...undecided].filter((o) => o < snapshotAt).sort((a, b) => a - b);
      assert.deepEqual([...answered.keys()].sort((a, b) => a - b), expected);
      // Past its point, nothing is answered again (those records are applied, not answered again).
      for (let offset = 0; offset < length + 5; offset++) assert.equal(again.wants(offset), false);
    }),
    { numRuns: 500 },
  );
});

test('without a snapshot nothing is answered again', () => {
  const again = new AnswerAgain(0);
  for (let offset = 0; offset < 10; offset++) {
    assert.equal(again.wants(offset), false);
    again.passed(offset);
  }
});

test('a record is wanted until it is passed, and a seek back past it does not want it again', () => {
  const again = new AnswerAgain(5);
  assert.equal(again.wants(0), true);
  again.passed(0);
  again.passed(1);
  assert.equal(again.wants(0), false);
  assert.equal(again.wants(1), false);
  assert.equal(again.wants(2), true);
  assert.equal(again.wants(4), true);
  again.passed(4);
  assert.equal(again.wants(2), false);
  assert.equal(again.wants(5), false);
});
