/**
 * Routed mode's coordination cost on the real broker, with 1, 2 and 3
 * instances on the same input: the bytes written to and read from the routed
 * topics (dedup.index, dedup.order, dedup.replies, dedup.ids; not the input or
 * the verdict outputs) per page, and the main thread's busy time per page
 * (fingerprinting and decoding run on the worker threads, so this is the
 * coordination and the Kafka clients, plus encoding the verdicts).
 *
 * Each case: fresh topics and group, the instances started and ready, the
 * group stable with every instance, then COORDINATION_IDLE_SECONDS (10) idle,
 * measured (main-thread CPU and, with COORDINATION_REQUESTS_DIR, requests per
 * second: what the instances cost whatever the page rate), then the pages sent
 * at once (or at COORDINATION_RATE pages/s); timed from the first send to the
 * last input offset committed. The routed traffic (keys and values read and
 * written, records, by kind) is what the instances' metrics
 * (dedup_routed_bytes_total, dedup_routed_records_total) counted between the
 * start and the end of that window: the instances stop one after another, and
 * each survivor takes on the partitions of the one stopped before it and
 * replays their logs, which the stop lines (src/modes/routed/start.ts) count too
 * (outsideWindowBytesPerPage). Record overhead is counted at 80 B a record
 * (the figure bench/scale/model.ts uses), and writes once more per extra
 * replica.
 *
 *   source .infra/env   # after bash deploy/local/up.sh; or any broker and registry
 *   node dist/bench/scale/coordination.js [pages=3000] [instances=1,2,3]
 *
 * The same run first measures the passthrough (bench/pipeline/passthrough.ts,
 * one instance) over the same pages on fresh topics: the pipeline's consumer
 * and transactional producer, reading the input, writing what the verdicts
 * weigh (the value forwarded and a small record per page) and committing the
 * offsets, with no work between. Its main-thread CPU per page is what any
 * Kafka stage of this shape costs; routed mode's minus it is the cost of the
 * coordination itself (with the index partitions' probes, which routed mode
 * runs on the main thread).
 *
 * COORDINATION_PROFILE_DIR=dir writes a --cpu-prof profile of each instance
 * there; COORDINATION_LOG_DIR=dir each instance's log, and the bench logs the
 * window's start, so the two can be lined up. COORDINATION_REQUESTS_DIR=dir makes each instance count the Kafka
 * requests it sends, by API (request-counter.ts), and adds
 * requestsPerThousandPages (sent while timed) to each case.
 *
 * Writes the "coordination" key of bench/results/scale.json, keeping the others.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PASSTHROUGH_SCRIPT, processCpu } from './group.js';
import { CLI, DIST, ROOT, benchKafka, deleteTopics, freePort, log, startChild, stackFromEnv, stopChild, waitFor, waitReady, type Child } from '../pipeline/common.js';
import { createPagesTopic, demoRecords, routedEnv, routedTopics, waitAllCommitted } from './routed-bench.js';

const RECORD_OVERHEAD = 80;
/** With COORDINATION_REQUESTS_DIR=dir: each instance counts the Kafka requests it sends, by API (request-counter.ts). */
const REQUESTS_DIR = process.env.COORDINATION_REQUESTS_DIR ?? null;

/** With COORDINATION_LOG_DIR=dir: each instance's log is written there as <run>.<instance>.log (what it did while timed: assignments, replays). */
const LOG_DIR = process.env.COORDINATION_LOG_DIR ?? null;

type RequestCounts = Record<string, { requests: number; bytes: number }>;

