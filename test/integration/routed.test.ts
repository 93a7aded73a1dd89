/**
 * Routed mode on the real broker: instances share the input partitions and
 * the partitions of the routed index (dedup.index), each page's entries going
 * only to the partitions its table prefixes and band keys route it to, and
 * together they decide exactly as one index deciding the pages in the order
 * log's order (the batch CLI's core, over that order).
 *
 * The stream: demo pages (originals, refetches, exact copies), a template
 * cluster of pages that share most of one text (hundreds of pages under one
 * band key, more than a probe's chain looks at), and ids sent again. A
 * read_committed reader must see exactly one verdict or dead letter per input
 * record, each equal to the oracle's over the decision order, which the id
 * store (dedup.ids) names: every decided page with its global sequence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoPages, type DemoPage } from '../../src/producers/demo-pages.js';
import { createFingerprinter } from '../../src/fingerprint/index.js';
import { createDecider, featureOptionsFromConfig, planFromConfig } from '../../src/dedup/create-decider.js';
import { loadConfig } from '../../src/config.js';
import { bandKey, CHAIN_LIMIT } from '../../src/dedup/sketch-bands.js';
import { mulberry32 } from '../../src/mulberry32.js';
import { chunkName, decodeEntries, decodeIdStore, decodeOrder, routedRecordKind } from '../../src/wire/routed-records.js';
import { createTopics, deleteTopics, freePort, readCommitted, requireInfra, testKafka, uniqueName, waitFor, runTopics, type Infra, type ReadRecord } from '../support/infra.js';
import { startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

const PARTITIONS = 4;
const INDEX_PARTITIONS = 8;

interface Page { id: string; url: string; fetchedAt: number; html: string }

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basil cedar dune ember fern grove heath iris jade kelp lotus moss nectar olive pearl quartz reed sage thyme umber violet willow yarrow zinnia'.split(' ');

/** Pages of one template: the same 300 words with a share of them replaced, so they share most of their sketch bands. */
function templatePages(count: number, seed: number): Page[] {
  const r = mulberry32(seed);
  const base = Array.from({ length: 300 }, () => WORDS[Math.floor(r() * WORDS.length)]!);
  return Array.from({ length: count }, (_, i) => {
    const words = base.slice();
    const changes = Math.floor(r() * 60);
    // Replacement words without digits: the second stage confirms only pages with the same content numbers.
    for (let c = 0; c < changes; c++) words[Math.floor(r() * words.length)] = `${WORDS[Math.floor(r() * WORDS.length)]}${WORDS[Math.floor(r() * WORDS.length)]}`;
    const text = [];
    for (let w = 0; w < words.length; w += 30) text.push(`<p>${words.slice(w, w + 30).join(' ')}.</p>`);
    return { id: `tpl-${i}`, url: `https://template.example/${i}`, fetchedAt: 1_700_000_000_000 + i, html: `<html><head><title>Listing ${i % 7}</title></head><body><article>${text.join('')}</article></body></html>` };
  });
}

function routedTopics(run: string) {
  return { ...runTopics(run), DEDUP_INDEX_TOPIC: `${run}.index`, DEDUP_ORDER_TOPIC: `${run}.order`, DEDUP_REPLIES_TOPIC: `${run}.replies`, DEDUP_IDS_TOPIC: `${run}.ids` };
}

function routedEnv(infra: Infra, run: string, topics: Record<string, string>): Record<string, string> {
  return {
    ...topics,
    DEDUP_MODE: 'routed',
    DEDUP_INDEX_PARTITIONS: String(INDEX_PARTITIONS),
    DEDUP_TOPIC_PARTITIONS: String(PARTITIONS),
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_SCHEMA_REGISTRY_URL: infra.registryUrl,
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
    DEDUP_MAX_BATCH_RECORDS: '40',
    DEDUP_FINGERPRINT_THREADS: '1',
  };
}

