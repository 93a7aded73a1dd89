/**
 * The coordinator cache (src/kafka/coordinator-cache.ts) over generated
 * sequences of look-ups, coordinator requests and their outcomes, against a
 * cluster of our own that counts the look-ups it answers. The rule: a look-up
 * reaches the cluster only when nothing is kept for that coordinator: the
 * first time, after a request to it failed with anything but a busy
 * coordinator's error, or once the kept answer is older than the TTL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cacheCoordinators } from '../../../src/kafka/coordinator-cache.js';

const KEYS = [
  { groupId: 'dedup-0', coordinatorType: 1 },
  { groupId: 'dedup', coordinatorType: 0 },
];
const OUTCOMES = ['ok', 'CONCURRENT_TRANSACTIONS', 'COORDINATOR_LOAD_IN_PROGRESS', 'NOT_COORDINATOR', 'connection'] as const;
type Outcome = (typeof OUTCOMES)[number];

const step = fc.record({
  key: fc.integer({ min: 0, max: KEYS.length - 1 }),
  request: fc.constantFrom('addPartitionsToTxn', 'addOffsetsToTxn', 'txnOffsetCommit', 'endTxn'),
  outcome: fc.constantFrom(...OUTCOMES),
  advanceMs: fc.integer({ min: 0, max: 400 }),
});

test('a look-up reaches the cluster only when nothing valid is kept for that coordinator', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 60 }), fc.integer({ min: 1, max: 2000 }), async (steps, ttlMs) => {
      let clock = 0;
      let lookups = 0;
      let next: Outcome = 'ok';
      const cluster = {
        async findGroupCoordinator(_args: { groupId: string; coordinatorType?: number }) {
          lookups++;
          const fail = async () => {
            if (next === 'ok') return 'done';
            throw next === 'connection' ? Object.assign(new Error('Connection closed'), { name: 'KafkaJSConnectionClosedError' }) : Object.assign(new Error(next), { type: next });
          };
          return { nodeId: lookups, addPartitionsToTxn: fail, addOffsetsToTxn: fail, txnOffsetCommit: fail, endTxn: fail };
        },
      };
      cacheCoordinators(cluster, ttlMs, () => clock);
      // The model: per key, until when its answer is kept (-1: nothing kept).
      const keptUntil = KEYS.map(() => -1);
      let expected = 0;
      for (const s of steps) {
        clock += s.advanceMs;
        if (!(keptUntil[s.key]! > clock)) {
          expected++;
          keptUntil[s.key] = clock + ttlMs;
        }
        const broker = (await cluster.findGroupCoordinator(KEYS[s.key]!)) as unknown as Record<string, () => Promise<string>>;
        assert.equal(lookups, expected);
        next = s.outcome;
        const result = await broker[s.request]!().then(
          (r) => r,
          (error: Error) => error,
        );
        next = 'ok';
        if (s.outcome === 'ok') assert.equal(result, 'done');
        else assert.ok(result instanceof Error, 'the error reaches kafkajs unchanged');
        if (s.outcome === 'NOT_COORDINATOR' || s.outcome === 'connection') keptUntil[s.key] = -1;
      }
    }),
    { numRuns: 300 },
  );
});

test('the kept broker is the same object for every caller, and forwards what it does not wrap', async () => {
  const real = { nodeId: 7, isConnected: () => true, endTxn: async () => 'ended' };
  const cluster = { findGroupCoordinator: async (_args: { groupId: string; coordinatorType?: number }) => real };
  cacheCoordinators(cluster, 1000);
  const a = (await cluster.findGroupCoordinator({ groupId: 'g', coordinatorType: 1 })) as typeof real;
  const b = (await cluster.findGroupCoordinator({ groupId: 'g', coordinatorType: 1 })) as typeof real;
  assert.equal(a, b);
  assert.equal(a.nodeId, 7);
  assert.equal(a.isConnected(), true);
  assert.equal(await a.endTxn(), 'ended');
});
