/**
 * Sharded mode, one SIGKILL at a time: how long partitions stall.
 *
 * Three instances over 6 input partitions and 6 shards, warm standbys on,
 * JSON pages at a steady rate. Each round SIGKILLs one instance, starts it
 * again 2 s later, and samples the group's committed offsets every 200 ms:
 *   survivorStallSeconds   longest time a partition owned by a survivor went
 *                          without a commit while it had records waiting
 *   victimResumeSeconds    from the kill to the first commit on each of the
 *                          dead instance's partitions
 *   restartReadySeconds    from starting the killed instance again to its
 *                          /readyz answering 200
 *
 *   node dist/bench/shard/failover.js [--root DIR] [--label NAME] [--rounds N] [--out FILE] [--rate PAGES_PER_S] [--logs DIR]
 *
 * --root: the build to run (its dist/src/cli/main.js), so that two builds
 * can be measured side by side on the same broker. Needs KAFKA_BROKERS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { demoPages } from '../../src/producers/demo-pages.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), process.argv[i + 1]!);
const ROOT = resolve(args.get('root') ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..'));
const LABEL = args.get('label') ?? 'this build';
const ROUNDS = Number(args.get('rounds') ?? 3);
const OUT = args.get('out') ?? null;
const RATE = Number(args.get('rate') ?? 60);
/** Where to keep each restarted instance's log (to see what its start waited on). */
const LOGS = args.get('logs') ?? null;
const PARTITIONS = 6;
const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
if (brokers.length === 0) throw new Error('KAFKA_BROKERS is not set (bash deploy/local/up.sh, then source .infra/env)');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => res(port));
    });
    server.on('error', rej);
  });
}

interface Instance {
  name: string;
  port: number;
  child: ChildProcess;
  logs: string;
}