/** The stream: demo pages with a template cluster spread through it, then ids sent again. */
function makeStream(seed: number, demo: number, template: number): { pages: Page[]; sends: Page[] } {
  const feed = demoPages({ seed });
  const pages: Page[] = Array.from({ length: demo }, () => {
    const p: DemoPage = feed.next().value!;
    return { id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html };
  });
  const tpl = templatePages(template, seed + 1);
  const sends: Page[] = [];
  let t = 0;
  pages.forEach((p, i) => {
    sends.push(p);
    while (t < tpl.length && t * demo < i * tpl.length) sends.push(tpl[t++]!);
  });
  while (t < tpl.length) sends.push(tpl[t++]!);
  // Ids sent again: the same record, and another body under an id decided already.
  sends.push(pages[3]!, pages[Math.floor(demo / 2)]!, tpl[5]!, { ...pages[10]!, html: pages[20]!.html });
  return { pages: [...pages, ...tpl], sends };
}

/**
 * Reads the outputs and the id store, and checks: one verdict per input record, none lost or
 * doubled, the decision order gap-free, and every verdict equal to one index over that order.
 */
async function checkAgainstOracle(infra: Infra, topics: Record<string, string>, env: Record<string, string>, sends: Page[], pipelines: () => PipelineProcess[]): Promise<{ out: ReadRecord[]; duplicates: number; beyondK: number }> {
  const outputs = [topics.DEDUP_NOVEL_TOPIC!, topics.DEDUP_DUPLICATE_TOPIC!, topics.DEDUP_DEAD_LETTER_TOPIC!];
  const out = await readCommitted(infra, outputs, (r) => r.length >= sends.length, { timeoutMs: 400_000, settleMs: 3000 }).catch((error: Error) => {
    throw new Error(`${error.message}\n--- pipelines ---\n${pipelines().map((p) => p.logs().slice(-3000)).join('\n---\n')}`);
  });
  const expectedCount = new Map<string, number>();
  for (const p of sends) expectedCount.set(p.id, (expectedCount.get(p.id) ?? 0) + 1);
  const seenCount = new Map<string, number>();
  for (const r of out) seenCount.set(r.key!, (seenCount.get(r.key!) ?? 0) + 1);
  const lost = [...expectedCount].filter(([id]) => !seenCount.has(id)).map(([id]) => id);
  const repeated = [...seenCount].filter(([id, n]) => n > (expectedCount.get(id) ?? 0)).map(([id]) => id);
  assert.deepEqual({ lost: lost.slice(0, 10), repeated: repeated.slice(0, 10) }, { lost: [], repeated: [] });
  assert.equal(out.length, sends.length, 'one verdict or dead letter per input record, none twice');
  assert.equal(out.filter((r) => r.topic === topics.DEDUP_DEAD_LETTER_TOPIC).length, 0, 'the stream has no bad records');

  // The decision order: every decided page in the id store, with its global sequence.
  const ids = await readCommitted(infra, [topics.DEDUP_IDS_TOPIC!], () => true, { timeoutMs: 60_000, settleMs: 2000 });
  const sequenceOf = new Map<string, number>();
  for (const r of ids) {
    if (r.value === null) continue;
    for (const { id, verdict } of decodeIdStore(r.value).entries) {
      assert.ok(!sequenceOf.has(id), `page id ${id} is in the id store twice`);
      sequenceOf.set(id, verdict.sequence);
    }
  }
  assert.equal(sequenceOf.size, expectedCount.size, 'every page id is in the id store once');
  const order = [...sequenceOf].sort((a, b) => a[1] - b[1]);
  assert.deepEqual(order.map(([, s]) => s), order.map((_, i) => i), 'the global sequence has no gap and no repeat');

  // Durability: every decided page is in the logs that rebuild the index, its home entry in
  // dedup.index under a chunk that dedup.order ordered.
  const logs = await readCommitted(infra, [topics.DEDUP_INDEX_TOPIC!, topics.DEDUP_ORDER_TOPIC!], () => true, { timeoutMs: 60_000, settleMs: 2000 });
  const orderedChunks = new Set(logs.filter((r) => r.topic === topics.DEDUP_ORDER_TOPIC).map((r) => chunkName(decodeOrder(r.value!).chunk)));
  const inLogs = new Set<string>();
  for (const r of logs) {
    if (r.topic !== topics.DEDUP_INDEX_TOPIC || routedRecordKind(r.value!) !== 'entries') continue;
    const entries = decodeEntries(r.value!);
    if (!orderedChunks.has(chunkName(entries.chunk))) continue;
    for (const { page } of entries.pages) if ((page.tables & 1) !== 0 && page.id !== null) inLogs.add(page.id);
  }
  assert.deepEqual([...sequenceOf.keys()].filter((id) => !inLogs.has(id)).slice(0, 10), [], 'every decided page is in dedup.index under an ordered chunk');

  const config = loadConfig({ ...env, DEDUP_INSTANCE_ID: 'oracle' });
  const byId = new Map<string, Page>();
  for (const p of sends) if (!byId.has(p.id)) byId.set(p.id, p);
  const fingerprinter = await createFingerprinter(featureOptionsFromConfig(config));
  const oracle = createDecider(config, planFromConfig(config));
  const expected = new Map(
    order.map(([id]) => {
      const p = byId.get(id)!;
      const f = fingerprinter.fingerprint({ html: p.html });
      return [id, oracle.decide({ id, hi: f.hi, lo: f.lo, short: f.short, fetchedAt: p.fetchedAt, sketch: f.sketch })] as const;
    }),
  );
  const { SchemaRegistry } = await import('@kafkajs/confluent-schema-registry');
  const registry = new SchemaRegistry({ host: infra.registryUrl });
  let duplicates = 0;
  let beyondK = 0;
  const mismatches: string[] = [];
  for (const r of out) {
    const decoded = (await registry.decode(r.value!)) as Record<string, unknown>;
    const e = expected.get(r.key!)!;
    const verdict = r.topic === topics.DEDUP_NOVEL_TOPIC ? 'novel' : 'duplicate';
    const got = { verdict, duplicateOf: decoded.duplicateOf ?? null, distance: decoded.distance ?? null };
    const want = { verdict: e.verdict, duplicateOf: e.duplicateOf, distance: e.distance };
    if (JSON.stringify(got) !== JSON.stringify(want)) mismatches.push(`${r.key}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    if (verdict === 'duplicate') duplicates++;
    if (typeof decoded.distance === 'number' && decoded.distance > config.k) beyondK++;
  }
  assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} verdicts differ from one index over the decision order`);
  return { out, duplicates, beyondK };
}

async function bandClusterSize(pages: Page[]): Promise<number> {
  const fingerprinter = await createFingerprinter();
  const keys = new Map<string, number>();
  for (const p of pages) {
    const f = fingerprinter.fingerprint({ html: p.html });
    for (let b = 0; b < 14; b++) {
      const k = `${b}:${bandKey(f.sketch, b, 4)}`;
      keys.set(k, (keys.get(k) ?? 0) + 1);
    }
  }
  return Math.max(...keys.values());
}

async function runScenario(name: string, instances: number, options: { demo: number; template: number; seed: number }): Promise<void> {
  const infra = requireInfra();
  const run = uniqueName(name);
  const topics = routedTopics(run);
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions: PARTITIONS, maxMessageBytes: 9 * 1024 * 1024 }]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-routed-'));
  const env = routedEnv(infra, run, topics);
  const { pages, sends } = makeStream(options.seed, options.demo, options.template);
  assert.ok((await bandClusterSize(pages.filter((p) => p.id.startsWith('tpl-')))) > 2 * CHAIN_LIMIT, 'the template pages put more pages under one band key than the chain limit');
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const started: PipelineProcess[] = [];
  try {
    for (let i = 0; i < instances; i++) started.push(startPipelineProcess({ ...env, DEDUP_INSTANCE_ID: `dedup-${i}`, DEDUP_STATE_DIR: join(stateDir, String(i)) }, await freePort()));
    await Promise.all(started.map((p) => p.waitReady(180_000)));
    await producer.connect();
    const json = (p: Page) => Buffer.from(JSON.stringify(p));
    for (let i = 0; i < sends.length; i += 100) {
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: sends.slice(i, i + 100).map((p) => ({ key: p.id, value: json(p) })) });
    }
    const { duplicates, beyondK } = await checkAgainstOracle(infra, topics, env, sends, () => started);
    assert.ok(duplicates > options.demo / 10, `the stream has near-duplicates to find (${duplicates})`);
    assert.ok(beyondK > 0, `some duplicates were found by the second stage beyond k (${beyondK})`);
    for (const p of started) p.child.kill('SIGTERM');
    for (const p of started) assert.equal(await p.exited, 0, p.logs().slice(-3000));
  } finally {
    await producer.disconnect().catch(() => undefined);
    for (const p of started) p.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
}

