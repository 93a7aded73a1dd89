/**
 * Latency at a fixed pace for one case, as bench/pipeline/latency.ts measures
 * it, but for a group of instances: a fresh input topic, the driver sends
 * pages at `rate` pages/s (records stamped with the send time), and a
 * read_committed consumer follows the verdict topics (novel, duplicate, dead
 * letters). A page's latency = when its verdict became visible to that
 * consumer minus its input record's timestamp. The verdict topics are
 * followed, not the changelog: in sharded mode the changelog entry is written
 * by the shard before the verdict's transaction commits. Pages sent during
 * the warm-up are left out.
 */
import type { Kafka } from 'kafkajs';
import { createInputTopic } from '../pipeline/load.js';
import { deleteTopics, machineBusySeconds, quantile, sleep, waitFor, type Stack } from '../pipeline/common.js';
import { groupCpu, retrying, scrapeAll, startGroup, stopGroup, sumOver, type CaseSpec } from './group.js';

/** The stages of dedup_chunk_stage_seconds, in path order, and their keys in the results. */
const CHUNK_STAGES = [
  ['fetch', 'fetch'],
  ['prepare', 'prepare'],
  ['decide', 'decide'],
  ['commit_wait', 'commitWait'],
  ['transaction', 'transaction'],
] as const;

export interface ScaleLatencyRun {
  case: string;
  mode: CaseSpec['mode'];
  instances: number;
  partitions: number;
  targetPagesPerSecond: number;
  achievedPagesPerSecond: number;
  pages: number;
  measuredPages: number;
  warmupSeconds: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  pagesPerTransaction: number;
  /** Rebalances the instances took part in from the first paced page to the last verdict (0 = the assignment held). */
  rebalancesDuringRun: number;
  /**
   * Where the chunks' time went, mean ms per chunk over the paced run (warm-up
   * included), from the instances' dedup_chunk_stage_seconds: fetch, prepare,
   * decide, commitWait, transaction (single mode; sharded mode has the first
   * two). Null where the build has no such metric.
   */
  stagesMs: Record<string, number | null>;
  /** Mean of the instances' own answer wait (sharded mode), ms. */
  answerWaitMeanMs: number | null;
  /** Cores used meanwhile: the instances together, this driver (producer + follower), the whole machine. */
  instancesCores: number | null;
  /** Of instancesCores, the instances' main threads (Kafka clients, decisions); the rest is the worker threads, GC helpers and libuv. */
  instancesMainCores: number | null;
  driverCores: number;
  machineBusyCores: number | null;
}

