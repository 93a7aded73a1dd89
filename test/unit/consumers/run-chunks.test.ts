/**
 * The chunk loop's bookkeeping, over generated batches and commit timings:
 * offsets are resolved in order and only for committed chunks, the loop
 * returns only when every chunk it started has settled, and a batch that
 * gives way leaves its rest unresolved (kafkajs fetches it again).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { EachBatchPayload } from 'kafkajs';
import { Registry } from 'prom-client';
import { observeFetchAndPrepare, runChunks, type ChunkCommit } from '../../../src/consumers/crawled-pages.consumer.js';
import type { PageBatchProcessor, ProcessedChunk } from '../../../src/chunk/page-batch-processor.js';
import { createMetrics } from '../../../src/metrics/metrics.js';

const metrics = createMetrics(new Registry(), { indexFingerprints: () => 0, indexBytes: () => 0, indexMemoryLimitBytes: () => 0, indexTables: () => 0, planCandidatesPerProbe: () => 0, ready: () => true });

const processor: PageBatchProcessor = {
  prepare: async (records) => ({ records, timestamps: [], decoded: [], results: [] }),
  decide: async () => {
    throw new Error('not used');
  },
  process: async () => {
    throw new Error('not used');
  },
};

const chunkOf = (): ProcessedChunk => ({ topicMessages: new Map(), novel: 0, duplicates: 0, deadLetters: new Map(), timestamps: [], verdicts: [] });
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('offsets are resolved in order, only for committed chunks, and every started chunk settles before the batch returns', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 60 }),
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 60, maxLength: 60 }),
      fc.integer({ min: -1, max: 12 }),
      fc.integer({ min: -1, max: 12 }),
      fc.constantFrom<1 | 2>(1, 2),
      async (messages, size, delays, failAt, yieldAfter, maxOutstanding) => {
        const resolved: string[] = [];
        let inFlight = 0;
        let committedCount = 0;
        const batch = { topic: 'pages', partition: 0, highWatermark: String(messages), messages: Array.from({ length: messages }, (_, i) => ({ offset: String(i), key: null, value: Buffer.from('x'), timestamp: '0' })) };
        const payload = {
          batch,
          resolveOffset: (o: string) => void resolved.push(o),
          heartbeat: async () => undefined,
          isRunning: () => true,
          isStale: () => false,
        } as unknown as EachBatchPayload;
        let started = 0;
        let settledChunks = 0;
        await runChunks(payload, {
          maxRecords: size,
          processor,
          metrics,
          active: () => true,
          onFatal: () => undefined,
          maxOutstanding,
          commit: async (): Promise<ChunkCommit> => {
            const n = started++;
            inFlight++;
            assert.ok(inFlight <= maxOutstanding, `${inFlight} chunks outstanding, more than ${maxOutstanding}`);
            const committed = (async () => {
              for (let d = 0; d < delays[n % delays.length]!; d++) await turn();
              inFlight--;
              if (n >= failAt && failAt >= 0) return false;
              committedCount++;
              return true;
            })();
            return { chunk: chunkOf(), committed };
          },
          afterCommit: async () => void settledChunks++,
          yieldBatch: () => yieldAfter >= 0 && settledChunks >= yieldAfter,
        });
        assert.equal(inFlight, 0, 'returned with a chunk still in a transaction');
        // Resolved: the last offsets of a prefix of the chunks, in order, each committed.
        const lasts = Array.from({ length: Math.ceil(messages / size) }, (_, c) => String(Math.min(messages, (c + 1) * size) - 1));
        assert.deepEqual(resolved, lasts.slice(0, resolved.length));
        if (failAt >= 0) assert.ok(resolved.length <= failAt, 'an offset resolved after a failed commit');
        assert.ok(resolved.length <= committedCount);
        if (failAt < 0 && yieldAfter < 0) assert.equal(resolved.length, lasts.length, 'the whole batch resolved');
      },
    ),
    { numRuns: 300 },
  );
});

test('a released chunk is passed at once: offsets resolve in order before the commits, and each commit then runs its housekeeping, in order, once', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 60 }),
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 60, maxLength: 60 }),
      fc.integer({ min: -1, max: 12 }),
      async (messages, size, delays, failAt) => {
        const resolved: string[] = [];
        const batch = { topic: 'pages', partition: 0, highWatermark: String(messages), messages: Array.from({ length: messages }, (_, i) => ({ offset: String(i), key: null, value: Buffer.from('x'), timestamp: '0' })) };
        const payload = {
          batch,
          resolveOffset: (o: string) => void resolved.push(o),
          heartbeat: async () => undefined,
          isRunning: () => true,
          isStale: () => false,
        } as unknown as EachBatchPayload;
        // Commits settle in chunk order (one transaction at a time), each after its own delay.
        let previous: Promise<unknown> = Promise.resolve();
        let committedCount = 0;
        const chunks: ProcessedChunk[] = [];
        const housekept: ProcessedChunk[] = [];
        const after: Promise<void>[] = [];
        let started = 0;
        await runChunks(payload, {
          maxRecords: size,
          processor,
          metrics,
          active: () => true,
          onFatal: () => undefined,
          maxOutstanding: 2,
          commit: async (): Promise<ChunkCommit> => {
            const n = started++;
            const chunk = chunkOf();
            chunks.push(chunk);
            const committed = previous.then(async () => {
              for (let d = 0; d < delays[n % delays.length]!; d++) await turn();
              if (failAt >= 0 && n >= failAt) return false;
              committedCount++;
              return true;
            });
            previous = committed;
            return { chunk, committed, released: Promise.resolve(true) };
          },
          afterCommit: async (chunk) => void housekept.push(chunk),
          track: (p) => void after.push(p),
        });
        const lasts = Array.from({ length: Math.ceil(messages / size) }, (_, c) => String(Math.min(messages, (c + 1) * size) - 1));
        // Every chunk is passed (released) whatever its commit does later: the batch never waited for one.
        assert.deepEqual(resolved, lasts);
        assert.equal(started, lasts.length);
        await Promise.all(after);
        await previous;
        // Housekeeping ran for exactly the committed chunks, in commit order.
        assert.deepEqual(housekept, chunks.slice(0, committedCount));
        assert.equal(committedCount, failAt >= 0 ? Math.min(failAt, lasts.length) : lasts.length);
      },
    ),
    { numRuns: 300 },
  );
});

test('a chunk\u2019s fetch stage runs from its oldest valid record timestamp, its prepare stage from the fetch; a chunk without one has no fetch stage', async () => {
  const own = createMetrics(new Registry(), { indexFingerprints: () => 0, indexBytes: () => 0, indexMemoryLimitBytes: () => 0, indexTables: () => 0, planCandidatesPerProbe: () => 0, ready: () => true });
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(fc.constant(0), fc.constant(-1), fc.integer({ min: 1, max: 1_000_000 }), fc.constant(2_000_000)), { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 500 }), async (timestamps, prepareMs) => {
      own.chunkStage.reset();
      const fetchedAt = 1_500_000;
      const records = timestamps.map((t, i) => ({ partition: 0, offset: String(i), key: null, value: null, timestamp: String(t) }));
      observeFetchAndPrepare(own, records, fetchedAt, fetchedAt + prepareMs);
      const values = (await own.chunkStage.get()).values;
      const sum = (stage: string) => values.find((v) => v.metricName === 'dedup_chunk_stage_seconds_sum' && v.labels.stage === stage)?.value;
      const valid = timestamps.filter((t) => t > 0);
      const oldest = valid.length > 0 ? Math.min(...valid) : undefined;
      if (oldest !== undefined && oldest <= fetchedAt) assert.equal(sum('fetch'), (fetchedAt - oldest) / 1000);
      else assert.equal(sum('fetch'), undefined, 'no timestamp, or one from the future: no fetch stage');
      assert.equal(sum('prepare'), prepareMs / 1000);
    }),
    { numRuns: 200 },
  );
});
