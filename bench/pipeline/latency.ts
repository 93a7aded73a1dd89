/**
 * Latency at a fixed pace: a fresh `dedup run` process on a fresh input
 * topic; the driver sends pages at `rate` pages/s (records stamped with the
 * send time) while a read_committed consumer follows the changelog topic.
 * A page's latency = when its changelog entry became visible to that consumer
 * minus its input record's timestamp. The changelog entry commits in the same
 * transaction as the page's verdict, so it becomes visible at the same moment
 * as the verdict, and the follower does not have to fetch the HTML that novel
 * verdicts carry. Pages sent during the warm-up are left out.
 */
import { rm } from 'node:fs/promises';
import type { Kafka } from 'kafkajs';
import { createInputTopic } from './load.js';
import { cpuSeconds, deleteTopics, machineBusySeconds, quantile, sleep, stopChild, waitFor, type Stack } from './common.js';
import { metricSum, runNames, scrape, startProcess } from './throughput.js';

export interface LatencyRun {
  fraction: number;
  targetPagesPerSecond: number;
  achievedPagesPerSecond: number;
  partitions: number;
  pages: number;
  measuredPages: number;
  warmupSeconds: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  /** Pages per committed transaction: at a pace, a chunk is what arrived since the last fetch. */
  pagesPerTransaction: number;
  /** CPU cores the pipeline process used while pages were being sent. */
  processCores: number | null;
  /** CPU cores this driver (paced producer + changelog follower) used meanwhile: they share the machine. */
  driverCores: number;
  /** Busy cores of the whole machine meanwhile. */
  machineBusyCores: number | null;
}

export async function latencyRun(
  kafka: Kafka,
  stack: Stack,
  options: { fraction: number; rate: number; seconds: number; warmupSeconds: number; partitions: number; values: Buffer[]; keys: string[]; maxPageBytes: number },
): Promise<LatencyRun> {
  const { rate, partitions, values, keys } = options;
  const total = Math.min(values.length, Math.max(1, Math.round(rate * (options.seconds + options.warmupSeconds))));
  const pagesTopic = `bench-lat-${Date.now().toString(36)}.pages`;
  await createInputTopic(kafka, pagesTopic, partitions, options.maxPageBytes);
  const names = runNames(stack, pagesTopic, `lat${Math.round(options.fraction * 100)}`);
  const s = await startProcess('pipeline', names);
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const seen = new Set<string>();
  const follower = kafka.consumer({ groupId: `${names.run}-follower`, readUncommitted: false, maxWaitTimeInMs: 100 });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  let warmupEnd = Infinity;
  try {
    let joined = false;
    follower.on(follower.events.GROUP_JOIN, () => (joined = true));
    await follower.connect();
    await follower.subscribe({ topics: [names.fingerprintsTopic], fromBeginning: true });
    await follower.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const now = Date.now();
        for (const m of batch.messages) {
          const id = m.key?.toString('utf8') ?? '';
          if (seen.has(id)) continue;
          seen.add(id);
          const sent = sentAt.get(id);
          if (sent !== undefined && sent >= warmupEnd) latencies.push(now - sent);
        }
      },
    });
    await waitFor('the changelog follower to join', () => (joined ? true : undefined), 60_000, 20);
    await producer.connect();

    const started = Date.now();
    const cpuAtStart = cpuSeconds(s.child.pid);
    const driverAtStart = process.cpuUsage();
    const busyAtStart = machineBusySeconds();
    warmupEnd = started + options.warmupSeconds * 1000;
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate) + 1);
      if (due > sent) {
        // A stall of the driver makes many pages due at once: they go in
        // sends of at most 512 KB, as the topic refuses a record batch over
        // its max.message.bytes.
        const now = Date.now();
        let messages = [];
        let bytes = 0;
        for (let i = sent; i < due; i++) {
          sentAt.set(keys[i]!, now);
          messages.push({ key: keys[i]!, value: values[i]!, timestamp: String(now) });
          bytes += values[i]!.length;
          if (bytes >= 512 * 1024 || i === due - 1) {
            await producer.send({ topic: pagesTopic, acks: -1, messages });
            messages = [];
            bytes = 0;
          }
        }
        sent = due;
      } else {
        await sleep(Math.max(1, Math.ceil(started + ((sent + 1) / rate) * 1000 - Date.now())));
      }
    }
    const sendSeconds = (Date.now() - started) / 1000;
    const cpuAtEnd = cpuSeconds(s.child.pid);
    const driver = process.cpuUsage(driverAtStart);
    const busyAtEnd = machineBusySeconds();
    await waitFor(`verdicts of ${total} paced pages (have ${seen.size})`, () => (seen.size >= total ? true : undefined), 600_000, 50);
    latencies.sort((a, b) => a - b);
    const end = await scrape(s.metricsPort);
    const transactions = metricSum(end, 'dedup_transactions_total', 'committed');
    return {
      fraction: options.fraction,
      targetPagesPerSecond: rate,
      achievedPagesPerSecond: total / sendSeconds,
      partitions,
      pages: total,
      measuredPages: latencies.length,
      warmupSeconds: options.warmupSeconds,
      p50Ms: quantile(latencies, 0.5),
      p90Ms: quantile(latencies, 0.9),
      p99Ms: quantile(latencies, 0.99),
      p999Ms: quantile(latencies, 0.999),
      maxMs: latencies[latencies.length - 1] ?? NaN,
      pagesPerTransaction: transactions > 0 ? metricSum(end, 'dedup_pages_consumed_total') / transactions : NaN,
      processCores: cpuAtStart === null || cpuAtEnd === null ? null : (cpuAtEnd - cpuAtStart) / sendSeconds,
      driverCores: (driver.user + driver.system) / 1e6 / sendSeconds,
      machineBusyCores: busyAtStart === null || busyAtEnd === null ? null : (busyAtEnd - busyAtStart) / sendSeconds,
    };
  } finally {
    await producer.disconnect().catch(() => undefined);
    await follower.disconnect().catch(() => undefined);
    await stopChild(s.child);
    await rm(s.stateDir, { recursive: true, force: true });
    await deleteTopics(kafka, [...names.outputs, pagesTopic]);
  }
}