export async function scaleLatencyRun(
  kafka: Kafka,
  stack: Stack,
  spec: CaseSpec,
  options: { rate: number; seconds: number; warmupSeconds: number; partitions: number; shards: number; values: Buffer[]; keys: string[]; maxPageBytes: number },
): Promise<ScaleLatencyRun> {
  const { rate, values, keys } = options;
  const total = Math.min(values.length, Math.max(1, Math.round(rate * (options.seconds + options.warmupSeconds))));
  const pagesTopic = `bench-slat-${spec.name}-${Date.now().toString(36)}.pages`;
  await retrying('creating the paced input topic', () => createInputTopic(kafka, pagesTopic, options.partitions, options.maxPageBytes));
  let group: Awaited<ReturnType<typeof startGroup>> | null = null;
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const seen = new Set<string>();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  let follower: ReturnType<Kafka['consumer']> | null = null;
  let warmupEnd = Infinity;
  try {
    group = await startGroup(stack, spec, pagesTopic, options.partitions, options.shards);
    follower = kafka.consumer({ groupId: `${group.run}-follower`, readUncommitted: false, maxWaitTimeInMs: 100, maxBytesPerPartition: 16 * 1024 * 1024 });
    const verdictTopics = [group.env.DEDUP_NOVEL_TOPIC!, group.env.DEDUP_DUPLICATE_TOPIC!, group.env.DEDUP_DEAD_LETTER_TOPIC!];
    let joined = false;
    follower.on(follower.events.GROUP_JOIN, () => (joined = true));
    await follower.connect();
    await follower.subscribe({ topics: verdictTopics, fromBeginning: true });
    await follower.run({
      autoCommit: false,
      partitionsConsumedConcurrently: 4,
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
    await waitFor('the verdict follower to join', () => (joined ? true : undefined), 60_000, 20);
    await producer.connect();

    const atStart = await scrapeAll(group);
    const rebalancesAtStart = sumOver(atStart, 'dedup_rebalances_total');
    const started = Date.now();
    const cpuAtStart = groupCpu(group);
    const driverAtStart = process.cpuUsage();
    const busyAtStart = machineBusySeconds();
    warmupEnd = started + options.warmupSeconds * 1000;
    let sent = 0;
    while (sent < total) {
      const dead = group.instances.find((i) => i.child.hasExited());
      if (dead) throw new Error(`${spec.name}: ${dead.id} exited during the paced run:\n${dead.child.logs().slice(-3000)}`);
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
    const cpuAtEnd = groupCpu(group);
    const driver = process.cpuUsage(driverAtStart);
    const busyAtEnd = machineBusySeconds();
    await waitFor(`verdicts of ${total} paced pages (have ${seen.size})`, () => (seen.size >= total ? true : undefined), 600_000, 50);
    latencies.sort((a, b) => a - b);
    const end = await scrapeAll(group);
    const transactions = sumOver(end, 'dedup_transactions_total', 'committed');
    const waits = sumOver(end, 'dedup_answer_wait_seconds_count');
    return {
      case: spec.name,
      mode: spec.mode,
      instances: spec.instances,
      partitions: options.partitions,
      targetPagesPerSecond: rate,
      achievedPagesPerSecond: total / sendSeconds,
      pages: total,
      measuredPages: latencies.length,
      warmupSeconds: options.warmupSeconds,
      p50Ms: quantile(latencies, 0.5),
      p90Ms: quantile(latencies, 0.9),
      p99Ms: quantile(latencies, 0.99),
      p999Ms: quantile(latencies, 0.999),
      maxMs: latencies[latencies.length - 1] ?? NaN,
      pagesPerTransaction: transactions > 0 ? sumOver(end, 'dedup_pages_consumed_total') / transactions : NaN,
      rebalancesDuringRun: sumOver(end, 'dedup_rebalances_total') - rebalancesAtStart,
      stagesMs: Object.fromEntries(
        CHUNK_STAGES.map(([stage, key]) => {
          const filter = `stage="${stage}"`;
          const count = sumOver(end, 'dedup_chunk_stage_seconds_count', filter) - sumOver(atStart, 'dedup_chunk_stage_seconds_count', filter);
          const seconds = sumOver(end, 'dedup_chunk_stage_seconds_sum', filter) - sumOver(atStart, 'dedup_chunk_stage_seconds_sum', filter);
          return [key, count > 0 ? Math.round((seconds / count) * 10_000) / 10 : null];
        }),
      ),
      answerWaitMeanMs: waits > 0 ? (sumOver(end, 'dedup_answer_wait_seconds_sum') * 1000) / waits : null,
      instancesCores: cpuAtStart === null || cpuAtEnd === null ? null : (cpuAtEnd.total - cpuAtStart.total) / sendSeconds,
      instancesMainCores: cpuAtStart === null || cpuAtEnd === null ? null : (cpuAtEnd.main - cpuAtStart.main) / sendSeconds,
      driverCores: (driver.user + driver.system) / 1e6 / sendSeconds,
      machineBusyCores: busyAtStart === null || busyAtEnd === null ? null : (busyAtEnd - busyAtStart) / sendSeconds,
    };
  } finally {
    await producer.disconnect().catch(() => undefined);
    await follower?.disconnect().catch(() => undefined);
    if (group) await stopGroup(kafka, group);
    await deleteTopics(kafka, [pagesTopic]);
  }
}
