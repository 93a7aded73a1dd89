/**
 * Sharded mode on the real broker, under SIGKILLs: every page with a verdict
 * downstream is in the fingerprints changelog, and after every instance's
 * local state is deleted, an exact copy of each decided page is a duplicate.
 *
 * Three instances with warm standbys decide a stream while instances are
 * SIGKILLed at drawn moments (a failover promotes a standby that was applying
 * the same pages as the dead owner) and started again once a standby has
 * been promoted (back at once, it would get its shards back instead). Then the changelog is
 * read back with a plain consumer, and a fresh instance, with no local state,
 * gets exact copies of every decided page under new ids.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoPages, type DemoPage } from '../../src/producers/demo-pages.js';
import { createTopics, deleteTopics, freePort, metricSum, readCommitted, requireInfra, runTopics, scrapeMetrics, testKafka, uniqueName, waitFor } from '../support/infra.js';
import { startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

const PARTITIONS = 6;
const STREAM = 2400;
const KILLS = 4;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

test('sharded: after SIGKILLs, every decided page is in the changelog, and copies are duplicates after all local state is lost', { timeout: 900_000 }, async () => {
  const infra = requireInfra();
  const run = uniqueName('shk');
  const topics = { ...runTopics(run), DEDUP_SEQUENCE_TOPIC: `${run}.sequence`, DEDUP_ANSWERS_TOPIC: `${run}.answers`, DEDUP_STANDBY_TOPIC: `${run}.standby` };
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions: PARTITIONS }]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-shk-'));
  const env = {
    ...topics,
    DEDUP_MODE: 'sharded',
    DEDUP_SHARDS: '6',
    DEDUP_STANDBY_REPLICAS: '1',
    DEDUP_TOPIC_PARTITIONS: String(PARTITIONS),
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
    DEDUP_MAX_BATCH_RECORDS: '50',
    DEDUP_FINGERPRINT_THREADS: '1',
  };
  const feed = demoPages({ seed: 41 });
  const pages: DemoPage[] = Array.from({ length: STREAM }, () => feed.next().value!);
  const value = (p: DemoPage) => Buffer.from(JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html }));
  const outputs = [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC];
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const started: PipelineProcess[] = [];
  const start = async (instance: string, dir = join(stateDir, instance)) => {
    const p = startPipelineProcess({ ...env, DEDUP_INSTANCE_ID: instance, DEDUP_STATE_DIR: dir }, await freePort());
    started.push(p);
    return p;
  };
  const r = rng(23);
  try {
    await producer.connect();
    const instances = new Map<string, PipelineProcess>();
    for (const name of ['dedup-a', 'dedup-b', 'dedup-c']) instances.set(name, await start(name));
    await Promise.all([...instances.values()].map((p) => p.waitReady(180_000)));

    // Pages flow in steadily while instances die at drawn moments and come back.
    let sent = 0;
    const sending = (async () => {
      for (; sent < STREAM; sent += 40) {
        await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(sent, sent + 40).map((p) => ({ key: p.id, value: value(p) })) });
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    })();
    for (let k = 0; k < KILLS; k++) {
      await new Promise((resolve) => setTimeout(resolve, 2000 + r() * 4000));
      const names = [...instances.keys()];
      const victim = names[Math.floor(r() * names.length)]!;
      const promotions = async () => {
        let n = 0;
        for (const [name, p] of instances) if (name !== victim) n += metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`).catch(() => new Map<string, number>()), 'dedup_shard_promotions_total');
        return n;
      };
      const before = await promotions();
      instances.get(victim)!.child.kill('SIGKILL');
      await instances.get(victim)!.exited;
      // The victim comes back only once a survivor has taken its shards over
      // from their standby copies: that failover is what lost pages.
      await waitFor('a standby to be promoted', async () => ((await promotions()) > before ? true : undefined), 120_000, 250).catch((error: Error) => {
        const logs = [...instances].filter(([name]) => name !== victim).map(([name, p]) => `--- ${name} ---\n${p.logs().slice(-4000)}`);
        throw new Error(`${error.message} (kill ${k + 1}, ${victim})\n${logs.join('\n')}`);
      });
      const back = await start(victim);
      instances.set(victim, back);
      // In the group again before the next kill (killed before it joins, it would move nothing).
      await back.waitReady(180_000);
    }
    await sending;
    const out = await readCommitted(infra, outputs, (rs) => new Set(rs.map((x) => x.key)).size >= STREAM, { timeoutMs: 400_000, settleMs: 2000 });
    assert.equal(out.filter((x) => x.topic === topics.DEDUP_DEAD_LETTER_TOPIC).length, 0, 'the stream has no bad records');
    const decided = new Set(out.map((x) => x.key!));
    assert.equal(decided.size, STREAM);

    // Every decided page is in the changelog (read as any consumer would).
    const changelog = await readCommitted(infra, [topics.DEDUP_FINGERPRINTS_TOPIC], () => true, { timeoutMs: 60_000, settleMs: 3000 });
    const recorded = new Set(changelog.map((x) => x.key));
    const missing = [...decided].filter((id) => !recorded.has(id));
    assert.deepEqual(missing.slice(0, 20), [], `${missing.length} decided pages are missing from the changelog`);

    // Every local state is lost: a fresh instance rebuilds from the changelog
    // alone, and calls an exact copy of every decided page a duplicate.
    for (const p of instances.values()) p.child.kill('SIGKILL');
    for (const p of instances.values()) await p.exited;
    await rm(stateDir, { recursive: true, force: true });
    const fresh = await start('dedup-a', join(stateDir, 'fresh'));
    await fresh.waitReady(180_000);
    const copies = pages.map((p) => ({ ...p, id: `copy-${p.id}` }));
    for (let i = 0; i < copies.length; i += 200) {
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: copies.slice(i, i + 200).map((p) => ({ key: p.id, value: value(p) })) });
    }
    const after = await readCommitted(infra, [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC], (rs) => rs.filter((x) => x.key!.startsWith('copy-')).length >= STREAM, { timeoutMs: 400_000, settleMs: 1000 });
    const novelCopies = after.filter((x) => x.topic === topics.DEDUP_NOVEL_TOPIC && x.key!.startsWith('copy-')).map((x) => x.key!);
    assert.deepEqual(novelCopies.slice(0, 20), [], `${novelCopies.length} exact copies of decided pages were called novel after a full restore`);
  } finally {
    await producer.disconnect().catch(() => undefined);
    for (const p of started) p.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});
