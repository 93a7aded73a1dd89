import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createGroupCommitter, mergeChunks, type CommitReceipt, type QueuedChunk } from '../../../src/producers/group-commit.js';
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

test('each chunk\u2019s receipt says when it was queued, when its transaction began and committed: one transaction at a time, shared by its chunks', async () => {
  await fc.assert(
    fc.asyncProperty(chunksArb, fc.integer({ min: 1, max: 60 }), fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 30 }), async (chunks, maxRecords, pauses) => {
      const { producer, transactions } = recorder(-1);
      let clock = 0;
      const committer = createGroupCommitter(producer, 'g', { maxRecords, now: () => ++clock });
      const receipts: Promise<CommitReceipt>[] = [];
      for (let i = 0; i < chunks.length; i++) {
        receipts.push(committer.submit(chunks[i]!));
        for (let p = 0; p < (pauses[i] ?? 0); p++) await new Promise((resolve) => setImmediate(resolve));
      }
      const got = await Promise.all(receipts);
      let at = 0;
      let lastCommitted = 0;
      for (const chunksOfTransaction of transactions) {
        const first = got[chunksOfTransaction[0]!]!;
        assert.ok(first.begunAt > lastCommitted, 'a transaction begins after the one before it committed');
        assert.ok(first.committedAt > first.begunAt);
        for (const i of chunksOfTransaction) {
          assert.equal(i, at++, 'transactions take the queue in order');
          const r = got[i]!;
          assert.ok(r.queuedAt < r.begunAt, 'queued before its transaction began');
          assert.equal(r.begunAt, first.begunAt);
          assert.equal(r.committedAt, first.committedAt);
          assert.equal(r.written, first.written, 'what its transaction wrote');
        }
        lastCommitted = first.committedAt;
      }
      assert.equal(at, chunks.length);
    }),
    { numRuns: 200 },
  );
});
