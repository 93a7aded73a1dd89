/**
 * The chaos run (scripts/chaos.sh starts the stack and then this driver):
 * pages and hostile records published with kcat while the pipeline is
 * SIGKILLed again and again, the broker is killed and restarted, the registry
 * is killed and restarted and then frozen (SIGSTOP) for a while. At the end,
 * every input record is looked for in the output topics (read_committed, with
 * kcat), and the verdicts are compared with `dedup batch` over the same pages
 * in the same order.
 *
 * The claim under test: a fault never turns into a hang, a crash loop or
 * silent data loss. Each input record must end in exactly one verdict or dead
 * letter; lost or duplicated records make the run fail.
 *
 * Env (all optional): CHAOS_PAGES (5000), CHAOS_KILLS (20), CHAOS_SEED (7),
 * CHAOS_PARTITIONS (1: decision order = input order, so verdicts compare one
 * by one), CHAOS_PUBLISH_SECONDS (300), CHAOS_HANG_SECONDS (20),
 * CHAOS_BROKER (1), CHAOS_REGISTRY (1), CHAOS_DRAIN_SECONDS (180),
 * CHAOS_STARTUP_SECONDS (60: a pipeline alive but not ready for this long
 * is killed and started again, and the hang recorded), CHAOS_RESULTS
 * (bench/results/chaos.json; empty = do not write).
 * From the stack's env file: KAFKA_BROKERS, SCHEMA_REGISTRY_URL, INFRA_STATE_DIR.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { demoPages } from '../../src/producers/demo-pages.js';
import { mulberry32 } from '../../src/mulberry32.js';
import { readSchema } from '../../src/wire/record-codec.js';
import { brokerAnswers, consumeAll, deadLetterCodes, produceFile, produceLines, type KcatRecord } from './kcat.js';
import { createPipelineSupervisor, httpOk, sleep, stackService, waitUntil } from './services.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const execFileP = promisify(execFile);

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run scripts/chaos.sh, which starts the stack and sources its env file`);
  return v;
}

const params = {
  pages: envInt('CHAOS_PAGES', 5000),
  kills: envInt('CHAOS_KILLS', 20),
  seed: envInt('CHAOS_SEED', 7),
  partitions: Math.max(1, envInt('CHAOS_PARTITIONS', 1)),
  publishSeconds: envInt('CHAOS_PUBLISH_SECONDS', 300),
  hangSeconds: envInt('CHAOS_HANG_SECONDS', 20),
  broker: envInt('CHAOS_BROKER', 1) === 1,
  registry: envInt('CHAOS_REGISTRY', 1) === 1,
  drainSeconds: envInt('CHAOS_DRAIN_SECONDS', 180),
  startupSeconds: envInt('CHAOS_STARTUP_SECONDS', 60),
};
const resultsFile = process.env.CHAOS_RESULTS ?? join(ROOT, 'bench', 'results', 'chaos.json');
const brokers = required('KAFKA_BROKERS');
const registryUrl = required('SCHEMA_REGISTRY_URL');
const stateDir = required('INFRA_STATE_DIR');
const workDir = join(stateDir, 'chaos');
mkdirSync(workDir, { recursive: true });

const TOPICS = { pages: 'crawl.pages', novel: 'pages.novel', duplicate: 'pages.duplicate', dlq: 'crawl.pages.dlq' };
const GROUP = 'simhash-dedup';
const started = Date.now();
const rand = mulberry32(params.seed ^ 0x5eed);
const say = (message: string) => process.stderr.write(`[chaos ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${message}\n`);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---- inputs -------------------------------------------------------------------------------

interface Hostile {
  kind: string;
  key: string;
  value: Buffer;
}

function hostileRecords(round: number): Hostile[] {
  const key = (kind: string) => `bad-${kind}-${round}`;
  return [
    { kind: 'broken-json', key: key('broken-json'), value: Buffer.from('{"id":"x","html":"<p>cut off') },
    { kind: 'invalid-utf8', key: key('invalid-utf8'), value: Buffer.concat([Buffer.from(`{"id":"${key('invalid-utf8')}","html":"<p>`), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('</p>"}')]) },
    { kind: 'empty', key: key('empty'), value: Buffer.alloc(0) },
    { kind: 'no-id', key: key('no-id'), value: Buffer.from(JSON.stringify({ url: 'https://e.example/', html: '<p>a page with no id</p>' })) },
    { kind: 'not-json', key: key('not-json'), value: Buffer.from('hello, this is neither Avro nor JSON') },
    { kind: 'only-markup', key: key('only-markup'), value: Buffer.from(JSON.stringify({ id: key('only-markup'), html: '<html><script>var x = 1;</script><style>p{}</style></html>' })) },
    { kind: 'avro-unknown-schema', key: key('avro-unknown-schema'), value: Buffer.from([0, 0x7f, 0xff, 0xff, 0xf0 + (round % 8), 2, 0x61, 0x62]) },
    // The 'invalid-utf8' body above is decoded with U+FFFD and decided; an id with invalid UTF-8 is refused.
    { kind: 'invalid-utf8-id', key: key('invalid-utf8-id'), value: Buffer.concat([Buffer.from('{"id":"bad-id-'), Buffer.from([0xff, 0xfe]), Buffer.from(`-${round}","html":"<p>a page whose id is broken</p>"}`)]) },
    { kind: 'binary-body', key: key('binary-body'), value: Buffer.from(JSON.stringify({ id: key('binary-body'), html: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]).toString('latin1') })) },
  ];
}

function hugeRecord(): Hostile {
  const key = 'bad-huge-0';
  return { kind: 'huge', key, value: Buffer.from(JSON.stringify({ id: key, url: 'https://e.example/huge', html: `<p>${'lorem ipsum '.repeat(450_000)}</p>` })) };
}

function longUrlRecord(): Hostile {
  const key = 'bad-url-2mb-0';
  const url = `https://e.example/${'a'.repeat(2 * 1024 * 1024)}`;
  return { kind: 'url-2mb', key, value: Buffer.from(JSON.stringify({ id: key, url, fetchedAt: Date.UTC(2026, 10, 2), html: '<p>An ordinary page behind an absurd address, with enough words to fingerprint it.</p>' })) };
}

const pageLines = new Map<string, string>();
const chunkFiles: string[] = [];
{
  const pages = demoPages({ seed: params.seed });
  const chunkCount = Math.max(1, Math.min(60, Math.ceil(params.pages / 50)));
  const perChunk = Math.ceil(params.pages / chunkCount);
  let lines: string[] = [];
  for (let i = 0; i < params.pages; i++) {
    const p = pages.next().value!;
    const json = JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html });
    pageLines.set(p.id, json);
    lines.push(`${p.id}\t${json}`);
    if (lines.length === perChunk || i === params.pages - 1) {
      const file = join(workDir, `pages-${chunkFiles.length}.tsv`);
      writeFileSync(file, `${lines.join('\n')}\n`);
      chunkFiles.push(file);
      lines = [];
    }
  }
}

const hostileSent: Hostile[] = [];
async function publishHostile(record: Hostile): Promise<void> {
  const file = join(workDir, `${record.key}.bin`);
  if (record.value.length === 0) {
    // kcat sends nothing for an empty file; an empty line after the key is an empty value.
    writeFileSync(file, `${record.key}\t\n`);
    await retrying(`publishing ${record.key}`, () => produceLines(brokers, TOPICS.pages, file));
  } else {
    writeFileSync(file, record.value);
    await retrying(`publishing ${record.key}`, () => produceFile(brokers, TOPICS.pages, record.key, file));
  }
  hostileSent.push(record);
}

async function retrying(what: string, action: () => Promise<void>, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`${what}: still failing after ${timeoutMs} ms: ${(error as Error).message}`);
      if (attempt === 1) say(`${what} failed (${(error as Error).message.split('\n')[0]}); retrying`);
      await sleep(2000);
    }
  }
}

/** Publishes the page chunks spread over publishSeconds, a round of hostile records every few chunks. */
async function publishAll(): Promise<void> {
  const interval = (params.publishSeconds * 1000) / chunkFiles.length;
  const hostileEvery = Math.max(1, Math.floor(chunkFiles.length / 4));
  for (let i = 0; i < chunkFiles.length; i++) {
    const due = publishStarted + i * interval;
    if (Date.now() < due) await sleep(due - Date.now());
    await retrying(`publishing chunk ${i}`, () => produceLines(brokers, TOPICS.pages, chunkFiles[i]!));
    if (i % hostileEvery === hostileEvery - 1) for (const h of hostileRecords(i)) await publishHostile(h);
    if (i === Math.floor(chunkFiles.length / 2)) await publishHostile(hugeRecord());
  }
  say(`published ${params.pages} pages in ${chunkFiles.length} chunks and ${hostileSent.length} hostile records`);
}

