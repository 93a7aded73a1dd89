/**
 * Restart cost with a large index:
 *  - snapshot: build N synthetic pages into a snapshot file (one process),
 *    then time readSnapshot in fresh processes (file size, RSS);
 *  - changelog: N Avro changelog entries in a 1-partition compacted topic,
 *    written in transactions like the pipeline's, then replayChangelog into
 *    an empty decider in fresh processes;
 *  - the real `dedup run` with a 1M snapshot (and with an empty state, for
 *    the Kafka part of start-up): spawn to /readyz 200, with the phases read
 *    from its log lines.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { DIST, deleteTopics, log, median, pipelineOverrides, startChild, stopChild, withAdmin, type Stack } from './common.js';
import { benchCodec, createInputTopic } from './load.js';
import { syntheticPages } from './synthetic.js';
import { loadConfig } from '../../src/config.js';
import { keepsSketches } from '../../src/dedup/create-decider.js';
import { runNames, startProcess } from './throughput.js';

const SNAPSHOT_CASE = join(DIST, 'bench', 'pipeline', 'snapshot-case.js');
const REPLAY_CASE = join(DIST, 'bench', 'pipeline', 'replay-case.js');
const BIG_HEAP = ['--max-old-space-size=8192'];

async function runJson(script: string, args: string[], env: Record<string, string>, nodeArgs: string[]): Promise<Record<string, number>> {
  const c = startChild(script, args, env, nodeArgs);
  const code = await c.exited;
  if (code !== 0) throw new Error(`${script} ${args.join(' ')} exited with ${code}:\n${c.logs().slice(-3000)}`);
  const line = c.logs().trim().split('\n').filter((l) => l.startsWith('{')).pop();
  return JSON.parse(line!) as Record<string, number>;
}

export async function buildSnapshot(pages: number, dir: string, env: Record<string, string>, clusterId = 'bench-synthetic'): Promise<Record<string, number>> {
  return runJson(SNAPSHOT_CASE, ['build', String(pages), dir, '7', clusterId], env, BIG_HEAP);
}

export interface SnapshotResult {
  pages: number;
  fileBytes: number;
  buildSeconds: number;
  writeSeconds: number;
  loadSeconds: number[];
  medianLoadSeconds: number;
  medianRssAfterBytes: number;
  medianRssBeforeBytes: number;
  /** Bytes of the loaded index and page store's arrays (Decider.byteLength). */
  deciderBytes: number;
}

