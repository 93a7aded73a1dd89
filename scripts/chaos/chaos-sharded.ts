/**
 * The chaos run in sharded mode (`CHAOS_MODE=sharded bash scripts/chaos.sh`):
 * three instances with warm standbys decide pages published with kcat while
 * instances are SIGKILLed one at a time (each started again after a drawn
 * delay: back at once, it gets its shards back; after the session timeout, a
 * standby has been promoted), the broker is SIGKILLed and restarted, the
 * registry is frozen (SIGSTOP) for a while, and once every instance is
 * killed and all local state deleted.
 *
 * Then, read with kcat (read_committed):
 *   lost, duplicated          input records without exactly one verdict or dead letter
 *   verdictMismatches         against `dedup batch` over the pages in the decision order
 *                             (an id's first probe in the sequence log)
 *   decidedMissingFromState   decided ids absent from the fingerprints changelog
 *   survivorStallSecondsMax   after each single SIGKILL, the longest time a partition the
 *                             victim did not own went without a commit while records waited
 *
 * Env (all optional): CHAOS_PAGES (4000), CHAOS_KILLS (12), CHAOS_SEED (7),
 * CHAOS_INSTANCES (3), CHAOS_PARTITIONS (6), CHAOS_SHARDS (6),
 * CHAOS_PUBLISH_SECONDS (240), CHAOS_HANG_SECONDS (15), CHAOS_DRAIN_SECONDS (300),
 * CHAOS_RESULTS (bench/results/chaos.json: the report goes under its "sharded" key;
 * empty = do not write). From the stack's env file: KAFKA_BROKERS,
 * SCHEMA_REGISTRY_URL, INFRA_STATE_DIR.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { demoPages } from '../../src/producers/demo-pages.js';
import { mulberry32 } from '../../src/mulberry32.js';
import { readSchema } from '../../src/wire/record-codec.js';
import { brokerAnswers, consumeAll, produceLines } from './kcat.js';
import { createPipelineSupervisor, httpOk, sleep, stackService, waitUntil, type PipelineSupervisor } from './services.js';

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
  pages: envInt('CHAOS_PAGES', 4000),
  kills: envInt('CHAOS_KILLS', 12),
  seed: envInt('CHAOS_SEED', 7),
  instances: Math.max(2, envInt('CHAOS_INSTANCES', 3)),
  partitions: Math.max(1, envInt('CHAOS_PARTITIONS', 6)),
  shards: Math.max(1, envInt('CHAOS_SHARDS', 6)),
  publishSeconds: envInt('CHAOS_PUBLISH_SECONDS', 240),
  hangSeconds: envInt('CHAOS_HANG_SECONDS', 15),
  drainSeconds: envInt('CHAOS_DRAIN_SECONDS', 300),
};
const resultsFile = process.env.CHAOS_RESULTS ?? join(ROOT, 'bench', 'results', 'chaos.json');
const brokers = required('KAFKA_BROKERS');
const registryUrl = required('SCHEMA_REGISTRY_URL');
const stateDir = required('INFRA_STATE_DIR');
const workDir = join(stateDir, 'chaos-sharded');
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
mkdirSync(join(stateDir, 'logs'), { recursive: true });

const TOPICS = { pages: 'crawl.pages', novel: 'pages.novel', duplicate: 'pages.duplicate', dlq: 'crawl.pages.dlq', sequence: 'dedup.sequence', fingerprints: 'simhash.fingerprints' };
const GROUP = 'simhash-dedup';
const started = Date.now();
const rand = mulberry32(params.seed ^ 0x5a4d);
const say = (message: string) => process.stderr.write(`[chaos-sharded ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${message}\n`);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---- inputs: demo pages in chunk files for kcat ----------------------------------------------

const pageLines = new Map<string, string>();
const chunkFiles: string[] = [];
{
  const pages = demoPages({ seed: params.seed });
  const chunkCount = Math.max(1, Math.min(80, Math.ceil(params.pages / 50)));
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

let publishStarted = 0;
async function publishAll(): Promise<void> {
  const interval = (params.publishSeconds * 1000) / chunkFiles.length;
  for (let i = 0; i < chunkFiles.length; i++) {
    const due = publishStarted + i * interval;
    if (Date.now() < due) await sleep(due - Date.now());
    await retrying(`publishing chunk ${i}`, () => produceLines(brokers, TOPICS.pages, chunkFiles[i]!));
  }
  say(`published ${params.pages} pages in ${chunkFiles.length} chunks`);
}

// ---- the instances -----------------------------------------------------------------------------

interface Member {
  name: string;
  state: string;
  log: string;
  metricsUrl: string;
  supervisor: PipelineSupervisor;
}

const members: Member[] = [];
for (let i = 0; i < params.instances; i++) {
  const name = `dedup-${String.fromCharCode(97 + i)}`;
  const port = await freePort();
  const metricsUrl = `http://127.0.0.1:${port}`;
  const state = join(workDir, 'state', name);
  const log = join(stateDir, 'logs', `chaos-${name}.log`);
  const env: Record<string, string> = {
    DEDUP_MODE: 'sharded',
    DEDUP_INSTANCE_ID: name,
    DEDUP_SHARDS: String(params.shards),
    DEDUP_STANDBY_REPLICAS: '1',
    DEDUP_TOPIC_PARTITIONS: String(params.partitions),
    DEDUP_BROKERS: brokers,
    DEDUP_SCHEMA_REGISTRY_URL: registryUrl,
    DEDUP_METRICS_HOST: '127.0.0.1',
    DEDUP_METRICS_PORT: String(port),
    DEDUP_STATE_DIR: state,
    DEDUP_SNAPSHOT_INTERVAL_SECONDS: '15',
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
    DEDUP_MAX_BATCH_RECORDS: '50',
    DEDUP_FINGERPRINT_THREADS: '1',
    DEDUP_LOG_LEVEL: 'info',
  };
  members.push({ name, state, log, metricsUrl, supervisor: createPipelineSupervisor({ cli: CLI, env, logFile: log, metricsUrl, startupDeadlineMs: 120_000 }) });
}

/** The input partitions a member was last assigned, from its log. */
function partitionsOf(m: Member): number[] {
  if (!existsSync(m.log)) return [];
  const lines = [...readFileSync(m.log, 'utf8').matchAll(/"msg":"assignment","partitions":\[([\d,]*)\]/g)];
  const last = lines[lines.length - 1];
  return last ? last[1]!.split(',').filter(Boolean).map(Number) : [];
}

