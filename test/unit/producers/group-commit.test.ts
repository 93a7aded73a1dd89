import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createGroupCommitter, mergeChunks, type QueuedChunk } from '../../../src/producers/group-commit.js';
import type { CommittedOffsets, VerdictProducer } from '../../../src/kafka/verdict-producer.js';
import type { OutputMessage } from '../../../src/chunk/page-batch-processor.js';

const TOPICS = ['novel', 'dup', 'dlq', 'changelog'];

/** Chunks as consumers queue them: each partition's chunks in offset order, each message named after its chunk. */
const chunksArb = fc
  .array(fc.record({ partition: fc.integer({ min: 0, max: 5 }), records: fc.integer({ min: 1, max: 40 }), topics: fc.subarray(TOPICS, { minLength: 1 }) }), { minLength: 1, maxLength: 30 })
  .map((specs) => {
    const next = new Map<number, number>();
    return specs.map((spec, i): QueuedChunk => {
      const offset = (next.get(spec.partition) ?? 0) + spec.records;
      next.set(spec.partition, offset);
      const topicMessages = new Map<string, OutputMessage[]>(spec.topics.map((t) => [t, Array.from({ length: spec.records }, (_, r) => ({ key: `c${i}-r${r}`, value: Buffer.from(t) }))]));
      return { topicMessages, offsets: { topic: 'pages', partition: spec.partition, offset: String(offset) }, records: spec.records };
    });
  });

test('merged chunks keep every message once, in queue order per topic, and the last offset of each partition', () => {
  fc.assert(
    fc.property(chunksArb, (chunks) => {
      const { topicMessages, offsets } = mergeChunks(chunks);
      for (const topic of TOPICS) {
        const expected = chunks.flatMap((c) => (c.topicMessages.get(topic) ?? []).map((m) => m.key));
        assert.deepEqual((topicMessages.get(topic) ?? []).map((m) => m.key), expected);
      }
      const last = new Map<number, string>();
      for (const c of chunks) last.set(c.offsets.partition, c.offsets.offset);
      assert.deepEqual(new Map(offsets.map((o) => [o.partition, o.offset])), last);
      assert.equal(offsets.length, last.size, 'one offset per partition');
    }),
    { numRuns: 300 },
  );
});

/** A VerdictProducer that records which chunks each transaction held (from the message keys); attempt number `failAt` fails. */
function recorder(failAt: number) {
  const transactions: number[][] = [];
  let attempts = 0;
  const producer: VerdictProducer = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    async commit(topicMessages, _group, offsets: readonly CommittedOffsets[]) {
      const n = attempts++;
      // A transaction takes a turn of the event loop, as a broker round trip would.
      await new Promise((resolve) => setImmediate(resolve));
      if (n === failAt) throw new Error('injected');
      const chunks = new Set([...topicMessages.values()].flat().map((m) => Number(/^c(\d+)-/.exec(String(m.key))![1])));
      assert.ok(offsets.length > 0);
      transactions.push([...chunks].sort((a, b) => a - b));
      return new Map([['changelog:0', BigInt(transactions.length)]]);
    },
  };
  return { producer, transactions };
}

