/**
 * Renders bench/results/pipeline.json into docs/performance.md between the
 * bench:pipeline markers, so no figure in the doc is typed by hand.
 *   node dist/bench/pipeline/render-doc.js [--check]
 * --check exits 1 when the doc is out of date with the results.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './common.js';

const resultsPath = join(ROOT, 'bench/results/pipeline.json');
const docPath = join(ROOT, 'docs/performance.md');
const START = '<!-- bench:pipeline:start -->';
const END = '<!-- bench:pipeline:end -->';

type Row = Record<string, unknown>;
const r = JSON.parse(readFileSync(resultsPath, 'utf8')) as any;

const fmt = (x: unknown, digits = 0): string =>
  typeof x === 'number' && Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';
const mb = (bytes: number, digits = 0): string => fmt(bytes / 1e6, digits);
const kb = (bytes: number): string => fmt(bytes / 1024, 1);
const human = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));
const list = (xs: number[], digits = 0): string => xs.map((x) => fmt(x, digits)).join(', ');

/** The run's second stage; results written before it was recorded say nothing of it. */
const secondStageLabel = (config: { secondStageBands?: number; secondStageRadius?: number }): string => {
  const { secondStageBands: bands, secondStageRadius: radius } = config;
  if (bands === undefined || radius === undefined) return '';
  if (bands === 0 && radius === 0) return ', second stage off';
  return `, second stage with ${bands} sketch bands${radius > 0 ? ` and radius ${radius}` : ''}`;
};
const threadsLabel = (t: unknown): string => (t === 0 ? `0 (one worker per core: ${r.machine.cores})` : t === -1 ? '-1 (none: in the consuming thread)' : String(t));

const lines: string[] = [];
const p = r.parameters;
lines.push(
  `Measured ${String(r.date).slice(0, 16).replace('T', ' ')} UTC on ${r.machine.cpu} (${r.machine.cores} cores, ${r.machine.memoryGB} GB), Node ${r.node}, kafkajs ${r.kafkajs}, ${r.broker}; commit ${String(r.commit).slice(0, 12)}${r.dirty ? ' with uncommitted changes in src/' : ''}. ` +
    `Load average ${r.machine.loadavgAtStart.join(' / ')} at the start and ${r.machine.loadavgAtEnd.join(' / ')} at the end (1 / 5 / 15 min); the whole benchmark took ${fmt(r.totalSeconds / 60, 1)} min.`,
  '',
  `Pipeline configuration: product defaults${Object.keys(r.config.overrides).length ? ` plus ${Object.entries(r.config.overrides).map(([k, v]) => `\`${k}=${v}\``).join(', ')}` : ''} ` +
    `(k = ${r.config.k}${secondStageLabel(r.config)}, table plan ${r.config.tablePlan} for ${human(r.config.expectedFingerprints)} fingerprints, ${r.config.maxBatchRecords} records per transaction at most, fingerprint threads ${threadsLabel(r.config.fingerprintThreads)}).`,
);

if (r.input) {
  const i = r.input;
  lines.push(
    '',
    `**Input**: ${fmt(i.pages)} pages (${Object.entries(i.kinds).map(([k, v]) => `${fmt(v)} ${k}`).join(', ')}), HTML ${kb(i.htmlBytes.min)} / ${kb(i.htmlBytes.median)} / ${kb(i.htmlBytes.max)} KiB (min / median / max), ${mb(i.avroBytesTotal)} MB of Avro in total.`,
  );
}

