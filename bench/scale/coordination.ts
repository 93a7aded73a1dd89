/**
 * Routed mode's coordination cost on the real broker, with 1, 2 and 3
 * instances on the same input: the bytes written to and read from the routed
 * topics (dedup.index, dedup.order, dedup.replies, dedup.ids; not the input or
 * the verdict outputs) per page, and the main thread's busy time per page
 * (fingerprinting and decoding run on the worker threads, so this is the
 * coordination and the Kafka clients, plus encoding the verdicts).
 *
 * Each case: fresh topics and group, the instances started and ready, then
 * the pages sent at once; timed from the first send to the last input offset
 * committed. The instances then stop, and each logs its routed traffic
 * (keys and values read and written, records, main-thread busy time:
 * src/app/pipeline.ts). Record overhead is counted at 80 B a record (the
 * figure bench/scale/model.ts uses), and writes once more per extra replica.
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
 * there. COORDINATION_REQUESTS_DIR=dir makes each instance count the Kafka
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
import { demoPages } from '../../src/producers/demo-pages.js';
import { PASSTHROUGH_SCRIPT, processCpu } from './group.js';
import { CLI, DIST, ROOT, benchKafka, deleteTopics, freePort, largeTopicConfig, log, startChild, stackFromEnv, stopChild, waitFor, waitReady, type Child } from '../pipeline/common.js';

const RECORD_OVERHEAD = 80;
/** With COORDINATION_REQUESTS_DIR=dir: each instance counts the Kafka requests it sends, by API (request-counter.ts). */
const REQUESTS_DIR = process.env.COORDINATION_REQUESTS_DIR ?? null;

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
const PARTITIONS = 6;
const INDEX_PARTITIONS = 16;
const REPLICATION = 1;

interface KindTraffic { readBytes: number; readRecords: number; writtenBytes: number; writtenRecords: number }
interface Traffic { byKind?: Record<string, KindTraffic>; assignments: number; indexReplays: number; chunks: number; roundTwoAsks: number; roundTrips: number; committedRecords: number; readBytes: number; readRecords: number; writtenBytes: number; writtenRecords: number; mainThreadBusyMs: number }

