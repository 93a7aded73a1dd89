/**
 * /readyz tells the truth on the real broker: it answers 503 within 10 s once
 * verdicts stop (the broker frozen with SIGSTOP), idle or under load, in
 * single and in sharded mode, and 200 again once verdicts flow (SIGCONT).
 * And a sharded survivor whose pages wait for a frozen instance's shards
 * never answers 200 for more than 10 s without a verdict; the frozen one,
 * dropped from the group meanwhile and its partition decided to the end by
 * the survivor, is ready again soon after it is thawed. Every record is
 * then decided exactly once. The broker and the frozen instance are always
 * resumed in a finally block: the broker is the stack the whole suite shares.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoPages } from '../../src/producers/demo-pages.js';
import { createTopics, deleteTopics, freePort, metricSum, readCommitted, requireInfra, scrapeMetrics, testKafka, uniqueName, waitFor, runTopics, type Infra } from '../support/infra.js';
import { startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

/** The limit the rule promises: 503 within this long after verdicts stop. */
const WITHIN_MS = 10_000;

function jsonPages(count: number, seed: number): { id: string; value: Buffer }[] {
  const feed = demoPages({ seed });
  return Array.from({ length: count }, () => {
    const p = feed.next().value!;
    return { id: p.id, value: Buffer.from(JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html })) };
  });
}

/** The shared broker, frozen and thawed; `thaw` is safe to call twice. */
function broker() {
  const pid = Number(readFileSync(join(process.env.INFRA_STATE_DIR!, 'kafka.pid'), 'utf8'));
  let frozen = false;
  return {
    freeze() {
      process.kill(pid, 'SIGSTOP');
      frozen = true;
      return Date.now();
    },
    thaw() {
      if (frozen) process.kill(pid, 'SIGCONT');
      frozen = false;
    },
  };
}

const status = (p: PipelineProcess) => fetch(`${p.metricsUrl}/readyz`).then((r) => r.status, () => 0);

/** Milliseconds from `since` until every process answers /readyz 503 (fails past 2 x the limit, to report the figure). */
async function timeToUnready(processes: PipelineProcess[], since: number): Promise<number> {
  await waitFor('/readyz to answer 503', async () => ((await Promise.all(processes.map(status))).every((s) => s === 503) ? true : undefined), 2 * WITHIN_MS, 100);
  return Date.now() - since;
}

