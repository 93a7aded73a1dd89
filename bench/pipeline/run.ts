/**
 * The pipeline benchmark's driver: end-to-end throughput (pipeline and the
 * passthrough baseline, interleaved, 1 and 3 input partitions), latency at
 * fixed paces, and restart cost (snapshot load, changelog replay, spawn to
 * /readyz). Every measured case runs in a fresh child process; the driver
 * only feeds Kafka, polls and records. Writes bench/results/pipeline.json.
 *
 *   bash bench/pipeline/run.sh        (starts and stops its own local stack)
 *
 * Sizes and repetitions come from BENCH_* variables (see run.sh). Any DEDUP_*
 * variable set in the environment reaches every pipeline process and is
 * recorded in the results.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { CONFIG_OPTIONS, loadConfig } from '../../src/config.js';
import { ROOT, benchKafka, deleteTopics, envInt, envList, log, median, pipelineOverrides, round, stackFromEnv } from './common.js';
import { benchCodec, createInputTopic, encodePages, preload } from './load.js';
import { throughputRun, type Kind, type ThroughputRun } from './throughput.js';
import { latencyRun, type LatencyRun } from './latency.js';
import { replayCase, snapshotCase, startupCase, type ReplayResult, type SnapshotResult, type StartupResult } from './restart.js';

const startedAt = Date.now();
const phases = new Set((process.env.BENCH_PHASES ?? 'throughput,latency,snapshot,replay,startup').split(',').map((s) => s.trim()));
const params = {
  pages: envInt('BENCH_PAGES', 10000),
  seed: envInt('BENCH_SEED', 42),
  minBytes: envInt('BENCH_MIN_KB', 5) * 1024,
  maxBytes: envInt('BENCH_MAX_KB', 50) * 1024,
  partitions: envList('BENCH_PARTITIONS', [1, 3]),
  runs: envInt('BENCH_RUNS', 3),
  warmupFraction: envInt('BENCH_WARMUP_FRACTION', 0.1),
  runTimeoutSeconds: envInt('BENCH_RUN_TIMEOUT_SECONDS', 600),
  latencyFractions: (process.env.BENCH_LATENCY_FRACTIONS ?? '0.5,0.65,0.8').split(',').map(Number),
  latencySeconds: envInt('BENCH_LATENCY_SECONDS', 20),
  latencyWarmupSeconds: envInt('BENCH_LATENCY_WARMUP_SECONDS', 3),
  latencyPartitions: envList('BENCH_LATENCY_PARTITIONS', [1, 6]),
  latencyMaxRate: envInt('BENCH_LATENCY_MAX_RATE', 0),
  snapshotSizes: envList('BENCH_SNAPSHOT_SIZES', [1_000_000, 10_000_000]),
  snapshotRuns: envInt('BENCH_SNAPSHOT_RUNS', 3),
  replaySizes: envList('BENCH_REPLAY_SIZES', [1_000_000]),
  replayRuns: envInt('BENCH_REPLAY_RUNS', 2),
  changelogTransactionRecords: envInt('BENCH_CHANGELOG_TXN_RECORDS', 500),
  startupPages: envInt('BENCH_STARTUP_PAGES', 1_000_000),
  startupRuns: envInt('BENCH_STARTUP_RUNS', 3),
  compareThreads: (process.env.BENCH_COMPARE_THREADS ?? '-1').split(',').map((s) => s.trim()).filter((s) => s.length > 0),
  phases: [...phases],
};
const output = process.env.BENCH_OUTPUT ?? join(ROOT, 'bench', 'results', 'pipeline.json');

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

/** Cores busy with processes that are not the measured one, the broker or the registry (other people's work). */
function otherCores(r: ThroughputRun): number | null {
  const c = r.cpuSeconds;
  if (c.machineBusy === null || c.process === null || c.kafka === null || c.registry === null) return null;
  return Math.max(0, c.machineBusy - c.process - c.kafka - c.registry) / r.windowSeconds;
}

const load = () => loadavg().map((x) => round(x, 2));