test('the committer commits the queue in order, whole chunks within the bound, and nothing after a failed transaction', async () => {
  await fc.assert(
    fc.asyncProperty(chunksArb, fc.integer({ min: 1, max: 60 }), fc.integer({ min: -1, max: 6 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 30 }), async (chunks, maxRecords, failAt, pauses) => {
      const { producer, transactions } = recorder(failAt);
      const committer = createGroupCommitter(producer, 'g', { maxRecords });
      const outcomes: string[] = new Array<string>(chunks.length);
      const pending: Promise<void>[] = [];
      for (let i = 0; i < chunks.length; i++) {
        pending.push(committer.submit(chunks[i]!).then(() => void (outcomes[i] = 'ok'), () => void (outcomes[i] = 'failed')));
        // Chunks arrive while transactions are in flight, some at once.
        for (let p = 0; p < (pauses[i] ?? 0); p++) await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(pending);
      await committer.drained();
      // The transactions hold the chunks 0, 1, 2, ... in order, each once, whole.
      const committed = transactions.flat();
      assert.deepEqual(committed, committed.map((_, i) => i));
      // Exactly those resolved; every later chunk was rejected.
      assert.deepEqual(outcomes, chunks.map((_, i) => (i < committed.length ? 'ok' : 'failed')));
      for (const t of transactions) {
        const records = t.reduce((n, i) => n + chunks[i]!.records, 0);
        assert.ok(records <= maxRecords || t.length === 1, `a transaction of ${t.length} chunks holds ${records} records, over the bound ${maxRecords}`);
      }
      if (committed.length < chunks.length) {
        assert.equal(transactions.length, failAt, 'no transaction after the failed one');
        await assert.rejects(committer.submit(chunks[0]!), /earlier transaction failed/);
      } else {
        assert.ok(failAt < 0 || failAt >= transactions.length, 'every chunk committed, so no transaction failed');
      }
    }),
    { numRuns: 200 },
  );
});

test('while other batches of a fetch are still coming, the next transaction waits for their chunks, within the linger', async () => {
  const { producer, transactions } = recorder(-1);
  let holding = true;
  const committer = createGroupCommitter(producer, 'g', { maxRecords: 100, hold: () => holding, lingerMs: 60_000 });
  const chunks = fc.sample(chunksArb.filter((c) => c.length >= 3 && c.reduce((n, x) => n + x.records, 0) <= 100), { numRuns: 1, seed: 7 })[0]!;
  const done = chunks.map((c) => committer.submit(c));
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(transactions.length, 0, 'held while more chunks are coming');
  holding = false;
  committer.nudge();
  await Promise.all(done);
  assert.deepEqual(transactions, [chunks.map((_, i) => i)], 'one transaction for the whole fetch');

  // A batch that never queues does not hold a transaction past the linger.
  const stuck = createGroupCommitter(recorder(-1).producer, 'g', { maxRecords: 100, hold: () => true, lingerMs: 30 });
  await stuck.submit(chunks[0]!);
  assert.equal(stuck.transactions, 1);
});

/**
 * A VerdictProducer with two lanes, as createVerdictProducer(…, 2): a transaction writes at
 * once, then waits for `after` before it commits, and aborts if `after` failed. Attempt
 * `failAt` fails at its commit. Records what each committed transaction held, in commit order.
 */
function twoLanes(failAt: number, pauses: number[]) {
  const transactions: number[][] = [];
  let attempts = 0;
  let open = 0;
  let maxOpen = 0;
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const producer: VerdictProducer = {
    lanes: 2,
    connect: async () => undefined,
    disconnect: async () => undefined,
    async commit(topicMessages, _group, offsets, options) {
      const n = attempts++;
      open++;
      maxOpen = Math.max(maxOpen, open);
      try {
        // Writing takes a few turns, more or fewer than the transaction before it needs to commit.
        for (let p = 0; p < (pauses[n % Math.max(1, pauses.length)] ?? 1); p++) await turn();
        if (options?.after) await options.after;
        if (n === failAt) throw new Error('injected');
        assert.ok(offsets.length > 0);
        transactions.push([...new Set([...topicMessages.values()].flat().map((m) => Number(/^c(\d+)-/.exec(String(m.key))![1])))].sort((a, b) => a - b));
        return new Map([['changelog:0', BigInt(transactions.length)]]);
      } finally {
        open--;
      }
    },
  };
  return { producer, transactions, maxOpen: () => maxOpen, attempts: () => attempts };
}

test('with two lanes, the next transaction opens while one commits, and still what commits is a prefix of the queue, in order, nothing after a failure', async () => {
  await fc.assert(
    fc.asyncProperty(chunksArb, fc.integer({ min: 1, max: 60 }), fc.integer({ min: -1, max: 6 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 12 }), async (chunks, maxRecords, failAt, pauses, writeTurns) => {
      const { producer, transactions, maxOpen, attempts } = twoLanes(failAt, writeTurns);
      const committer = createGroupCommitter(producer, 'g', { maxRecords });
      const outcomes: string[] = new Array<string>(chunks.length);
      const pending: Promise<void>[] = [];
      for (let i = 0; i < chunks.length; i++) {
        pending.push(committer.submit(chunks[i]!).then(() => void (outcomes[i] = 'ok'), () => void (outcomes[i] = 'failed')));
        for (let p = 0; p < (pauses[i] ?? 0); p++) await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(pending);
      await committer.drained();
      assert.ok(maxOpen() <= 2, `${maxOpen()} transactions open at once`);
      const committed = transactions.flat();
      assert.deepEqual(committed, committed.map((_, i) => i), 'committed in queue order, each chunk once, whole');
      assert.deepEqual(outcomes, chunks.map((_, i) => (i < committed.length ? 'ok' : 'failed')));
      for (const t of transactions) {
        const records = t.reduce((n, i) => n + chunks[i]!.records, 0);
        assert.ok(records <= maxRecords || t.length === 1);
      }
      if (committed.length < chunks.length) {
        assert.equal(transactions.length, failAt, 'nothing committed after the failed one');
        // At most the one transaction already open behind the failed one was attempted after it, and it aborted.
        assert.ok(attempts() <= failAt + 2, `${attempts()} attempts, the failure was attempt ${failAt + 1}`);
        await assert.rejects(committer.submit(chunks[0]!), /earlier transaction failed/);
      }
    }),
    { numRuns: 300 },
  );
});

test('with two lanes, a chunk queued while a transaction commits goes into a second transaction at once', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const started: number[] = [];
  const producer: VerdictProducer = {
    lanes: 2,
    connect: async () => undefined,
    disconnect: async () => undefined,
    async commit(topicMessages, _group, _offsets, options) {
      started.push(started.length);
      if (started.length === 1) await gate;
      if (options?.after) await options.after;
      return new Map();
    },
  };
  const committer = createGroupCommitter(producer, 'g', { maxRecords: 100 });
  const [a, b] = fc.sample(chunksArb.filter((c) => c.length >= 2), { numRuns: 1, seed: 3 })[0]!;
  const first = committer.submit(a!);
  await new Promise((resolve) => setImmediate(resolve));
  const second = committer.submit(b!);
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(started.length, 2, 'the second transaction opened while the first was held');
  let secondDone = false;
  void second.then(() => (secondDone = true));
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(secondDone, false, 'the second did not commit before the first');
  release();
  await Promise.all([first, second]);
  assert.equal(committer.transactions, 2);
});