if (r.throughput) {
  const t = r.throughput;
  lines.push(
    '',
    `**Throughput** (medians of ${p.runs} run${p.runs > 1 ? 's' : ''} each, pipeline and passthrough interleaved; counted after the first ${fmt(p.warmupFraction * 100)}% of the pages):`,
    '',
    '| input partitions | pipeline pages/s | pipeline MB/s | passthrough pages/s | pipeline / passthrough | pipeline runs, pages/s | passthrough runs, pages/s |',
    '|---:|---:|---:|---:|---:|---|---|',
  );
  for (const s of t.summary) {
    const runs = (kind: string) => (t.runs as Row[]).filter((x) => x.partitions === s.partitions && x.kind === kind && x.variant === '').map((x) => x.pagesPerSecond as number);
    lines.push(
      `| ${s.partitions} | **${fmt(s.pipelinePagesPerSecond)}** | ${fmt(s.pipelineMegabytesPerSecond, 1)} | ${fmt(s.passthroughPagesPerSecond)} | **${fmt(s.ratio, 2)}** | ${list(runs('pipeline'))} | ${list(runs('passthrough'))} |`,
    );
  }
  lines.push(
    '',
    'Where the CPU goes (medians over the same windows; CPU seconds from /proc, per page decided; "other load" is CPU used by processes that are neither the measured one nor the broker nor the registry):',
    '',
    '| input partitions | pipeline process CPU ms/page | passthrough process CPU ms/page | broker CPU ms/page (pipeline / passthrough) | cores used by the pipeline process | machine busy, cores | other load, cores (pipeline / passthrough runs) | pages per transaction | duplicates |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const s of t.summary) {
    lines.push(
      `| ${s.partitions} | ${fmt(s.pipelineCpuMsPerPage, 2)} | ${fmt(s.passthroughCpuMsPerPage, 2)} | ${fmt(s.pipelineKafkaCpuMsPerPage, 2)} / ${fmt(s.passthroughKafkaCpuMsPerPage, 2)} | ${fmt(s.pipelineProcessCores, 2)} | ${fmt(s.pipelineMachineBusyCores, 2)} of ${r.machine.cores} | ${fmt(s.pipelineOtherLoadCores, 2)} / ${fmt(s.passthroughOtherLoadCores, 2)} | ${fmt(s.pipelinePagesPerTransaction)} | ${fmt(s.pipelineDuplicateShare * 100, 1)}% |`,
    );
  }
  if (t.summary.some((s: any) => s.pipelineChunkWallShares)) {
    lines.push(
      '',
      'Where the wall time of a chunk goes (from the process\'s own histograms over the whole run; a chunk is decode, fingerprint, probe and insert, encode, then the transaction; the passthrough chunk is the transaction alone):',
      '',
      '| input partitions | pipeline chunk ms/page | passthrough chunk ms/page | fingerprinting | probe + insert | decode, encode, transaction |',
      '|---:|---:|---:|---:|---:|---:|',
    );
    for (const s of t.summary) {
      const w = s.pipelineChunkWallShares;
      if (!w) continue;
      lines.push(`| ${s.partitions} | ${fmt(s.pipelineChunkWallMsPerPage, 2)} | ${fmt(s.passthroughChunkWallMsPerPage, 2)} | ${fmt(w.fingerprint * 100)}% | ${fmt(w.probe * 100, 1)}% | ${fmt(w.rest * 100)}% |`);
    }
  }
  const variants = (t.summary as any[]).flatMap((s) => (s.variants ?? []).map((v: any) => ({ ...v, partitions: s.partitions, base: s })));
  if (variants.length) {
    lines.push(
      '',
      `Fingerprint threads (\`DEDUP_FINGERPRINT_THREADS\`; interleaved with the runs above, medians of ${p.runs}):`,
      '',
      '| input partitions | setting | pipeline pages/s | pipeline / passthrough | process CPU ms/page | cores used by the process |',
      '|---:|---|---:|---:|---:|---:|',
    );
    for (const v of variants) {
      lines.push(`| ${v.partitions} | ${threadsLabel(r.config.fingerprintThreads)} (default) | ${fmt(v.base.pipelinePagesPerSecond)} | ${fmt(v.base.ratio, 2)} | ${fmt(v.base.pipelineCpuMsPerPage, 2)} | ${fmt(v.base.pipelineProcessCores, 2)} |`);
      lines.push(`| ${v.partitions} | \`${v.variant}\` | ${fmt(v.pipelinePagesPerSecond)} | ${fmt(v.ratio, 2)} | ${fmt(v.pipelineCpuMsPerPage, 2)} | ${fmt(v.pipelineProcessCores, 2)} |`);
    }
  }
}

if (r.latency) {
  const l = r.latency;
  lines.push(
    '',
    `**Latency** at a fixed pace, as a share of the measured ${fmt(l.maxRatePagesPerSecond)} pages/s (${p.latencySeconds} s measured after ${p.latencyWarmupSeconds} s of warm-up, one run each): input record timestamp to the verdict's transaction being visible to a read_committed consumer.`,
    '',
    '| input partitions | pace | pages/s sent | pages measured | p50 | p90 | p99 | p99.9 | max | pages per transaction | cores: pipeline process / driver / machine busy |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  for (const x of l.runs) {
    lines.push(
      `| ${fmt(x.partitions)} | ${fmt(x.fraction * 100)}% | ${fmt(x.achievedPagesPerSecond)} | ${fmt(x.measuredPages)} | **${fmt(x.p50Ms)} ms** | ${fmt(x.p90Ms)} ms | **${fmt(x.p99Ms)} ms** | ${x.p999Ms === undefined ? '-' : `${fmt(x.p999Ms)} ms`} | ${fmt(x.maxMs)} ms | ${fmt(x.pagesPerTransaction, 1)} | ${fmt(x.processCores, 2)} / ${fmt(x.driverCores, 2)} / ${fmt(x.machineBusyCores, 2)} of ${r.machine.cores} |`,
    );
  }
}

