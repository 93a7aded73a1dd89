import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ORDER_START, OrderResume, takeoverFrom, type OrderPoint } from '../../../src/dedup/order-resume.js';
import { mulberry32 } from '../../support/rng.js';

/**
 * Order streams as dedup.order holds them: chunks of several input partitions interleaved, each
 * partition's chunks in its input order, and chunks ordered again (the same first offset, or one
 * inside a chunk applied already: a writer fenced late, a rebalance), which a holder skips.
 */
interface OrderRec {
  offset: number;
  inputPartition: number;
  firstOffset: bigint;
  span: number;
  pages: number;
}

const PARTITIONS = 4;

const streamArb = fc.array(
  fc.record({
    inputPartition: fc.integer({ min: 0, max: PARTITIONS - 1 }),
    span: fc.integer({ min: 1, max: 6 }),
    pages: fc.integer({ min: 0, max: 40 }),
    again: fc.option(fc.record({ back: fc.integer({ min: 0, max: 3 }), inside: fc.integer({ min: 0, max: 5 }) }), { freq: 4 }),
  }),
  { maxLength: 160 },
);

function buildStream(shape: { inputPartition: number; span: number; pages: number; again: { back: number; inside: number } | null }[], from: number): OrderRec[] {
  const nextInput = new Array<bigint>(PARTITIONS).fill(0n);
  const chunks: { firstOffset: bigint; span: number }[][] = Array.from({ length: PARTITIONS }, () => []);
  return shape.map((s, i) => {
    const mine = chunks[s.inputPartition]!;
    if (s.again !== null && mine.length > 0) {
      const earlier = mine[Math.max(0, mine.length - 1 - s.again.back)]!;
      return { offset: from + i, inputPartition: s.inputPartition, firstOffset: earlier.firstOffset + BigInt(Math.min(s.again.inside, earlier.span - 1)), span: s.span, pages: s.pages };
    }
    const firstOffset = nextInput[s.inputPartition]!;
    nextInput[s.inputPartition] = firstOffset + BigInt(s.span);
    mine.push({ firstOffset, span: s.span });
    return { offset: from + i, inputPartition: s.inputPartition, firstOffset, span: s.span, pages: s.pages };
  });
}

/** The oracle: the holder's rule replayed from `from` over the records before `to`; which records it skipped. */
function replay(records: OrderRec[], to: number, from: OrderPoint = ORDER_START): { state: OrderPoint; skipped: Set<number> } {
  let pagesBefore = from.pagesBefore;
  const spanEnd = new Map(from.spanEnd);
  const skipped = new Set<number>();
  for (const r of records) {
    if (r.offset < from.offset || r.offset >= to) continue;
    if (r.firstOffset < (spanEnd.get(r.inputPartition) ?? -1n)) {
      skipped.add(r.offset);
      continue;
    }
    pagesBefore += r.pages;
    spanEnd.set(r.inputPartition, r.firstOffset + BigInt(r.span));
  }
  return { state: { offset: to, pagesBefore, spanEnd }, skipped };
}

const sameState = (got: OrderPoint, want: OrderPoint, label: string): void => {
  assert.equal(got.offset, want.offset, `${label}: offset`);
  assert.equal(got.pagesBefore, want.pagesBefore, `${label}: pagesBefore`);
  assert.deepEqual([...got.spanEnd].sort((a, b) => a[0] - b[0]), [...want.spanEnd].sort((a, b) => a[0] - b[0]), `${label}: spanEnd`);
};

test('property: the resume point is at or before the first record of every uncommitted chunk, its state is the replay from 0 up to it, and what is remembered is only the records since it', () => {
  fc.assert(
    fc.property(streamArb, fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 0, max: 12 }), (shape, seed, pruneEvery) => {
      const records = buildStream(shape, 0);
      const rand = mulberry32(seed);
      const tracker = new OrderResume();
      // The group's committed offsets only go forward, each to the end of a chunk of its partition applied so far (or, now and then, any offset).
      const committed = new Array<bigint>(PARTITIONS).fill(0n);
      const ends: bigint[][] = Array.from({ length: PARTITIONS }, () => []);
      const advance = (): void => {
        for (let p = 0; p < PARTITIONS; p++) {
          const choices = ends[p]!;
          const pick = rand() < 0.1 ? BigInt(Math.floor(rand() * 40)) : choices.length === 0 || rand() < 0.3 ? 0n : choices[Math.floor(rand() * choices.length)]!;
          if (pick > committed[p]!) committed[p] = pick;
        }
      };
      const committedOf = (p: number): bigint => committed[p] ?? 0n;
      const { skipped } = replay(records, records.length);
      for (const r of records) {
        assert.equal(tracker.skips(r), skipped.has(r.offset), `record ${r.offset}: skipped as the holder's rule says`);
        assert.equal(tracker.take(r.offset, r, r.span, r.pages), skipped.has(r.offset));
        if (!skipped.has(r.offset)) ends[r.inputPartition]!.push(r.firstOffset + BigInt(r.span));
        if (pruneEvery > 0 && r.offset % pruneEvery === 0) {
          advance();
          tracker.prune(committedOf);
        }
      }
      advance();
      const at = tracker.resumePoint(committedOf);
      assert.ok(at.offset <= records.length, 'never past the log taken');
      // Uncommitted chunks: applied (not skipped), first input offset at or past the committed offset.
      const uncommitted = records.filter((r) => !skipped.has(r.offset) && r.firstOffset >= committedOf(r.inputPartition));
      for (const r of uncommitted) assert.ok(at.offset <= r.offset, `the record ${r.offset} of an uncommitted chunk is read again`);
      // Tight: the first of them, or the end.
      assert.equal(at.offset, uncommitted.length === 0 ? records.length : uncommitted[0]!.offset);
      sameState(at, replay(records, at.offset).state, 'the state at the resume point');
      // The current state is the replay of everything.
      sameState({ offset: tracker.next, pagesBefore: tracker.pagesBefore, spanEnd: new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, tracker.spanEnd(p)] as [number, bigint]).filter(([, e]) => e >= 0n)) }, replay(records, records.length).state, 'the current state');
      // A holder restored at the resume point, given the records from it, skips the same ones and ends in the same state.
      const restored = new OrderResume(at);
      for (const r of records) if (r.offset >= at.offset) assert.equal(restored.take(r.offset, r, r.span, r.pages), skipped.has(r.offset), `restored: record ${r.offset}`);
      assert.equal(restored.pagesBefore, tracker.pagesBefore);
      for (let p = 0; p < PARTITIONS; p++) assert.equal(restored.spanEnd(p), tracker.spanEnd(p), `restored: spanEnd of ${p}`);
      // Remembered: the records from the resume point on, nothing before it.
      assert.equal(tracker.retained, records.length - at.offset);
    }),
    { numRuns: 400 },
  );
});