async function setUp(label: string, infra: Infra, partitions: number) {
  const run = uniqueName(label);
  const topics = { ...runTopics(run), DEDUP_SEQUENCE_TOPIC: `${run}.sequence`, DEDUP_ANSWERS_TOPIC: `${run}.answers` };
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions }]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), `dedup-${label}-`));
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const started: PipelineProcess[] = [];
  const outputs = [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC];
  return {
    env: {
      ...topics,
      DEDUP_BROKERS: infra.brokers.join(','),
      DEDUP_GROUP_ID: `${run}-group`,
      DEDUP_EXPECTED_FINGERPRINTS: '100000',
      DEDUP_TOPIC_PARTITIONS: String(partitions),
      DEDUP_MAX_BATCH_RECORDS: '25',
      DEDUP_FINGERPRINT_THREADS: '1',
    } as Record<string, string>,
    async start(env: Record<string, string>) {
      const p = startPipelineProcess({ ...env, DEDUP_STATE_DIR: join(stateDir, env.DEDUP_INSTANCE_ID ?? 'dedup-0') }, await freePort());
      started.push(p);
      return p;
    },
    async send(pages: { id: string; value: Buffer }[]) {
      for (let i = 0; i < pages.length; i += 100) {
        await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(i, i + 100).map((p) => ({ key: p.id, value: p.value })) });
      }
    },
    /** Waits until every page has a verdict or a dead letter (read_committed). */
    async waitAllDecided(pages: { id: string }[]) {
      await readCommitted(infra, outputs, (r) => r.length >= pages.length, { timeoutMs: 180_000, settleMs: 0 });
    },
    /** Every page decided exactly once (read_committed, as downstream reads). */
    async expectEachDecidedOnce(pages: { id: string }[]) {
      const out = await readCommitted(infra, outputs, (r) => r.length >= pages.length, { timeoutMs: 180_000, settleMs: 1500 });
      const counts = new Map<string, number>();
      for (const r of out) counts.set(r.key!, (counts.get(r.key!) ?? 0) + 1);
      assert.equal(out.length, pages.length, 'no record decided twice');
      assert.deepEqual(pages.filter((p) => counts.get(p.id) !== 1).map((p) => p.id), [], 'every page decided once');
    },
    async tearDown() {
      await producer.disconnect().catch(() => undefined);
      for (const p of started) p.child.kill('SIGKILL');
      await deleteTopics(kafka, [...Object.values(topics)]);
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

const verdicts = async (processes: PipelineProcess[]) => {
  let total = 0;
  for (const p of processes) total += metricSum(await scrapeMetrics(`${p.metricsUrl}/metrics`), 'dedup_verdicts_total');
  return total;
};

test('single mode: /readyz turns 503 within 10 s of a broker freeze, idle and under load, and 200 once verdicts flow', { timeout: 600_000 }, async () => {
  const infra = requireInfra();
  const s = await setUp('ready1', infra, 2);
  const kafka = broker();
  try {
    const p = await s.start({ ...s.env, DEDUP_INSTANCE_ID: 'dedup-0' });
    await p.waitReady();

    // Idle: nothing waits, and the fetches stop being answered.
    const idle = await timeToUnready([p], kafka.freeze());
    kafka.thaw();
    await p.waitReady(150_000);
    assert.ok(idle <= WITHIN_MS, `idle: 503 after ${idle} ms`);

    // Under load: fetched records wait and no transaction can commit.
    const pages = jsonPages(2500, 31);
    await s.send(pages);
    await waitFor('the pipeline to be deciding', async () => ((await verdicts([p])) >= 200 ? true : undefined), 180_000, 100);
    const busy = await timeToUnready([p], kafka.freeze());
    const decidedWhenFrozen = await verdicts([p]);
    kafka.thaw();
    await p.waitReady(150_000);
    assert.ok(busy <= WITHIN_MS, `under load: 503 after ${busy} ms`);
    assert.ok(decidedWhenFrozen < pages.length, 'records were still waiting when it turned unready');
    console.log(`single mode: 503 after ${idle} ms (idle), ${busy} ms (under load)`);
    await s.expectEachDecidedOnce(pages);
    assert.equal((await status(p)), 200, 'ready once the verdicts flow');
  } finally {
    kafka.thaw();
    await s.tearDown();
  }
});

test('sharded mode: every instance turns 503 within 10 s while records wait and no verdict commits, and 200 once they flow', { timeout: 600_000 }, async () => {
  const infra = requireInfra();
  const s = await setUp('ready2', infra, 2);
  const kafka = broker();
  const env = { ...s.env, DEDUP_MODE: 'sharded', DEDUP_SHARDS: '2' };
  try {
    const a = await s.start({ ...env, DEDUP_INSTANCE_ID: 'dedup-a' });
    await a.waitReady();
    const b = await s.start({ ...env, DEDUP_INSTANCE_ID: 'dedup-b' });
    await Promise.all([a.waitReady(180_000), b.waitReady(180_000)]);
    const pages = jsonPages(2500, 37);
    await s.send(pages);
    await waitFor('both instances to be deciding', async () => ((await verdicts([a, b])) >= 200 ? true : undefined), 180_000, 100);
    const stalled = await timeToUnready([a, b], kafka.freeze());
    const decidedWhenFrozen = await verdicts([a, b]);
    kafka.thaw();
    await Promise.all([a.waitReady(180_000), b.waitReady(180_000)]);
    assert.ok(stalled <= WITHIN_MS, `503 after ${stalled} ms`);
    assert.ok(decidedWhenFrozen < pages.length, 'records were still waiting when they turned unready');
    console.log(`sharded mode: both 503 after ${stalled} ms`);
    await s.expectEachDecidedOnce(pages);
  } finally {
    kafka.thaw();
    await s.tearDown();
  }
});

test('sharded mode: a survivor whose pages wait for a frozen instance\u2019s shards is not ready while no verdict commits', { timeout: 600_000 }, async () => {
  const infra = requireInfra();
  const s = await setUp('ready3', infra, 2);
  const env = { ...s.env, DEDUP_MODE: 'sharded', DEDUP_SHARDS: '2' };
  let frozen: PipelineProcess | null = null;
  try {
    const a = await s.start({ ...env, DEDUP_INSTANCE_ID: 'dedup-a' });
    await a.waitReady();
    const b = await s.start({ ...env, DEDUP_INSTANCE_ID: 'dedup-b' });
    await Promise.all([a.waitReady(180_000), b.waitReady(180_000)]);
    const pages = jsonPages(3000, 41);
    await s.send(pages);
    await waitFor('both instances to be deciding', async () => ((await verdicts([a, b])) >= 200 ? true : undefined), 180_000, 100);
    // Freeze b (its shards stop answering); a's pages wait for b's shards until
    // the group drops b at its session timeout. Sample a: its readiness and its verdicts.
    b.child.kill('SIGSTOP');
    frozen = b;
    const samples: { t: number; status: number; verdicts: number }[] = [];
    const began = Date.now();
    while (Date.now() - began < 15_000) {
      samples.push({ t: Date.now() - began, status: await status(a), verdicts: await verdicts([a]) });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // b stays frozen until a, which took b's partition, has decided every page:
    // b was dropped with a batch under way, and rejoins with its old partition
    // and nothing left in it. It must not stay unready for the records it had
    // seen waiting before (a rule that kept them kept it 503 for good).
    await s.waitAllDecided(pages);
    b.child.kill('SIGCONT');
    frozen = null;
    const thawed = Date.now();
    // The truth: a never answered 200 through more than 10 s without a verdict committed.
    let since = 0;
    let longest = 0;
    for (let i = 1; i < samples.length; i++) {
      const [before, now] = [samples[i - 1]!, samples[i]!];
      if (now.status !== 200 || now.verdicts !== before.verdicts) since = now.t;
      longest = Math.max(longest, now.t - since);
    }
    const firstUnready = samples.find((x) => x.status === 503)?.t ?? null;
    console.log(`sharded survivor: first 503 at ${firstUnready} ms after the freeze; longest 200 without a verdict ${longest} ms; verdicts ${samples[0]!.verdicts} -> ${samples.at(-1)!.verdicts}`);
    assert.ok(longest <= WITHIN_MS, `a answered 200 for ${longest} ms with no verdict committed`);
    await Promise.all([a.waitReady(60_000), b.waitReady(60_000)]);
    console.log(`sharded: the frozen instance ready ${Date.now() - thawed} ms after it was thawed`);
    await s.expectEachDecidedOnce(pages);
  } finally {
    if (frozen) frozen.child.kill('SIGCONT');
    await s.tearDown();
  }
});
