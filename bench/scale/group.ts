/**
 * A group of measured processes on one input topic: the passthrough, one
 * `dedup run` in single mode, or N `dedup run` instances in sharded mode
 * (same group id, distinct instance ids, their own sequence, answers and
 * changelog topics). Each run gets fresh output topics, a fresh group and
 * empty state directories, and deletes them afterwards.
 *
 * CPU is read from /proc for every process and, per process, split into the
 * main thread (tid = pid: the Kafka clients, decoding, the sequence tail and
 * the answer join, encoding) and every other thread (the fingerprint workers,
 * plus V8's GC helpers and libuv's pool).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { loadConfig } from '../../src/config.js';
import { createKafka, ensureTopics } from '../../src/kafka/client.js';
import { createLogger } from '../../src/logger.js';
import { CLI, DIST, cpuSeconds, deleteTopics, freePort, log, sleep, startChild, stopChild, waitReady, type Child, type Stack } from '../pipeline/common.js';
import { benchCodec } from '../pipeline/load.js';
import { metricSum, runNames, scrape } from '../pipeline/throughput.js';

export type Mode = 'passthrough' | 'single' | 'sharded';

export interface CaseSpec {
  /** Stable name of the case in the results: passthrough, single, sharded-1, sharded-2, ... */
  name: string;
  mode: Mode;
  instances: number;
}

export function caseName(mode: Mode, instances: number): string {
  return mode === 'sharded' ? `sharded-${instances}` : mode;
}

export interface Instance {
  id: string;
  child: Child;
  metricsPort: number;
  stateDir: string;
  readySeconds: number;
}

export interface Group {
  spec: CaseSpec;
  run: string;
  env: Record<string, string>;
  instances: Instance[];
  /** Every topic this run created (outputs and, in sharded mode, the internal logs). */
  topics: string[];
}

export async function startGroup(stack: Stack, spec: CaseSpec, pagesTopic: string, partitions: number, shards: number): Promise<Group> {
  const names = runNames(stack, pagesTopic, spec.name.replace('-', ''), { DEDUP_TOPIC_PARTITIONS: String(partitions) });
  const env: Record<string, string> = { ...names.env };
  const topics = [...names.outputs];
  if (spec.mode === 'sharded') {
    Object.assign(env, {
      DEDUP_MODE: 'sharded',
      DEDUP_SHARDS: String(shards),
      DEDUP_SEQUENCE_TOPIC: `${names.run}.sequence`,
      DEDUP_ANSWERS_TOPIC: `${names.run}.answers`,
    });
    topics.push(env.DEDUP_SEQUENCE_TOPIC!, env.DEDUP_ANSWERS_TOPIC!);
  } else if (spec.mode === 'single') {
    env.DEDUP_MODE = 'single';
  }
  const group: Group = { spec, run: names.run, env, instances: [], topics };
  await prepareRun(env);
  // All instances are spawned at once, so they join the group within
  // moments of each other; the measurement window starts only after all are ready.
  const starting = Array.from({ length: spec.instances }, (_, i) => startInstance(group, `dedup-${i}`));
  const settled = await Promise.allSettled(starting);
  for (const s of settled) if (s.status === 'fulfilled') group.instances.push(s.value);
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) {
    await stopGroup(null, group);
    throw failure.reason;
  }
  return group;
}

/**
 * Retries topic set-up a few times: on a loaded broker, kafkajs's wait for the
 * new topics' leaders can fail with "This server does not host this
 * topic-partition" moments before they appear. Creating topics that exist is
 * a no-op, so a retry is safe.
 */
export async function retrying<T>(what: string, work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts) throw error;
      log(`${what} failed (${(error as Error).message}); retrying (${attempt}/${attempts - 1})`);
      await sleep(1000 * attempt);
    }
  }
}

/**
 * Creates the run's topics and registers its schemas with the product's own
 * code before any instance starts. Instances started at the same moment on
 * fresh subjects race in the schema registry (Apicurio answers one of them
 * "A rule named 'COMPATIBILITY' already exists", and that instance exits),
 * so the first registration is done here, once.
 */
