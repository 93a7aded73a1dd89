/**
 * The pipeline end to end on the real broker and registry: a few thousand
 * crawl-like pages with planted near-duplicates and exact copies, the same
 * page id sent twice, damaged pages (decided), and every kind of bad record. Every input offset must
 * end in exactly one verdict or one dead letter; verdicts must equal the
 * core's batch decision on the same stream; /metrics must count them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { createRecordCodec } from '../../src/wire/record-codec.js';
import { demoPages } from '../../src/producers/demo-pages.js';
import { createFingerprinter, decodePageBytes } from '../../src/fingerprint/index.js';
import { fingerprintFromBytes, fingerprintToHex } from '../../src/fingerprint/fingerprint-hex.js';
import { createDecider, planFromConfig } from '../../src/dedup/create-decider.js';
import { loadConfig } from '../../src/config.js';
import { DLQ_HEADERS } from '../../src/chunk/page-batch-processor.js';
import { createTopics, deleteTopics, freePort, metricSum, readCommitted, requireInfra, scrapeMetrics, testKafka, uniqueName, runTopics } from '../support/infra.js';
import { startPipelineProcess } from '../support/pipeline-process.js';

const PAGES = 3000;

test('crawled pages in, verdicts out: each offset exactly once, verdicts equal the core, metrics count them', { timeout: 600_000 }, async () => {
  const infra = requireInfra();
  const run = uniqueName('it');
  const topics = runTopics(run);
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  // One input partition: the stream order is the order the oracle decides in.
  await createTopics(admin, [
    { topic: topics.DEDUP_PAGES_TOPIC, partitions: 1, maxMessageBytes: 12 * 1024 * 1024 },
    { topic: topics.DEDUP_NOVEL_TOPIC, partitions: 2, maxMessageBytes: 12 * 1024 * 1024 },
    { topic: topics.DEDUP_DUPLICATE_TOPIC, partitions: 2 },
    { topic: topics.DEDUP_DEAD_LETTER_TOPIC, partitions: 1, maxMessageBytes: 12 * 1024 * 1024 },
    { topic: topics.DEDUP_FINGERPRINTS_TOPIC, partitions: 2, compact: true },
  ]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-it-'));
  const env = { ...topics, DEDUP_BROKERS: infra.brokers.join(','), DEDUP_SCHEMA_REGISTRY_URL: infra.registryUrl, DEDUP_GROUP_ID: `${run}-group`, DEDUP_STATE_DIR: stateDir, DEDUP_EXPECTED_FINGERPRINTS: '100000' };
  const config = loadConfig(env);
  const registry = new SchemaRegistry({ host: infra.registryUrl });
  const codec = await createRecordCodec({ registry, format: 'avro', topics: config, maxPageBytes: config.maxPageBytes });
  const jsonCodec = await createRecordCodec({ registry: null, format: 'json', topics: config, maxPageBytes: config.maxPageBytes });

  // The input stream: demo pages (Avro, every 7th as JSON), one page id sent
  // twice, and the bad records a crawler really produces.
  type Input = { key: string; value: Buffer; page?: { id: string; url: string; fetchedAt: number; html: string }; badCode?: string };
  const inputs: Input[] = [];
  const feed = demoPages({ seed: 7 });
  for (let i = 0; i < PAGES; i++) {
    const p = feed.next().value!;
    const page = { id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html };
    const value = await (i % 7 === 3 ? jsonCodec : codec).encodePage({ ...page, text: null });
    inputs.push({ key: p.id, value, page });
    if (i === 1500) inputs.push({ key: inputs[10]!.key, value: inputs[10]!.value, page: inputs[10]!.page });
  }
  const avroOf = (o: unknown) => codec.encodePage(o as never);
  const bad: Input[] = [
    { key: 'bad-empty', value: await avroOf({ id: 'bad-empty', url: 'u', fetchedAt: Date.now(), html: '<html><body><script>x()</script></body></html>', text: null }), badCode: 'PAGE_EMPTY' },
    { key: 'bad-huge', value: Buffer.from(JSON.stringify({ id: 'bad-huge', url: 'u', html: `<p>${'word '.repeat(1_000_000)}</p>` })), badCode: 'PAGE_TOO_LARGE' },
    { key: 'bad-utf8-id', value: Buffer.concat([Buffer.from('{"id":"bad-utf8-'), Buffer.from([0xc3, 0x28]), Buffer.from('","url":"u","html":"<p>a page whose id is not UTF-8</p>"}')]), badCode: 'PAGE_INVALID_UTF8' },
    { key: 'bad-binary', value: await avroOf({ id: 'bad-binary', url: 'u', fetchedAt: Date.now(), html: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]), text: null }), badCode: 'PAGE_BINARY' },
    { key: 'bad-binary-json', value: Buffer.from(JSON.stringify({ id: 'bad-binary-json', url: 'u', html: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1]).toString('utf8') })), badCode: 'PAGE_BINARY' },
    { key: 'bad-schema-id', value: Buffer.from([0, 0x7f, 0xff, 0xff, 0x01, 1, 2, 3]), badCode: 'SCHEMA_UNKNOWN' },
    { key: 'bad-not-avro', value: Buffer.from('plain text, not a record'), badCode: 'RECORD_UNDECODABLE' },
    { key: 'bad-json', value: Buffer.from('{"id": "bad-json", "html": '), badCode: 'RECORD_UNDECODABLE' },
    { key: 'bad-no-id', value: Buffer.from(JSON.stringify({ url: 'u', html: '<p>a page without an id</p>' })), badCode: 'PAGE_INVALID' },
    { key: 'bad-avro-body', value: Buffer.concat([(await avroOf({ id: 'x', url: 'u', fetchedAt: 1, html: null, text: 'x' })).subarray(0, 5), Buffer.from([0xff, 0xff, 0xff])]), badCode: 'RECORD_UNDECODABLE' },
  ];
  // Damaged pages are not bad records: broken bytes in the body (JSON and
  // Avro) are decoded as a browser decodes them, and the page is decided.
  const damagedFeed = demoPages({ seed: 8 });
  const damaged: Input[] = [];
  for (let i = 0; i < 4; i++) {
    const p = damagedFeed.next().value!;
    const at = p.html.indexOf('</p>');
    const broken = [Buffer.from(p.html.slice(0, at)), Buffer.from([0xc3, 0x28, 0xff, 0xe6, 0x97]), Buffer.from(p.html.slice(at))];
    const page = { id: `damaged-${p.id}`, url: p.url, fetchedAt: p.fetchedAt, html: decodePageBytes(Buffer.concat(broken)) };
    const value =
      i % 2 === 0
        ? Buffer.concat([
            Buffer.from(`{"id":${JSON.stringify(page.id)},"url":${JSON.stringify(page.url)},"fetchedAt":${page.fetchedAt},"html":"`),
            Buffer.from(JSON.stringify(p.html.slice(0, at)).slice(1, -1)),
            broken[1]!,
            Buffer.from(JSON.stringify(p.html.slice(at)).slice(1, -1)),
            Buffer.from('"}'),
          ])
        : await avroOf({ ...page, html: Buffer.concat(broken), text: null });
    damaged.push({ key: page.id, value, page });
  }
  // Spread the bad records and the damaged pages through the stream.
  bad.forEach((b, i) => inputs.splice(200 + i * 300, 0, b));
  damaged.forEach((d, i) => inputs.splice(350 + i * 600, 0, d));
  const decided = PAGES + damaged.length;

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  let pipeline: ReturnType<typeof startPipelineProcess> | null = null;
  try {
    await producer.connect();
    for (let i = 0; i < inputs.length; i += 250) {
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: inputs.slice(i, i + 250).map((m) => ({ key: m.key, value: m.value })) });
    }
    await producer.disconnect();

    pipeline = startPipelineProcess(env, await freePort());
    await pipeline.waitReady();
    const outputTopics = [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC];
    const records = await readCommitted(infra, outputTopics, (r) => r.length >= inputs.length, { timeoutMs: 300_000 });

    // 1. Exactly one output per input offset.
    assert.equal(records.length, inputs.length, 'one output record per input record, no more, no less');
    const deadLetters = records.filter((r) => r.topic === topics.DEDUP_DEAD_LETTER_TOPIC);
    assert.equal(deadLetters.length, bad.length);
    const badOffsets = new Map<string, Input>();
    inputs.forEach((input, offset) => input.badCode && badOffsets.set(String(offset), input));
    for (const dl of deadLetters) {
      const input = badOffsets.get(dl.headers[DLQ_HEADERS.offset]!);
      assert.ok(input, `dead letter for offset ${dl.headers[DLQ_HEADERS.offset]} matches a bad input`);
      assert.equal(dl.headers[DLQ_HEADERS.code], input.badCode, `reason of ${input.key}`);
      assert.equal(dl.headers[DLQ_HEADERS.topic], topics.DEDUP_PAGES_TOPIC);
      assert.ok(dl.headers[DLQ_HEADERS.message]!.length > 0);
      assert.ok(dl.value!.equals(input.value), `dead letter ${input.key} carries the original bytes`);
      badOffsets.delete(dl.headers[DLQ_HEADERS.offset]!);
    }
    assert.equal(badOffsets.size, 0, 'every bad record was dead-lettered');

    // 2. Verdicts equal the core's batch decision on the same stream.
    const fingerprinter = await createFingerprinter();
    const oracle = createDecider(config, planFromConfig(config));
    const expected = inputs.filter((i) => i.page).map((i) => {
      const r = fingerprinter.fingerprint({ html: i.page!.html });
      return oracle.decide({ id: i.page!.id, hi: r.hi, lo: r.lo, short: r.short, fetchedAt: i.page!.fetchedAt });
    });
    const verdictRecords = records.filter((r) => r.topic !== topics.DEDUP_DEAD_LETTER_TOPIC);
    assert.equal(verdictRecords.length, expected.length);
    const actualById = new Map<string, Record<string, unknown>[]>();
    for (const r of verdictRecords) {
      const decoded = (await registry.decode(r.value!)) as Record<string, unknown>;
      assert.equal(decoded.id, r.key, 'verdict key is the page id');
      actualById.set(r.key!, [...(actualById.get(r.key!) ?? []), { ...decoded, topic: r.topic }]);
    }
    let duplicates = 0;
    for (const e of expected) {
      const actual = actualById.get(e.id)?.shift();
      assert.ok(actual, `a verdict for ${e.id}`);
      assert.equal(actual.topic, e.verdict === 'novel' ? topics.DEDUP_NOVEL_TOPIC : topics.DEDUP_DUPLICATE_TOPIC, `verdict of ${e.id}`);
      const [hi, lo] = fingerprintFromBytes(actual.fingerprint as Buffer);
      assert.equal(fingerprintToHex(hi, lo), fingerprintToHex(e.hi, e.lo), `fingerprint of ${e.id}`);
      assert.equal(actual.fingerprintHex, fingerprintToHex(e.hi, e.lo));
      if (e.verdict === 'duplicate') {
        duplicates++;
        assert.equal(actual.duplicateOf, e.duplicateOf, `duplicateOf of ${e.id}`);
        assert.equal(actual.distance, e.distance, `distance of ${e.id}`);
        assert.notEqual(actual.duplicateOf, e.id, 'never a duplicate of itself');
      } else {
        assert.ok(Buffer.isBuffer(actual.html) && (actual.html as Buffer).length > 0, 'novel verdicts carry the page for the indexer');
      }
    }
    assert.ok(duplicates > PAGES * 0.1, `the demo stream plants near-duplicates (found ${duplicates})`);
    assert.deepEqual(verdictRecords.filter((r) => r.key!.startsWith('damaged-')).map((r) => r.key).sort(), damaged.map((d) => d.key).sort(), 'every damaged page got a verdict');
    const repeated = expected.filter((e) => e.repeated);
    assert.equal(repeated.length, 1, 'the id sent twice is decided once and repeated once');

    // 3. The changelog has the decided pages; /metrics counts what happened.
    const changes = await readCommitted(infra, [topics.DEDUP_FINGERPRINTS_TOPIC], (r) => new Set(r.map((x) => x.key)).size >= decided, { settleMs: 200 });
    assert.equal(new Set(changes.map((c) => c.key)).size, decided);
    const metrics = await scrapeMetrics(`${pipeline.metricsUrl}/metrics`);
    const novel = expected.filter((e) => e.verdict === 'novel').length;
    assert.equal(metricSum(metrics, 'dedup_verdicts_total', 'verdict="novel"'), novel);
    assert.equal(metricSum(metrics, 'dedup_verdicts_total', 'verdict="duplicate"'), expected.length - novel);
    assert.equal(metricSum(metrics, 'dedup_pages_consumed_total'), inputs.length);
    assert.equal(metricSum(metrics, 'dedup_dead_letters_total'), bad.length);
    assert.equal(metricSum(metrics, 'dedup_dead_letters_total', 'reason="RECORD_UNDECODABLE"'), 3);
    assert.equal(metricSum(metrics, 'dedup_index_fingerprints'), decided);
    assert.ok(metricSum(metrics, 'dedup_probe_candidates_count') >= decided);
    assert.ok(metricSum(metrics, 'dedup_transactions_total', 'outcome="committed"') >= 1);
    assert.equal(metricSum(metrics, 'dedup_ready'), 1);

    // 4. Graceful stop: exit 0 with a snapshot written.
    pipeline.child.kill('SIGTERM');
    assert.equal(await pipeline.exited, 0, `clean exit on SIGTERM\n${pipeline.logs().slice(-3000)}`);
    assert.ok(existsSync(join(stateDir, 'dedup-state.snapshot')), 'snapshot written at shutdown');
  } finally {
    await producer.disconnect().catch(() => undefined);
    pipeline?.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});