async function main(): Promise<void> {
  const run = `fo-${Date.now().toString(36)}`;
  const topics = {
    DEDUP_PAGES_TOPIC: `${run}.pages`, DEDUP_NOVEL_TOPIC: `${run}.novel`, DEDUP_DUPLICATE_TOPIC: `${run}.duplicate`, DEDUP_DEAD_LETTER_TOPIC: `${run}.dlq`,
    DEDUP_FINGERPRINTS_TOPIC: `${run}.fingerprints`, DEDUP_SEQUENCE_TOPIC: `${run}.sequence`, DEDUP_ANSWERS_TOPIC: `${run}.answers`, DEDUP_STANDBY_TOPIC: `${run}.standby`,
  };
  const groupId = `${run}-group`;
  const kafka = new Kafka({ clientId: 'bench-failover', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: topics.DEDUP_PAGES_TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-failover-'));
  const env = {
    ...process.env, ...topics, DEDUP_MODE: 'sharded', DEDUP_SHARDS: '6', DEDUP_STANDBY_REPLICAS: '1', DEDUP_TOPIC_PARTITIONS: String(PARTITIONS),
    DEDUP_BROKERS: brokers.join(','), DEDUP_GROUP_ID: groupId, DEDUP_EXPECTED_FINGERPRINTS: '100000', DEDUP_MAX_BATCH_RECORDS: '50',
    DEDUP_FINGERPRINT_THREADS: '1', DEDUP_LOG_LEVEL: 'info', DEDUP_METRICS_HOST: '127.0.0.1',
  };
  const start = async (name: string): Promise<Instance> => {
    const port = await freePort();
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'cli', 'main.js'), 'run'], {
      env: { ...env, DEDUP_INSTANCE_ID: name, DEDUP_STATE_DIR: join(stateDir, name), DEDUP_METRICS_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const instance: Instance = { name, port, child, logs: '' };
    child.stdout!.on('data', (d: Buffer) => (instance.logs += d.toString('utf8')));
    child.stderr!.on('data', (d: Buffer) => (instance.logs += d.toString('utf8')));
    return instance;
  };
  const ready = async (i: Instance, timeoutMs = 180_000): Promise<number> => {
    const began = Date.now();
    while (Date.now() - began < timeoutMs) {
      const ok = await fetch(`http://127.0.0.1:${i.port}/readyz`).then((r) => r.status === 200, () => false);
      if (ok) return (Date.now() - began) / 1000;
      await sleep(100);
    }
    throw new Error(`${i.name} not ready within ${timeoutMs} ms:\n${i.logs.slice(-2000)}`);
  };
  /** The input partitions an instance was last assigned (its latest "assignment" log line). */
  const partitionsOf = (i: Instance): number[] => {
    const lines = [...i.logs.matchAll(/"msg":"assignment","partitions":\[([\d,]*)\]/g)];
    const last = lines[lines.length - 1];
    return last ? last[1]!.split(',').filter(Boolean).map(Number) : [];
  };

  const instances = await Promise.all(['dedup-a', 'dedup-b', 'dedup-c'].map(start));
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  let feeding = true;
  const feed = demoPages({ seed: 5 });
  const feeder = (async () => {
    while (feeding) {
      const pages = Array.from({ length: Math.max(1, Math.round(RATE / 5)) }, () => feed.next().value!);
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: pages.map((p) => ({ key: p.id, value: JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html }) })) });
      await sleep(200);
    }
  })();
  const rounds: Record<string, unknown>[] = [];
  try {
    await Promise.all(instances.map((i) => ready(i)));
    await sleep(15_000);
    for (let round = 0; round < ROUNDS; round++) {
      const victim = instances[round % instances.length]!;
      const victimPartitions = new Set(partitionsOf(victim));
      const samples: { t: number; committed: number[]; end: number[] }[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const t = Date.now();
          const [committed, end] = await Promise.all([admin.fetchOffsets({ groupId, topics: [topics.DEDUP_PAGES_TOPIC] }), admin.fetchTopicOffsets(topics.DEDUP_PAGES_TOPIC)]);
          const c = new Array<number>(PARTITIONS).fill(0);
          const e = new Array<number>(PARTITIONS).fill(0);
          for (const p of committed[0]!.partitions) c[p.partition] = Math.max(0, Number(p.offset));
          for (const p of end) e[p.partition] = Number(p.high);
          samples.push({ t, committed: c, end: e });
          await sleep(200);
        }
      })();
      await sleep(3000);
      const killedAt = Date.now();
      victim.child.kill('SIGKILL');
      await sleep(2000);
      const again = await start(victim.name);
      instances[instances.indexOf(victim)] = again;
      const restartReadySeconds = await ready(again);
      await sleep(Math.max(0, killedAt + 35_000 - Date.now()));
      sampling = false;
      await sampler;
      // Per partition: the longest gap between commits after the kill, counting only time with records waiting.
      const stall = new Array<number>(PARTITIONS).fill(0);
      const resume = new Array<number>(PARTITIONS).fill(NaN);
      for (let p = 0; p < PARTITIONS; p++) {
        let lastMove = killedAt;
        let lastValue = samples.filter((s) => s.t <= killedAt).at(-1)?.committed[p] ?? 0;
        for (const s of samples) {
          if (s.t <= killedAt) continue;
          if (s.committed[p]! !== lastValue) {
            if (Number.isNaN(resume[p]!)) resume[p] = (s.t - killedAt) / 1000;
            lastValue = s.committed[p]!;
            lastMove = s.t;
          } else if (s.end[p]! > s.committed[p]!) {
            stall[p] = Math.max(stall[p]!, (s.t - lastMove) / 1000);
          } else {
            lastMove = s.t;
          }
        }
      }
      const survivors = [...Array(PARTITIONS).keys()].filter((p) => !victimPartitions.has(p));
      const result = {
        victim: victim.name,
        victimPartitions: [...victimPartitions],
        survivorStallSeconds: Math.max(0, ...survivors.map((p) => stall[p]!)),
        victimResumeSeconds: Math.max(0, ...[...victimPartitions].map((p) => (Number.isNaN(resume[p]!) ? Infinity : resume[p]!))),
        restartReadySeconds,
      };
      rounds.push(result);
      if (LOGS) await writeFile(join(LOGS, `${LABEL}-${round}-${again.name}.log`), again.logs);
      console.log(JSON.stringify({ label: LABEL, round, ...result }));
      await sleep(5000);
    }
  } finally {
    feeding = false;
    await feeder.catch(() => undefined);
    await producer.disconnect();
    for (const i of instances) i.child.kill('SIGKILL');
    await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
    await admin.disconnect();
    await rm(stateDir, { recursive: true, force: true });
  }
  const max = (k: string) => Math.max(...rounds.map((r) => r[k] as number));
  const summary = {
    label: LABEL,
    commit: (() => { try { return execSync('git rev-parse --short HEAD', { cwd: ROOT }).toString().trim(); } catch { return 'unknown'; } })(),
    node: process.version,
    cpus: cpus().length,
    ratePagesPerSecond: RATE,
    rounds,
    survivorStallSecondsMax: max('survivorStallSeconds'),
    victimResumeSecondsMax: max('victimResumeSeconds'),
    restartReadySecondsMax: max('restartReadySeconds'),
  };
  console.log(JSON.stringify(summary));
  if (OUT) {
    const previous = await readFile(OUT, 'utf8').then((t) => JSON.parse(t) as Record<string, unknown>, () => ({}));
    await writeFile(OUT, JSON.stringify({ ...previous, [LABEL]: summary, measuredAt: new Date().toISOString() }, null, 2) + '\n');
  }
}

await main();
