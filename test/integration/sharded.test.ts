/**
 * Sharded mode on the real broker: instances share the input partitions and
 * the index shards, and together decide exactly as one index deciding the
 * pages in the sequence log's order (the batch CLI's core, over that order).
 *
 * One stream of pages over 6 input partitions, with near-duplicate twins
 * published in the same request to different partitions and ids sent again.
 * Mid-stream the group goes 1 → 3 instances, one is SIGKILLed and replaced,
 * one stops gracefully (3 → 2). A read_committed reader must then see
 * exactly one verdict per input record, each equal to the oracle's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { createRecordCodec } from '../../src/wire/record-codec.js';
import { demoPages, type DemoPage } from '../../src/producers/demo-pages.js';
import { createFingerprinter } from '../../src/fingerprint/index.js';
import { createDecider, planFromConfig } from '../../src/dedup/create-decider.js';
import { loadConfig } from '../../src/config.js';
import { decodeSequenceRecord } from '../../src/wire/shard-records.js';
import { createTopics, deleteTopics, freePort, metricSum, readCommitted, requireInfra, scrapeMetrics, testKafka, uniqueName, waitFor, runTopics } from '../support/infra.js';
import { startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

const PARTITIONS = 6;
const SHARDS = 8;
const STREAM = 5400;
const TWINS = 120;

test('sharded: 1 → 3 → kill one, replace it → 2 instances; verdicts equal one index over the sequence order', { timeout: 900_000 }, async () => {
  const infra = requireInfra();
  const run = uniqueName('shd');
  const topics = { ...runTopics(run), DEDUP_SEQUENCE_TOPIC: `${run}.sequence`, DEDUP_ANSWERS_TOPIC: `${run}.answers`, DEDUP_STANDBY_TOPIC: `${run}.standby` };
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions: PARTITIONS, maxMessageBytes: 9 * 1024 * 1024 }]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-shd-'));
  const env = {
    ...topics,
    DEDUP_MODE: 'sharded',
    DEDUP_SHARDS: String(SHARDS),
    // Warm standbys: a failover takes shards over without restoring them;
    // scaling out still restores (the new instances hold nothing yet).
    DEDUP_STANDBY_REPLICAS: '1',
    DEDUP_TOPIC_PARTITIONS: String(PARTITIONS),
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_SCHEMA_REGISTRY_URL: infra.registryUrl,
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
    DEDUP_MAX_BATCH_RECORDS: '50',
    DEDUP_FINGERPRINT_THREADS: '1',
  };
  const config = loadConfig({ ...env, DEDUP_INSTANCE_ID: 'x' });
  const registry = new SchemaRegistry({ host: infra.registryUrl });
  const codec = await createRecordCodec({ registry, format: 'avro', topics: config, maxPageBytes: config.maxPageBytes });

  // The stream: demo pages (originals, refetches with new ads and counters,
  // exact copies), then twins: a page and its near-duplicate sent in ONE
  // request to two different partitions, and ids sent again.
  const feed = demoPages({ seed: 23 });
  const stream: DemoPage[] = Array.from({ length: STREAM }, () => feed.next().value!);
  const originals = stream.filter((p) => p.kind === 'original');
  const batches: { page: DemoPage; partition: number }[][] = [];
  const spread = (p: DemoPage, i: number) => ({ page: p, partition: i % PARTITIONS });
  for (let i = 0; i < STREAM; i += 100) batches.push(stream.slice(i, i + 100).map((p, j) => spread(p, i + j)));
  const twinPairs: [string, string][] = [];
  for (let t = 0; t < TWINS; t++) {
    const source = originals[(t * 37) % originals.length]!;
    const a = { ...source, id: `twin-${t}-a`, html: source.html.replace('</article>', `<p>Editor's note ${t}.</p></article>`) };
    const b = { ...source, id: `twin-${t}-b`, html: source.html.replace('</article>', `<p>Editor's note ${t}!</p></article>`) };
    twinPairs.push([a.id, b.id]);
    // Interleave the twin requests with the stream, in its later two thirds.
    const at = Math.floor(batches.length / 3) + Math.floor((t * (batches.length * 2)) / 3 / TWINS);
    batches.splice(at, 0, [{ page: a, partition: t % PARTITIONS }, { page: b, partition: (t + 1) % PARTITIONS }]);
  }
  const resent = [stream[10]!, stream[2000]!, stream[4100]!].map((p, i) => ({ page: p, partition: (i + 3) % PARTITIONS }));
  batches.push(resent);
  const records = batches.flat();
  const encoded = new Map<string, Buffer>();
  for (const { page } of records) {
    if (!encoded.has(page.id)) encoded.set(page.id, await codec.encodePage({ id: page.id, url: page.url, fetchedAt: page.fetchedAt, html: page.html, text: null }));
  }

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const started: PipelineProcess[] = [];
  const start = async (instance: string) => {
    const p = startPipelineProcess({ ...env, DEDUP_INSTANCE_ID: instance, DEDUP_STATE_DIR: join(stateDir, instance) }, await freePort());
    started.push(p);
    return p;
  };
  const live = () => started.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
  const verdictsSoFar = async () => {
    let total = 0;
    for (const p of live()) total += metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`).catch(() => new Map<string, number>()), 'dedup_verdicts_total');
    return total;
  };
  const third = Math.floor(batches.length / 3);
  try {
    await producer.connect();
    const send = async (from: number, to: number) => {
      for (const batch of batches.slice(from, to)) {
        await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: batch.map(({ page, partition }) => ({ key: page.id, value: encoded.get(page.id)!, partition })) });
      }
    };

    // One instance holds every shard.
    const a = await start('dedup-a');
    await a.waitReady();
    await send(0, third);
    await waitFor('the first instance to decide pages', async () => ((await verdictsSoFar()) >= 600 ? true : undefined), 180_000, 100);

    // Scale to three while pages arrive.
    const [b, c] = [await start('dedup-b'), await start('dedup-c')];
    const sending = send(third, 2 * third);
    await Promise.all([b.waitReady(180_000), c.waitReady(180_000)]);
    await sending;
    await waitFor('the three instances to decide pages', async () => ((await verdictsSoFar()) >= 1500 ? true : undefined), 180_000, 100);
    // An instance updates its gauge when its assignment callback gets the lock the applying loop
    // holds, so one busy applying a batch still shows the shards it gave up for a moment (a CI run
    // under load read 8,4,4): the handover must settle on every shard held once.
    let held: number[] = [];
    const shardsHeld = async () => (held = await Promise.all([a, b, c].map(async (p) => metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`), 'dedup_shards_held'))));
    await waitFor('every shard held once across the three', async () => ((await shardsHeld()).reduce((x, y) => x + y, 0) === SHARDS ? true : undefined), 60_000, 200).catch(() => undefined);
    assert.equal(held.reduce((x, y) => x + y, 0), SHARDS, `every shard held once across the three: ${held}`);
    assert.ok(held.every((h) => h > 0 && h < SHARDS), `the shards are spread: ${held}`);

    // Crash one, replace it; stop another gracefully (3 → 2), with the last third arriving.
    b.child.kill('SIGKILL');
    assert.equal(await b.exited, 'SIGKILL');
    const d = await start('dedup-d');
    const rest = send(2 * third, batches.length);
    await d.waitReady(180_000);
    await waitFor('a survivor to take shards over from its warm standby', async () => {
      let promoted = 0;
      for (const p of [a, c]) promoted += metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`), 'dedup_shard_promotions_total');
      return promoted > 0 ? true : undefined;
    }, 120_000, 250);
    c.child.kill('SIGTERM');
    assert.equal(await c.exited, 0, c.logs().slice(-3000));
    await rest;

    const outputs = [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC];
    const out = await readCommitted(infra, outputs, (r) => r.length >= records.length, { timeoutMs: 400_000, settleMs: 4000 });
    const expectedCount = new Map<string, number>();
    for (const { page } of records) expectedCount.set(page.id, (expectedCount.get(page.id) ?? 0) + 1);
    const seenCount = new Map<string, number>();
    for (const r of out) seenCount.set(r.key!, (seenCount.get(r.key!) ?? 0) + 1);
    const lost = [...expectedCount].filter(([id]) => !seenCount.has(id)).map(([id]) => id);
    const repeated = [...seenCount].filter(([id, n]) => n > (expectedCount.get(id) ?? 0)).map(([id]) => id);
    assert.deepEqual({ lost: lost.slice(0, 10), repeated: repeated.slice(0, 10) }, { lost: [], repeated: [] });
    assert.equal(out.length, records.length, 'one verdict or dead letter per input record, none twice');
    assert.equal(out.filter((r) => r.topic === topics.DEDUP_DEAD_LETTER_TOPIC).length, 0, 'the stream has no bad records');

    // The oracle: one index deciding the pages in the sequence log's order
    // (an id's first appearance), as `dedup batch` over that order would.
    const sequence = await readCommitted(infra, [topics.DEDUP_SEQUENCE_TOPIC], () => true, { timeoutMs: 60_000, settleMs: 3000 });
    sequence.sort((x, y) => Number(x.offset) - Number(y.offset));
    const order: string[] = [];
    const placed = new Set<string>();
    for (const r of sequence) {
      const probe = decodeSequenceRecord(r.value);
      if (probe.type === 'probe' && !placed.has(probe.id)) {
        placed.add(probe.id);
        order.push(probe.id);
      }
    }
    assert.equal(placed.size, expectedCount.size, 'every page id stands in the sequence');
    const byId = new Map(records.map(({ page }) => [page.id, page]));
    const fingerprinter = await createFingerprinter();
    const oracle = createDecider(config, planFromConfig(config));
    const expected = new Map(
      order.map((id) => {
        const p = byId.get(id)!;
        const f = fingerprinter.fingerprint({ html: p.html });
        return [id, oracle.decide({ id, hi: f.hi, lo: f.lo, short: f.short, fetchedAt: p.fetchedAt })] as const;
      }),
    );
    let duplicates = 0;
    const mismatches: string[] = [];
    for (const r of out) {
      const decoded = (await registry.decode(r.value!)) as Record<string, unknown>;
      const e = expected.get(r.key!)!;
      const verdict = r.topic === topics.DEDUP_NOVEL_TOPIC ? 'novel' : 'duplicate';
      const got = { verdict, duplicateOf: decoded.duplicateOf ?? null, distance: decoded.distance ?? null };
      const want = { verdict: e.verdict, duplicateOf: e.duplicateOf, distance: e.distance };
      if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push(`${r.key}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
      if (verdict === 'duplicate') duplicates++;
    }
    assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} verdicts differ from one index over the sequence order`);
    assert.ok(duplicates > 1000, `the stream has near-duplicates to find (${duplicates})`);
    // Twins sent at the same moment to different partitions are never both novel.
    const novel = new Set(out.filter((r) => r.topic === topics.DEDUP_NOVEL_TOPIC).map((r) => r.key!));
    assert.deepEqual(twinPairs.filter(([x, y]) => novel.has(x) && novel.has(y)), []);

    // A graceful restart: the instance gets its shards back (assignment by
    // instance id) and loads them from its shard snapshots, replaying almost nothing.
    a.child.kill('SIGTERM');
    assert.equal(await a.exited, 0, a.logs().slice(-3000));
    assert.match(a.logs(), /"msg":"shard snapshots written","reason":"shutdown"/);
    const a2 = await start('dedup-a');
    await a2.waitReady(180_000);
    await waitFor('the restarted instance to restore its shards', () => (/"msg":"shard restored"/.test(a2.logs()) ? true : undefined), 60_000, 200);
    // Its own shards come from its snapshots; standby copies (not snapshotted) replay.
    const restored = [...a2.logs().matchAll(/"msg":"shard restored"[^\n]*"role":"owner"[^\n]*/g)].map((m) => m[0]);
    assert.ok(restored.length > 0);
    // The changelog after a snapshot holds the standby's copies of pages the
    // owner had written before it (standbys write what owners write; one still
    // catching up after its own restore writes many): the replay reads them
    // but they add nothing. The pages it adds are a few, never the shard.
    for (const line of restored) {
      assert.match(line, /"fromSnapshot":true/, line);
      const replayed = Number(/"replayedPages":(\d+)/.exec(line)![1]);
      const fingerprints = Number(/"fingerprints":(\d+)/.exec(line)![1]);
      assert.ok(replayed <= fingerprints / 20, line);
    }
    await waitFor('the two instances to hold every page once', async () => {
      let held = 0;
      for (const p of [a2, d]) held += metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`), 'dedup_index_fingerprints');
      return held === expectedCount.size ? true : undefined;
    }, 120_000, 250);

    for (const p of live()) p.child.kill('SIGTERM');
    for (const p of started) await p.exited;
  } finally {
    await producer.disconnect().catch(() => undefined);
    for (const p of started) p.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});

test('sharded: a restart after retention deleted the sequence log goes on deciding, against the pages it had', { timeout: 600_000 }, async () => {
  const infra = requireInfra();
  const run = uniqueName('shr');
  const topics = { ...runTopics(run), DEDUP_SEQUENCE_TOPIC: `${run}.sequence`, DEDUP_ANSWERS_TOPIC: `${run}.answers` };
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions: 2 }]);
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-shr-'));
  const env = {
    ...topics,
    DEDUP_MODE: 'sharded',
    DEDUP_SHARDS: '4',
    DEDUP_TOPIC_PARTITIONS: '2',
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_INSTANCE_ID: 'dedup-0',
    DEDUP_STATE_DIR: stateDir,
    DEDUP_FINGERPRINT_THREADS: '1',
    // A window larger than the stream: the windowed paths (restore one by one,
    // eviction behind the window) run without changing any verdict.
    DEDUP_MAX_FINGERPRINTS: '100000',
  };
  const feed = demoPages({ seed: 31 });
  const pages = Array.from({ length: 400 }, () => feed.next().value!);
  const value = (p: DemoPage) => Buffer.from(JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html }));
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const started: PipelineProcess[] = [];
  const outputs = [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC];
  try {
    await producer.connect();
    const first = startPipelineProcess(env, await freePort());
    started.push(first);
    await first.waitReady();
    await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(0, 300).map((p) => ({ key: p.id, value: value(p) })) });
    await readCommitted(infra, outputs, (r) => r.length >= 300, { timeoutMs: 120_000, settleMs: 500 });
    first.child.kill('SIGTERM');
    assert.equal(await first.exited, 0);
    // Retention passes over the whole sequence, and the local snapshots are lost.
    const [sequenceEnd] = await admin.fetchTopicOffsets(topics.DEDUP_SEQUENCE_TOPIC);
    await admin.deleteTopicRecords({ topic: topics.DEDUP_SEQUENCE_TOPIC, partitions: [{ partition: 0, offset: sequenceEnd!.high }] }).catch((error: Error & { partitions?: unknown }) => {
      throw new Error(`${error.message}: ${JSON.stringify(error.partitions)}`);
    });
    await rm(stateDir, { recursive: true, force: true });
    const second = startPipelineProcess(env, await freePort());
    started.push(second);
    await second.waitReady();
    // Exact copies of pages decided before the restart, under new ids, and new pages.
    const copies = pages.slice(0, 20).map((p) => ({ ...p, id: `copy-${p.id}` }));
    await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: [...copies, ...pages.slice(300)].map((p) => ({ key: p.id, value: value(p) })) });
    const out = await readCommitted(infra, outputs, (r) => r.length >= 420, { timeoutMs: 120_000, settleMs: 1000 }).catch((error: Error) => {
      throw new Error(`${error.message}\n--- pipeline ---\n${second.logs().slice(-3000)}`);
    });
    assert.equal(out.length, 420);
    const duplicates = new Set(out.filter((r) => r.topic === topics.DEDUP_DUPLICATE_TOPIC).map((r) => r.key));
    assert.deepEqual(copies.filter((c) => !duplicates.has(c.id)).map((c) => c.id), [], 'copies of pages decided before the restart are duplicates');
    assert.match(second.logs(), /no longer holds this shard/);
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    for (const p of started) p.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});
