/**
 * A routed instance's restart on the real broker: one instance decides N demo
 * pages (6 input partitions, 16 index partitions), stops (SIGTERM, which
 * writes a snapshot of every partition it holds), and is started again on the
 * same topics, in two cases:
 * - state kept: its state directory as it left it, so every index partition
 *   loads its snapshot and reads the logs after it;
 * - state empty: an empty state directory, so that it takes every index
 *   partition on and replays dedup.order and dedup.index from their start.
 * Timed: spawn to /readyz 200 (ready = every held partition has applied the
 * order log as far as it was when taken on), and the restarted process's CPU
 * over that time, main thread apart. Counted: the dedup.order records the
 * restarted process read (holder and owner, from its 'routed traffic' stop
 * line, right after ready) and where its first takeover read the order log
 * from (its 'index partitions taken on' line, builds that write it).
 *
 * ROUTED_RESTORE_BASE=<repo-dir> adds both cases with the CLI of another
 * build (its dist/), alternated run by run, for a before/after on one broker.
 * ROUTED_RESTORE_PROFILE_DIR=<dir> writes a --cpu-prof profile of each
 * restarted instance there.
 *
 *   source .infra/env   # after bash deploy/local/up.sh; or any broker and registry
 *   node dist/bench/scale/routed-restore.js [pages=20000] [runs=2]
 *
 * Writes bench/results/routed-restore.json (ROUTED_RESTORE_RESULT=<name.json>:
 * that file under bench/results instead).
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { processCpu } from './group.js';
import { CLI, ROOT, benchKafka, deleteTopics, freePort, log, median, round, startChild, stackFromEnv, stopChild, waitReady, type Child } from '../pipeline/common.js';
import { createPagesTopic, demoRecords, routedEnv, routedTopics, waitAllCommitted } from './routed-bench.js';

const PAGES = Number(process.argv[2] ?? 20_000);
const RUNS = Number(process.argv[3] ?? 2);
const BASE = process.env.ROUTED_RESTORE_BASE ?? null;
const PARTITIONS = 6;
const INDEX_PARTITIONS = 16;

type State = 'kept' | 'empty';

interface Restart {
  build: string;
  state: State;
  run: number;
  pages: number;
  decideSeconds: number;
  readySeconds: number;
  cpuSeconds: number;
  mainThreadCpuSeconds: number;
  /** From the restarted instance's 'index partition restored from its logs' lines (builds that write them). */
  partitionsRestored: number;
  recordedWithoutProbe: number;
  /** Of partitionsRestored, those loaded from a snapshot. */
  fromSnapshot: number;
  /** dedup.order records the restarted process read, and the order log's length when it started. */
  orderRecordsRead: number | null;
  orderRecords: number;
  /** Where its first takeover read dedup.order from (null: a build that does not say, from 0). */
  orderFrom: number | null;
}