async function prepareRun(env: Record<string, string>): Promise<void> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('DEDUP_')) as [string, string][]);
  const config = loadConfig({ ...inherited, ...env, DEDUP_LOG_LEVEL: 'error' });
  const logger = createLogger('error', { app: 'dedup-bench-scale' });
  await retrying('creating the run\u2019s topics', () => ensureTopics(createKafka(config, logger), config, logger));
  if (config.schemaRegistryUrl) {
    await benchCodec({ brokers: [...config.brokers], registryUrl: config.schemaRegistryUrl, kafkaPid: null, registryPid: null }, config, config.maxPageBytes);
  }
}

/** The passthrough baseline's script (bench/pipeline/passthrough.ts): the pipeline's consumer and transactional producer around a processor that does no work. */
export const PASSTHROUGH_SCRIPT = join(DIST, 'bench', 'pipeline', 'passthrough.js');

/**
 * Node flags for the measured processes only, not the driver: BENCH_NODE_ARGS,
 * split on spaces (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof": a CPU profile
 * of each instance's main thread and workers, written when it stops).
 */
export function instanceNodeArgs(): string[] {
  return (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
}

export async function startInstance(group: Group, id: string): Promise<Instance> {
  const metricsPort = await freePort();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-scale-state-'));
  const script = group.spec.mode === 'passthrough' ? PASSTHROUGH_SCRIPT : CLI;
  const started = performance.now();
  const child = startChild(
    script,
    group.spec.mode === 'passthrough' ? [] : ['run'],
    {
      ...group.env,
      DEDUP_INSTANCE_ID: id,
      DEDUP_STATE_DIR: stateDir,
      DEDUP_METRICS_PORT: String(metricsPort),
    },
    instanceNodeArgs(),
  );
  try {
    // An instance that exits during start-up fails the run at once, not at waitReady's deadline.
    let ready = false;
    const ok = waitReady(child, metricsPort).then(() => (ready = true));
    const early = child.exited.then((code) => {
      if (!ready) throw new Error(`${id} exited (${code}) before it was ready:\n${child.logs().slice(-3000)}`);
    });
    ok.catch(() => undefined);
    early.catch(() => undefined);
    await Promise.race([ok, early.then(() => ok)]);
  } catch (error) {
    child.child.kill('SIGKILL');
    await rm(stateDir, { recursive: true, force: true });
    throw error;
  }
  return { id, child, metricsPort, stateDir, readySeconds: (performance.now() - started) / 1000 };
}

/** Stops every instance still running, removes state, and deletes the run's topics (when kafka is given). */
export async function stopGroup(kafka: Kafka | null, group: Group): Promise<void> {
  await Promise.all(group.instances.map((i) => stopChild(i.child)));
  for (const i of group.instances) await rm(i.stateDir, { recursive: true, force: true });
  if (kafka) await deleteTopics(kafka, group.topics);
}

/** Sum of one metric over the instances still running (an unreachable one counts 0). */
export async function scrapeAll(group: Group): Promise<Map<string, number>[]> {
  return Promise.all(group.instances.map((i) => (i.child.hasExited() ? Promise.resolve(new Map<string, number>()) : scrape(i.metricsPort).catch(() => new Map<string, number>()))));
}

export function sumOver(samples: Map<string, number>[], name: string, labelFilter = ''): number {
  return samples.reduce((total, s) => total + metricSum(s, name, labelFilter), 0);
}

const TICKS = 100; // USER_HZ on Linux

function threadSeconds(pid: number, tid: string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds of a process so far: all of it, and its main thread alone (null when gone). */
export function processCpu(pid: number): { total: number; main: number } | null {
  const total = cpuSeconds(pid);
  if (total === null) return null;
  let main = 0;
  try {
    if (readdirSync(`/proc/${pid}/task`).includes(String(pid))) main = threadSeconds(pid, String(pid));
  } catch {
    return null;
  }
  return { total, main };
}

/** Summed CPU of the group's instances: total and main threads. */
export function groupCpu(group: Group): { total: number; main: number } | null {
  let total = 0;
  let main = 0;
  for (const i of group.instances) {
    if (i.child.hasExited()) continue;
    const c = processCpu(i.child.pid);
    if (c === null) return null;
    total += c.total;
    main += c.main;
  }
  return { total, main };
}