test('routed, one instance: verdicts equal one index over the decision order, a band cluster over the chain limit and re-sent ids included', { timeout: 600_000 }, async () => {
  await runScenario('rt1', 1, { demo: 1200, template: 200, seed: 41 });
});

test('routed, two instances: verdicts equal one index over the decision order', { timeout: 600_000 }, async () => {
  await runScenario('rt2', 2, { demo: 1200, template: 200, seed: 43 });
});

/** The 'index partition restored from its logs' lines of an instance's log. */
function restoredPartitions(logs: string): { partition: number; seconds: number; fromSnapshot: boolean; recordedWithoutProbe: number; answeredAgain: number }[] {
  return logs
    .split('\n')
    .filter((line) => line.includes('index partition restored from its logs'))
    .map((line) => JSON.parse(line) as { partition: number; seconds: number; fromSnapshot: boolean; recordedWithoutProbe: number; answeredAgain: number });
}

/** The 'index partitions taken on' lines of an instance's log: the partitions, and where the order log was read from. */
function takeovers(logs: string): { partitions: number[]; orderFrom?: number; orderFromOf?: string }[] {
  return logs
    .split('\n')
    .filter((line) => line.includes('index partitions taken on'))
    .map((line) => JSON.parse(line) as { partitions: number[]; orderFrom?: number; orderFromOf?: string });
}

