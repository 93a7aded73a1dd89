/**
 * What an operator meets on the first day, on the real broker:
 *   - a fault-free sharded run logs no warning or error for what kafkajs
 *     handles itself (the EoS warning of a limited retry count, a
 *     transaction begun right after a commit, a heartbeat during a
 *     rebalance), and no two instances report the lag of the same partition;
 *   - `dedup demo-feed` outlives a broker restart (SIGKILL, then the same
 *     command line again) and publishes every page it was asked for.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoPages } from '../../src/producers/demo-pages.js';
import { stackService } from '../../scripts/chaos/services.js';
import { createTopics, deleteTopics, freePort, metricSum, requireInfra, scrapeMetrics, testKafka, uniqueName, waitFor, runTopics } from '../support/infra.js';
import { CLI, startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

function jsonPages(count: number, seed: number): { id: string; value: Buffer }[] {
  const feed = demoPages({ seed });
  return Array.from({ length: count }, () => {
    const p = feed.next().value!;
    return { id: p.id, value: Buffer.from(JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html })) };
  });
}

/** The partitions an instance reports lag for. */
async function lagPartitions(p: PipelineProcess, topic: string): Promise<string[]> {
  const samples = await scrapeMetrics(`${p.metricsUrl}/metrics`);
  return [...samples.keys()].filter((k) => k.startsWith('dedup_consumer_lag_records{') && k.includes(`topic="${topic}"`)).map((k) => /partition="(\d+)"/.exec(k)![1]!).sort();
}

test('a fault-free sharded run: no warning for what kafkajs handles itself, and each partition\u2019s lag reported by its owner only', { timeout: 600_000 }, async () => {
  const infra = requireInfra();
  const run = uniqueName('dayone');
  const topics = { ...runTopics(run), DEDUP_SEQUENCE_TOPIC: `${run}.sequence`, DEDUP_ANSWERS_TOPIC: `${run}.answers` };
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions: 4 }]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-dayone-'));
  const env = {
    ...topics,
    DEDUP_MODE: 'sharded',
    DEDUP_SHARDS: '4',
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
    DEDUP_TOPIC_PARTITIONS: '4',
    DEDUP_MAX_BATCH_RECORDS: '25',
    DEDUP_FINGERPRINT_THREADS: '1',
  };
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const started: PipelineProcess[] = [];
  const start = async (instance: string) => {
    const p = startPipelineProcess({ ...env, DEDUP_INSTANCE_ID: instance, DEDUP_STATE_DIR: join(stateDir, instance) }, await freePort());
    started.push(p);
    return p;
  };
  const verdicts = async () => {
    let total = 0;
    for (const p of started) total += metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`), 'dedup_verdicts_total');
    return total;
  };
  const send = async (pages: { id: string; value: Buffer }[]) => {
    for (let i = 0; i < pages.length; i += 50) {
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(i, i + 50).map((p, j) => ({ key: p.id, value: p.value, partition: (i + j) % 4 })) });
    }
  };
  try {
    await producer.connect();
    // One instance decides pages of all four partitions, so it has a lag series for each.
    const a = await start('dedup-a');
    await a.waitReady();
    const pages = jsonPages(800, 53);
    await send(pages.slice(0, 400));
    await waitFor('the first instance to decide every partition', async () => ((await verdicts()) >= 400 ? true : undefined), 180_000, 200);
    assert.deepEqual(await lagPartitions(a, topics.DEDUP_PAGES_TOPIC), ['0', '1', '2', '3']);

    // A second one joins and takes partitions over; both decide more pages.
    const b = await start('dedup-b');
    await Promise.all([a.waitReady(180_000), b.waitReady(180_000)]);
    await send(pages.slice(400));
    await waitFor('both instances to decide the rest', async () => ((await verdicts()) >= 800 ? true : undefined), 180_000, 200);
    const [ofA, ofB] = [await lagPartitions(a, topics.DEDUP_PAGES_TOPIC), await lagPartitions(b, topics.DEDUP_PAGES_TOPIC)];
    assert.ok(ofB.length > 0, 'the second instance owns partitions');
    assert.deepEqual(ofA.filter((p) => ofB.includes(p)), [], `no partition reported by both (a: ${ofA}, b: ${ofB})`);

    // Nothing routine was logged as a warning or an error.
    for (const p of started) {
      const noisy = p
        .logs()
        .split('\n')
        .filter((l) => /"level":"(warn|error)"/.test(l) && /Limiting retries|concurrent operation on the same transaction|group is rebalancing/.test(l));
      assert.deepEqual(noisy, []);
    }
  } finally {
    await producer.disconnect().catch(() => undefined);
    for (const p of started) p.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});

test('demo-feed outlives a broker restart and publishes every page it was asked for', { timeout: 600_000 }, async () => {
  const infra = requireInfra();
  const broker = stackService(process.env.INFRA_STATE_DIR!, 'kafka');
  const run = uniqueName('feed');
  const topic = `${run}.pages`;
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic }]);
  await admin.disconnect();
  const COUNT = 1500;
  let killed = false;
  let output = '';
  const feed = spawn(process.execPath, [CLI, 'demo-feed', '--count', String(COUNT), '--rate', '100'], {
    env: { ...process.env, DEDUP_BROKERS: infra.brokers.join(','), DEDUP_PAGES_TOPIC: topic, DEDUP_CREATE_TOPICS: 'false', DEDUP_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  feed.stdout!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  feed.stderr!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => feed.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  try {
    // Let it publish for a while, then take the broker away for longer than kafkajs's own reconnect retries last.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await broker.kill();
    killed = true;
    await new Promise((resolve) => setTimeout(resolve, 25_000));
    assert.equal(feed.exitCode, null, `demo-feed exited while the broker was down:\n${output.slice(-2000)}`);
    broker.restart();
    killed = false;
    assert.equal(await exited, 0, output.slice(-3000));
    assert.match(output, /publishing failed; sending the same batch again/);
    assert.doesNotMatch(output, /Limiting retries/);
    // Every page is in the topic (a batch in flight at the kill may be there twice: at-least-once).
    const ids = new Set<string>();
    let records = 0;
    const consumer = testKafka(infra, 'dedup-test-reader').consumer({ groupId: uniqueName('reader') });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        records++;
        ids.add(message.key!.toString('utf8'));
      },
    });
    try {
      await waitFor(`${COUNT} distinct pages in ${topic} (have ${ids.size})`, () => (ids.size >= COUNT ? true : undefined), 120_000, 250);
    } finally {
      await consumer.disconnect();
    }
    assert.equal(ids.size, COUNT);
    assert.ok(records >= COUNT);
  } finally {
    if (killed) broker.restart();
    feed.kill('SIGKILL');
    // The restarted broker must answer again before the next test.
    await waitFor('the broker to answer again', async () => {
      const probe = testKafka(infra).admin();
      await probe.connect();
      await probe.listTopics();
      await probe.disconnect();
      return true;
    }, 120_000, 1000);
    await deleteTopics(kafka, [topic]);
  }
});
