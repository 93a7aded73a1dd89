/**
 * The second stage on the real broker, in both modes: pages edited enough to
 * sit beyond k but within the radius get the verdicts of the core's decider
 * with the same second stage, across a restart that lost its state directory
 * (so the sketches of the pages decided before it come back from the
 * changelog alone), and /metrics counts what the stage confirmed. Sharded
 * mode runs it with sketch bands too (candidates at any distance).
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
import { createTopics, deleteTopics, freePort, metricSum, pipelineEnv, readCommitted, requireInfra, runTopics, scrapeMetrics, testKafka, uniqueName } from '../support/infra.js';
import { startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

/** Every `step`-th word of five letters or more, in the text between tags, made into another word. */
function editWords(html: string, step: number, salt: string): string {
  let n = 0;
  return html.replace(/>([^<]+)</g, (_, text: string) => `>${text.replace(/\b[a-z]{5,}\b/g, (w) => (++n % step === 0 ? `${w.slice(0, 3)}q${salt}${w.slice(3)}` : w))}<`);
}

/**
 * The stream: originals, then (after the restart) copies of earlier pages
 * with a word in 40 or 60 changed (mostly 4 to 6 bits away, sketches alike:
 * the second stage confirms them) or a word in 15 (further, often turned down).
 */
function stream(): { first: DemoPage[]; second: DemoPage[] } {
  const feed = demoPages({ seed: 21 });
  const originals = Array.from({ length: 200 }, () => feed.next().value!);
  const steps = [40, 60, 15, 60];
  const second = originals.map((p, i) => ({ ...p, id: `${p.id}-edited`, html: editWords(p.html, steps[i % steps.length]!, 'y') }));
  return { first: originals, second };
}

for (const mode of ['single', 'sharded'] as const) {
  test(`second stage (${mode} mode): verdicts equal the core's across a restart without local state; metrics count confirmations`, { timeout: 600_000 }, async () => {
    const infra = requireInfra();
    const run = uniqueName(`ss-${mode}`);
    const topics = { ...runTopics(run), DEDUP_SEQUENCE_TOPIC: `${run}.sequence`, DEDUP_ANSWERS_TOPIC: `${run}.answers`, DEDUP_STANDBY_TOPIC: `${run}.standby` };
    const kafka = testKafka(infra);
    const admin = kafka.admin();
    await admin.connect();
    await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions: 1, maxMessageBytes: 9 * 1024 * 1024 }]);
    await admin.disconnect();
    const stateDir = await mkdtemp(join(tmpdir(), 'dedup-ss-'));
    const env: Record<string, string> = {
      ...topics,
      DEDUP_MODE: mode,
      ...(mode === 'sharded' ? { DEDUP_SHARDS: '4' } : {}),
      DEDUP_SECOND_STAGE_RADIUS: '6',
      // Sharded mode also takes candidates from the sketch bands, which every shard keeps of its own pages.
      ...(mode === 'sharded' ? { DEDUP_SECOND_STAGE_BANDS: '7' } : {}),
      ...pipelineEnv(infra, run, stateDir),
      DEDUP_MAX_BATCH_RECORDS: '50',
    };
    const config = loadConfig(env);
    const registry = new SchemaRegistry({ host: infra.registryUrl });
    const codec = await createRecordCodec({ registry, format: 'avro', topics: config, maxPageBytes: config.maxPageBytes });
    const { first, second } = stream();
    const all = [...first, ...second];
    const values = await Promise.all(all.map((p) => codec.encodePage({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html, text: null })));

    // The core, over the same order (one input partition, so the order is the stream's).
    const fingerprinter = await createFingerprinter();
    const oracle = createDecider(config, planFromConfig(config));
    const expected = new Map(
      all.map((p) => {
        const r = fingerprinter.fingerprint({ html: p.html });
        return [p.id, oracle.decide({ id: p.id, hi: r.hi, lo: r.lo, short: r.short, fetchedAt: p.fetchedAt, sketch: r.sketch })] as const;
      }),
    );
    const confirmedAfterRestart = second.filter((p) => expected.get(p.id)!.secondStage === 'confirmed').length;
    // The stream does what it is for: many copies only the second stage calls duplicates.
    assert.ok(confirmedAfterRestart >= 30, `only ${confirmedAfterRestart} confirmations expected`);

    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    const started: PipelineProcess[] = [];
    const outputs = [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC];
    try {
      await producer.connect();
      const send = async (from: number, to: number) => {
        for (let i = from; i < to; i += 100) {
          await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: all.slice(i, Math.min(i + 100, to)).map((p, j) => ({ key: p.id, value: values[i + j]! })) });
        }
      };
      await send(0, first.length);
      const one = startPipelineProcess(env, await freePort());
      started.push(one);
      await one.waitReady();
      await readCommitted(infra, outputs, (r) => r.length >= first.length, { timeoutMs: 240_000, settleMs: 500 });
      one.child.kill('SIGTERM');
      assert.equal(await one.exited, 0, one.logs().slice(-2000));

      // Local state gone: the earlier pages' sketches can only come back from the changelog.
      await rm(stateDir, { recursive: true, force: true });
      await send(first.length, all.length);
      const two = startPipelineProcess(env, await freePort());
      started.push(two);
      await two.waitReady();
      const records = await readCommitted(infra, outputs, (r) => r.length >= all.length, { timeoutMs: 240_000, settleMs: 2000 });
      assert.equal(records.length, all.length, 'one verdict per page');
      for (const r of records) {
        const decoded = (await registry.decode(r.value!)) as Record<string, unknown>;
        const e = expected.get(r.key!)!;
        assert.equal(r.topic === topics.DEDUP_NOVEL_TOPIC ? 'novel' : 'duplicate', e.verdict, `verdict of ${r.key}`);
        if (e.verdict === 'duplicate') {
          assert.equal(decoded.duplicateOf, e.duplicateOf, `duplicateOf of ${r.key}`);
          assert.equal(decoded.distance, e.distance, `distance of ${r.key}`);
        }
      }
      const metrics = await scrapeMetrics(`${two.metricsUrl}/metrics`);
      assert.equal(metricSum(metrics, 'dedup_second_stage_total', 'outcome="confirmed"'), confirmedAfterRestart);
      if (mode === 'single') {
        const rejected = second.filter((p) => expected.get(p.id)!.secondStage === 'rejected').length;
        assert.equal(metricSum(metrics, 'dedup_second_stage_total', 'outcome="rejected"'), rejected);
      }
      two.child.kill('SIGTERM');
      assert.equal(await two.exited, 0, two.logs().slice(-2000));
    } finally {
      await producer.disconnect().catch(() => undefined);
      for (const p of started) p.child.kill('SIGKILL');
      await deleteTopics(kafka, Object.values(topics));
      await rm(stateDir, { recursive: true, force: true });
    }
  });
}