export async function snapshotCase(pages: number, runs: number, env: Record<string, string>): Promise<SnapshotResult> {
  const dir = await mkdtemp(join(tmpdir(), 'dedup-bench-snap-'));
  try {
    const built = await buildSnapshot(pages, dir, env);
    log(`snapshot ${pages}: built in ${built.buildSeconds!.toFixed(1)} s, ${(built.fileBytes! / 1e6).toFixed(0)} MB`);
    const loads: Record<string, number>[] = [];
    for (let i = 0; i < runs; i++) loads.push(await runJson(SNAPSHOT_CASE, ['load', dir], env, [...BIG_HEAP, '--expose-gc']));
    return {
      pages,
      fileBytes: built.fileBytes!,
      buildSeconds: built.buildSeconds!,
      writeSeconds: built.writeSeconds!,
      loadSeconds: loads.map((l) => l.loadSeconds!),
      medianLoadSeconds: median(loads.map((l) => l.loadSeconds!)),
      medianRssAfterBytes: median(loads.map((l) => l.rssAfterBytes!)),
      medianRssBeforeBytes: median(loads.map((l) => l.rssBeforeBytes!)),
      deciderBytes: loads[0]!.deciderBytes!,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface ReplayResult {
  records: number;
  transactionRecords: number;
  produceSeconds: number;
  seconds: number[];
  medianSeconds: number;
  medianRecordsPerSecond: number;
  medianCpuSeconds: number;
  medianRssAfterBytes: number;
}

/** Writes `records` changelog entries in transactions of `perTransaction`, as the pipeline does. */
async function produceChangelog(kafka: Kafka, stack: Stack, topic: string, records: number, perTransaction: number, env: Record<string, string>): Promise<number> {
  const codec = await benchCodec(stack, { pagesTopic: `${topic}.in`, novelTopic: `${topic}.novel`, duplicateTopic: `${topic}.dup`, fingerprintsTopic: topic }, 4 * 1024 * 1024);
  const producer = kafka.producer({ transactionalId: `${topic}-writer`, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  // The pipeline writes each page's sketch into the changelog when the second stage is on: as the
  // config of the replaying process (the benchmark's DEDUP_* and this case's env) has it.
  const sketches = keepsSketches(loadConfig({ ...pipelineOverrides(), ...env }));
  const started = performance.now();
  try {
    let batch: { key: string; value: Buffer }[] = [];
    for (const p of syntheticPages(records, 7)) {
      const value = await codec.encodeChange({ id: p.id, hi: p.hi, lo: p.lo, short: false, duplicateOf: p.duplicateOf, distance: p.distance, fetchedAt: p.fetchedAt, sequence: p.sequence, sketch: sketches ? p.sketch : null });
      batch.push({ key: p.id, value });
      if (batch.length === perTransaction || p.sequence === records - 1) {
        const transaction = await producer.transaction();
        await transaction.send({ topic, acks: -1, messages: batch });
        await transaction.commit();
        batch = [];
      }
    }
  } finally {
    await producer.disconnect();
  }
  return (performance.now() - started) / 1000;
}

export async function replayCase(kafka: Kafka, stack: Stack, records: number, runs: number, perTransaction: number, env: Record<string, string>): Promise<ReplayResult> {
  const topic = `bench-changelog-${records}-${Date.now().toString(36)}`;
  await withAdmin(kafka, (admin) =>
    admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] }),
  );
  try {
    const produceSeconds = await produceChangelog(kafka, stack, topic, records, perTransaction, env);
    log(`changelog ${records}: produced in ${produceSeconds.toFixed(1)} s`);
    const results: Record<string, number>[] = [];
    for (let i = 0; i < runs; i++) {
      const r = await runJson(REPLAY_CASE, [], { ...env, DEDUP_FINGERPRINTS_TOPIC: topic, DEDUP_GROUP_ID: `${topic}-g${i}` }, [...BIG_HEAP, '--expose-gc']);
      if (r.records !== records) throw new Error(`replay read ${r.records} records, expected ${records}`);
      results.push(r);
      log(`changelog ${records}: replay ${i + 1}/${runs}: ${r.seconds!.toFixed(1)} s (${Math.round(r.recordsPerSecond!)} records/s)`);
    }
    return {
      records,
      transactionRecords: perTransaction,
      produceSeconds,
      seconds: results.map((r) => r.seconds!),
      medianSeconds: median(results.map((r) => r.seconds!)),
      medianRecordsPerSecond: median(results.map((r) => r.recordsPerSecond!)),
      medianCpuSeconds: median(results.map((r) => r.cpuSeconds!)),
      medianRssAfterBytes: median(results.map((r) => r.rssAfterBytes!)),
    };
  } finally {
    await deleteTopics(kafka, [topic]);
  }
}

/** Seconds from spawn to the first log line with `msg`, or null. */
function phase(logs: string, msg: string, spawnedAtMs: number): number | null {
  for (const line of logs.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const r = JSON.parse(line) as { msg?: string; time?: string };
      if (r.msg === msg) return (Date.parse(r.time ?? '') - spawnedAtMs) / 1000;
    } catch {
      // not a log line
    }
  }
  return null;
}

/** Seconds from spawn: the log lines the pipeline writes at each start-up step (src/modes/single/start.ts). */
export interface StartupRun {
  readySeconds: number;
  /** Node started and the entry point loaded. */
  startingSeconds: number | null;
  /** Topics checked, schemas registered, fingerprinter and its worker threads built. */
  fingerprintersSeconds: number | null;
  /** Snapshot read and checked against the cluster and the changelog's end (absent without a snapshot). */
  snapshotLoadedSeconds: number | null;
  /** Producer fenced, changelog replayed from the snapshot's offsets. */
  indexRecoveredSeconds: number | null;
  /** Consumer joined its group: /readyz turns 200 right after. */
  joinedSeconds: number | null;
}

export interface StartupResult {
  snapshotPages: number;
  withSnapshot: StartupRun[];
  empty: StartupRun[];
  medianReadySecondsWithSnapshot: number;
  medianReadySecondsEmpty: number;
}

export async function startupCase(kafka: Kafka, stack: Stack, pages: number, runs: number, maxPageBytes: number): Promise<StartupResult> {
  const pagesTopic = `bench-ready-${Date.now().toString(36)}.pages`;
  await createInputTopic(kafka, pagesTopic, 1, maxPageBytes);
  const names = runNames(stack, pagesTopic, 'ready');
  const emptyDir = await mkdtemp(join(tmpdir(), 'dedup-bench-empty-'));
  const snapDir = await mkdtemp(join(tmpdir(), 'dedup-bench-ready-'));
  const once = async (dir: string, expected: number): Promise<StartupRun> => {
    const s = await startProcess('pipeline', names, dir);
    await stopChild(s.child);
    const logs = s.child.logs();
    const recovered = /"msg":"index recovered"[^\n]*?"fingerprints":(\d+)/.exec(logs);
    if (!recovered || Number(recovered[1]) !== expected) {
      throw new Error(`start-up recovered ${recovered?.[1] ?? 'no'} fingerprints, expected ${expected}:\n${logs.slice(-3000)}`);
    }
    return {
      readySeconds: s.readySeconds,
      startingSeconds: phase(logs, 'starting', s.spawnedAtMs),
      fingerprintersSeconds: phase(logs, 'fingerprinting', s.spawnedAtMs),
      snapshotLoadedSeconds: phase(logs, 'snapshot loaded', s.spawnedAtMs),
      indexRecoveredSeconds: phase(logs, 'index recovered', s.spawnedAtMs),
      joinedSeconds: phase(logs, 'joined consumer group', s.spawnedAtMs),
    };
  };
  try {
    await once(emptyDir, 0); // creates the topics; not counted
    const empty: StartupRun[] = [];
    for (let i = 0; i < runs; i++) empty.push(await once(emptyDir, 0));
    const cluster = await withAdmin(kafka, async (admin) => (await admin.describeCluster()).clusterId);
    await buildSnapshot(pages, snapDir, names.env, cluster);
    const withSnapshot: StartupRun[] = [];
    for (let i = 0; i < runs; i++) withSnapshot.push(await once(snapDir, pages));
    return {
      snapshotPages: pages,
      withSnapshot,
      empty,
      medianReadySecondsWithSnapshot: median(withSnapshot.map((r) => r.readySeconds)),
      medianReadySecondsEmpty: median(empty.map((r) => r.readySeconds)),
    };
  } finally {
    await rm(emptyDir, { recursive: true, force: true });
    await rm(snapDir, { recursive: true, force: true });
    await deleteTopics(kafka, [...names.outputs, pagesTopic]);
  }
}
