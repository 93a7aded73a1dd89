/**
 * Small helpers shared by the pipeline benchmark's driver and its child
 * processes: the stack's addresses, kafkajs clients, child processes with
 * CPU accounting from /proc, polling waits, order statistics.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { useFastCrc32cInKafkajs } from '../../src/kafka/kafkajs-crc32c.js';

/** dist/ root: this file runs as dist/bench/pipeline/common.js. */
export const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ROOT = join(DIST, '..');
export const CLI = join(DIST, 'src', 'cli', 'main.js');

export interface Stack {
  brokers: string[];
  registryUrl: string;
  /** Broker and registry PIDs (CPU accounting), when the stack is ours. */
  kafkaPid: number | null;
  registryPid: number | null;
}

function readPid(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export function stackFromEnv(): Stack {
  const brokers = process.env.KAFKA_BROKERS;
  const registryUrl = process.env.SCHEMA_REGISTRY_URL;
  if (!brokers || !registryUrl) throw new Error('KAFKA_BROKERS and SCHEMA_REGISTRY_URL are not set: run bench/pipeline/run.sh');
  const state = process.env.INFRA_STATE_DIR ?? '';
  return {
    brokers: brokers.split(','),
    registryUrl,
    kafkaPid: state ? readPid(join(state, 'kafka.pid')) : null,
    registryPid: state ? readPid(join(state, 'registry.pid')) : null,
  };
}

export function benchKafka(stack: Stack, clientId = 'dedup-bench'): Kafka {
  // The same CRC-32C as the product's clients, whichever client produces first in this process.
  useFastCrc32cInKafkajs();
  return new Kafka({ clientId, brokers: stack.brokers, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 50 } });
}

/** Topic settings as the pipeline's ensureTopics gives large-record topics (src/app/kafka-client.ts). */
export function largeTopicConfig(maxPageBytes: number): { name: string; value: string }[] {
  const maxMessageBytes = maxPageBytes * 2 + 1024 * 1024;
  return [
    { name: 'max.message.bytes', value: String(maxMessageBytes) },
    { name: 'segment.bytes', value: String(Math.max(64 * 1024 * 1024, 2 * maxMessageBytes)) },
  ];
}

export async function withAdmin<T>(kafka: Kafka, f: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await f(admin);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export async function deleteTopics(kafka: Kafka, topics: string[]): Promise<void> {
  await withAdmin(kafka, async (admin) => {
    const existing = new Set(await admin.listTopics());
    const present = topics.filter((t) => existing.has(t));
    if (present.length) await admin.deleteTopics({ topics: present, timeout: 30_000 });
  }).catch(() => undefined);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    await sleep(intervalMs);
  }
}

const TICKS = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far; null when it is gone or /proc is missing. */
export function cpuSeconds(pid: number | null | undefined): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return null;
  }
}

/**
 * Machine-wide busy CPU seconds (all cores) from /proc/stat, for "how busy was
 * the box": user, nice, system, irq and softirq; idle, iowait and steal are not busy.
 */
export function machineBusySeconds(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = (v[0] ?? 0) + (v[1] ?? 0) + (v[2] ?? 0) + (v[5] ?? 0) + (v[6] ?? 0);
    return busy / TICKS;
  } catch {
    return null;
  }
}

export interface Child {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<number | string>;
  logs(): string;
  hasExited(): boolean;
}

export function startChild(script: string, args: string[], env: Record<string, string>, nodeArgs: string[] = []): Child {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (d: Buffer) => {
    output += d.toString('utf8');
    if (output.length > 2_000_000) output = output.slice(-1_000_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let done = false;
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve(code ?? signal ?? 'unknown');
    }),
  );
  return { child, pid: child.pid!, exited, logs: () => output, hasExited: () => done };
}

export async function waitReady(c: Child, metricsPort: number, timeoutMs = 300_000, intervalMs = 20): Promise<void> {
  await waitFor(
    'readiness',
    async () => {
      if (c.hasExited()) throw new Error(`exited before ready:\n${c.logs().slice(-3000)}`);
      const response = await fetch(`http://127.0.0.1:${metricsPort}/readyz`).catch(() => null);
      return response?.status === 200 ? true : undefined;
    },
    timeoutMs,
    intervalMs,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n--- child output ---\n${c.logs().slice(-3000)}`);
  });
}

export async function stopChild(c: Child, timeoutMs = 120_000): Promise<number | string> {
  if (!c.hasExited()) c.child.kill('SIGTERM');
  const timer = setTimeout(() => c.child.kill('SIGKILL'), timeoutMs);
  const code = await c.exited;
  clearTimeout(timer);
  return code;
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export const round = (x: number, digits = 0): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name}=${raw} is not a number`);
  return n;
}

export function envList(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (!raw) return fallback;
  return raw.split(',').map((s) => Number(s.trim())).filter((n) => Number.isFinite(n) && n > 0);
}

export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** The DEDUP_* variables of the benchmark's environment: every pipeline process it starts inherits them. */
export function pipelineOverrides(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => k.startsWith('DEDUP_') && v !== undefined) as [string, string][]);
}