if (r.snapshot || r.replay || r.startup) lines.push('', '**Restart with a large index**', '');
if (r.snapshot) {
  lines.push(
    `Snapshot file (synthetic pages, 10% near-duplicates; load = \`readSnapshot\` in a fresh process, median of ${p.snapshotRuns}):`,
    '',
    '| fingerprints | file MB | load s | load runs, s | index + page store arrays MB | process RSS after load MB | build (insert) s | write s |',
    '|---:|---:|---:|---|---:|---:|---:|---:|',
  );
  for (const s of r.snapshot) {
    lines.push(
      `| ${human(s.pages)} | ${mb(s.fileBytes)} | **${fmt(s.medianLoadSeconds, 2)}** | ${list(s.loadSeconds, 2)} | ${mb(s.deciderBytes)} | ${mb(s.medianRssAfterBytes)} | ${fmt(s.buildSeconds, 1)} | ${fmt(s.writeSeconds, 1)} |`,
    );
  }
}
if (r.replay) {
  lines.push(
    '',
    `Changelog replay (\`replayChangelog\` into an empty decider in a fresh process; 1-partition compacted topic of Avro entries written in transactions of ${p.changelogTransactionRecords}; median of ${p.replayRuns}):`,
    '',
    '| records | replay s | records/s | process CPU s | RSS after MB | runs, s |',
    '|---:|---:|---:|---:|---:|---|',
  );
  for (const x of r.replay.runs) {
    lines.push(`| ${human(x.records)} | **${fmt(x.medianSeconds, 1)}** | **${fmt(x.medianRecordsPerSecond)}** | ${fmt(x.medianCpuSeconds, 1)} | ${mb(x.medianRssAfterBytes)} | ${list(x.seconds, 1)} |`);
  }
  const ten = r.replay.tenMillion;
  if (ten?.extrapolated) {
    const model =
      typeof ten.modelSeconds === 'number'
        ? `~${fmt(ten.modelSeconds)} s by a model: the ${human(ten.from)} replay without its insert time (${fmt(ten.insertSecondsSmall, 1)} s, from the ${human(ten.from)} snapshot build) scaled x ${fmt(1e7 / ten.from)}, plus the measured insert time of 10M (${fmt(ten.insertSecondsTenMillion, 1)} s, from the 10M snapshot build: the same \`Decider.restore\` calls); `
        : '';
    lines.push('', `**10M replay: extrapolated, not measured.** ${model}~${fmt(ten.linearSeconds)} s by scaling the ${human(ten.from)} time linearly (an underestimate: inserts get slower as the index grows).`);
  }
}
if (r.startup) {
  const s = r.startup;
  const phases = (runs: any[], key: string) => fmt(median(runs.map((x) => x[key]).filter((x: unknown) => typeof x === 'number')), 2);
  lines.push(
    '',
    `Start-up of the real process (\`dedup run\`, spawn to \`/readyz\` 200, median of ${s.withSnapshot.length}; phases from its log lines, seconds after spawn):`,
    '',
    '| state | /readyz s | runs, s | Node + entry point loaded | topics, schemas, fingerprinter + workers | snapshot read and checked | producer fenced, changelog replayed | consumer joined (logged after describeGroups) |',
    '|---|---:|---|---:|---:|---:|---:|---:|',
  );
  const row = (label: string, ready: number, runs: any[]) =>
    `| ${label} | **${fmt(ready, 2)}** | ${list(runs.map((x: any) => x.readySeconds), 2)} | ${phases(runs, 'startingSeconds')} | ${phases(runs, 'fingerprintersSeconds')} | ${phases(runs, 'snapshotLoadedSeconds')} | ${phases(runs, 'indexRecoveredSeconds')} | ${phases(runs, 'joinedSeconds')} |`;
  lines.push(row(`${human(s.snapshotPages)}-fingerprint snapshot`, s.medianReadySecondsWithSnapshot, s.withSnapshot));
  lines.push(row('empty (an empty snapshot from the previous run)', s.medianReadySecondsEmpty, s.empty));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const doc = readFileSync(docPath, 'utf8');
const a = doc.indexOf(START);
const b = doc.indexOf(END);
if (a < 0 || b < a) throw new Error(`docs/performance.md lacks the ${START} ... ${END} markers`);
const next = `${doc.slice(0, a + START.length)}\n${lines.join('\n')}\n${doc.slice(b)}`;
if (process.argv.includes('--check')) {
  if (next !== doc) {
    process.stderr.write('docs/performance.md is out of date with bench/results/pipeline.json: run node dist/bench/pipeline/render-doc.js\n');
    process.exit(1);
  }
} else {
  writeFileSync(docPath, next);
}