async function main(): Promise<void> {
  const stack = stackFromEnv();
  const kafka = benchKafka(stack);
  const defaults = loadConfig({});
  const overrides = pipelineOverrides();
  const effective = loadConfig(overrides);
  const fingerprintThreads = CONFIG_OPTIONS.some((o) => o.key === 'fingerprintThreads') ? (effective as unknown as Record<string, unknown>).fingerprintThreads : 'no such option';
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    commit: git(['rev-parse', 'HEAD']),
    dirty: git(['status', '--porcelain', 'src']).length > 0,
    node: process.version,
    kafkajs: packageVersion('kafkajs'),
    broker: `Apache Kafka ${process.env.KAFKA_VERSION ?? '3.9.2'} (single node, KRaft, deploy/local/up.sh), Apicurio Registry ${process.env.APICURIO_VERSION ?? '3.0.9'}`,
    machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: availableParallelism(), memoryGB: round(totalmem() / 2 ** 30, 1), loadavgAtStart: load() },
    parameters: params,
    config: {
      overrides,
      maxBatchRecords: effective.maxBatchRecords,
      k: effective.k,
      secondStageBands: effective.secondStageBands,
      secondStageRadius: effective.secondStageRadius,
      tablePlan: effective.tablePlan,
      expectedFingerprints: effective.expectedFingerprints,
      fingerprintThreads,
      defaultsChanged: Object.keys(overrides).length > 0,
      maxPageBytes: defaults.maxPageBytes,
    },
  };
  const save = () => {
    results.totalSeconds = round((Date.now() - startedAt) / 1000, 1);
    (results.machine as Record<string, unknown>).loadavgAtEnd = load();
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, `${JSON.stringify(results, null, 2)}\n`);
  };

  let maxRate = params.latencyMaxRate;
  if (phases.has('throughput') || phases.has('latency')) {
    const inputName = `bench-in-${Date.now().toString(36)}`;
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

    if (phases.has('throughput')) {
      const topics = new Map<number, string>();
      const loads: Record<string, number> = {};
      for (const p of params.partitions) {
        const topic = `${inputName}-${p}p.pages`;
        await createInputTopic(kafka, topic, p, defaults.maxPageBytes);
        loads[`${p}`] = round(await preload(kafka, topic, pages), 2);
        topics.set(p, topic);
        log(`pre-loaded ${params.pages} pages into ${topic} (${p} partitions) in ${loads[`${p}`]} s`);
      }
      // Thread-count variants, when the option exists and the configuration under test does not already set it.
      const threadsOption = CONFIG_OPTIONS.some((o) => o.env === 'DEDUP_FINGERPRINT_THREADS');
      const variants = threadsOption && !overrides.DEDUP_FINGERPRINT_THREADS ? params.compareThreads.map((t) => ({ DEDUP_FINGERPRINT_THREADS: t })) : [];
      const runs: ThroughputRun[] = [];
      for (let r = 0; r < params.runs; r++) {
        for (const p of params.partitions) {
          const cases: [Kind, Record<string, string>][] = [
            ['pipeline', {}],
            ['passthrough', {}],
            // Thread settings change CPU per page, not the Kafka side: compared at one partition count only.
            ...(p === params.latencyPartitions[0] ? variants.map((v): [Kind, Record<string, string>] => ['pipeline', v]) : []),
          ];
          for (const [kind, variant] of cases) {
            const run = await throughputRun(kafka, stack, kind, topics.get(p)!, p, params.pages, pages.valueBytes, params.runTimeoutSeconds * 1000, params.warmupFraction, variant);
            runs.push(run);
            log(`${kind}${run.variant ? ` (${run.variant})` : ''} ${p}p run ${r + 1}/${params.runs}: ${run.pagesPerSecond.toFixed(0)} pages/s, process CPU ${run.processCpuMsPerPage?.toFixed(2)} ms/page`);
          }
        }
      }
      await deleteTopics(kafka, [...topics.values()]);
      const summary = params.partitions.map((p) => {
        const of = (kind: Kind) => runs.filter((r) => r.partitions === p && r.kind === kind && r.variant === '');
        const m = (kind: Kind, f: (r: ThroughputRun) => number | null) => median(of(kind).map(f).filter((x): x is number => x !== null));
        const pipeline = m('pipeline', (r) => r.pagesPerSecond);
        const passthrough = m('passthrough', (r) => r.pagesPerSecond);
        return {
          partitions: p,
          pipelinePagesPerSecond: round(pipeline, 1),
          passthroughPagesPerSecond: round(passthrough, 1),
          ratio: round(pipeline / passthrough, 3),
          pipelineMegabytesPerSecond: round(m('pipeline', (r) => r.megabytesPerSecond), 2),
          passthroughMegabytesPerSecond: round(m('passthrough', (r) => r.megabytesPerSecond), 2),
          pipelineCpuMsPerPage: round(m('pipeline', (r) => r.processCpuMsPerPage), 3),
          passthroughCpuMsPerPage: round(m('passthrough', (r) => r.processCpuMsPerPage), 3),
          pipelineKafkaCpuMsPerPage: round(m('pipeline', (r) => (r.cpuSeconds.kafka === null ? null : (r.cpuSeconds.kafka * 1000) / r.pagesInWindow)), 3),
          passthroughKafkaCpuMsPerPage: round(m('passthrough', (r) => (r.cpuSeconds.kafka === null ? null : (r.cpuSeconds.kafka * 1000) / r.pagesInWindow)), 3),
          pipelineMachineBusyCores: round(m('pipeline', (r) => (r.cpuSeconds.machineBusy === null ? null : r.cpuSeconds.machineBusy / r.windowSeconds)), 2),
          pipelineProcessCores: round(m('pipeline', (r) => (r.cpuSeconds.process === null ? null : r.cpuSeconds.process / r.windowSeconds)), 2),
          pipelineOtherLoadCores: round(m('pipeline', (r) => otherCores(r)), 2),
          passthroughOtherLoadCores: round(m('passthrough', (r) => otherCores(r)), 2),
          pipelineChunkWallShares: {
            fingerprint: round(m('pipeline', (r) => (r.wallSeconds.chunks > 0 ? r.wallSeconds.fingerprint / r.wallSeconds.chunks : null)), 3),
            probe: round(m('pipeline', (r) => (r.wallSeconds.chunks > 0 ? r.wallSeconds.probe / r.wallSeconds.chunks : null)), 3),
            rest: round(m('pipeline', (r) => (r.wallSeconds.chunks > 0 ? 1 - (r.wallSeconds.fingerprint + r.wallSeconds.probe) / r.wallSeconds.chunks : null)), 3),
          },
          passthroughChunkWallMsPerPage: round(m('passthrough', (r) => (r.wallSeconds.chunks * 1000) / r.pages), 3),
          pipelineChunkWallMsPerPage: round(m('pipeline', (r) => (r.wallSeconds.chunks * 1000) / r.pages), 3),
          pipelinePagesPerTransaction: round(m('pipeline', (r) => (r.transactions > 0 ? r.pages / r.transactions : null)), 1),
          pipelineDuplicateShare: round(m('pipeline', (r) => r.duplicates / r.pages), 3),
          runs: of('pipeline').length,
          variants: (p === params.latencyPartitions[0] ? variants : []).map((v) => {
            const name = Object.entries(v).map(([k, x]) => `${k}=${x}`).join(' ');
            const vr = runs.filter((r) => r.partitions === p && r.kind === 'pipeline' && r.variant === name);
            const rate = median(vr.map((r) => r.pagesPerSecond));
            return {
              variant: name,
              pipelinePagesPerSecond: round(rate, 1),
              ratio: round(rate / passthrough, 3),
              pipelineCpuMsPerPage: round(median(vr.map((r) => r.processCpuMsPerPage).filter((x): x is number => x !== null)), 3),
              pipelineProcessCores: round(median(vr.map((r) => (r.cpuSeconds.process === null ? NaN : r.cpuSeconds.process / r.windowSeconds))), 2),
              runs: vr.length,
            };
          }),
        };
      });
      results.throughput = { preloadSeconds: loads, summary, runs };
      const forLatency = summary.find((s) => s.partitions === params.latencyPartitions[0]);
      if (!maxRate && forLatency) maxRate = forLatency.pipelinePagesPerSecond;
      save();
    }

    if (phases.has('latency')) {
      if (!maxRate) throw new Error('latency needs the throughput phase with the first of BENCH_LATENCY_PARTITIONS partitions, or BENCH_LATENCY_MAX_RATE');
      const runs: LatencyRun[] = [];
      for (const partitions of params.latencyPartitions) {
        for (const fraction of params.latencyFractions) {
          const rate = round(maxRate * fraction, 1);
          log(`latency at ${fraction} x ${maxRate} = ${rate} pages/s, ${partitions} partition(s), for ${params.latencySeconds} s`);
          const run = await latencyRun(kafka, stack, {
            fraction,
            rate,
            seconds: params.latencySeconds,
            warmupSeconds: params.latencyWarmupSeconds,
            partitions,
            values: pages.values,
            keys: pages.keys,
            maxPageBytes: defaults.maxPageBytes,
          });
          runs.push(run);
          log(`latency at ${rate} pages/s, ${partitions} partition(s): p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, p99.9 ${run.p999Ms} ms`);
          save();
        }
      }
      results.latency = { maxRatePagesPerSecond: maxRate, runs };
      save();
    }
  }

  if (phases.has('snapshot')) {
    const out: SnapshotResult[] = [];
    for (const n of params.snapshotSizes) {
      out.push(await snapshotCase(n, params.snapshotRuns, {}));
      log(`snapshot ${n}: load ${out[out.length - 1]!.medianLoadSeconds.toFixed(2)} s (median of ${params.snapshotRuns})`);
      save();
    }
    results.snapshot = out;
    save();
  }

  if (phases.has('replay')) {
    const out: ReplayResult[] = [];
    for (const n of params.replaySizes) out.push(await replayCase(kafka, stack, n, params.replayRuns, params.changelogTransactionRecords, {
      DEDUP_BROKERS: stack.brokers.join(','),
      DEDUP_SCHEMA_REGISTRY_URL: stack.registryUrl,
    }));
    const measured10M = out.find((r) => r.records === 10_000_000);
    const largest = out.reduce<ReplayResult | null>((a, b) => (a === null || b.records > a.records ? b : a), null);
    // Not measured at 10M: linear scaling of the largest replay, and a model that
    // scales only the Kafka + decode part linearly and takes the insert part from
    // the 10M snapshot build (the same Decider.restore calls, measured).
    const snaps = (results.snapshot as SnapshotResult[] | undefined) ?? [];
    const buildOf = (n: number) => snaps.find((x) => x.pages === n)?.buildSeconds;
    let tenMillion: Record<string, unknown> | null = null;
    if (measured10M) tenMillion = { extrapolated: false, seconds: measured10M.medianSeconds, recordsPerSecond: measured10M.medianRecordsPerSecond };
    else if (largest) {
      const scale = 10_000_000 / largest.records;
      const insertSmall = buildOf(largest.records);
      const insertBig = buildOf(10_000_000);
      tenMillion = {
        extrapolated: true,
        from: largest.records,
        linearSeconds: round(largest.medianSeconds * scale, 1),
        modelSeconds: insertSmall !== undefined && insertBig !== undefined ? round((largest.medianSeconds - insertSmall) * scale + insertBig, 1) : null,
        insertSecondsSmall: insertSmall ?? null,
        insertSecondsTenMillion: insertBig ?? null,
      };
    }
    results.replay = { runs: out, tenMillion };
    save();
  }

  if (phases.has('startup')) {
    const r: StartupResult = await startupCase(kafka, stack, params.startupPages, params.startupRuns, defaults.maxPageBytes);
    log(`startup: /readyz after ${r.medianReadySecondsWithSnapshot.toFixed(2)} s with a ${params.startupPages} snapshot, ${r.medianReadySecondsEmpty.toFixed(2)} s empty`);
    results.startup = r;
  }
  save();
  log(`wrote ${output} in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench/pipeline: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