// ---- committed offsets, sampled throughout -------------------------------------------------------

const samples: { t: number; committed: number[]; end: number[] }[] = [];
let sampling = true;
const sampler = (async () => {
  const kafka = new Kafka({ clientId: 'chaos-sampler', brokers: brokers.split(','), logLevel: logLevel.NOTHING, retry: { retries: 2, initialRetryTime: 100 } });
  let admin = kafka.admin();
  let connected = false;
  while (sampling) {
    try {
      if (!connected) {
        admin = kafka.admin();
        await Promise.race([admin.connect(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('connect timed out')), 5000))]);
        connected = true;
      }
      const t = Date.now();
      // A request to a broker that was killed can hang: bounded, then a new client.
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('sample timed out')), 3000));
      const [committed, end] = await Promise.race([Promise.all([admin.fetchOffsets({ groupId: GROUP, topics: [TOPICS.pages] }), admin.fetchTopicOffsets(TOPICS.pages)]), timeout]);
      const c = new Array<number>(params.partitions).fill(0);
      const e = new Array<number>(params.partitions).fill(0);
      for (const p of committed[0]?.partitions ?? []) c[p.partition] = Math.max(0, Number(p.offset));
      for (const p of end) e[p.partition] = Number(p.high);
      samples.push({ t, committed: c, end: e });
    } catch {
      connected = false;
      void admin.disconnect().catch(() => undefined);
    }
    await sleep(250);
  }
  await admin.disconnect().catch(() => undefined);
})();

