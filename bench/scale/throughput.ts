/**
 * Throughput of one case (passthrough, single, sharded with N instances) on
 * a fresh copy of the input, pre-loaded in a transaction that is committed
 * only once every instance is ready (gate.ts). As in bench/pipeline/throughput.ts, the rate is
 * counted from dedup_pages_consumed_total (incremented after each commit),
 * here summed over every instance and polled every 50 ms; the window opens
 * once every instance is ready and a warm-up share of the pages is done, and
 * closes when the last page is committed. CPU of the instances (total and
 * main threads), the broker, the registry and the whole machine comes from
 * /proc over the same window; the stage figures come from the processes'
 * own histograms over the whole run.
 */
import type { Kafka } from 'kafkajs';
import { cpuSeconds, deleteTopics, machineBusySeconds, sleep, type Stack } from '../pipeline/common.js';
import { createInputTopic, type EncodedPages } from '../pipeline/load.js';
import { preloadGated } from './gate.js';
import { groupCpu, retrying, scrapeAll, startGroup, stopGroup, sumOver, type CaseSpec, type Group } from './group.js';

export interface ScaleThroughputRun {
  case: string;
  mode: CaseSpec['mode'];
  instances: number;
  repetition: number;
  partitions: number;
  shards: number | null;
  pages: number;
  pagesPerSecond: number;
  windowSeconds: number;
  pagesInWindow: number;
  /** Pages already committed when the last instance became ready and the input was let through (0 unless the gate failed). */
  pagesBeforeAllReady: number;
  /** Rebalances the instances took part in inside the window (0 = the assignment held throughout). */
  rebalancesInWindow: number;
  readySeconds: number[];
  duplicates: number;
  deadLetters: number;
  transactions: number;
  /** CPU seconds over the window, from /proc. */
  cpuSeconds: { instances: number | null; instancesMainThreads: number | null; kafka: number | null; registry: number | null; machineBusy: number | null };
  /** Wall-clock seconds summed over the instances, from their histograms, over the whole run. */
  wallSeconds: { chunks: number; fingerprint: number; probe: number; answerWait: number };
  sequenceRecordsApplied: number;
  pagesCounted: number;
  shardsHeld: number[];
}

export async function scaleThroughputRun(
  kafka: Kafka,
  stack: Stack,
  spec: CaseSpec,
  options: { topicPrefix: string; input: EncodedPages; maxPageBytes: number; partitions: number; shards: number; warmupFraction: number; timeoutMs: number; repetition: number },
): Promise<ScaleThroughputRun> {
  const pages = options.input.values.length;
  // A fresh copy of the input per run, behind a gate opened once every instance is ready.
  const pagesTopic = `${options.topicPrefix}-${spec.name}-r${options.repetition}.pages`;
  await retrying('creating the input topic', () => createInputTopic(kafka, pagesTopic, options.partitions, options.maxPageBytes));
  const gate = await preloadGated(kafka, pagesTopic, options.input);
  let group: Group | null = null;
  try {
    group = await startGroup(stack, spec, pagesTopic, options.partitions, options.shards);
    await gate.open();
    const g = group;
    const cpu = () => ({ group: groupCpu(g), kafka: cpuSeconds(stack.kafkaPid), registry: cpuSeconds(stack.registryPid), machineBusy: machineBusySeconds() });
    const deadline = Date.now() + options.timeoutMs;
    type Mark = { t: number; count: number; rebalances: number; cpu: ReturnType<typeof cpu> };
    let first: Mark | null = null;
    let last: Mark | null = null;
    let beforeAllReady: number | null = null;
    for (;;) {
      const dead = g.instances.find((i) => i.child.hasExited());
      if (dead) throw new Error(`${spec.name}: ${dead.id} exited during the run:\n${dead.child.logs().slice(-3000)}`);
      const samples = await scrapeAll(g);
      const count = sumOver(samples, 'dedup_pages_consumed_total');
      const rebalances = sumOver(samples, 'dedup_rebalances_total');
      const t = performance.now();
      beforeAllReady ??= count;
      if (first === null && count > 0 && count >= options.warmupFraction * pages) first = { t, count, rebalances, cpu: cpu() };
      if (count >= pages) {
        last = { t, count, rebalances, cpu: cpu() };
        break;
      }
      if (Date.now() > deadline) throw new Error(`${spec.name}: only ${count} of ${pages} pages after ${options.timeoutMs} ms`);
      await sleep(50);
    }
    if (first === null || first.t === last.t) throw new Error(`${spec.name}: the run ended before a window could open (every page was decided during start-up); use more pages`);
    const end = await scrapeAll(g);
    const seconds = (last.t - first.t) / 1000;
    const inWindow = last.count - first.count;
    const diff = (a: number | null | undefined, b: number | null | undefined) => (a === null || a === undefined || b === null || b === undefined ? null : b - a);
    return {
      case: spec.name,
      mode: spec.mode,
      instances: spec.instances,
      repetition: options.repetition,
      partitions: options.partitions,
      shards: spec.mode === 'sharded' ? options.shards : null,
      pages: pages,
      pagesPerSecond: inWindow / seconds,
      windowSeconds: seconds,
      pagesInWindow: inWindow,
      pagesBeforeAllReady: beforeAllReady ?? 0,
      rebalancesInWindow: last.rebalances - first.rebalances,
      readySeconds: g.instances.map((i) => i.readySeconds),
      duplicates: sumOver(end, 'dedup_verdicts_total', 'duplicate'),
      deadLetters: sumOver(end, 'dedup_dead_letters_total'),
      transactions: sumOver(end, 'dedup_transactions_total', 'committed'),
      cpuSeconds: {
        instances: diff(first.cpu.group?.total, last.cpu.group?.total),
        instancesMainThreads: diff(first.cpu.group?.main, last.cpu.group?.main),
        kafka: diff(first.cpu.kafka, last.cpu.kafka),
        registry: diff(first.cpu.registry, last.cpu.registry),
        machineBusy: diff(first.cpu.machineBusy, last.cpu.machineBusy),
      },
      wallSeconds: {
        chunks: sumOver(end, 'dedup_batch_duration_seconds_sum'),
        fingerprint: sumOver(end, 'dedup_fingerprint_duration_seconds_sum'),
        probe: sumOver(end, 'dedup_probe_duration_seconds_sum'),
        answerWait: sumOver(end, 'dedup_answer_wait_seconds_sum'),
      },
      sequenceRecordsApplied: sumOver(end, 'dedup_sequence_records_applied_total'),
      pagesCounted: sumOver(end, 'dedup_pages_consumed_total'),
      shardsHeld: end.map((s) => sumOver([s], 'dedup_shards_held')),
    };
  } finally {
    await gate.close();
    if (group) await stopGroup(kafka, group);
    await deleteTopics(kafka, [pagesTopic]);
  }
}