// ---- metrics scraping -----------------------------------------------------------------------

async function metricValue(metricsUrl: string, pattern: RegExp): Promise<number | null> {
  const response = await fetch(`${metricsUrl}/metrics`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
  if (!response || response.status !== 200) return null;
  const text = await response.text();
  let sum = 0;
  for (const line of text.split('\n')) if (pattern.test(line)) sum += Number(line.split(' ').pop());
  return sum;
}

// ---- the run ---------------------------------------------------------------------------------

const metricsPort = await freePort();
const metricsUrl = `http://127.0.0.1:${metricsPort}`;
const pipelineEnv: Record<string, string> = {
  DEDUP_BROKERS: brokers,
  DEDUP_SCHEMA_REGISTRY_URL: registryUrl,
  DEDUP_METRICS_HOST: '127.0.0.1',
  DEDUP_METRICS_PORT: String(metricsPort),
  DEDUP_STATE_DIR: join(workDir, 'pipeline-state'),
  DEDUP_SNAPSHOT_INTERVAL_SECONDS: '15',
  DEDUP_EXPECTED_FINGERPRINTS: '100000',
  DEDUP_TOPIC_PARTITIONS: String(params.partitions),
  DEDUP_LOG_LEVEL: 'info',
};
const pipelineLog = join(stateDir, 'logs', 'chaos-pipeline.log');
const pipeline = createPipelineSupervisor({ cli: CLI, env: pipelineEnv, logFile: pipelineLog, metricsUrl, startupDeadlineMs: params.startupSeconds * 1000 });
const kafkaService = stackService(stateDir, 'kafka');
const registryService = stackService(stateDir, 'registry');
let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  // A frozen registry must not outlive the run frozen.
  try {
    registryService.signal('SIGCONT');
  } catch {
    /* not running */
  }
  await pipeline.stop(20_000);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void shutdown().finally(() => process.exit(130));
  });
}

