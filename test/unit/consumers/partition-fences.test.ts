/**
 * A partition's owner fences the previous owner before it reads where to
 * start (src/consumers/partition-fences.ts), over generated histories of
 * assignments, batches and another member taking the partition in between.
 *
 * The broker here is a plain model of the two facts the rule rests on: opening
 * a transactional producer gives it the newest epoch of its id (older ones can
 * commit nothing more), and a commit writes records and moves the committed
 * offset. The member's consumer starts each assignment from the committed
 * offset read when it joined, as kafkajs does. The property: no record is ever
 * written twice, and every read of the committed offset comes after this
 * member opened the partition's producer in the same assignment (and since its
 * last fenced commit).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createPartitionFences } from '../../../src/consumers/partition-fences.js';

const PARTITIONS = 3;

type Step =
  | { kind: 'assign'; partitions: number[] }
  /** This member decides `records` records of its partition; `between` happens after the fence and before the commit. */
  | { kind: 'batch'; partition: number; records: number; between: 'nothing' | 'assign' | 'other' }
  /**
   * Another member (the partition's owner while this one was paused) opens its
   * producer (fencing this one) and begins a transaction of `records` records,
   * which commits at a later 'otherCommit' unless a newer producer fenced it.
   */
  | { kind: 'other'; partition: number; records: number }
  | { kind: 'otherCommit'; partition: number };

const partitionArb = fc.integer({ min: 0, max: PARTITIONS - 1 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('assign' as const), partitions: fc.subarray([0, 1, 2], { minLength: 1 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      partition: partitionArb,
      records: fc.integer({ min: 1, max: 5 }),
      between: fc.constantFrom('nothing' as const, 'nothing' as const, 'assign' as const, 'other' as const),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('other' as const), partition: partitionArb, records: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('otherCommit' as const), partition: partitionArb }) },
);

interface Producer {
  readonly partition: number;
  readonly epoch: number;
  closed: boolean;
}

class Broker {
  epoch = new Array<number>(PARTITIONS).fill(0);
  committed = new Array<number>(PARTITIONS).fill(0);
  written = Array.from({ length: PARTITIONS }, () => new Set<number>());
  /** The other member's open transaction per partition: its epoch and size. */
  pending: ({ epoch: number; records: number } | null)[] = new Array(PARTITIONS).fill(null);
  duplicates: string[] = [];
  write(partition: number, from: number, to: number, who: string): void {
    for (let o = from; o < to; o++) {
      if (this.written[partition]!.has(o)) this.duplicates.push(`${who} wrote ${partition}:${o} again`);
      this.written[partition]!.add(o);
    }
    this.committed[partition] = to;
  }
}

async function run(steps: Step[]): Promise<void> {
  const broker = new Broker();
  /** Per partition: this member opened its producer since the last assignment and since its last fenced commit. */
  const openedInPeriod = new Array<boolean>(PARTITIONS).fill(false);
  const fences = createPartitionFences<Producer>({
    open: async (partition) => {
      await Promise.resolve();
      openedInPeriod[partition] = true;
      return { partition, epoch: ++broker.epoch[partition]!, closed: false };
    },
    committed: async (partition) => {
      await Promise.resolve();
      assert.ok(openedInPeriod[partition], `committed offset of ${partition} read before this member fenced it in this assignment`);
      return BigInt(broker.committed[partition]!);
    },
    close: async (producer) => {
      producer.closed = true;
    },
  });
  let owned = new Set<number>();
  /** The consumer's position per partition: the committed offset read at the join, then what it committed. */
  const position = new Array<number>(PARTITIONS).fill(0);
  const assign = (partitions: number[]) => {
    owned = new Set(partitions);
    for (const p of partitions) position[p] = broker.committed[p]!;
    openedInPeriod.fill(false);
    fences.assigned(partitions);
  };
  const other = (partition: number, records: number) => {
    broker.pending[partition] = { epoch: ++broker.epoch[partition]!, records };
  };
  /** The other member's transaction commits if its producer is still the newest (a newer one aborted it). */
  const otherCommit = (partition: number) => {
    const pending = broker.pending[partition];
    broker.pending[partition] = null;
    if (!pending || pending.epoch !== broker.epoch[partition]) return;
    const from = broker.committed[partition]!;
    broker.write(partition, from, from + pending.records, 'another member');
  };
  assign([0, 1, 2]);
  for (const step of steps) {
    if (step.kind === 'assign') assign(step.partitions);
    else if (step.kind === 'other') other(step.partition, step.records);
    else if (step.kind === 'otherCommit') otherCommit(step.partition);
    else if (owned.has(step.partition)) {
      const p = step.partition;
      const lease = await fences.start(p);
      // Records the batch holds: from the consumer's position; those below the lease's start are skipped.
      const first = Math.max(position[p]!, Number(lease.from));
      const end = position[p]! + step.records;
      if (step.between === 'assign') assign([...owned]);
      if (step.between === 'other') otherCommit(p);
      if (!lease.current) continue; // given up: fetched before the partition was fenced again
      assert.ok(!lease.producer.closed, 'a current lease commits through an open producer');
      if (lease.producer.epoch !== broker.epoch[p]) {
        // Fenced: nothing written; the batch is fetched again from the same position.
        fences.fenced(lease);
        openedInPeriod[p] = false;
        continue;
      }
      // A batch wholly below the start commits nothing (its offsets are only resolved).
      if (first < end) broker.write(p, first, end, 'this member');
      position[p] = end;
    }
  }
  await fences.close();
  assert.deepEqual(broker.duplicates, [], 'no record written twice');
}

test('partition fences: the owner fences before reading where to start, in every assignment and after a fenced commit; no record is written twice', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 60 }), run),
    { numRuns: 1000 },
  );
});

test('partition fences: a paused member that rejoins with its old partition does not reuse the producer of its earlier assignment', async () => {
  // The history the sharded readiness test hits: this member decides, is paused
  // and dropped, another member decides the partition on, this one rejoins with it.
  await run([
    { kind: 'batch', partition: 0, records: 3, between: 'nothing' },
    { kind: 'other', partition: 0, records: 4 },
    { kind: 'otherCommit', partition: 0 },
    { kind: 'other', partition: 0, records: 2 },
    { kind: 'assign', partitions: [0] },
    // The other member's last transaction commits after this one read where to start, unless this one fenced it first.
    { kind: 'batch', partition: 0, records: 3, between: 'other' },
    { kind: 'batch', partition: 0, records: 5, between: 'nothing' },
  ]);
});