/**
 * A restart scenario's stage: fresh topics, a stream with exact copies of its first pages under
 * new ids (sent last), instances started by id with a state directory each, and the clean-up.
 */
async function restartStage(name: string, seed: number, extraTopics: Record<string, string>, extraEnv: Record<string, string>, scenario: (stage: RestartStage) => Promise<void>): Promise<void> {
  const infra = requireInfra();
  const run = uniqueName(name);
  const topics = { ...routedTopics(run), ...Object.fromEntries(Object.entries(extraTopics).map(([k, suffix]) => [k, `${run}.${suffix}`])) };
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  await createTopics(admin, [{ topic: topics.DEDUP_PAGES_TOPIC, partitions: PARTITIONS, maxMessageBytes: 9 * 1024 * 1024 }]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-routed-'));
  const env = { ...routedEnv(infra, run, topics), ...extraEnv };
  const { pages, sends } = makeStream(seed, 1200, 150);
  // Exact copies, under new ids, of pages decided before the restarts: sent after them.
  const copies = pages.slice(0, 30).map((p) => ({ ...p, id: `copy-${p.id}` }));
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const started: PipelineProcess[] = [];
  const json = (p: Page) => Buffer.from(JSON.stringify(p));
  const send = async (list: Page[]): Promise<void> => {
    for (let i = 0; i < list.length; i += 50) await producer.send({ topic: topics.DEDUP_PAGES_TOPIC!, acks: -1, messages: list.slice(i, i + 50).map((p) => ({ key: p.id, value: json(p) })) });
  };
  try {
    await producer.connect();
    const start = async (instance: string): Promise<PipelineProcess> => {
      const p = startPipelineProcess({ ...env, DEDUP_INSTANCE_ID: instance, DEDUP_STATE_DIR: join(stateDir, instance) }, await freePort());
      started.push(p);
      return p;
    };
    const waitOutputs = (count: number, what: string): Promise<void> =>
      readCommitted(infra, [topics.DEDUP_NOVEL_TOPIC!, topics.DEDUP_DUPLICATE_TOPIC!, topics.DEDUP_DEAD_LETTER_TOPIC!], (r) => r.length >= count, { timeoutMs: 400_000, settleMs: 0 }).then(
        () => undefined,
        (error: Error) => {
          throw new Error(`${what}: ${error.message}\n--- pipelines ---\n${started.map((p) => p.logs().slice(-3000)).join('\n---\n')}`);
        },
      );
    await scenario({
      sends,
      topics,
      groupId: env.DEDUP_GROUP_ID!,
      start,
      twoDeciding: async (count) => {
        const a = await start('dedup-a');
        const b = await start('dedup-b');
        await Promise.all([a.waitReady(180_000), b.waitReady(180_000)]);
        await send(sends.slice(0, count));
        await waitOutputs(count, 'the first verdicts');
        return [a, b];
      },
      send,
      waitOutputs,
      finish: async (running) => {
        await send(copies);
        const { out } = await checkAgainstOracle(infra, topics, env, [...sends, ...copies], () => started);
        const duplicates = new Set(out.filter((r) => r.topic === topics.DEDUP_DUPLICATE_TOPIC).map((r) => r.key));
        assert.deepEqual(copies.filter((c) => !duplicates.has(c.id)).map((c) => c.id), [], 'exact copies of pages decided before the restarts are duplicates');
        for (const p of running) p.child.kill('SIGTERM');
        for (const p of running) assert.equal(await p.exited, 0, p.logs().slice(-3000));
      },
    });
  } finally {
    await producer.disconnect().catch(() => undefined);
    for (const p of started) p.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
}

interface RestartStage {
  /** The stream, copies apart. */
  readonly sends: Page[];
  /** The run's topics (DEDUP_*_TOPIC) and the group's id. */
  readonly topics: Record<string, string>;
  readonly groupId: string;
  start(instance: string): Promise<PipelineProcess>;
  /** Starts dedup-a and dedup-b, sends the stream's first `count` pages and waits for their verdicts. */
  twoDeciding(count: number): Promise<[PipelineProcess, PipelineProcess]>;
  send(list: Page[]): Promise<void>;
  /** Waits until the outputs hold `count` records. */
  waitOutputs(count: number, what: string): Promise<void>;
  /** Sends the copies, checks every verdict against one index and the copies as duplicates, and stops `running` gracefully. */
  finish(running: PipelineProcess[]): Promise<void>;
}

/**
 * Two instances, one SIGKILLed mid-stream: the survivor decides the rest alone, then the
 * killed one restarts under its instance id and takes its partitions back. With standbys the
 * survivor already holds a warm copy of every index partition: it replays none.
 */
async function killAndRestart(name: string, standby: boolean): Promise<void> {
  await restartStage(name, 47, standby ? { DEDUP_STANDBY_TOPIC: 'standby' } : {}, standby ? { DEDUP_STANDBY_REPLICAS: '1' } : {}, async ({ sends, start, send, waitOutputs, finish }) => {
    const a = await start('dedup-a');
    const b = await start('dedup-b');
    await Promise.all([a.waitReady(180_000), b.waitReady(180_000)]);
    const half = Math.floor(sends.length / 2);
    await send(sends.slice(0, half));
    // Crash one while the first half is being decided.
    await waitOutputs(half / 3, 'the first verdicts');
    b.child.kill('SIGKILL');
    assert.equal(await b.exited, 'SIGKILL');
    await send(sends.slice(half));
    // The survivor decides the rest alone.
    await waitOutputs(sends.length, 'the survivor deciding the rest');
    const replays = (a.logs().match(/index partitions taken on/g) ?? []).length;
    if (standby) assert.equal(replays, 1, 'with standbys, the survivor replays no index partition after the kill: it held a warm copy of each');
    else assert.ok(replays >= 2, 'without standbys, the survivor replays the dead instance\u2019s index partitions');
    const b2 = await start('dedup-b');
    await b2.waitReady(180_000);
    // Every chunk before the restart is committed: its pages are recorded without their probes.
    const restored = restoredPartitions(b2.logs());
    assert.ok(restored.length > 0, 'the restarted instance restores index partitions from their logs');
    assert.ok(restored.some((r) => r.recordedWithoutProbe > 0), `the restore records committed chunks without probing them: ${JSON.stringify(restored)}`);
    await finish([a, b2]);
  });
}

test('routed, two instances, one SIGKILLed mid-stream and restarted: no verdict lost or doubled, verdicts equal one index, and later exact copies are duplicates', { timeout: 900_000 }, async () => {
  await killAndRestart('rtk', false);
});

test('routed with warm standbys: the survivor of a SIGKILL takes its index partitions over without replaying them, and the verdicts are the same', { timeout: 900_000 }, async () => {
  await killAndRestart('rts', true);
});

/**
 * Snapshots: two instances writing snapshots every second. One stops gracefully (a snapshot of
 * each partition it holds at the stop) and starts again from them; then the other is SIGKILLed
 * mid-stream and starts again at once, from its last interval snapshots, while pages still
 * come. Every verdict still equals one index over the decision order, and exact copies of
 * earlier pages are duplicates.
 */
test('routed snapshots: a graceful restart and a SIGKILL restart each restore index partitions from snapshots plus the logs after them, and the verdicts equal one index', { timeout: 900_000 }, async () => {
  await restartStage('rtsn', 53, {}, { DEDUP_SNAPSHOT_INTERVAL_SECONDS: '1' }, async ({ sends, start, twoDeciding, send, waitOutputs, finish }) => {
    const fromSnapshots = (p: PipelineProcess) => restoredPartitions(p.logs()).filter((r) => r.fromSnapshot);
    const third = Math.floor(sends.length / 3);
    const [a, b] = await twoDeciding(third);
    // A graceful stop writes a snapshot of every partition it holds.
    b.child.kill('SIGTERM');
    assert.equal(await b.exited, 0, b.logs().slice(-3000));
    assert.match(b.logs(), /index partition snapshots written.*"reason":"shutdown"/);
    const b2 = await start('dedup-b');
    await b2.waitReady(180_000);
    assert.ok(fromSnapshots(b2).length > 0, `the gracefully restarted instance restores from its snapshots: ${JSON.stringify(restoredPartitions(b2.logs()))}`);
    // Then a crash mid-stream, after an interval snapshot.
    await send(sends.slice(third, 2 * third));
    await waitFor('an interval snapshot of the instance to be killed', () => (/index partition snapshots written.*"reason":"interval"/.test(a.logs()) ? true : undefined), 60_000);
    await waitOutputs(third + third / 4, 'verdicts of the second third');
    a.child.kill('SIGKILL');
    assert.equal(await a.exited, 'SIGKILL');
    // Back before the group notices: chunks the survivor owns wait for the killed instance's partitions.
    const a2 = await start('dedup-a');
    await send(sends.slice(2 * third));
    await a2.waitReady(180_000);
    assert.ok(fromSnapshots(a2).length > 0, `the instance restarted after a SIGKILL restores from its interval snapshots: ${JSON.stringify(restoredPartitions(a2.logs()))}`);
    // A restart from snapshots reads dedup.order from their resume point (the first chunk not
    // committed when they were written), not from its start.
    const restarts = [...takeovers(b2.logs()), ...takeovers(a2.logs())];
    assert.ok(restarts.some((t) => t.orderFromOf === 'snapshots' && t.orderFrom! > 0), `a restart from snapshots reads the order log from their resume point: ${JSON.stringify(restarts)}`);
    await finish([a2, b2]);
  });
});

/**
 * A restart while chunks the snapshots hold are still undecided: one instance is stopped
 * (SIGSTOP) mid-stream, so no chunk in flight can be committed (each waits for the stopped
 * instance's index partitions); the other stops gracefully (a snapshot of each partition it
 * holds, those chunks applied in it), the stopped one is killed, and both start again. The
 * partitions loaded from snapshots answer those chunks again as of their sequences (their
 * owners, restarted, wait for the replies), while the other partitions are replayed from their
 * logs, and every verdict still equals one index.
 */
test('routed snapshots: chunks a snapshot holds but whose verdicts were not committed are answered again after a restart, and the verdicts equal one index', { timeout: 900_000 }, async () => {
  await restartStage('rtag', 59, {}, { DEDUP_SNAPSHOT_INTERVAL_SECONDS: '1' }, async ({ sends, topics, groupId, start, twoDeciding, send, waitOutputs, finish }) => {
    const third = Math.floor(sends.length / 3);
    const [a, b] = await twoDeciding(third);
    // Within the group's session timeout (6 s), before it notices the stopped instance.
    b.child.kill('SIGSTOP');
    try {
      // Pages in flight now: their chunks are ordered and wait for the stopped instance's replies.
      await send(sends.slice(third, third + 60));
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      // The running instance's graceful stop writes a snapshot of each partition it holds, with
      // those chunks applied (its holder applies a chunk once its entries and order record are
      // read, whatever the stopped instance does).
      a.child.kill('SIGTERM');
      assert.equal(await a.exited, 0, a.logs().slice(-3000));
    } finally {
      b.child.kill('SIGKILL');
    }
    assert.equal(await b.exited, 'SIGKILL');
    // Nothing runs now: the chunks ordered and not committed are read from the logs.
    const infra = requireInfra();
    const admin = testKafka(infra).admin();
    await admin.connect();
    let undecided: number[];
    try {
      const [committedTopic] = await admin.fetchOffsets({ groupId, topics: [topics.DEDUP_PAGES_TOPIC!] });
      const committed = new Map((committedTopic?.partitions ?? []).map((p) => [p.partition, p.offset.startsWith('-') ? 0n : BigInt(p.offset)]));
      const end = Number((await admin.fetchTopicOffsets(topics.DEDUP_ORDER_TOPIC!)).find((o) => o.partition === 0)?.high ?? '0');
      const order = await readCommitted(infra, [topics.DEDUP_ORDER_TOPIC!], (r) => r.length >= end, { timeoutMs: 60_000, settleMs: 0 });
      undecided = order
        .filter((r) => {
          const { chunk } = decodeOrder(r.value!);
          return chunk.firstOffset >= (committed.get(chunk.inputPartition) ?? 0n);
        })
        .map((r) => Number(r.offset));
    } finally {
      await admin.disconnect();
    }
    assert.ok(undecided.length > 0, 'chunks were ordered and not committed when both stopped');
    assert.ok(snapshotOrderNext(a.logs()) > Math.min(...undecided), `the stop's snapshots hold undecided chunks (order offsets ${undecided.join(', ')}): ${a.logs().slice(-2000)}`);
    // The instance with the snapshots first, alone: no other owner commits those chunks before
    // its partitions are taken on (and answer them again).
    const a2 = await start('dedup-a');
    await a2.waitReady(180_000);
    const b2 = await start('dedup-b');
    await b2.waitReady(180_000);
    await send(sends.slice(third + 60));
    await waitOutputs(sends.length, 'every page after the restarts');
    const again = restoredPartitions(a2.logs()).filter((r) => r.fromSnapshot && r.answeredAgain > 0);
    assert.ok(again.length > 0, `partitions restored from snapshots answer undecided chunks again: ${JSON.stringify(restoredPartitions(a2.logs()))}`);
    await finish([a2, b2]);
  });
});

/** The highest orderNext an instance's 'index partition snapshots written' lines name (-1: none). */
function snapshotOrderNext(logs: string): number {
  let highest = -1;
  for (const line of logs.split('\n')) {
    if (!line.includes('index partition snapshots written')) continue;
    const { orderNext } = JSON.parse(line) as { orderNext?: number };
    if (orderNext !== undefined && orderNext > highest) highest = orderNext;
  }
  return highest;
}