test('a tracker started at a point takes offsets from it on, and refuses one behind', () => {
  const tracker = new OrderResume({ offset: 100, pagesBefore: 5000, spanEnd: new Map([[2, 40n]]) });
  assert.equal(tracker.skips({ inputPartition: 2, firstOffset: 39n }), true);
  assert.equal(tracker.take(100, { inputPartition: 2, firstOffset: 40n }, 10, 7), false);
  assert.equal(tracker.pagesBefore, 5007);
  assert.equal(tracker.spanEnd(2), 50n);
  assert.throws(() => tracker.take(100, { inputPartition: 1, firstOffset: 0n }, 1, 1), RangeError);
  // Every chunk committed: the restore reads from the next offset, with the current state.
  const at = tracker.resumePoint(() => 1000n);
  assert.deepEqual({ offset: at.offset, pagesBefore: at.pagesBefore, spanEnd: [...at.spanEnd] }, { offset: 101, pagesBefore: 5007, spanEnd: [[2, 50n]] });
  assert.equal(tracker.retained, 0);
});

test('chunks committed out of order are forgotten: what is remembered follows the oldest uncommitted chunk, not the log', () => {
  const tracker = new OrderResume();
  const rand = mulberry32(9);
  const nextInput = new Array<bigint>(8).fill(0n);
  // Per input partition, the ends of its chunks in order; each commits with a lag of up to 6 chunks of its own.
  const ends: bigint[][] = Array.from({ length: 8 }, () => []);
  const committed = new Array<bigint>(8).fill(0n);
  let most = 0;
  for (let offset = 0; offset < 100_000; offset++) {
    const p = Math.floor(rand() * 8);
    const span = 1 + Math.floor(rand() * 50);
    tracker.take(offset, { inputPartition: p, firstOffset: nextInput[p]! }, span, 1 + Math.floor(rand() * 40));
    nextInput[p]! += BigInt(span);
    ends[p]!.push(nextInput[p]!);
    if (offset % 64 === 63) {
      for (let q = 0; q < 8; q++) {
        const lag = Math.floor(rand() * 6);
        const e = ends[q]!;
        if (e.length > lag) committed[q] = e[e.length - 1 - lag]! > committed[q]! ? e[e.length - 1 - lag]! : committed[q]!;
      }
      tracker.prune((q) => committed[q]!);
      most = Math.max(most, tracker.retained);
    }
  }
  // Lags of up to 6 chunks in each of 8 partitions, each about 8 records apart, plus the 64 since the last prune: a few hundred at most.
  assert.ok(most < 600, `${most} records remembered`);
});

test('a takeover reads the order log from the least resume point of the partitions taken on, from the start if one has none, and not past where the holder stands when it keeps partitions', () => {
  const at = (offset: number): OrderPoint => ({ offset, pagesBefore: offset * 10, spanEnd: new Map([[0, BigInt(offset)]]) });
  assert.deepEqual(takeoverFrom(null, [at(30), at(12), at(20)]), { source: 'snapshots', point: at(12) });
  assert.deepEqual(takeoverFrom(null, [at(30), null]), { source: 'start', point: ORDER_START });
  // Keeping partitions: the new ones need records from 12, the kept ones from 40 on.
  assert.deepEqual(takeoverFrom(40, [at(30), at(12)]), { source: 'snapshots', point: at(12) });
  // The kept ones stand at 8: the holder goes on from there, its state as it is.
  assert.deepEqual(takeoverFrom(8, [at(30), at(12)]), { source: 'held partitions', point: null });
  assert.deepEqual(takeoverFrom(12, [at(12)]), { source: 'held partitions', point: null });
  assert.deepEqual(takeoverFrom(8, [at(30), null]), { source: 'start', point: ORDER_START });
});
