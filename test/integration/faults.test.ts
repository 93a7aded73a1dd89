/**
 * Faults on the real broker that must never turn into a hang, a crash loop or
 * silent data loss:
 *   - a start-up failure exits (it does not hang with /healthz answering 200);
 *   - an interval snapshot that cannot be written does not stop consumption;
 *   - a transaction that fails is fatal: no later chunk commits on top of
 *     decisions downstream never saw (3 input partitions);
 *   - a verdict too large for its topic is dead-lettered; the stream goes on;
 *   - a graceful stop under load leaves nothing to replay.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createKafka } from '../../src/kafka/client.js';
import { createRecordCodecFromConfig } from '../../src/wire/record-codec.js';
import { createFingerprinter } from '../../src/fingerprint/index.js';
import { createDecider, planFromConfig } from '../../src/dedup/create-decider.js';
import { createPageBatchProcessor } from '../../src/chunk/page-batch-processor.js';
import { createCrawledPagesConsumer } from '../../src/consumers/crawled-pages.consumer.js';
import { createVerdictProducer, type VerdictProducer } from '../../src/kafka/verdict-producer.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { DedupError } from '../../src/errors.js';
import { demoPages } from '../../src/producers/demo-pages.js';
import { Registry } from 'prom-client';
import { createTopics, deleteTopics, freePort, metricSum, readCommitted, requireInfra, scrapeMetrics, testKafka, uniqueName, waitFor, runTopics } from '../support/infra.js';
import { startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

const VOCABULARY = 'river stone garden window letter morning silver harbor candle meadow thunder pocket ladder mirror forest cotton bridge lantern orchard velvet'.split(' ');

function jsonPages(count: number, seed: number): { id: string; value: Buffer }[] {
  const feed = demoPages({ seed });
  return Array.from({ length: count }, () => {
    const p = feed.next().value!;
    return { id: p.id, value: Buffer.from(JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html })) };
  });
}

async function setUp(label: string, partitions = 1, extra: { topic: string; maxMessageBytes?: number }[] = []) {
  const infra = requireInfra();
  const run = uniqueName(label);
  const topics = runTopics(run);
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions }, ...extra.map((e) => ({ topic: e.topic, partitions, maxMessageBytes: e.maxMessageBytes }))]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), `dedup-${label}-`));
  const env: Record<string, string> = {
    ...topics,
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_INSTANCE_ID: 'dedup-0',
    DEDUP_STATE_DIR: stateDir,
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
    DEDUP_TOPIC_PARTITIONS: String(partitions),
    DEDUP_MAX_BATCH_RECORDS: '25',
    DEDUP_FINGERPRINT_THREADS: '1',
  };
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const started: PipelineProcess[] = [];
  return {
    infra,
    kafka,
    topics,
    env,
    stateDir,
    send: async (pages: { id: string; value: Buffer }[]) => {
      for (let i = 0; i < pages.length; i += 100) {
        await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(i, i + 100).map((p) => ({ key: p.id, value: p.value })) });
      }
    },
    start: async (overrides: Record<string, string> = {}) => {
      const p = startPipelineProcess({ ...env, ...overrides }, await freePort());
      started.push(p);
      return p;
    },
    async tearDown() {
      await producer.disconnect().catch(() => undefined);
      for (const p of started) p.child.kill('SIGKILL');
      await deleteTopics(kafka, Object.values(topics));
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

const outputsOf = (topics: ReturnType<typeof runTopics>) => [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC];

test('a start-up failure exits non-zero instead of hanging', { timeout: 180_000 }, async () => {
  const port = await freePort();
  const p = startPipelineProcess({ DEDUP_BROKERS: '127.0.0.1:1', DEDUP_STATE_DIR: await mkdtemp(join(tmpdir(), 'dedup-nobroker-')) }, port);
  const outcome = await Promise.race([p.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 150_000))]);
  p.child.kill('SIGKILL');
  assert.equal(outcome, 1, p.logs().slice(-2000));
  assert.match(p.logs(), /KAFKA/);
  assert.equal(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 'refused'), 'refused', 'nothing left listening');
});

test('an interval snapshot that cannot be written does not stop consumption', { timeout: 300_000 }, async () => {
  const s = await setUp('snapfail');
  try {
    // A directory (not empty) stands where the snapshot file goes: every snapshot write fails at
    // its rename (EISDIR), as one that cannot be written. The state directory itself stays
    // usable: the page store's disk tier lives there too.
    await mkdir(join(s.stateDir, 'dedup-state.snapshot', 'in-the-way'), { recursive: true });
    const p = await s.start({ DEDUP_SNAPSHOT_INTERVAL_SECONDS: '1' });
    await p.waitReady();
    const pages = jsonPages(600, 9);
    const half = pages.slice(0, 300);
    await s.send(half);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await s.send(pages.slice(300));
    const out = await readCommitted(s.infra, outputsOf(s.topics), (r) => r.length >= pages.length, { timeoutMs: 120_000, settleMs: 500 });
    assert.equal(out.length, pages.length);
    const m = await scrapeMetrics(`${p.metricsUrl}/metrics`);
    assert.ok(metricSum(m, 'dedup_snapshot_failures_total') >= 1, 'the failures are counted');
    assert.equal((await fetch(`${p.metricsUrl}/readyz`)).status, 200);
  } finally {
    await s.tearDown();
  }
});

test('a failed transaction is fatal: no later chunk of any partition commits after it', { timeout: 300_000 }, async () => {
  const s = await setUp('txfail', 3);
  const config = loadConfig({ ...s.env, DEDUP_CREATE_TOPICS: 'false' });
  const logger = createLogger('error');
  const kafka = createKafka(config, logger);
  const { ensureTopics } = await import('../../src/kafka/client.js');
  await ensureTopics(kafka, config, logger);
  const codec = await createRecordCodecFromConfig(config);
  const decider = createDecider(config, planFromConfig(config));
  const metrics = createMetrics(new Registry(), { indexFingerprints: () => 0, indexBytes: () => 0, indexMemoryLimitBytes: () => 0, indexTables: () => 4, planCandidatesPerProbe: () => 0, ready: () => true });
  const processor = createPageBatchProcessor({ topics: { sourceTopic: config.pagesTopic, ...config }, codec, fingerprinter: await createFingerprinter(), decider, metrics, maxDeadLetterBytes: 1 << 20 });
  const real = createVerdictProducer(kafka, `${config.groupId}-${config.instanceId}`);
  let commits = 0;
  // The third transaction fails as a broker hiccup would (retriable); the
  // ones before it are real. Before this was fatal, kafkajs retried the batch
  // and later chunks committed on top of decisions downstream never saw.
  const flaky: VerdictProducer = {
    connect: () => real.connect(),
    disconnect: () => real.disconnect(),
    async commit(messages, group, offsets) {
      if (++commits === 3) throw new DedupError('KAFKA', 'transaction failed: injected', { retriable: true });
      return real.commit(messages, group, offsets);
    },
  };
  let fatal: unknown = null;
  const consumer = createCrawledPagesConsumer({ kafka, config, processor, producer: flaky, metrics, logger, onFatal: (error) => (fatal ??= error) });
  try {
    await flaky.connect();
    await s.send(jsonPages(600, 13));
    await consumer.start();
    await waitFor('the failed transaction to be fatal', () => (fatal ? true : undefined), 120_000, 100);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.match((fatal as Error).message, /injected/);
    assert.equal(commits, 3, 'no transaction was attempted after the failed one');
    const out = await readCommitted(s.infra, outputsOf(s.topics), () => true, { timeoutMs: 10_000, settleMs: 3000 });
    assert.equal(out.length, 2 * 25, 'exactly the two committed chunks are visible');
  } finally {
    await consumer.stop().catch(() => undefined);
    await real.disconnect().catch(() => undefined);
    await s.tearDown();
  }
});

test('a verdict too large for its topic is dead-lettered, and the stream goes on', { timeout: 300_000 }, async () => {
  const run = uniqueName('big');
  const s = await setUp('big', 1, [{ topic: `${run}.novel-small`, maxMessageBytes: 64 * 1024 }]);
  try {
    const p = await s.start({ DEDUP_NOVEL_TOPIC: `${run}.novel-small` });
    await p.waitReady();
    const pages = jsonPages(100, 17);
    const big = { id: 'big-page', value: Buffer.from(JSON.stringify({ id: 'big-page', url: 'https://example.org/big', fetchedAt: Date.now(), html: `<p>${Array.from({ length: 20000 }, (_, i) => VOCABULARY[(i * 7919) % VOCABULARY.length]).join(' ')}</p>` })) };
    await s.send([...pages.slice(0, 50), big, ...pages.slice(50)]);
    const outputs = [`${run}.novel-small`, s.topics.DEDUP_DUPLICATE_TOPIC, s.topics.DEDUP_DEAD_LETTER_TOPIC];
    const out = await readCommitted(s.infra, outputs, (r) => r.length >= 101, { timeoutMs: 120_000, settleMs: 1000 }).catch((error: Error) => {
      throw new Error(`${error.message}\n--- pipeline ---\n${p.logs().slice(-3000)}`);
    });
    assert.equal(out.length, 101);
    const dead = out.filter((r) => r.topic === s.topics.DEDUP_DEAD_LETTER_TOPIC);
    assert.deepEqual(dead.map((r) => [r.key, r.headers['dedup.error.code']]), [['big-page', 'PAGE_TOO_LARGE']]);
    assert.equal(p.child.exitCode, null, 'still running');
  } finally {
    await s.tearDown();
    await deleteTopics(testKafka(requireInfra()), [`${run}.novel-small`]);
  }
});

test('a graceful stop under load leaves nothing to replay', { timeout: 300_000 }, async () => {
  const s = await setUp('graceful');
  try {
    const p = await s.start({ DEDUP_SNAPSHOT_INTERVAL_SECONDS: '0' });
    await p.waitReady();
    const pages = jsonPages(1500, 21);
    const sending = s.send(pages);
    await waitFor('the pipeline to be busy', async () => (metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`), 'dedup_verdicts_total') >= 300 ? true : undefined), 120_000, 50);
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0, p.logs().slice(-2000));
    await sending;
    const again = await s.start();
    await again.waitReady();
    const recovered = /"msg":"index recovered"[^\n]*"replayedRecords":(\d+)/.exec(again.logs());
    assert.ok(recovered, again.logs().slice(-2000));
    assert.equal(Number(recovered[1]), 0, 'the shutdown snapshot names every changelog record it holds');
    const out = await readCommitted(s.infra, outputsOf(s.topics), (r) => r.length >= pages.length, { timeoutMs: 120_000, settleMs: 1000 });
    assert.equal(out.length, pages.length);
  } finally {
    await s.tearDown();
  }
});

test('a hung registry makes the pipeline unready until it answers again', { timeout: 300_000 }, async () => {
  const s = await setUp('reghang');
  const registryPid = Number(readFileSync(join(process.env.INFRA_STATE_DIR!, 'registry.pid'), 'utf8'));
  let stopped = false;
  try {
    const p = await s.start({ DEDUP_SCHEMA_REGISTRY_URL: s.infra.registryUrl, DEDUP_SCHEMA_REGISTRY_TIMEOUT_MS: '1000' });
    await p.waitReady();
    // A page written with a schema version the pipeline has not seen: decoding it needs the registry.
    const { SchemaRegistry, SchemaType } = await import('@kafkajs/confluent-schema-registry');
    const registry = new SchemaRegistry({ host: s.infra.registryUrl });
    const schema = JSON.parse(readFileSync(join(process.cwd(), 'schemas', 'crawled-page.avsc'), 'utf8')) as { fields: unknown[] };
    schema.fields.push({ name: 'crawlerNote', type: ['null', 'string'], default: null });
    const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: `${s.topics.DEDUP_PAGES_TOPIC}-value` });
    const page = jsonPages(1, 41)[0]!;
    const fields = JSON.parse(page.value.toString('utf8')) as Record<string, unknown>;
    const value = await registry.encode(id, { ...fields, html: Buffer.from(fields.html as string), text: null, crawlerNote: 'v2' });
    process.kill(registryPid, 'SIGSTOP');
    stopped = true;
    await s.send([{ id: page.id, value }]);
    await waitFor('/readyz to answer 503 while the registry hangs', async () => ((await fetch(`${p.metricsUrl}/readyz`)).status === 503 ? true : undefined), 120_000, 250);
    const m = await scrapeMetrics(`${p.metricsUrl}/metrics`);
    assert.ok(metricSum(m, 'dedup_errors_total', 'REGISTRY') >= 1, 'the registry failures are counted');
    process.kill(registryPid, 'SIGCONT');
    stopped = false;
    await p.waitReady(120_000);
    const out = await readCommitted(s.infra, outputsOf(s.topics), (r) => r.length >= 1, { timeoutMs: 120_000, settleMs: 500 });
    assert.deepEqual(out.map((r) => [r.key, r.topic === s.topics.DEDUP_DEAD_LETTER_TOPIC]), [[page.id, false]], 'the page is decided, not dead-lettered');
  } finally {
    if (stopped) process.kill(registryPid, 'SIGCONT');
    await s.tearDown();
  }
});

test('state made with another fingerprint definition is refused loudly, never mixed', { timeout: 300_000 }, async () => {
  const s = await setUp('fpver');
  try {
    const p = await s.start();
    await p.waitReady();
    await s.send(jsonPages(50, 43));
    await readCommitted(s.infra, outputsOf(s.topics), (r) => r.length >= 50, { timeoutMs: 120_000, settleMs: 500 });
    p.child.kill('SIGTERM');
    assert.equal(await p.exited, 0);
    // Another feature option: the stored fingerprints are not comparable with the new ones.
    const other = await s.start({ DEDUP_SHINGLE_SIZE: '3' });
    assert.equal(await other.exited, 2, other.logs().slice(-2000)); // a configuration error
    assert.match(other.logs(), /snapshot was made with another fingerprint definition/);
    assert.match(other.logs(), /CONFIG_INVALID: changelog \S+ holds fingerprints of another definition/);
    // The same definition starts again from its state.
    const again = await s.start();
    await again.waitReady();
    again.child.kill('SIGTERM');
    assert.equal(await again.exited, 0);
  } finally {
    await s.tearDown();
  }
});