const phases: { name: string; startedAt: number; seconds: number; notes: Record<string, unknown> }[] = [];
async function phase(name: string, body: (notes: Record<string, unknown>) => Promise<void>): Promise<void> {
  const at = Date.now();
  const notes: Record<string, unknown> = {};
  say(`phase: ${name}`);
  await body(notes);
  phases.push({ name, startedAt: (at - started) / 1000, seconds: (Date.now() - at) / 1000, notes });
}

const timeToReady: number[] = [];
async function killPipeline(n: number): Promise<void> {
  const t0 = Date.now();
  await pipeline.killAndRestart();
  await pipeline.ready(180_000);
  timeToReady.push(Date.now() - t0);
  say(`kill ${n}: SIGKILL, restarted, ready after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

async function drained(): Promise<boolean> {
  const kafka = new Kafka({ clientId: 'chaos-drain', brokers: brokers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 1 } });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(TOPICS.pages);
    const [committed] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPICS.pages] });
    return ends.every((e) => {
      const c = committed!.partitions.find((p) => p.partition === e.partition);
      return c !== undefined && BigInt(c.offset) >= BigInt(e.high);
    });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

let publishStarted = 0;
let ok = false;
let report: Record<string, unknown> = {};
try {
  pipeline.start();
  await pipeline.ready(180_000);
  say(`pipeline ready (metrics ${metricsUrl}); publishing ${params.pages} pages over ~${params.publishSeconds} s`);
  publishStarted = Date.now();
  const publishing = publishAll();
  publishing.catch(() => undefined);

  const kills = Array.from({ length: params.kills }, (_, i) => i + 1);
  const brokerAfter = Math.floor(params.kills * 0.3);
  const registryStopAfter = Math.floor(params.kills * 0.55);
  const hangAfter = Math.floor(params.kills * 0.8);
  const runKills = async (from: number, to: number) => {
    for (const n of kills.slice(from, to)) {
      await sleep(1000 + rand() * 5000);
      await killPipeline(n);
    }
  };

  await runKills(0, brokerAfter);
  if (params.broker) {
    await phase('broker SIGKILL and restart', async (notes) => {
      await kafkaService.kill();
      const killedAt = Date.now();
      await sleep(5000);
      kafkaService.restart();
      notes.brokerDownSeconds = (Date.now() - killedAt) / 1000;
      notes.brokerAnswersAfterMs = await waitUntil('the broker to answer', () => brokerAnswers(brokers), 120_000, 500);
      notes.pipelineReadyAfterMs = await pipeline.ready(180_000);
    });
  }
  await runKills(brokerAfter, registryStopAfter);
  if (params.registry) {
    await phase('registry SIGKILL, pipeline killed during the outage, registry restarted', async (notes) => {
      const exitsBefore = pipeline.events.unexpectedExits.length;
      await registryService.kill();
      await publishHostile({ ...hostileRecords(1000)[6]!, kind: 'avro-unknown-schema-during-outage' });
      await sleep(3000);
      await pipeline.killAndRestart();
      await sleep(10_000);
      notes.readyDuringOutage = await httpOk(`${metricsUrl}/readyz`);
      registryService.restart();
      notes.registryAnswersAfterMs = await waitUntil('the registry to answer', () => httpOk(`${registryUrl}/subjects`), 180_000, 500);
      notes.pipelineReadyAfterMs = await pipeline.ready(180_000);
      notes.pipelineStartFailuresDuringOutage = pipeline.events.unexpectedExits.length - exitsBefore;
    });
  }
  await runKills(registryStopAfter, hangAfter);
  if (params.registry && params.hangSeconds > 0) {
    await phase(`registry hang (SIGSTOP ${params.hangSeconds} s, then SIGCONT)`, async (notes) => {
      const registryErrors = () => metricValue(metricsUrl, /^dedup_errors_total\{code="REGISTRY"\}/);
      const consumed = () => metricValue(metricsUrl, /^dedup_pages_consumed_total/);
      notes.registryErrorsBefore = await registryErrors();
      notes.pagesConsumedBefore = await consumed();
      registryService.signal('SIGSTOP');
      const frozenAt = Date.now();
      await publishHostile({ ...hostileRecords(2000)[6]!, kind: 'avro-unknown-schema-during-hang' });
      await sleep((params.hangSeconds * 1000) / 2);
      notes.registryErrorsMidHang = await registryErrors();
      notes.pagesConsumedMidHang = await consumed();
      notes.readyMidHang = await httpOk(`${metricsUrl}/readyz`);
      await sleep(Math.max(0, frozenAt + params.hangSeconds * 1000 - Date.now()));
      notes.registryErrorsEndOfHang = await registryErrors();
      notes.pagesConsumedEndOfHang = await consumed();
      registryService.signal('SIGCONT');
      notes.pipelineReadyAfterMs = await pipeline.ready(180_000);
    });
  }
  await runKills(hangAfter, params.kills);

  await publishing;
  // Last, so that a record the pipeline cannot get past shows as itself
  // rather than as everything published after it.
  await publishHostile(longUrlRecord());
  await phase('drain', async (notes) => {
    try {
      notes.drainedAfterMs = await waitUntil('the pipeline to commit every input record', drained, params.drainSeconds * 1000, 1000);
    } catch (error) {
      notes.notDrained = (error as Error).message;
      say(`not drained: ${(error as Error).message}`);
    }
  });
  await pipeline.stop();

  // ---- accounting ---------------------------------------------------------------------------
  say('reading every topic back with kcat (read_committed)');
  const [input, novel, duplicate, dlq] = await Promise.all([TOPICS.pages, TOPICS.novel, TOPICS.duplicate, TOPICS.dlq].map((t) => consumeAll(brokers, t)));
  const dlqCodes = await deadLetterCodes(brokers, TOPICS.dlq);
  const inputs = new Map<string, number>();
  for (const r of input!) inputs.set(r.key ?? '<null>', (inputs.get(r.key ?? '<null>') ?? 0) + 1);
  const outputs = new Map<string, { topic: string; record: KcatRecord }[]>();
  for (const [topic, records] of [['novel', novel!], ['duplicate', duplicate!], ['dlq', dlq!]] as const) {
    for (const r of records) {
      const list = outputs.get(r.key ?? '<null>') ?? [];
      list.push({ topic, record: r });
      outputs.set(r.key ?? '<null>', list);
    }
  }
  let lost = 0;
  let duplicated = 0;
  const lostKeys: string[] = [];
  const duplicatedKeys: string[] = [];
  for (const [key, n] of inputs) {
    const out = outputs.get(key)?.length ?? 0;
    if (out < n) {
      lost += n - out;
      lostKeys.push(key);
    }
    if (out > n) {
      duplicated += out - n;
      duplicatedKeys.push(key);
    }
  }
  const unexpected = [...outputs.keys()].filter((k) => !inputs.has(k));

  // ---- verdicts against `dedup batch` over the same pages in input order -----------------
  const pageOrder = input!.filter((r) => r.key !== null && pageLines.has(r.key));
  const batchInput = join(workDir, 'batch-input.jsonl');
  writeFileSync(batchInput, pageOrder.map((r) => pageLines.get(r.key!)!).join('\n') + '\n');
  const { stdout } = await execFileP(process.execPath, [CLI, 'batch', '--input', batchInput], { maxBuffer: 256 * 1024 * 1024 });
  const batchVerdicts = stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; verdict?: string; duplicateOf?: string | null; error?: string });
  let avroDuplicate: { fromBuffer(b: Buffer): Record<string, unknown> } | null = null;
  try {
    // avsc comes with the registry client; it reads the Avro body after the 5-byte header.
    type AvroType = { forSchema(s: unknown): { fromBuffer(b: Buffer): Record<string, unknown> } };
    const avsc = (await import('avsc' as string)) as { Type?: AvroType; default?: { Type: AvroType } };
    avroDuplicate = (avsc.Type ?? avsc.default!.Type).forSchema(JSON.parse(readSchema('duplicate-page')));
  } catch {
    avroDuplicate = null;
  }
  const pipelineVerdict = new Map<string, { verdict: string; duplicateOf: string | null }>();
  for (const [key, list] of outputs) {
    const first = list.find((o) => o.topic !== 'dlq') ?? list[0]!;
    let duplicateOf: string | null = null;
    if (first.topic === 'duplicate' && first.record.value) {
      const v = first.record.value;
      if (v[0] === 0x7b) duplicateOf = (JSON.parse(v.toString('utf8')) as { duplicateOf: string }).duplicateOf;
      else if (avroDuplicate) duplicateOf = avroDuplicate.fromBuffer(v.subarray(5)).duplicateOf as string;
    }
    pipelineVerdict.set(key, { verdict: first.topic, duplicateOf });
  }
  const mismatches: unknown[] = [];
  let duplicateOfCompared = 0;
  const batchCounts = { novel: 0, duplicate: 0, error: 0 };
  for (const b of batchVerdicts) {
    const expected = b.error ? 'dlq' : b.verdict!;
    batchCounts[b.error ? 'error' : (b.verdict as 'novel' | 'duplicate')]++;
    const got = pipelineVerdict.get(b.id);
    if (!got) continue; // counted as lost above
    let same = got.verdict === expected;
    if (same && expected === 'duplicate' && got.duplicateOf !== null) {
      duplicateOfCompared++;
      same = got.duplicateOf === b.duplicateOf;
    }
    if (!same) mismatches.push({ id: b.id, batch: { verdict: expected, duplicateOf: b.duplicateOf ?? null }, pipeline: got });
  }

  const hostileOutcome = hostileSent.map((h) => {
    const out = outputs.get(h.key) ?? [];
    return {
      kind: h.kind,
      key: h.key,
      bytes: h.value.length,
      outcome: out.map((o) => (o.topic === 'dlq' ? `dlq:${dlqCodes.get(`${o.record.partition}:${o.record.offset}`) ?? '?'}` : o.topic)),
    };
  });
  const median = (xs: number[]) => (xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'scripts'], { cwd: ROOT }).toString().trim().length > 0;
  ok = lost === 0 && duplicated === 0;
  report = {
    date: new Date().toISOString(),
    commit,
    dirty,
    node: process.version,
    machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryGB: Math.round(totalmem() / 2 ** 30), loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
    command: 'bash scripts/chaos.sh',
    parameters: params,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    pipeline: {
      sigkills: timeToReady.length,
      secondsFromKillToReady: { median: (median(timeToReady) ?? 0) / 1000, max: Math.max(0, ...timeToReady) / 1000 },
      starts: pipeline.events.starts,
      unexpectedExits: pipeline.events.unexpectedExits.map((e) => ({ atSecond: Math.round((e.at - started) / 1000), code: e.code })),
      startupHangs: pipeline.events.startupHangs.map((e) => ({ atSecond: Math.round((e.at - started) / 1000) })),
    },
    phases,
    counts: {
      inputRecords: input!.length,
      distinctInputKeys: inputs.size,
      pagesPublished: params.pages,
      hostilePublished: hostileSent.length,
      hostileMissingFromInput: hostileSent.filter((h) => !inputs.has(h.key)).map((h) => h.key),
      outputs: { novel: novel!.length, duplicate: duplicate!.length, deadLetters: dlq!.length },
      lost,
      duplicated,
      unexpectedOutputKeys: unexpected.length,
      lostKeys: lostKeys.slice(0, 20),
      duplicatedKeys: duplicatedKeys.slice(0, 20),
    },
    verdicts: {
      method:
        params.partitions === 1
          ? 'one input partition: decision order is input order; each page compared with `dedup batch` over the pages in input-topic order (verdict, and duplicateOf where decoded)'
          : 'several partitions: decision order interleaves them, so only the counts of novel and duplicate are comparable',
      batch: batchCounts,
      compared: batchVerdicts.length,
      duplicateOfCompared,
      mismatches: params.partitions === 1 ? mismatches.length : null,
      examples: mismatches.slice(0, 10),
    },
    hostile: hostileOutcome,
    ok,
  };
} catch (error) {
  say(`run failed: ${(error as Error).stack ?? String(error)}`);
  report = { ...report, error: (error as Error).message, phases, ok: false };
} finally {
  await shutdown();
}

process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
if (resultsFile) {
  mkdirSync(dirname(resultsFile), { recursive: true });
  writeFileSync(resultsFile, `${JSON.stringify(report, null, 2)}\n`);
  say(`results written to ${resultsFile}`);
}
const counts = report.counts as { lost: number; duplicated: number } | undefined;
const verdicts = report.verdicts as { mismatches: number | null } | undefined;
say(
  counts
    ? `lost ${counts.lost}, duplicated ${counts.duplicated}, verdict mismatches ${verdicts?.mismatches ?? 'n/a'}; ${ok ? 'OK' : 'FAILED'}`
    : 'FAILED before the accounting',
);
process.exit(ok ? 0 : 1);
