/**
 * Single mode fetches again while a transaction is in flight, on the real
 * broker. kafkajs fetches again only when every batch of the last fetch is
 * done; when a batch waited for its transaction to commit, a page that came
 * meanwhile was fetched only after that commit, and waited for a whole cycle
 * before its own. Here every transaction is held for a while before it
 * starts: a page sent after the first page was decided must be decided while
 * the first page's transaction is still held.
 *
 * Exactly once still holds (one verdict per page), and a graceful stop
 * commits every chunk decided before it leaves the group.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createKafka, ensureTopics } from '../../src/kafka/client.js';
import { createRecordCodecFromConfig } from '../../src/wire/record-codec.js';
import { createFingerprinter } from '../../src/fingerprint/index.js';
import { createDecider, planFromConfig } from '../../src/dedup/create-decider.js';
import { createPageBatchProcessor, type PageBatchProcessor } from '../../src/chunk/page-batch-processor.js';
import { createCrawledPagesConsumer } from '../../src/consumers/crawled-pages.consumer.js';
import { createVerdictProducer, type VerdictProducer } from '../../src/kafka/verdict-producer.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { createTopics, deleteTopics, readCommitted, requireInfra, runTopics, testKafka, uniqueName, waitFor } from '../support/infra.js';

/** How long each transaction is held before it starts. */
const HOLD_MS = 1500;

const WORDS = 'river stone garden window letter morning silver harbor candle meadow thunder pocket ladder mirror forest cotton bridge lantern orchard velvet'.split(' ');

function page(id: string, n: number): Buffer {
  let x = n * 2654435761 + 12345;
  const words: string[] = [];
  for (let i = 0; i < 60; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    words.push(`${WORDS[x % WORDS.length]}${(x >>> 8) % 97}`);
  }
  return Buffer.from(JSON.stringify({ id, url: `https://example.test/${id}`, fetchedAt: Date.now(), text: words.join(' ') }));
}

test('a page that arrives while a transaction is in flight is fetched and decided before that transaction ends', { timeout: 300_000 }, async () => {
  const infra = requireInfra();
  const run = uniqueName('fetch');
  const topics = runTopics(run);
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions: 1 }]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-fetch-'));
  const config = loadConfig({
    ...topics,
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_INSTANCE_ID: 'dedup-0',
    DEDUP_STATE_DIR: stateDir,
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
    DEDUP_TOPIC_PARTITIONS: '1',
  });
  const logger = createLogger('error');
  const client = createKafka(config, logger);
  await ensureTopics(client, config, logger);
  const metrics = createMetrics(new Registry(), { indexFingerprints: () => 0, indexBytes: () => 0, indexMemoryLimitBytes: () => 0, indexTables: () => 4, planCandidatesPerProbe: () => 0, ready: () => true });
  const inner = createPageBatchProcessor({
    topics: { sourceTopic: config.pagesTopic, ...config },
    codec: await createRecordCodecFromConfig(config),
    fingerprinter: await createFingerprinter(),
    decider: createDecider(config, planFromConfig(config)),
    metrics,
    maxDeadLetterBytes: 1 << 20,
  });
  /** When each page was decided, and when the transaction holding it committed. */
  const decidedAt = new Map<string, number>();
  const committedAt = new Map<string, number>();
  const processor: PageBatchProcessor = {
    ...inner,
    async decide(prepared) {
      const chunk = await inner.decide(prepared);
      for (const r of prepared.records) decidedAt.set(r.key!.toString('utf8'), Date.now());
      return chunk;
    },
  };
  const real = createVerdictProducer(client, `${config.groupId}-${config.instanceId}`);
  // The real producer, each transaction held before it starts: the window in which the next page arrives.
  const held: VerdictProducer = {
    connect: () => real.connect(),
    disconnect: () => real.disconnect(),
    async commit(messages, group, offsets) {
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      const written = await real.commit(messages, group, offsets);
      const now = Date.now();
      for (const list of messages.values()) for (const m of list) if (m.key !== null) committedAt.set(m.key.toString(), now);
      return written;
    },
  };
  let fatal: unknown = null;
  const consumer = createCrawledPagesConsumer({ kafka: client, config, processor, producer: held, metrics, logger, onFatal: (error) => (fatal ??= error) });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  let stopped = false;
  try {
    await held.connect();
    await producer.connect();
    await consumer.start();
    const send = (id: string, n: number) => producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: [{ key: id, value: page(id, n) }] });

    await send('first', 1);
    await waitFor('the first page to be decided', () => (decidedAt.has('first') ? true : undefined), 120_000, 5);
    await send('second', 2);
    await waitFor('the second page to be decided', () => (decidedAt.has('second') || fatal ? true : undefined), 120_000, 5);
    assert.equal(fatal, null);
    await waitFor('the first page to be committed', () => (committedAt.has('first') ? true : undefined), 120_000, 5);
    assert.ok(
      decidedAt.get('second')! < committedAt.get('first')!,
      `the second page was decided ${decidedAt.get('second')! - committedAt.get('first')!} ms after the first page's transaction ended: its fetch waited for that transaction`,
    );

    // A graceful stop commits what was decided before it.
    await send('third', 3);
    await waitFor('the third page to be decided', () => (decidedAt.has('third') ? true : undefined), 120_000, 5);
    assert.ok(!committedAt.has('third'), 'the third page is still held when the stop begins');
    await consumer.stop();
    stopped = true;
    assert.ok(committedAt.has('third'), 'stop() returned before the decided chunk was committed');

    const out = await readCommitted(infra, [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC], (r) => r.length >= 3, { timeoutMs: 60_000, settleMs: 2000 });
    assert.deepEqual(out.map((r) => r.key).sort(), ['first', 'second', 'third'], 'one verdict per page');
  } finally {
    if (!stopped) await consumer.stop().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    await real.disconnect().catch(() => undefined);
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});