/** Per partition, over [from, to): the longest time without a commit while records waited. */
function stalls(from: number, to: number): number[] {
  const out = new Array<number>(params.partitions).fill(0);
  const window = samples.filter((s) => s.t >= from && s.t < to);
  for (let p = 0; p < params.partitions; p++) {
    let lastMove = from;
    let last = samples.filter((s) => s.t < from).at(-1)?.committed[p] ?? 0;
    for (const s of window) {
      if (s.committed[p] !== last) {
        last = s.committed[p]!;
        lastMove = s.t;
      } else if (s.end[p]! > s.committed[p]!) {
        out[p] = Math.max(out[p]!, (s.t - lastMove) / 1000);
      } else {
        lastMove = s.t;
      }
    }
  }
  return out;
}

// ---- the run -------------------------------------------------------------------------------------

const kafkaService = stackService(stateDir, 'kafka');
const registryService = stackService(stateDir, 'registry');
let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    registryService.signal('SIGCONT');
  } catch {
    /* not running */
  }
  sampling = false;
  await Promise.all(members.map((m) => m.supervisor.stop(20_000)));
  await sampler;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void shutdown().finally(() => process.exit(130));
  });
}

const phases: { name: string; atSecond: number; seconds: number; notes: Record<string, unknown> }[] = [];
async function phase(name: string, body: (notes: Record<string, unknown>) => Promise<void>): Promise<void> {
  const at = Date.now();
  const notes: Record<string, unknown> = {};
  say(`phase: ${name}`);
  await body(notes);
  phases.push({ name, atSecond: Math.round((at - started) / 1000), seconds: (Date.now() - at) / 1000, notes });
}

const readyAll = (timeoutMs = 180_000) => Promise.all(members.map((m) => m.supervisor.ready(timeoutMs)));
const killEvents: { victim: string; at: number; restartDelaySeconds: number; victimPartitions: number[]; restartReadySeconds: number; end: number }[] = [];

async function killOne(n: number): Promise<void> {
  const victim = members[Math.floor(rand() * members.length)]!;
  const victimPartitions = partitionsOf(victim);
  // Back at once (its shards come back to it) or after the session timeout (a standby is promoted).
  const restartDelaySeconds = rand() < 0.5 ? 0 : 7 + Math.round(rand() * 5);
  const at = Date.now();
  await victim.supervisor.kill();
  await sleep(restartDelaySeconds * 1000);
  const restartAt = Date.now();
  victim.supervisor.start();
  await victim.supervisor.ready(180_000);
  const restartReadySeconds = (Date.now() - restartAt) / 1000;
  killEvents.push({ victim: victim.name, at, restartDelaySeconds, victimPartitions, restartReadySeconds, end: Infinity });
  say(`kill ${n}: SIGKILL ${victim.name} (partitions ${victimPartitions.join(',')}), restarted after ${restartDelaySeconds} s, ready ${restartReadySeconds.toFixed(1)} s later`);
}

/** A sample taken after `since` shows every partition within `lag` records of its end. */
function caughtUp(since: number, lag: number): boolean {
  const last = samples.at(-1);
  return last !== undefined && last.t > since && last.committed.every((c, p) => c + lag >= last.end[p]!);
}

let publishedAt = Infinity;
async function drained(): Promise<boolean> {
  return caughtUp(publishedAt, 0);
}

/** After a fault of the whole group, the next SIGKILL waits until the group has caught up again: one fault at a time. */
async function settle(notes: Record<string, unknown>): Promise<void> {
  const since = Date.now();
  try {
    notes.caughtUpAfterMs = await waitUntil('the group to catch up', async () => caughtUp(since, 50), 120_000, 500);
  } catch (error) {
    notes.notCaughtUp = (error as Error).message;
  }
}