async function runCase(mode: 'routed' | 'passthrough', instances: number, pages: Buffer[], keys: string[]): Promise<Record<string, unknown>> {
  const stack = stackFromEnv();
  const kafka = benchKafka(stack);
  const run = `coord-${mode === 'passthrough' ? 'pt' : instances}-${Date.now().toString(36)}`;
  const topics = {
    DEDUP_PAGES_TOPIC: `${run}.pages`,
    DEDUP_NOVEL_TOPIC: `${run}.novel`,
    DEDUP_DUPLICATE_TOPIC: `${run}.duplicate`,
    DEDUP_DEAD_LETTER_TOPIC: `${run}.dlq`,
    DEDUP_FINGERPRINTS_TOPIC: `${run}.fingerprints`,
    DEDUP_INDEX_TOPIC: `${run}.index`,
    DEDUP_ORDER_TOPIC: `${run}.order`,
    DEDUP_REPLIES_TOPIC: `${run}.replies`,
    DEDUP_IDS_TOPIC: `${run}.ids`,
  };
  const admin = kafka.admin();
  await admin.connect();
  const createPages = (a: typeof admin) =>
    a.createTopics({ waitForLeaders: true, topics: [{ topic: topics.DEDUP_PAGES_TOPIC, numPartitions: PARTITIONS, replicationFactor: REPLICATION, configEntries: largeTopicConfig(4 * 1024 * 1024) }] });
  // A busy broker can refuse a fresh topic's metadata for a moment: wait and ask again.
  for (let attempt = 1; ; attempt++) {
    try {
      await createPages(admin);
      break;
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-coord-'));
  const env = {
    ...topics,
    DEDUP_MODE: 'routed',
    DEDUP_INDEX_PARTITIONS: String(INDEX_PARTITIONS),
    DEDUP_TOPIC_PARTITIONS: String(PARTITIONS),
    DEDUP_BROKERS: stack.brokers.join(','),
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
    DEDUP_FINGERPRINT_THREADS: '1',
    DEDUP_METRICS_HOST: '127.0.0.1',
    DEDUP_LOG_LEVEL: 'info',
  };
  const children: Child[] = [];
  try {
    for (let i = 0; i < instances; i++) {
      const port = await freePort();
      const nodeArgs = [
        ...(process.env.COORDINATION_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.COORDINATION_PROFILE_DIR}`] : []),
        ...(REQUESTS_DIR !== null ? ['--import', pathToFileURL(join(DIST, 'bench', 'scale', 'request-counter.js')).href] : []),
      ];
      const child = startChild(mode === 'passthrough' ? PASSTHROUGH_SCRIPT : CLI, mode === 'passthrough' ? [] : ['run'], { ...env, DEDUP_INSTANCE_ID: `coord-${i}`, DEDUP_STATE_DIR: join(stateDir, String(i)), DEDUP_METRICS_PORT: String(port), ...(REQUESTS_DIR !== null ? { REQUEST_COUNTER_DIR: REQUESTS_DIR } : {}) }, nodeArgs);
      children.push(child);
      await waitReady(child, port);
    }
    // Every member in the group, the group stable, and every index partition held before the clock starts.
    if (mode === 'routed') {
      await waitFor('a stable group of every instance', async () => {
        const { groups } = await admin.describeGroups([env.DEDUP_GROUP_ID]);
        return groups[0]?.state === 'Stable' && groups[0].members.length === instances ? true : undefined;
      }, 120_000, 200);
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const cpu = () => children.map((c) => processCpu(c.pid) ?? { total: 0, main: 0 });
    const requestsBefore = await requestCounts(children);
    const cpuBefore = cpu();
    const started = Date.now();
    for (let i = 0; i < pages.length; i += 200) {
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(i, i + 200).map((value, j) => ({ key: keys[i + j]!, value })) });
    }
    await producer.disconnect();
    await waitFor('every page committed', async () => {
      const [t] = await admin.fetchOffsets({ groupId: env.DEDUP_GROUP_ID, topics: [topics.DEDUP_PAGES_TOPIC] });
      const done = (t?.partitions ?? []).reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
      return done >= pages.length ? true : undefined;
    }, 600_000, 100);
    const seconds = (Date.now() - started) / 1000;
    const cpuAfter = cpu();
    const requestsAfter = await requestCounts(children);
    // Requests sent while timed, by API, per 1,000 pages (with COORDINATION_REQUESTS_DIR).
    const requestsPerThousandPages: Record<string, number> = {};
    for (const [api, c] of Object.entries(requestsAfter)) {
      const n = c.requests - (requestsBefore[api]?.requests ?? 0);
      if (n > 0) requestsPerThousandPages[api] = Math.round((n * 1000 * 10) / pages.length) / 10;
    }
    const mainSeconds = cpuAfter.reduce((n, c, i) => n + c.main - cpuBefore[i]!.main, 0);
    const totalSeconds = cpuAfter.reduce((n, c, i) => n + c.total - cpuBefore[i]!.total, 0);
    for (const c of children) await stopChild(c);
    const n = pages.length;
    if (mode === 'passthrough') {
      return { pages: n, seconds: Math.round(seconds * 10) / 10, pagesPerSecond: Math.round(n / seconds), cpuUsPerPage: Math.round((mainSeconds * 1e6) / n), allThreadsCpuUsPerPage: Math.round((totalSeconds * 1e6) / n), ...(REQUESTS_DIR !== null ? { requestsPerThousandPages } : {}) };
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
    const assignmentsInWindow = children.reduce((n, c) => n + c.logs().split('\n').filter((l) => l.includes('"msg":"assignment"') && loggedAt(l) >= started).length, 0);
    const written = sum((t) => t.writtenBytes + RECORD_OVERHEAD * t.writtenRecords) * REPLICATION;
    const read = sum((t) => t.readBytes + RECORD_OVERHEAD * t.readRecords);
    // Per record kind: bytes written (replicated) and read per page, record overhead included.
    const byKind: Record<string, { writtenBytesPerPage: number; readBytesPerPage: number; writtenRecordsPerPage: number; readRecordsPerPage: number }> = {};
    for (const t of traffic) {
      for (const [kind, k] of Object.entries(t.byKind ?? {})) {
        const s = (byKind[kind] ??= { writtenBytesPerPage: 0, readBytesPerPage: 0, writtenRecordsPerPage: 0, readRecordsPerPage: 0 });
        s.writtenBytesPerPage += ((k.writtenBytes + RECORD_OVERHEAD * k.writtenRecords) * REPLICATION) / n;
        s.readBytesPerPage += (k.readBytes + RECORD_OVERHEAD * k.readRecords) / n;
        s.writtenRecordsPerPage += k.writtenRecords / n;
        s.readRecordsPerPage += k.readRecords / n;
      }
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
      recordsPerPage: Math.round((sum((t) => t.writtenRecords + t.readRecords) / n) * 100) / 100,
      // Main-thread CPU over the timed window, from /proc: fingerprinting and decoding run on the worker threads.
      cpuUsPerPage: Math.round((mainSeconds * 1e6) / n),
      allThreadsCpuUsPerPage: Math.round((totalSeconds * 1e6) / n),
      mainThreadBusyUsPerPage: Math.round((sum((t) => t.mainThreadBusyMs) * 1000) / n),
      assignments: sum((t) => t.assignments),
      assignmentsInWindow,
      indexReplays: sum((t) => t.indexReplays),
      pagesPerChunk: Math.round((n / sum((t) => t.chunks)) * 10) / 10,
      roundTwoAsksPerPage: Math.round((sum((t) => t.roundTwoAsks) / n) * 100) / 100,
      roundTripsPerChunk: Math.round((sum((t) => t.roundTrips) / sum((t) => t.chunks)) * 100) / 100,
      byKind,
      ...(REQUESTS_DIR !== null ? { requestsPerThousandPages } : {}),
    };
  } finally {
    for (const c of children) if (!c.hasExited()) c.child.kill('SIGKILL');
    await admin.disconnect().catch(() => undefined);
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 3000);
  const cases = (process.argv[3] ?? '1,2,3').split(',').map(Number);
  const feed = demoPages({ seed: 5 });
  const keys: string[] = [];
  const pages: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const p = feed.next().value!;
    keys.push(p.id);
    pages.push(Buffer.from(JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html })));
  }
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
    log(JSON.stringify(r));
    results.push(r);
  }
  const file = join(ROOT, 'bench', 'results', 'scale.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  doc.coordination = results;
  doc.coordinationDetail = {
    date: new Date().toISOString(),
    command: `node dist/bench/scale/coordination.js ${count} ${cases.join(',')}`,
    indexPartitions: INDEX_PARTITIONS,
    inputPartitions: PARTITIONS,
    replication: REPLICATION,
    recordOverheadBytes: RECORD_OVERHEAD,
    passthrough,
    note: 'Routed mode on the real broker (shared 2-core machine, figures noisy). Bytes: keys and values of every record written to and read from dedup.index, dedup.order, dedup.replies and dedup.ids, plus 80 B a record; cpuUsPerPage: main-thread CPU of all instances over the timed window (/proc), per page, fingerprinting and decoding being on worker threads; passthroughCpuUsPerPage: the same for the passthrough (bench/pipeline/passthrough.ts, one instance) over the same pages in the same run, and coordinationCpuUsPerPage the difference; byKind: bytes and records per page by routed record kind, written and read; mainThreadBusyUsPerPage: event-loop busy time from start to stop (startup, replay and shutdown included, inflated when the CPU is oversubscribed).',
  };
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
