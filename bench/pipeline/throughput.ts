/**
 * Throughput: a pre-loaded input topic of N pages, drained by a fresh process
 * (the real `dedup run`, or the passthrough baseline) with a fresh consumer
 * group, fresh output topics and an empty state directory. The rate is
 * counted from the first committed chunk to the last one, read from the
 * process's own dedup_pages_consumed_total (incremented after each commit),
 * polled every 50 ms; group join and start-up are outside the window.
 * CPU seconds of the process, the broker and the registry over that window
 * come from /proc.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import {
  CLI,
  DIST,
  cpuSeconds,
  deleteTopics,
  freePort,
  machineBusySeconds,
  sleep,
  startChild,
  stopChild,
  waitReady,
  type Child,
  type Stack,
} from './common.js';

export type Kind = 'pipeline' | 'passthrough';

export interface RunNames {
  run: string;
  pagesTopic: string;
  outputs: string[];
  fingerprintsTopic: string;
  env: Record<string, string>;
}

export function runNames(stack: Stack, pagesTopic: string, label: string, extra: Record<string, string> = {}): RunNames {
  const run = `bench-${label}-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
  const topics = {
    DEDUP_PAGES_TOPIC: pagesTopic,
    DEDUP_NOVEL_TOPIC: `${run}.novel`,
    DEDUP_DUPLICATE_TOPIC: `${run}.duplicate`,
    DEDUP_DEAD_LETTER_TOPIC: `${run}.dlq`,
    DEDUP_FINGERPRINTS_TOPIC: `${run}.fingerprints`,
  };
  return {
    run,
    pagesTopic,
    outputs: [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC, topics.DEDUP_FINGERPRINTS_TOPIC],
    fingerprintsTopic: topics.DEDUP_FINGERPRINTS_TOPIC,
    env: {
      ...topics,
      DEDUP_BROKERS: stack.brokers.join(','),
      DEDUP_SCHEMA_REGISTRY_URL: stack.registryUrl,
      DEDUP_GROUP_ID: `${run}-group`,
      DEDUP_INSTANCE_ID: 'dedup-0',
      DEDUP_METRICS_HOST: '127.0.0.1',
      ...extra,
    },
  };
}

export interface Started {
  child: Child;
  metricsPort: number;
  stateDir: string;
  readySeconds: number;
  /** Date.now() at spawn, to place the child's log lines on the same clock. */
  spawnedAtMs: number;
}

export async function startProcess(kind: Kind, names: RunNames, stateDir?: string): Promise<Started> {
  const metricsPort = await freePort();
  const dir = stateDir ?? (await mkdtemp(join(tmpdir(), 'dedup-bench-state-')));
  const script = kind === 'pipeline' ? CLI : join(DIST, 'bench', 'pipeline', 'passthrough.js');
  const started = performance.now();
  const spawnedAtMs = Date.now();
  const child = startChild(script, kind === 'pipeline' ? ['run'] : [], { ...names.env, DEDUP_STATE_DIR: dir, DEDUP_METRICS_PORT: String(metricsPort) });
  await waitReady(child, metricsPort);
  return { child, metricsPort, stateDir: dir, readySeconds: (performance.now() - started) / 1000, spawnedAtMs };
}

export async function scrape(metricsPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.length === 0 || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

export function metricSum(samples: Map<string, number>, name: string, labelFilter = ''): number {
  let sum = 0;
  for (const [series, value] of samples) if ((series === name || series.startsWith(`${name}{`)) && series.includes(labelFilter)) sum += value;
  return sum;
}

export interface ThroughputRun {
  kind: Kind;
  /** Extra DEDUP_* settings of this run ('' = the configuration under test). */
  variant: string;
  partitions: number;
  pages: number;
  pagesPerSecond: number;
  megabytesPerSecond: number;
  windowSeconds: number;
  pagesInWindow: number;
  readySeconds: number;
  transactions: number;
  duplicates: number;
  deadLetters: number;
  cpuSeconds: { process: number | null; kafka: number | null; registry: number | null; machineBusy: number | null };
  /**
   * Wall seconds inside the process over the whole run, from its histograms:
   * chunks (decide + commit), fingerprinting (on the pool: the chunk's wait
   * for its workers), probe + insert. The rest of a chunk is decoding,
   * encoding and the transaction.
   */
  wallSeconds: { chunks: number; fingerprint: number; probe: number };
  processCpuMsPerPage: number | null;
}

export async function throughputRun(kafka: Kafka, stack: Stack, kind: Kind, pagesTopic: string, partitions: number, pages: number, inputBytes: number, timeoutMs: number, warmupFraction: number, variant: Record<string, string> = {}): Promise<ThroughputRun> {
  const names = runNames(stack, pagesTopic, `${kind === 'pipeline' ? 'pl' : 'pt'}${partitions}`, variant);
  const s = await startProcess(kind, names);
  try {
    const cpu = () => ({ process: cpuSeconds(s.child.pid), kafka: cpuSeconds(stack.kafkaPid), registry: cpuSeconds(stack.registryPid), machineBusy: machineBusySeconds() });
    const deadline = Date.now() + timeoutMs;
    let first: { t: number; count: number; cpu: ReturnType<typeof cpu> } | null = null;
    let last: { t: number; count: number; cpu: ReturnType<typeof cpu> } | null = null;
    for (;;) {
      if (s.child.hasExited()) throw new Error(`${kind} exited during the run:\n${s.child.logs().slice(-3000)}`);
      const count = metricSum(await scrape(s.metricsPort), 'dedup_pages_consumed_total');
      const t = performance.now();
      if (first === null && count > 0 && count >= warmupFraction * pages) first = { t, count, cpu: cpu() };
      if (count >= pages) {
        last = { t, count, cpu: cpu() };
        break;
      }
      if (Date.now() > deadline) throw new Error(`${kind}: only ${count} of ${pages} pages after ${timeoutMs} ms`);
      await sleep(50);
    }
    const end = await scrape(s.metricsPort);
    const seconds = (last.t - first!.t) / 1000;
    const inWindow = last.count - first!.count;
    const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
    const used = {
      process: diff(first!.cpu.process, last.cpu.process),
      kafka: diff(first!.cpu.kafka, last.cpu.kafka),
      registry: diff(first!.cpu.registry, last.cpu.registry),
      machineBusy: diff(first!.cpu.machineBusy, last.cpu.machineBusy),
    };
    return {
      kind,
      variant: Object.entries(variant).map(([k, v]) => `${k}=${v}`).join(' '),
      partitions,
      pages,
      pagesPerSecond: inWindow / seconds,
      megabytesPerSecond: (inWindow * (inputBytes / pages)) / seconds / 1e6,
      windowSeconds: seconds,
      pagesInWindow: inWindow,
      readySeconds: s.readySeconds,
      transactions: metricSum(end, 'dedup_transactions_total', 'committed'),
      duplicates: metricSum(end, 'dedup_verdicts_total', 'duplicate'),
      deadLetters: metricSum(end, 'dedup_dead_letters_total'),
      cpuSeconds: used,
      processCpuMsPerPage: used.process === null ? null : (used.process * 1000) / inWindow,
      wallSeconds: {
        chunks: metricSum(end, 'dedup_batch_duration_seconds_sum'),
        fingerprint: metricSum(end, 'dedup_fingerprint_duration_seconds_sum'),
        probe: metricSum(end, 'dedup_probe_duration_seconds_sum'),
      },
    };
  } finally {
    await stopChild(s.child);
    await rm(s.stateDir, { recursive: true, force: true });
    await deleteTopics(kafka, names.outputs);
  }
}