let ok = false;
let report: Record<string, unknown> = {};
try {
  for (const m of members) m.supervisor.start();
  await readyAll();
  say(`${members.length} instances ready; publishing ${params.pages} pages over ~${params.publishSeconds} s`);
  publishStarted = Date.now();
  const publishing = publishAll();
  publishing.catch(() => undefined);
  await sleep(5000);

  const order = Array.from({ length: params.kills }, (_, i) => i + 1);
  const brokerAfter = Math.floor(params.kills * 0.3);
  const hangAfter = Math.floor(params.kills * 0.55);
  const wipeAfter = Math.floor(params.kills * 0.75);
  const runKills = async (from: number, to: number) => {
    for (const n of order.slice(from, to)) {
      await killOne(n);
      await sleep(2000 + rand() * 3000);
    }
  };
  const mark = () => {
    const last = killEvents.at(-1);
    if (last && last.end === Infinity) last.end = Date.now();
  };

  await runKills(0, brokerAfter);
  mark();
  await phase('broker SIGKILL and restart', async (notes) => {
    await kafkaService.kill();
    const killedAt = Date.now();
    await sleep(5000);
    kafkaService.restart();
    notes.brokerDownSeconds = (Date.now() - killedAt) / 1000;
    notes.brokerAnswersAfterMs = await waitUntil('the broker to answer', () => brokerAnswers(brokers), 120_000, 500);
    notes.instancesReadyAfterMs = Math.max(...(await readyAll()));
    await settle(notes);
  });
  await runKills(brokerAfter, hangAfter);
  mark();
  if (params.hangSeconds > 0) {
    await phase(`registry stop and hang (SIGSTOP ${params.hangSeconds} s, then SIGCONT)`, async (notes) => {
      registryService.signal('SIGSTOP');
      const frozenAt = Date.now();
      await sleep((params.hangSeconds * 1000) / 2);
      notes.readyMidHang = await Promise.all(members.map((m) => httpOk(`${m.metricsUrl}/readyz`)));
      await sleep(Math.max(0, frozenAt + params.hangSeconds * 1000 - Date.now()));
      registryService.signal('SIGCONT');
      notes.instancesReadyAfterMs = Math.max(...(await readyAll()));
      await settle(notes);
    });
  }
  await runKills(hangAfter, wipeAfter);
  mark();
  await phase('every instance SIGKILLed, all local state deleted, started again', async (notes) => {
    await Promise.all(members.map((m) => m.supervisor.kill()));
    for (const m of members) rmSync(m.state, { recursive: true, force: true });
    const at = Date.now();
    for (const m of members) m.supervisor.start();
    await readyAll();
    notes.readyAfterSeconds = (Date.now() - at) / 1000;
    await settle(notes);
  });
  await runKills(wipeAfter, params.kills);
  mark();

  await publishing;
  publishedAt = Date.now();
  await phase('drain', async (notes) => {
    try {
      notes.drainedAfterMs = await waitUntil('every input record committed', drained, params.drainSeconds * 1000, 1000);
    } catch (error) {
      notes.notDrained = (error as Error).message;
      say(`not drained: ${(error as Error).message}`);
    }
  });
  sampling = false;
  await sampler;
  await Promise.all(members.map((m) => m.supervisor.stop(30_000)));

  // ---- accounting --------------------------------------------------------------------------------
  say('reading the topics back with kcat (read_committed)');
  const [input, novel, duplicate, dlq, sequence, changelog] = await Promise.all(
    [TOPICS.pages, TOPICS.novel, TOPICS.duplicate, TOPICS.dlq, TOPICS.sequence, TOPICS.fingerprints].map((t) => consumeAll(brokers, t)),
  );
  const inputs = new Map<string, number>();
  for (const r of input!) inputs.set(r.key ?? '<null>', (inputs.get(r.key ?? '<null>') ?? 0) + 1);
  const outputs = new Map<string, { topic: string; value: Buffer | null }[]>();
  for (const [topic, records] of [['novel', novel!], ['duplicate', duplicate!], ['dlq', dlq!]] as const) {
    for (const r of records) outputs.set(r.key ?? '<null>', [...(outputs.get(r.key ?? '<null>') ?? []), { topic, value: r.value }]);
  }
  let lost = 0;
  let duplicated = 0;
  const lostKeys: string[] = [];
  const duplicatedKeys: string[] = [];
  for (const [key, n] of inputs) {
    const out = outputs.get(key)?.length ?? 0;
    if (out < n) (lost += n - out), lostKeys.push(key);
    if (out > n) (duplicated += out - n), duplicatedKeys.push(key);
  }

  // Every decided page is in the changelog.
  const recorded = new Set(changelog!.map((r) => r.key));
  const decided = [...outputs].filter(([, list]) => list.some((o) => o.topic !== 'dlq')).map(([key]) => key);
  const missingFromState = decided.filter((id) => !recorded.has(id));

  // The decision order: each id's first probe in the sequence log.
  const decisionOrder: string[] = [];
  const placed = new Set<string>();
  for (const r of [...sequence!].sort((a, b) => a.offset - b.offset)) {
    if (!r.value) continue;
    const probe = JSON.parse(r.value.toString('utf8')) as { type: string; id: string };
    if (probe.type === 'probe' && !placed.has(probe.id) && pageLines.has(probe.id)) {
      placed.add(probe.id);
      decisionOrder.push(probe.id);
    }
  }
  const batchInput = join(workDir, 'batch-input.jsonl');
  writeFileSync(batchInput, decisionOrder.map((id) => pageLines.get(id)!).join('\n') + '\n');
  const { stdout } = await execFileP(process.execPath, [CLI, 'batch', '--input', batchInput], { maxBuffer: 256 * 1024 * 1024 });
  const batchVerdicts = stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; verdict?: string; duplicateOf?: string | null; error?: string });
  type AvroType = { forSchema(s: unknown): { fromBuffer(b: Buffer): Record<string, unknown> } };
  const avsc = (await import('avsc' as string)) as { Type?: AvroType; default?: { Type: AvroType } };
  const avroDuplicate = (avsc.Type ?? avsc.default!.Type).forSchema(JSON.parse(readSchema('duplicate-page')));
  const mismatches: unknown[] = [];
  for (const b of batchVerdicts) {
    const got = outputs.get(b.id)?.find((o) => o.topic !== 'dlq');
    if (!got) continue; // counted as lost, or dead-lettered
    let duplicateOf: string | null = null;
    if (got.topic === 'duplicate' && got.value) {
      duplicateOf = got.value[0] === 0x7b ? (JSON.parse(got.value.toString('utf8')) as { duplicateOf: string }).duplicateOf : (avroDuplicate.fromBuffer(got.value.subarray(5)).duplicateOf as string);
    }
    const expected = b.error ? 'dlq' : b.verdict!;
    if (got.topic !== expected || (expected === 'duplicate' && duplicateOf !== (b.duplicateOf ?? null))) {
      mismatches.push({ id: b.id, batch: { verdict: expected, duplicateOf: b.duplicateOf ?? null }, pipeline: { verdict: got.topic, duplicateOf } });
    }
  }

  // Stalls: after each single SIGKILL, until the next fault.
  const perKill = killEvents.map((k, i) => {
    const until = Math.min(k.end, killEvents[i + 1]?.at ?? Infinity, k.at + 30_000);
    const s = stalls(k.at, until);
    const survivors = [...Array(params.partitions).keys()].filter((p) => !k.victimPartitions.includes(p));
    // The largest gap between samples in the window: a stall shorter than it could be missed.
    const times = [k.at, ...samples.filter((x) => x.t >= k.at && x.t < until).map((x) => x.t), Math.min(until, Date.now())];
    let sampleGapSeconds = 0;
    for (let j = 1; j < times.length; j++) sampleGapSeconds = Math.max(sampleGapSeconds, (times[j]! - times[j - 1]!) / 1000);
    return {
      victim: k.victim,
      atSecond: Math.round((k.at - started) / 1000),
      sampleGapSeconds,
      restartDelaySeconds: k.restartDelaySeconds,
      restartReadySeconds: k.restartReadySeconds,
      survivorStallSeconds: Math.max(0, ...survivors.map((p) => s[p]!)),
      victimStallSeconds: Math.max(0, ...k.victimPartitions.map((p) => s[p]!)),
    };
  });

  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim();
  const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'scripts'], { cwd: ROOT }).toString().trim().length > 0;
  const survivorStallSecondsMax = Math.max(0, ...perKill.map((k) => k.survivorStallSeconds));
  ok = lost === 0 && duplicated === 0 && mismatches.length === 0 && missingFromState.length === 0;
  report = {
    mode: 'sharded',
    date: new Date().toISOString(),
    commit,
    dirty,
    node: process.version,
    machine: { cores: cpus().length, loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
    command: 'CHAOS_MODE=sharded bash scripts/chaos.sh',
    parameters: params,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    instances: members.length,
    sigkills: killEvents.length + members.length,
    sigkillsNote: `${killEvents.length} single SIGKILLs, then ${members.length} more when all local state was deleted`,
    lost,
    duplicated,
    verdictMismatches: mismatches.length,
    verdictsCompared: batchVerdicts.length,
    decidedMissingFromState: missingFromState.length,
    survivorStallSecondsMax,
    stallSampleGapSecondsMax: Math.max(0, ...perKill.map((k) => k.sampleGapSeconds)),
    victimStallSecondsMax: Math.max(0, ...perKill.map((k) => k.victimStallSeconds)),
    restartReadySecondsMax: Math.max(0, ...perKill.map((k) => k.restartReadySeconds)),
    offsetSamples: samples.length,
    kills: perKill,
    phases,
    counts: {
      inputRecords: input!.length,
      outputs: { novel: novel!.length, duplicate: duplicate!.length, deadLetters: dlq!.length },
      sequenceRecords: sequence!.length,
      changelogRecords: changelog!.length,
      lostKeys: lostKeys.slice(0, 20),
      duplicatedKeys: duplicatedKeys.slice(0, 20),
      missingFromState: missingFromState.slice(0, 20),
      mismatchExamples: mismatches.slice(0, 10),
    },
    unexpectedExits: members.map((m) => ({ instance: m.name, exits: m.supervisor.events.unexpectedExits.map((e) => ({ atSecond: Math.round((e.at - started) / 1000), code: e.code })) })),
    ok,
  };
} catch (error) {
  say(`run failed: ${(error as Error).stack ?? String(error)}`);
  report = { mode: 'sharded', ...report, error: (error as Error).message, phases, ok: false };
} finally {
  await shutdown();
}

process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
if (resultsFile) {
  mkdirSync(dirname(resultsFile), { recursive: true });
  let previous: Record<string, unknown> = {};
  try {
    previous = JSON.parse(readFileSync(resultsFile, 'utf8')) as Record<string, unknown>;
  } catch {
    previous = {};
  }
  writeFileSync(resultsFile, `${JSON.stringify({ ...previous, sharded: report }, null, 2)}\n`);
  say(`results written to ${resultsFile} (key "sharded")`);
}
say(`lost ${String(report.lost)}, duplicated ${String(report.duplicated)}, mismatches ${String(report.verdictMismatches)}, missing from state ${String(report.decidedMissingFromState)}, survivor stall max ${String(report.survivorStallSecondsMax)} s; ${ok ? 'OK' : 'FAILED'}`);
process.exit(ok ? 0 : 1);
