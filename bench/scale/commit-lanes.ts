/**
 * The commit path alone: how long a decided chunk waits for its transaction
 * to commit, with one transaction open at a time and with two (the verdict
 * producer's lanes). The same group committer and verdict producer as single
 * mode, on the real broker, fed synthetic chunks at a fixed pace (verdicts of
 * page size and changelog entries, offsets of 6 input partitions). The two
 * settings alternate in short windows, so both see the same load on a shared
 * machine. Not the end-to-end latency (no fetch, no fingerprinting).
 *
 *   source <stack env> && node dist/bench/scale/commit-lanes.js [chunksPerSecond=60] [pagesPerChunk=3] [windows=6] [windowSeconds=4]
 *
 * Prints one JSON object (and writes it to $BENCH_OUTPUT when set).
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Kafka, logLevel } from 'kafkajs';
import { createVerdictProducer, type VerdictProducer } from '../../src/kafka/verdict-producer.js';
import { createGroupCommitter } from '../../src/producers/group-commit.js';
import type { OutputMessage } from '../../src/wire/output-record.js';

const [rate = 60, pagesPerChunk = 3, windows = 6, windowSeconds = 4] = process.argv.slice(2).map(Number);
const quantile = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  if (brokers.length === 0) throw new Error('KAFKA_BROKERS is not set (source the stack env)');
  const kafka = new Kafka({ clientId: 'bench-commit-lanes', brokers, logLevel: logLevel.NOTHING });
  const run = `bench-lanes-${Date.now().toString(36)}`;
  const topics = { input: `${run}.in`, out: `${run}.out`, changelog: `${run}.changelog` };
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic: topics.input, numPartitions: 6 }, { topic: topics.out, numPartitions: 6 }, { topic: topics.changelog, numPartitions: 1 }] });
  const producers: Record<1 | 2, VerdictProducer> = { 1: createVerdictProducer(kafka, `${run}-one`, new Map(), 1), 2: createVerdictProducer(kafka, `${run}-two`, new Map(), 2) };
  await producers[1].connect();
  await producers[2].connect();
  const page = Buffer.alloc(28 * 1024, 97);
  const waits: Record<1 | 2, number[]> = { 1: [], 2: [] };
  const transactions: Record<1 | 2, number> = { 1: 0, 2: 0 };
  const next = [0, 0, 0, 0, 0, 0];
  let n = 0;
  try {
    for (let w = 0; w < windows * 2; w++) {
      const lanes = (w % 2 === 0 ? 1 : 2) as 1 | 2;
      const committer = createGroupCommitter(producers[lanes], `${run}-group-${lanes}`, { maxRecords: 500 });
      const started = Date.now();
      const pending: Promise<void>[] = [];
      let sent = 0;
      while (Date.now() - started < windowSeconds * 1000) {
        const due = Math.floor(((Date.now() - started) / 1000) * rate);
        for (; sent < due; sent++) {
          const partition = n++ % 6;
          next[partition]! += pagesPerChunk;
          const verdicts: OutputMessage[] = [];
          const changes: OutputMessage[] = [];
          for (let i = 0; i < pagesPerChunk; i++) {
            verdicts.push({ key: `p${n}-${i}`, value: page });
            changes.push({ key: `p${n}-${i}`, value: Buffer.alloc(120, 1) });
          }
          const at = Date.now();
          pending.push(
            committer
              .submit({ topicMessages: new Map([[topics.out, verdicts], [topics.changelog, changes]]), offsets: { topic: topics.input, partition, offset: String(next[partition]) }, records: pagesPerChunk })
              .then(() => {
                if (w >= 2) waits[lanes].push(Date.now() - at);
              }),
          );
        }
        await sleep(Math.max(1, Math.ceil(started + ((sent + 1) / rate) * 1000 - Date.now())));
      }
      await Promise.all(pending);
      await committer.drained();
      if (w >= 2) transactions[lanes] += committer.transactions;
    }
  } finally {
    await producers[1].disconnect().catch(() => undefined);
    await producers[2].disconnect().catch(() => undefined);
    await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => undefined);
    await admin.disconnect();
  }
  const row = (lanes: 1 | 2) => {
    const xs = waits[lanes].sort((a, b) => a - b);
    return { lanes, chunks: xs.length, transactions: transactions[lanes], p50Ms: quantile(xs, 0.5), p90Ms: quantile(xs, 0.9), p99Ms: quantile(xs, 0.99), p999Ms: quantile(xs, 0.999), maxMs: xs[xs.length - 1] };
  };
  const result = {
    benchmark: 'commit-lanes',
    date: new Date().toISOString(),
    what: 'submit to committed per chunk (group committer + verdict producer on the real broker), one lane against two, alternating windows; the first window of each is warm-up',
    parameters: { chunksPerSecond: rate, pagesPerChunk, verdictBytes: page.length, windows, windowSeconds },
    loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100),
    rows: [row(1), row(2)],
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (process.env.BENCH_OUTPUT) writeFileSync(process.env.BENCH_OUTPUT, `${JSON.stringify(result, null, 2)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`commit-lanes: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