async function restart(build: string, cli: string, state: State, run: number, pages: Buffer[], keys: string[]): Promise<Restart> {
  const stack = stackFromEnv();
  const kafka = benchKafka(stack);
  const name = `rrestore-${build}-${run}-${Date.now().toString(36)}`;
  const topics = routedTopics(name);
  const admin = kafka.admin();
  await admin.connect();
  await createPagesTopic(admin, topics.DEDUP_PAGES_TOPIC!, PARTITIONS);
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-routed-restore-'));
  const env: Record<string, string> = {
    ...routedEnv(stack, name, topics, { inputPartitions: PARTITIONS, indexPartitions: INDEX_PARTITIONS, expectedFingerprints: Math.max(100_000, PAGES) }),
    DEDUP_INSTANCE_ID: 'restore-0',
  };
  const children: Child[] = [];
  const start = async (dir: string, nodeArgs: string[] = []): Promise<{ child: Child; port: number }> => {
    const port = await freePort();
    const child = startChild(cli, ['run'], { ...env, DEDUP_STATE_DIR: dir, DEDUP_METRICS_PORT: String(port) }, nodeArgs);
    children.push(child);
    return { child, port };
  };
  try {
    const first = await start(join(stateDir, 'first'));
    await waitReady(first.child, first.port);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const decideFrom = Date.now();
    for (let i = 0; i < pages.length; i += 200) {
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.slice(i, i + 200).map((value, j) => ({ key: keys[i + j]!, value })) });
    }
    await producer.disconnect();
    await waitAllCommitted(admin, env.DEDUP_GROUP_ID!, topics.DEDUP_PAGES_TOPIC!, pages.length, 900_000, 200);
    const decideSeconds = (Date.now() - decideFrom) / 1000;
    const orderRecords = Number((await admin.fetchTopicOffsets(topics.DEDUP_ORDER_TOPIC!)).find((o) => o.partition === 0)?.high ?? NaN);
    const code = await stopChild(first.child);
    if (code !== 0) throw new Error(`the first instance stopped with ${code}:\n${first.child.logs().slice(-3000)}`);
    // The restart: the state directory as the stop left it (snapshots), or an empty one (every
    // index partition taken on and replayed from the logs' start).
    const spawned = Date.now();
    const profile = process.env.ROUTED_RESTORE_PROFILE_DIR;
    const second = await start(join(stateDir, state === 'kept' ? 'first' : 'second'), profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []);
    await waitReady(second.child, second.port, 900_000, 20);
    const readySeconds = (Date.now() - spawned) / 1000;
    const cpu = processCpu(second.child.pid) ?? { total: NaN, main: NaN };
    const restored = second.child
      .logs()
      .split('\n')
      .filter((line) => line.includes('index partition restored from its logs'))
      .map((line) => JSON.parse(line) as { recordedWithoutProbe: number; fromSnapshot?: boolean });
    await stopChild(second.child);
    const lines = second.child.logs().split('\n');
    const traffic = lines.filter((line) => line.includes('"routed traffic"')).map((line) => JSON.parse(line) as { byKind?: Record<string, { readRecords?: number }> })[0];
    const takenOn = lines.filter((line) => line.includes('index partitions taken on')).map((line) => JSON.parse(line) as { orderFrom?: number })[0];
    return {
      build,
      state,
      run,
      pages: pages.length,
      decideSeconds: Math.round(decideSeconds * 10) / 10,
      readySeconds: Math.round(readySeconds * 100) / 100,
      cpuSeconds: Math.round(cpu.total * 100) / 100,
      mainThreadCpuSeconds: Math.round(cpu.main * 100) / 100,
      partitionsRestored: restored.length,
      recordedWithoutProbe: restored.reduce((n, r) => n + r.recordedWithoutProbe, 0),
      fromSnapshot: restored.filter((r) => r.fromSnapshot === true).length,
      // A process that read no order record has no 'order' kind in its traffic line.
      orderRecordsRead: traffic === undefined ? null : (traffic.byKind?.order?.readRecords ?? 0),
      orderRecords,
      orderFrom: takenOn?.orderFrom ?? null,
    };
  } finally {
    for (const c of children) if (!c.hasExited()) c.child.kill('SIGKILL');
    await admin.disconnect();
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { keys, pages } = demoRecords(PAGES, 7);
  const baseCli = BASE === null ? null : join(BASE, 'dist', 'src', 'cli', 'main.js');
  const cases: [string, string, State][] = [['this', CLI, 'kept'], ['this', CLI, 'empty'], ...(baseCli === null ? [] : ([['base', baseCli, 'kept'], ['base', baseCli, 'empty']] as [string, string, State][]))];
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  const runs: Restart[] = [];
  for (let run = 1; run <= RUNS; run++) {
    for (const [build, cli, state] of run % 2 === 1 ? [...cases].reverse() : cases) {
      const r = await restart(build, cli, state, run, pages, keys);
      log(JSON.stringify(r));
      runs.push(r);
    }
  }
  const summary = cases.map(([build, , state]) => {
    const mine = runs.filter((r) => r.build === build && r.state === state);
    return {
      build,
      state,
      readySeconds: round(median(mine.map((r) => r.readySeconds)), 2),
      cpuSeconds: round(median(mine.map((r) => r.cpuSeconds)), 2),
      mainThreadCpuSeconds: round(median(mine.map((r) => r.mainThreadCpuSeconds)), 2),
      orderRecordsRead: median(mine.map((r) => r.orderRecordsRead ?? NaN)),
      orderRecords: median(mine.map((r) => r.orderRecords)),
    };
  });
  const doc = {
    generatedBy: 'bench/scale/routed-restore.ts',
    command: `${BASE === null ? '' : 'ROUTED_RESTORE_BASE=<base tree> '}${process.env.ROUTED_RESTORE_RESULT === undefined ? '' : `ROUTED_RESTORE_RESULT=${process.env.ROUTED_RESTORE_RESULT} `}node dist/bench/scale/routed-restore.js ${PAGES} ${RUNS}`,
    date: new Date().toISOString(),
    node: process.version,
    base: BASE,
    inputPartitions: PARTITIONS,
    indexPartitions: INDEX_PARTITIONS,
    loadAverage: { start: loadAtStart, end: loadavg().map((x) => Math.round(x * 100) / 100) },
    note: 'One routed instance decides the pages, stops (SIGTERM: a snapshot of each partition it holds), and starts again: state kept, it loads each of the 16 index partitions from its snapshot and reads the logs after it; state empty, it takes all 16 on and replays dedup.order and dedup.index from their start. readySeconds: spawn to /readyz 200; cpuSeconds: the restarted process over that time (all threads; mainThreadCpuSeconds its main thread), start-up (fingerprinting pool, dictionary) included. orderRecordsRead: dedup.order records the restarted process read (holder and owner) up to its stop right after ready, of orderRecords in the log; orderFrom: where its first takeover read dedup.order from.',
    summary,
    runs,
  };
  writeFileSync(join(ROOT, 'bench', 'results', process.env.ROUTED_RESTORE_RESULT ?? 'routed-restore.json'), `${JSON.stringify(doc, null, 2)}\n`);
  console.log(JSON.stringify(summary));
}

await main();
