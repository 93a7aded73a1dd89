/**
 * The scale-out benchmark's driver. On one set of real-sized pages, encoded
 * once and pre-loaded before each run (behind a transaction the driver
 * commits when every instance is ready), interleaved in every repetition: the passthrough, single
 * mode, sharded with 1 instance and sharded with 2 (or BENCH_SCALE_INSTANCES)
 * instances; then latency at a fixed pace (a share of the measured sharded
 * 1-instance rate) for single and each sharded case; then restore after a
 * SIGKILL. Every measured process is a fresh child; the driver only feeds
 * Kafka, polls and records. Writes bench/results/scale.json.
 *
 *   bash bench/scale/run.sh        (starts and stops its own local stack)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { ROOT, benchKafka, deleteTopics, envInt, envList, log, median, round, stackFromEnv } from '../pipeline/common.js';
import { benchCodec, createInputTopic, encodePages, preload } from '../pipeline/load.js';
import { caseName, retrying, type CaseSpec } from './group.js';
import { scaleThroughputRun, type ScaleThroughputRun } from './throughput.js';
import { scaleLatencyRun, type ScaleLatencyRun } from './latency.js';
import { restoreRun, type RestoreRun } from './restore.js';
import { summarizeThroughput } from './summary.js';

const startedAt = Date.now();
const phases = new Set((process.env.BENCH_PHASES ?? 'throughput,latency,restore').split(',').map((s) => s.trim()));
const params = {
  smoke: process.env.BENCH_SMOKE === '1',
  pages: envInt('BENCH_PAGES', 10000),
  seed: envInt('BENCH_SEED', 42),
  minBytes: envInt('BENCH_MIN_KB', 5) * 1024,
  maxBytes: envInt('BENCH_MAX_KB', 50) * 1024,
  partitions: envInt('BENCH_PARTITIONS', 6),
  shards: envInt('BENCH_SHARDS', 12),
  shardedInstances: envList('BENCH_SCALE_INSTANCES', [1, 2]),
  runs: envInt('BENCH_RUNS', 2),
  warmupFraction: envInt('BENCH_WARMUP_FRACTION', 0.1),
  runTimeoutSeconds: envInt('BENCH_RUN_TIMEOUT_SECONDS', 600),
  latencyFraction: envInt('BENCH_LATENCY_FRACTION', 0.5),
  latencySeconds: envInt('BENCH_LATENCY_SECONDS', 15),
  latencyWarmupSeconds: envInt('BENCH_LATENCY_WARMUP_SECONDS', 3),
  latencyMaxRate: envInt('BENCH_LATENCY_MAX_RATE', 0),
  latencyCases: (process.env.BENCH_LATENCY_CASES ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''),
  latencyPartitions: envList('BENCH_LATENCY_PARTITIONS', []),
  phases: [...phases],
};
const output = process.env.BENCH_OUTPUT ?? join(ROOT, 'bench', 'results', 'scale.json');

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const load = () => loadavg().map((x) => round(x, 2));

async function main(): Promise<void> {
  const stack = stackFromEnv();
  const kafka = benchKafka(stack, 'dedup-bench-scale');
  const defaults = loadConfig({});
  const overrides = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('DEDUP_')) as [string, string][]);
  const effective = loadConfig(overrides);
  const cases: CaseSpec[] = [
    { name: 'passthrough', mode: 'passthrough', instances: 1 },
    { name: 'single', mode: 'single', instances: 1 },
    ...params.shardedInstances.map((n): CaseSpec => ({ name: caseName('sharded', n), mode: 'sharded', instances: n })),
  ];
  const results: Record<string, unknown> = {
    smoke: params.smoke,
    date: new Date().toISOString(),
    commit: git(['rev-parse', 'HEAD']),
    dirty: git(['status', '--porcelain', 'src']).length > 0,
    node: process.version,
    kafkajs: packageVersion('kafkajs'),
    broker: `Apache Kafka ${process.env.KAFKA_VERSION ?? '3.9.2'} (single node, KRaft, deploy/local/up.sh), Apicurio Registry ${process.env.APICURIO_VERSION ?? '3.0.9'}`,
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: availableParallelism(), memoryGB: round(totalmem() / 2 ** 30, 1), loadavgAtStart: load() },
    parameters: params,
    cases: cases.map((c) => c.name),
    config: {
      overrides,
      maxBatchRecords: effective.maxBatchRecords,
      k: effective.k,
      tablePlan: effective.tablePlan,
      expectedFingerprints: effective.expectedFingerprints,
      fingerprintThreads: effective.fingerprintThreads,
      defaultsChanged: Object.keys(overrides).length > 0,
    },
  };
  const save = () => {
    results.totalSeconds = round((Date.now() - startedAt) / 1000, 1);
    (results.machine as Record<string, unknown>).loadavgAtEnd = load();
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, `${JSON.stringify(results, null, 2)}\n`);
  };

  const inputName = `bench-scale-${Date.now().toString(36)}`;
  const codec = await benchCodec(stack, { pagesTopic: inputName, novelTopic: `${inputName}.novel`, duplicateTopic: `${inputName}.dup`, fingerprintsTopic: `${inputName}.fp` }, defaults.maxPageBytes);
  log(`encoding ${params.pages} pages`);
  const pages = await encodePages(codec, { count: params.pages, seed: params.seed, minBytes: params.minBytes, maxBytes: params.maxBytes });
  const sizes = [...pages.htmlBytes].sort((a, b) => a - b);
  results.input = {
    pages: params.pages,
    htmlBytes: { min: sizes[0], median: median(sizes), mean: round(sizes.reduce((a, b) => a + b, 0) / sizes.length), max: sizes[sizes.length - 1] },
    avroBytesTotal: pages.valueBytes,
    kinds: pages.kinds,
  };

  // The restore case's input; each throughput run loads its own gated copy (gate.ts).
  const pagesTopic = `${inputName}.pages`;
  const needsInput = phases.has('restore');
  try {
    if (needsInput) {
      await retrying('creating the input topic', () => createInputTopic(kafka, pagesTopic, params.partitions, defaults.maxPageBytes));
      const seconds = await preload(kafka, pagesTopic, pages);
      results.preloadSeconds = round(seconds, 2);
      log(`pre-loaded ${params.pages} pages into ${pagesTopic} (${params.partitions} partitions) in ${seconds.toFixed(1)} s`);
    }

    let maxRate = params.latencyMaxRate;
    if (phases.has('throughput')) {
      const runs: ScaleThroughputRun[] = [];
      for (let r = 0; r < params.runs; r++) {
        // Alternate the order between repetitions, so no case always runs first (or last) in a repetition.
        const order = r % 2 === 0 ? cases : [...cases].reverse();
        for (const spec of order) {
          const run = await scaleThroughputRun(kafka, stack, spec, {
            topicPrefix: inputName,
            input: pages,
            maxPageBytes: defaults.maxPageBytes,
            partitions: params.partitions,
            shards: params.shards,
            warmupFraction: params.warmupFraction,
            timeoutMs: params.runTimeoutSeconds * 1000,
            repetition: r + 1,
          });
          runs.push(run);
          const cpu = run.cpuSeconds.instances === null ? '-' : ((run.cpuSeconds.instances * 1000) / run.pagesInWindow).toFixed(2);
          log(`${spec.name} run ${r + 1}/${params.runs}: ${run.pagesPerSecond.toFixed(0)} pages/s, instances' CPU ${cpu} ms/page, ${run.rebalancesInWindow} rebalances in the window`);
          results.throughput = { runs, summary: summarizeThroughput(runs, cases.map((c) => c.name)) };
          save();
        }
      }
      const summary = summarizeThroughput(runs, cases.map((c) => c.name));
      results.throughput = { summary, runs };
      const base = summary.find((s) => s.case === 'sharded-1');
      if (!maxRate && base) maxRate = base.pagesPerSecond;
      save();
    }

    if (phases.has('latency')) {
      if (!maxRate) throw new Error('latency needs the throughput phase with the sharded-1 case, or BENCH_LATENCY_MAX_RATE');
      const rate = round(maxRate * params.latencyFraction, 1);
      const runs: (ScaleLatencyRun & { loadavgAtStart: number[]; loadavgAtEnd: number[] })[] = [];
      const latencyCases = cases.filter((c) => c.mode !== 'passthrough' && (params.latencyCases.length === 0 || params.latencyCases.includes(c.name)));
      const partitionCounts = params.latencyPartitions.length > 0 ? params.latencyPartitions : [params.partitions];
      for (const partitions of partitionCounts) {
        for (const spec of latencyCases) {
          log(`latency of ${spec.name} on ${partitions} partition(s) at ${params.latencyFraction} x ${maxRate} = ${rate} pages/s for ${params.latencySeconds} s`);
          const loadavgAtStart = load();
          const run = await scaleLatencyRun(kafka, stack, spec, {
            rate,
            seconds: params.latencySeconds,
            warmupSeconds: params.latencyWarmupSeconds,
            partitions,
            shards: params.shards,
            values: pages.values,
            keys: pages.keys,
            maxPageBytes: defaults.maxPageBytes,
          });
          runs.push({ ...run, loadavgAtStart, loadavgAtEnd: load() });
          log(`latency of ${spec.name} on ${partitions} partition(s): p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, p99.9 ${run.p999Ms} ms (load ${load().join(' ')})`);
          results.latency = { basePagesPerSecond: maxRate, fraction: params.latencyFraction, ratePagesPerSecond: rate, runs };
          save();
        }
      }
    }

    if (phases.has('restore')) {
      log('restore: two sharded instances decide the input, then one is SIGKILLed');
      const run: RestoreRun = await restoreRun(kafka, stack, { pagesTopic, partitions: params.partitions, shards: params.shards, pages: params.pages, timeoutMs: params.runTimeoutSeconds * 1000 });
      log(`restore: ${run.movedShards.length} shards (${run.movedFingerprints} fingerprints) moved; ready again ${run.killToReadySeconds.toFixed(1)} s after the kill (not ready for ${run.notReadySeconds?.toFixed(2) ?? 'less than a poll'} s); restores ${run.restoreSecondsTotal.toFixed(2)} s in total`);
      results.restore = run;
      save();
    }
  } finally {
    if (needsInput) await deleteTopics(kafka, [pagesTopic]);
  }
  save();
  log(`wrote ${output} in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench/scale: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
