/**
 * What a verdict transaction costs in requests, on the real broker. kafkajs
 * 2.2.4 looked the coordinator up (FindCoordinator) before each of the four
 * coordinator requests of every transaction; the verdict producer keeps the
 * answer (src/kafka/coordinator-cache.ts). Over generated runs of back-to-back
 * transactions (the next one begins while the coordinator still completes the
 * last, as in the pipeline), the producer looks up each of its two
 * coordinators once, and exactly once still holds: every record is visible
 * to a read_committed reader once, and the group's committed offset is the
 * last transaction's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createVerdictProducer } from '../../src/kafka/verdict-producer.js';
import { createTopics, deleteTopics, readCommitted, requireInfra, testKafka, uniqueName } from '../support/infra.js';

test('back-to-back verdict transactions look each coordinator up once, and commit exactly once', async () => {
  const infra = requireInfra();
  const kafka = testKafka(infra);
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 12 }), async (sizes) => {
      const run = uniqueName('txreq');
      const out = `${run}.out`;
      const input = `${run}.in`;
      const admin = kafka.admin();
      await admin.connect();
      await createTopics(admin, [{ topic: out, partitions: 2 }, { topic: input }]);
      const requests = new Map<string, number>();
      let counting = false;
      const producer = createVerdictProducer(kafka, `${run}-dedup-0`, new Map(), {
        onRequest: (api) => {
          if (counting) requests.set(api, (requests.get(api) ?? 0) + 1);
        },
      });
      try {
        await producer.connect();
        counting = true;
        let sent = 0;
        for (const size of sizes) {
          const messages = Array.from({ length: size }, (_, i) => ({ key: `p${sent + i}`, value: Buffer.from(`verdict ${sent + i}`) }));
          sent += size;
          await producer.commit(new Map([[out, messages]]), run, [{ topic: input, partition: 0, offset: String(sent) }]);
        }
        counting = false;
        const lookups = requests.get('GroupCoordinator') ?? 0;
        assert.ok(lookups <= 2, `${lookups} coordinator look-ups for ${sizes.length} transactions (${JSON.stringify([...requests])})`);
        assert.equal(requests.get('EndTxn'), sizes.length);
        const records = await readCommitted(infra, [out], (r) => r.length >= sent, { timeoutMs: 60_000, settleMs: 500 });
        assert.deepEqual(records.map((r) => r.key).sort(), Array.from({ length: sent }, (_, i) => `p${i}`).sort());
        const [committed] = await admin.fetchOffsets({ groupId: run, topics: [input] });
        assert.equal(committed!.partitions[0]!.offset, String(sent));
      } finally {
        await producer.disconnect().catch(() => undefined);
        await admin.disconnect();
        await deleteTopics(kafka, [out, input]);
      }
    }),
    { numRuns: 4 },
  );
});
