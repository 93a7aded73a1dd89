// The table of a latency-ab.sh directory: per rate, partitions and build, each run's
// p50/p99/p99.9 (ms), pages per transaction, instance cores and load averages.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const rows = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
  const [build, rate, run] = file.replace('.json', '').split('-');
  const results = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  for (const r of results.latency?.runs ?? []) rows.push({ build, rate: Number(rate), run: Number(run), ...r, commit: results.commit?.slice(0, 7) });
}
rows.sort((a, b) => a.rate - b.rate || a.partitions - b.partitions || a.build.localeCompare(b.build) || a.run - b.run);
const f = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
// Stages: mean ms per chunk, fetch / prepare / decide / commit wait / transaction (dedup_chunk_stage_seconds; '-' for a build without it).
const stages = (s) => (s ? ['fetch', 'prepare', 'decide', 'commitWait', 'transaction'].map((k) => f(s[k], 1)).join(' / ') : '-');
console.log('| pages/s | partitions | build | run | p50 ms | p99 ms | p99.9 ms | pages/tx | instance cores | main thread | stages, ms | load at start |');
console.log('|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|');
for (const r of rows) {
  console.log(`| ${f(r.targetPagesPerSecond, 1)} | ${r.partitions} | ${r.build}${r.commit ? ` ${r.commit}` : ""} | ${r.run} | ${r.p50Ms} | ${r.p99Ms} | ${r.p999Ms} | ${f(r.pagesPerTransaction, 1)} | ${f(r.instancesCores, 2)} | ${f(r.instancesMainCores, 2)} | ${stages(r.stagesMs)} | ${r.loadavgAtStart?.join(' ')} |`);
}

// `--record KEY WHAT`: also keeps the runs in bench/results/scale.json under singleLatency.KEY.
const at = process.argv.indexOf('--record');
if (at > 0) {
  const [key, what] = process.argv.slice(at + 1);
  const file = new URL('../results/scale.json', import.meta.url);
  const results = JSON.parse(readFileSync(file, 'utf8'));
  const keep = ['partitions', 'targetPagesPerSecond', 'achievedPagesPerSecond', 'measuredPages', 'p50Ms', 'p90Ms', 'p99Ms', 'p999Ms', 'maxMs', 'pagesPerTransaction', 'instancesCores', 'instancesMainCores', 'stagesMs', 'driverCores', 'machineBusyCores', 'loadavgAtStart', 'loadavgAtEnd'];
  results.singleLatency[key] = {
    what,
    // The rates and the run count of the files read, not a fixed example.
    command: `BENCH_AB_BASE=<tree of the base build, with dist/> BENCH_AB_RATES=${[...new Set(rows.map((r) => r.rate))].join(',')} BENCH_AB_RUNS=${Math.max(...rows.map((r) => r.run))} bash bench/scale/latency-ab.sh`,
    runs: rows.map((r) => ({ build: r.commit ? `${r.build} (${r.commit})` : r.build, repetition: r.run, maxRate: r.rate, ...Object.fromEntries(keep.filter((k) => k in r).map((k) => [k, r[k]])) })),
  };
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}