/** The request counts of the children now: each writes its file on SIGUSR2. */
async function requestCounts(children: readonly Child[]): Promise<RequestCounts> {
  if (REQUESTS_DIR === null) return {};
  const files = children.map((c) => join(REQUESTS_DIR, `requests.${c.pid}.json`));
  const before = files.map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : ''));
  for (const c of children) c.child.kill('SIGUSR2');
  await waitFor('the request counts', async () => (files.every((f, i) => existsSync(f) && readFileSync(f, 'utf8') !== before[i]) ? true : undefined), 5_000, 20).catch(() => undefined);
  const sum: RequestCounts = {};
  for (const f of files) {
    if (!existsSync(f)) continue;
    for (const [api, c] of Object.entries(JSON.parse(readFileSync(f, 'utf8')) as RequestCounts)) {
      const s = (sum[api] ??= { requests: 0, bytes: 0 });
      s.requests += c.requests;
      s.bytes += c.bytes;
    }
  }
  return sum;
}
/** Seconds each case first runs idle (group stable, no input), measured: the CPU and requests a routed instance costs per second whatever the page rate. */
const IDLE_SECONDS = Number(process.env.COORDINATION_IDLE_SECONDS ?? 10);
/** Pages per second to send at, in 200-page batches (0: all at once, as fast as the producer goes). */
const RATE = Number(process.env.COORDINATION_RATE ?? 0);

/** Routed traffic by record kind, as the instances' metrics report it (dedup_routed_bytes_total, dedup_routed_records_total), summed over them. */
type KindCounts = Record<string, KindTraffic>;

async function routedCounts(ports: readonly number[]): Promise<KindCounts> {
  const sum: KindCounts = {};
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of text.split('\n')) {
      const m = /^dedup_routed_(bytes|records)_total\{direction="(read|written)",kind="([^"]+)"\} (\S+)$/.exec(line);
      if (!m) continue;
      const k = (sum[m[3]!] ??= { readBytes: 0, readRecords: 0, writtenBytes: 0, writtenRecords: 0 });
      const field = `${m[2]}${m[1] === 'bytes' ? 'Bytes' : 'Records'}` as keyof KindTraffic;
      k[field] += Number(m[4]);
    }
  }
  return sum;
}

/** What `after` counted beyond `before`, kind by kind. */
function countsSince(after: KindCounts, before: KindCounts): KindCounts {
  const out: KindCounts = {};
  for (const [kind, a] of Object.entries(after)) {
    const b = before[kind] ?? { readBytes: 0, readRecords: 0, writtenBytes: 0, writtenRecords: 0 };
    out[kind] = { readBytes: a.readBytes - b.readBytes, readRecords: a.readRecords - b.readRecords, writtenBytes: a.writtenBytes - b.writtenBytes, writtenRecords: a.writtenRecords - b.writtenRecords };
  }
  return out;
}

/** Requests sent between two counts, by API, per unit (1,000 pages, or a second). */
function requestsPer(after: RequestCounts, before: RequestCounts, per: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [api, c] of Object.entries(after)) {
    const n = c.requests - (before[api]?.requests ?? 0);
    if (n > 0) out[api] = Math.round((n / per) * 10) / 10;
  }
  return out;
}

const PARTITIONS = 6;
const INDEX_PARTITIONS = 16;
const REPLICATION = 1;

interface KindTraffic { readBytes: number; readRecords: number; writtenBytes: number; writtenRecords: number }
interface Traffic { byKind?: Record<string, KindTraffic>; assignments: number; indexReplays: number; chunks: number; roundTwoAsks: number; roundTrips: number; committedRecords: number; readBytes: number; readRecords: number; writtenBytes: number; writtenRecords: number; mainThreadBusyMs: number }

