/**
 * The verdict producer's two lanes on the real broker: a transaction opened
 * behind another writes its records and offsets at once, but commits only
 * after the one before it, and aborts if that one failed. Its records are
 * never visible to a read_committed reader before then, and an aborted one
 * leaves neither records nor offsets. A restart fences both lanes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger.js';
import { loadConfig } from '../../src/config.js';
import { createKafka } from '../../src/kafka/client.js';
import { createVerdictProducer, laneTransactionalId } from '../../src/kafka/verdict-producer.js';
import { createTopics, deleteTopics, readCommitted, requireInfra, testKafka, uniqueName } from '../support/infra.js';

const turns = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a second lane commits only after the transaction before it, and aborts when that one fails', { timeout: 300_000 }, async () => {
  const infra = requireInfra();
  const run = uniqueName('lanes');
  const out = `${run}.out`;
  const input = `${run}.in`;
  const group = `${run}-group`;
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: out, partitions: 2 }, { topic: input, partitions: 2 }]);
  const config = loadConfig({ DEDUP_BROKERS: infra.brokers.join(','), DEDUP_STATE_DIR: '/tmp' });
  const client = createKafka(config, createLogger('error'));
  const producer = createVerdictProducer(client, `${run}-tx`, new Map(), 2);
  const messages = (keys: string[]) => new Map([[out, keys.map((key) => ({ key, value: Buffer.from(key) }))]]);
  const offsetOf = async (partition: number) => {
    const [topic] = await admin.fetchOffsets({ groupId: group, topics: [input] });
    return topic!.partitions.find((p) => p.partition === partition)!.offset;
  };
  try {
    assert.equal(producer.lanes, 2);
    await producer.connect();

    // The second transaction waits for a first one that we hold open by hand.
    let letFirstEnd!: (ok: boolean) => void;
    const first = new Promise<void>((resolve, reject) => (letFirstEnd = (ok) => (ok ? resolve() : reject(new Error('the first failed')))));
    first.catch(() => undefined);
    let secondDone = false;
    const second = producer.commit(messages(['b1', 'b2']), group, [{ topic: input, partition: 0, offset: '10' }], { after: first });
    void second.then(
      () => (secondDone = true),
      () => (secondDone = true),
    );
    await turns(1500);
    assert.equal(secondDone, false, 'the second transaction committed before the one before it');
    letFirstEnd(false);
    await assert.rejects(second, /transaction before it failed/);
    assert.equal(await offsetOf(0), '-1', 'an aborted transaction committed its offsets');

    // Both lanes in turn, each behind the last: all commit, in order.
    const c1 = producer.commit(messages(['c1']), group, [{ topic: input, partition: 0, offset: '20' }]);
    const c2 = producer.commit(messages(['c2']), group, [{ topic: input, partition: 1, offset: '5' }], { after: c1 });
    const c3 = producer.commit(messages(['c3']), group, [{ topic: input, partition: 0, offset: '30' }], { after: c2 });
    await Promise.all([c1, c2, c3]);
    assert.equal(await offsetOf(0), '30');
    assert.equal(await offsetOf(1), '5');

    // The later transaction's offset wins even when it is written first: a
    // long first transaction (4 MB in 1 MiB requests) and a short second one
    // behind it, on the same input partition. The group keeps the offset
    // whose commit record came last in its log; when the second transaction
    // sent its offsets before the first, the first's older offset stayed
    // committed, and a restart decided the second's records again.
    const big = new Map([[out, Array.from({ length: 8 }, (_, i) => ({ key: `big${i}`, value: Buffer.alloc(512 * 1024, i) }))]]);
    const e1 = producer.commit(big, group, [{ topic: input, partition: 1, offset: '100' }]);
    const e2 = producer.commit(messages(['e2']), group, [{ topic: input, partition: 1, offset: '101' }], { after: e1 });
    await Promise.all([e1, e2]);
    assert.equal(await offsetOf(1), '101', 'the earlier transaction’s offset overrode the later one’s');

    const seen = await readCommitted(infra, [out], (r) => r.length >= 12, { timeoutMs: 60_000, settleMs: 1500 });
    assert.deepEqual(seen.map((r) => r.key).filter((k) => !k!.startsWith('big')).sort(), ['c1', 'c2', 'c3', 'e2'], 'the aborted transaction left no records');

    // A restarted instance fences both lanes: the old producer can no longer commit on either.
    const again = createVerdictProducer(client, `${run}-tx`, new Map(), 2);
    await again.connect();
    try {
      await assert.rejects(producer.commit(messages(['z0']), group, [{ topic: input, partition: 0, offset: '40' }]), /fenced|transaction failed/);
      await assert.rejects(producer.commit(messages(['z1']), group, [{ topic: input, partition: 0, offset: '41' }]), /fenced|transaction failed/);
      await again.commit(messages(['d1']), group, [{ topic: input, partition: 0, offset: '50' }]);
      assert.equal(await offsetOf(0), '50');
    } finally {
      await again.disconnect().catch(() => undefined);
    }
    assert.equal(laneTransactionalId(`${run}-tx`, 0), `${run}-tx`, 'the first lane keeps the instance id');
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect();
    await deleteTopics(kafka, [out, input]);
  }
});
