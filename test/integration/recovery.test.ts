/**
 * Restarts on the real broker. The pipeline is SIGKILLed in the middle of a
 * stream and restarted: downstream (read_committed) must see every page's
 * verdict exactly once, equal to the core's decision on the same stream, and
 * the index must hold every page. Then a graceful restart from the snapshot,
 * ids sent again (they get their recorded verdicts), and a second instance in
 * the same group (refused: the index is not sharded).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { createRecordCodec } from '../../src/wire/record-codec.js';
import { demoPages } from '../../src/producers/demo-pages.js';
import { createFingerprinter } from '../../src/fingerprint/index.js';
import { createDecider, planFromConfig } from '../../src/dedup/create-decider.js';
import { loadConfig } from '../../src/config.js';
import { readSnapshot, writeSnapshot } from '../../src/storage/state-snapshot.js';
import { createTopics, deleteTopics, freePort, metricSum, pipelineEnv, readCommitted, requireInfra, scrapeMetrics, testKafka, uniqueName, waitFor, runTopics } from '../support/infra.js';
import { startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

const PAGES = 6000;

test('SIGKILL mid-stream, restart, snapshot restart, redelivery, second instance', { timeout: 900_000 }, async () => {
  const infra = requireInfra();
  const run = uniqueName('rec');
  const topics = runTopics(run);
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [
    { topic: topics.DEDUP_PAGES_TOPIC, partitions: 1 },
    { topic: topics.DEDUP_NOVEL_TOPIC, partitions: 1 },
    { topic: topics.DEDUP_DUPLICATE_TOPIC, partitions: 1 },
    { topic: topics.DEDUP_DEAD_LETTER_TOPIC, partitions: 1 },
    { topic: topics.DEDUP_FINGERPRINTS_TOPIC, partitions: 3, compact: true },
  ]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-rec-'));
  const env = {
    ...topics,
    ...pipelineEnv(infra, run, stateDir),
    // Small transactions and frequent snapshots: the kill lands between a
    // snapshot and the changelog records written after it.
    DEDUP_MAX_BATCH_RECORDS: '25',
    DEDUP_SNAPSHOT_INTERVAL_SECONDS: '1',
  };
  const config = loadConfig(env);
  const registry = new SchemaRegistry({ host: infra.registryUrl });
  const codec = await createRecordCodec({ registry, format: 'avro', topics: config, maxPageBytes: config.maxPageBytes });
  const feed = demoPages({ seed: 11 });
  const pages = Array.from({ length: PAGES }, () => feed.next().value!);
  const values = await Promise.all(pages.map((p) => codec.encodePage({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html, text: null })));

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const started: PipelineProcess[] = [];
  const start = async () => {
    const p = startPipelineProcess(env, await freePort());
    started.push(p);
    return p;
  };
  try {
    await producer.connect();
    const send = async (from: number, to: number) => {
      for (let i = from; i < to; i += 200) {
        await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(i, Math.min(i + 200, to)).map((p, j) => ({ key: p.id, value: values[i + j]! })) });
      }
    };

    // First instance: decide part of the stream, then SIGKILL while the rest keeps arriving.
    await send(0, 3000);
    const first = await start();
    await first.waitReady();
    await waitFor('a third of the stream decided', async () => {
      const m = await scrapeMetrics(`${first.metricsUrl}/metrics`);
      return metricSum(m, 'dedup_verdicts_total') >= 1000 ? true : undefined;
    }, 120_000, 50);
    const sending = send(3000, PAGES);
    first.child.kill('SIGKILL');
    assert.equal(await first.exited, 'SIGKILL');
    await sending;

    // Restart: fences the zombie, loads the last snapshot, replays the changelog after it.
    const second = await start();
    await second.waitReady();
    assert.match(second.logs(), /"msg":"index recovered"/);
    const outputs = [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC];
    const records = await readCommitted(infra, outputs, (r) => r.length >= PAGES, { timeoutMs: 300_000, settleMs: 3000 });
    const ids = records.map((r) => r.key!);
    assert.equal(new Set(ids).size, PAGES, 'every page has a verdict');
    assert.equal(records.length, PAGES, 'no verdict is visible twice downstream');

    // Same verdicts as the core deciding the whole stream in one go.
    const fingerprinter = await createFingerprinter();
    const oracle = createDecider(config, planFromConfig(config));
    const expected = new Map(
      pages.map((p) => {
        const r = fingerprinter.fingerprint({ html: p.html });
        return [p.id, oracle.decide({ id: p.id, hi: r.hi, lo: r.lo, short: r.short, fetchedAt: p.fetchedAt })] as const;
      }),
    );
    const firstVerdicts = new Map<string, { verdict: string; duplicateOf: unknown; distance: unknown }>();
    for (const r of records) {
      const decoded = (await registry.decode(r.value!)) as Record<string, unknown>;
      const e = expected.get(r.key!)!;
      const verdict = r.topic === topics.DEDUP_NOVEL_TOPIC ? 'novel' : 'duplicate';
      assert.equal(verdict, e.verdict, `verdict of ${r.key}`);
      if (verdict === 'duplicate') {
        assert.equal(decoded.duplicateOf, e.duplicateOf, `duplicateOf of ${r.key}`);
        assert.equal(decoded.distance, e.distance, `distance of ${r.key}`);
      }
      firstVerdicts.set(r.key!, { verdict, duplicateOf: decoded.duplicateOf ?? null, distance: decoded.distance ?? null });
    }
    const afterKill = await scrapeMetrics(`${second.metricsUrl}/metrics`);
    assert.equal(metricSum(afterKill, 'dedup_index_fingerprints'), PAGES, 'the index holds every page after the crash');

    // Graceful restart: the snapshot covers everything, nothing is decided again.
    second.child.kill('SIGTERM');
    assert.equal(await second.exited, 0, second.logs().slice(-2000));
    const third = await start();
    await third.waitReady();
    const recovered = /"msg":"index recovered"[^\n]*"replayedRecords":(\d+)/.exec(third.logs());
    assert.ok(recovered, third.logs().slice(-2000));
    assert.equal(Number(recovered[1]), 0, 'a snapshot taken at shutdown leaves nothing to replay');
    const afterSnapshot = await scrapeMetrics(`${third.metricsUrl}/metrics`);
    assert.equal(metricSum(afterSnapshot, 'dedup_index_fingerprints'), PAGES);

    // Ids sent again get the verdicts they got the first time, never "duplicate of itself".
    const resent = [5, 77, 1234, 2999, 3001, 4500, 5999];
    await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: resent.map((i) => ({ key: pages[i]!.id, value: values[i]! })) });
    const again = await readCommitted(infra, outputs, (r) => r.length >= PAGES + resent.length, { timeoutMs: 120_000 });
    assert.equal(again.length, PAGES + resent.length);
    for (const r of again.slice(0).filter((x) => resent.some((i) => pages[i]!.id === x.key))) {
      const decoded = (await registry.decode(r.value!)) as Record<string, unknown>;
      const before = firstVerdicts.get(r.key!)!;
      assert.equal(r.topic === topics.DEDUP_NOVEL_TOPIC ? 'novel' : 'duplicate', before.verdict, `repeat verdict of ${r.key}`);
      assert.equal(decoded.duplicateOf ?? null, before.duplicateOf);
      assert.notEqual(decoded.duplicateOf, r.key);
    }

    // A second instance in the same consumer group is refused.
    const intruder = startPipelineProcess({ ...env, DEDUP_INSTANCE_ID: 'dedup-1', DEDUP_STATE_DIR: join(stateDir, 'intruder') }, await freePort());
    started.push(intruder);
    assert.equal(await intruder.exited, 1, intruder.logs().slice(-2000));
    assert.match(intruder.logs(), /GROUP_NOT_EXCLUSIVE/);

    third.child.kill('SIGTERM');
    assert.equal(await third.exited, 0);

    // A snapshot that claims another Kafka cluster is not trusted: the index
    // is rebuilt from the whole changelog, with the same contents.
    const snapshot = await readSnapshot(stateDir);
    assert.ok(snapshot);
    const { indexBytes: _i, storeBytes: _s, ...header } = snapshot.header;
    await writeSnapshot(stateDir, { ...header, clusterId: 'some-other-cluster' }, snapshot.index, snapshot.store);
    const fourth = await start();
    await fourth.waitReady();
    assert.match(fourth.logs(), /snapshot was made with another Kafka cluster/);
    const rebuilt = /"msg":"index recovered"[^\n]*"replayedRecords":(\d+)/.exec(fourth.logs());
    assert.ok(rebuilt && Number(rebuilt[1]) >= PAGES, fourth.logs().slice(-2000));
    const afterRebuild = await scrapeMetrics(`${fourth.metricsUrl}/metrics`);
    assert.equal(metricSum(afterRebuild, 'dedup_index_fingerprints'), PAGES);
    fourth.child.kill('SIGTERM');
    assert.equal(await fourth.exited, 0);
  } finally {
    await producer.disconnect().catch(() => undefined);
    for (const p of started) p.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});