async function runCase(mode: 'routed' | 'passthrough', instances: number, pages: Buffer[], keys: string[]): Promise<Record<string, unknown>> {
  const stack = stackFromEnv();
  const kafka = benchKafka(stack);
  const run = `coord-${mode === 'passthrough' ? 'pt' : instances}-${Date.now().toString(36)}`;
  const topics = routedTopics(run);
  const admin = kafka.admin();
  await admin.connect();
  await createPagesTopic(admin, topics.DEDUP_PAGES_TOPIC!, PARTITIONS, REPLICATION);
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-coord-'));
  const env: Record<string, string> = {
    ...routedEnv(stack, run, topics, { inputPartitions: PARTITIONS, indexPartitions: INDEX_PARTITIONS, expectedFingerprints: 100_000 }),
    DEDUP_FINGERPRINT_THREADS: '1',
  };
  const children: Child[] = [];
  const ports: number[] = [];
  try {
    for (let i = 0; i < instances; i++) {
      const port = await freePort();
      const nodeArgs = [
        ...(process.env.COORDINATION_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.COORDINATION_PROFILE_DIR}`] : []),
        ...(REQUESTS_DIR !== null ? ['--import', pathToFileURL(join(DIST, 'bench', 'scale', 'request-counter.js')).href] : []),
      ];
      const child = startChild(mode === 'passthrough' ? PASSTHROUGH_SCRIPT : CLI, mode === 'passthrough' ? [] : ['run'], { ...env, DEDUP_INSTANCE_ID: `coord-${i}`, DEDUP_STATE_DIR: join(stateDir, String(i)), DEDUP_METRICS_PORT: String(port), ...(REQUESTS_DIR !== null ? { REQUEST_COUNTER_DIR: REQUESTS_DIR } : {}) }, nodeArgs);
      children.push(child);
      ports.push(port);
      await waitReady(child, port);
    }
    // Every member in the group, the group stable, and every index partition held before the clock starts.
    if (mode === 'routed') {
      await waitFor('a stable group of every instance', async () => {
        const { groups } = await admin.describeGroups([env.DEDUP_GROUP_ID!]);
        return groups[0]?.state === 'Stable' && groups[0].members.length === instances ? true : undefined;
      }, 120_000, 200);
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const cpu = () => children.map((c) => processCpu(c.pid) ?? { total: 0, main: 0 });
    const mainCpu = (after: { main: number }[], before: { main: number }[]) => after.reduce((n, c, i) => n + c.main - before[i]!.main, 0);
    // Idle: the group stable, nothing to read. What the instances cost per second whatever the page rate.
    const idleRequestsBefore = await requestCounts(children);
    const idleCpuBefore = cpu();
    const idleFrom = Date.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idleCpuAfter = cpu();
    const idleSeconds = (Date.now() - idleFrom) / 1000;
    const idleRequestsAfter = await requestCounts(children);
    const idle = {
      idleSeconds: Math.round(idleSeconds * 10) / 10,
      // Summed over the instances.
      idleMainCpuMsPerSecond: Math.round((mainCpu(idleCpuAfter, idleCpuBefore) * 1e4) / idleSeconds) / 10,
      ...(REQUESTS_DIR !== null ? { idleRequestsPerSecond: requestsPer(idleRequestsAfter, idleRequestsBefore, idleSeconds) } : {}),
    };
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const requestsBefore = await requestCounts(children);
    const trafficBefore = mode === 'routed' ? await routedCounts(ports) : {};
    const cpuBefore = cpu();
    const started = Date.now();
    if (LOG_DIR !== null) log(`${run}: timed from ${new Date(started).toISOString()}`);
    for (let i = 0; i < pages.length; i += 200) {
      if (RATE > 0) {
        const due = started + (i * 1000) / RATE;
        if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      }
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(i, i + 200).map((value, j) => ({ key: keys[i + j]!, value })) });
    }
    await producer.disconnect();
    await waitAllCommitted(admin, env.DEDUP_GROUP_ID!, topics.DEDUP_PAGES_TOPIC!, pages.length, 600_000);
    const ended = Date.now();
    const seconds = (ended - started) / 1000;
    const cpuAfter = cpu();
    // The routed topics' traffic while timed, from the instances' metrics: not what they read after,
    // when the instances stop one by one and each survivor takes on (and replays) the stopped one's partitions.
    const window = mode === 'routed' ? countsSince(await routedCounts(ports), trafficBefore) : {};
    const requestsAfter = await requestCounts(children);
    // Requests sent while timed, by API, per 1,000 pages (with COORDINATION_REQUESTS_DIR).
    const requestsPerThousandPages = requestsPer(requestsAfter, requestsBefore, pages.length / 1000);
    const mainSeconds = mainCpu(cpuAfter, cpuBefore);
    const totalSeconds = cpuAfter.reduce((n, c, i) => n + c.total - cpuBefore[i]!.total, 0);
    for (const c of children) await stopChild(c);
    const n = pages.length;
    // Main-thread CPU per page less what the same seconds cost idle: the part that grows with the pages.
    const idleCpuInWindow = (idle.idleMainCpuMsPerSecond / 1000) * seconds;
    const perPage = { cpuUsPerPage: Math.round((mainSeconds * 1e6) / n), cpuUsPerPageAboveIdle: Math.round(((mainSeconds - idleCpuInWindow) * 1e6) / n) };
    if (mode === 'passthrough') {
      return { pages: n, seconds: Math.round(seconds * 10) / 10, pagesPerSecond: Math.round(n / seconds), ...perPage, allThreadsCpuUsPerPage: Math.round((totalSeconds * 1e6) / n), ...idle, ...(REQUESTS_DIR !== null ? { requestsPerThousandPages } : {}) };
    }
    const traffic: Traffic[] = children.map((c) => {
      const line = c.logs().split('\n').find((l) => l.includes('"msg":"routed traffic"'));
      if (!line) throw new Error(`no traffic line:\n${c.logs().slice(-2000)}`);
      return JSON.parse(line) as Traffic;
    });
    const sum = (f: (t: Traffic) => number) => traffic.reduce((n, t) => n + f(t), 0);
    // Rebalances while the pages flowed (the traffic counts them from start-up, when the logs are empty).
    const loggedAt = (line: string): number => {
      try {
        return Date.parse((JSON.parse(line) as { time: string }).time);
      } catch {
        return 0;
      }
    };
    const inWindow = (msg: string) => children.reduce((count, c) => count + c.logs().split('\n').filter((l) => l.includes(`"msg":"${msg}`) && loggedAt(l) >= started && loggedAt(l) <= ended).length, 0);
    const assignmentsInWindow = inWindow('assignment"');
    const indexReplaysInWindow = inWindow('index partitions taken on');
    const kinds = Object.values(window);
    const written = kinds.reduce((s, k) => s + k.writtenBytes + RECORD_OVERHEAD * k.writtenRecords, 0) * REPLICATION;
    const read = kinds.reduce((s, k) => s + k.readBytes + RECORD_OVERHEAD * k.readRecords, 0);
    // The whole run's (start to stop, from the stop lines) less the window's: start-up, and the takeovers as the instances stop.
    const wholeRun = sum((t) => (t.writtenBytes + RECORD_OVERHEAD * t.writtenRecords) * REPLICATION + t.readBytes + RECORD_OVERHEAD * t.readRecords);
    // Per record kind: bytes written (replicated) and read per page, record overhead included.
    const byKind: Record<string, { writtenBytesPerPage: number; readBytesPerPage: number; writtenRecordsPerPage: number; readRecordsPerPage: number }> = {};
    for (const [kind, k] of Object.entries(window)) {
      byKind[kind] = {
        writtenBytesPerPage: ((k.writtenBytes + RECORD_OVERHEAD * k.writtenRecords) * REPLICATION) / n,
        readBytesPerPage: (k.readBytes + RECORD_OVERHEAD * k.readRecords) / n,
        writtenRecordsPerPage: k.writtenRecords / n,
        readRecordsPerPage: k.readRecords / n,
      };
    }
    for (const s of Object.values(byKind)) for (const f of Object.keys(s) as (keyof typeof s)[]) s[f] = Math.round(s[f] * 100) / 100;
    return {
      instances,
      pages: n,
      seconds: Math.round(seconds * 10) / 10,
      pagesPerSecond: Math.round(n / seconds),
      bytesPerPage: Math.round((written + read) / n),
      writtenBytesPerPage: Math.round(written / n),
      readBytesPerPage: Math.round(read / n),
      recordsPerPage: Math.round((kinds.reduce((s, k) => s + k.writtenRecords + k.readRecords, 0) / n) * 100) / 100,
      outsideWindowBytesPerPage: Math.round((wholeRun - written - read) / n),
      // Main-thread CPU over the timed window, from /proc: fingerprinting and decoding run on the worker threads.
      ...perPage,
      allThreadsCpuUsPerPage: Math.round((totalSeconds * 1e6) / n),
      mainThreadBusyUsPerPage: Math.round((sum((t) => t.mainThreadBusyMs) * 1000) / n),
      assignments: sum((t) => t.assignments),
      assignmentsInWindow,
      indexReplays: sum((t) => t.indexReplays),
      indexReplaysInWindow,
      ...idle,
      pagesPerChunk: Math.round((n / sum((t) => t.chunks)) * 10) / 10,
      roundTwoAsksPerPage: Math.round((sum((t) => t.roundTwoAsks) / n) * 100) / 100,
      roundTripsPerChunk: Math.round((sum((t) => t.roundTrips) / sum((t) => t.chunks)) * 100) / 100,
      byKind,
      ...(REQUESTS_DIR !== null ? { requestsPerThousandPages } : {}),
    };
  } finally {
    for (const c of children) if (!c.hasExited()) c.child.kill('SIGKILL');
    if (LOG_DIR !== null) children.forEach((c, i) => writeFileSync(join(LOG_DIR, `${run}.${i}.log`), c.logs()));
    await admin.disconnect().catch(() => undefined);
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 3000);
  const cases = (process.argv[3] ?? '1,2,3').split(',').map(Number);
  const { keys, pages } = demoRecords(count, 5);
  log(`passthrough: ${count} pages`);
  const passthrough = await runCase('passthrough', 1, pages, keys);
  log(JSON.stringify(passthrough));
  const results: Record<string, unknown>[] = [];
  for (const instances of cases) {
    log(`routed coordination: ${instances} instance(s), ${count} pages`);
    const r = await runCase('routed', instances, pages, keys);
    // Coordination's own main-thread CPU: routed mode's less the passthrough's, same pages, same run.
    r.passthroughCpuUsPerPage = passthrough.cpuUsPerPage;
    r.coordinationCpuUsPerPage = (r.cpuUsPerPage as number) - (passthrough.cpuUsPerPage as number);
    r.coordinationCpuUsPerPageAboveIdle = (r.cpuUsPerPageAboveIdle as number) - (passthrough.cpuUsPerPageAboveIdle as number);
    log(JSON.stringify(r));
    results.push(r);
  }
  const file = join(ROOT, 'bench', 'results', 'scale.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  doc.coordination = results;
  doc.coordinationDetail = {
    date: new Date().toISOString(),
    command: `${RATE > 0 ? `COORDINATION_RATE=${RATE} ` : ''}node dist/bench/scale/coordination.js ${count} ${cases.join(',')}`,
    rate: RATE > 0 ? RATE : 'all at once',
    idleSeconds: IDLE_SECONDS,
    loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    indexPartitions: INDEX_PARTITIONS,
    inputPartitions: PARTITIONS,
    replication: REPLICATION,
    recordOverheadBytes: RECORD_OVERHEAD,
    passthrough,
    note: 'Routed mode on the real broker (shared 2-core machine, figures noisy). Bytes: keys and values of every record written to and read from dedup.index, dedup.order, dedup.replies and dedup.ids while timed (the instances\u2019 dedup_routed_bytes_total and dedup_routed_records_total at the start and the end of the window), plus 80 B a record; outsideWindowBytesPerPage: what the instances counted from start to stop beyond that (start-up, and each survivor taking on and replaying the partitions of the instances stopped before it); idleMainCpuMsPerSecond: main-thread CPU of all instances per second over idleSeconds with the group stable and no input, before the window; cpuUsPerPageAboveIdle: cpuUsPerPage less that idle rate times the window\u2019s seconds, and coordinationCpuUsPerPageAboveIdle the same difference against the passthrough\u2019s; cpuUsPerPage: main-thread CPU of all instances over the timed window (/proc), per page, fingerprinting and decoding being on worker threads; passthroughCpuUsPerPage: the same for the passthrough (bench/pipeline/passthrough.ts, one instance) over the same pages in the same run, and coordinationCpuUsPerPage the difference; byKind: bytes and records per page by routed record kind, written and read; mainThreadBusyUsPerPage: event-loop busy time from start to stop (startup, replay and shutdown included, inflated when the CPU is oversubscribed).',
  };
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
