// Before/after fingerprint throughput in one run: the current build (dist/) against a baseline
// build of an earlier commit, on the same seeded page sets. Each build is timed in processes of
// its own (compare-one.mjs), alternately (A B, B A, ...), so machine load hits both alike: two
// builds loaded into one process share its JIT and its heap, and that biased one of them by up
// to 10% either way. Each page set and stage gets processes of its own too: a stage timed first
// leaves the JIT feedback of the code both share to the next. Times CPU time, not wall time, so waiting for a core does not count.
// Writes bench/results/fingerprint-compare.json.
//
// Usage: node bench/fingerprint/compare.mjs <baseline-repo-dir> <baseline-commit> [runs]
//   (the baseline dir holds `git archive <commit>` built with tsc; bench/fingerprint/compare.sh does that)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageSets } from './page-set.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const [baseDir, baseCommit, runsArg] = process.argv.slice(2);
const RUNS = Number(runsArg ?? 7);
const PASSES = 5;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

const dirs = { before: baseDir, after: ROOT };
/** Per variant, per "set/stage": the median of each process. */
const rates = { before: {}, after: {} };
const pages = {};
const KEYS = (process.env.FP_COMPARE_KEYS ?? 'text10k/scan,text10k/total,text10k/text,zh/scan,zh/total').split(',');
// The page sets, chosen once here; the timing processes read the same files.
const sets = pageSets();
const scratch = mkdtempSync(join(tmpdir(), 'fp-compare-'));
const pageList = join(scratch, 'pages.json');
writeFileSync(pageList, JSON.stringify({ text10k: sets.text10k.map((p) => p.name), zh: sets.zh.map((p) => p.name) }));
for (let r = 0; r < RUNS; r++) {
  for (const key of KEYS) {
    for (const v of r % 2 === 0 ? ['before', 'after'] : ['after', 'before']) {
      const line = execFileSync(process.execPath, [join(HERE, 'compare-one.mjs'), dirs[v], pageList, ...key.split('/'), String(PASSES)], { encoding: 'utf8' });
      const { median: us, pages: n } = JSON.parse(line);
      (rates[v][key] ??= []).push(us);
      pages[key] = n;
    }
  }
}
rmSync(scratch, { recursive: true, force: true });
const results = [];
for (const key of KEYS) {
  const [set, stage] = key.split('/');
  const row = { set, stage, pages: pages[key] };
  for (const v of ['before', 'after']) {
    const us = median(rates[v][key]);
    const best = Math.min(...rates[v][key]);
    row[v] = { usPerPage: Math.round(us * 10) / 10, minUsPerPage: Math.round(best * 10) / 10, pagesPerSec: Math.round(1e6 / us), runsUsPerPage: rates[v][key].map((x) => Math.round(x * 10) / 10) };
  }
  row.afterOverBefore = Math.round((row.before.usPerPage / row.after.usPerPage) * 1000) / 1000;
  // On a shared machine the fastest process is the least disturbed one.
  row.afterOverBeforeBest = Math.round((row.before.minUsPerPage / row.after.minUsPerPage) * 1000) / 1000;
  results.push(row);
  console.error(`${set.padEnd(8)} ${stage.padEnd(6)} median: before ${String(row.before.usPerPage).padStart(7)} after ${String(row.after.usPerPage).padStart(7)} us/page (x${row.afterOverBefore}); best: before ${String(row.before.minUsPerPage).padStart(7)} after ${String(row.after.minUsPerPage).padStart(7)} (x${row.afterOverBeforeBest})`);
}
let commit = 'uncommitted';
try {
  commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  if (execFileSync('git', ['status', '--porcelain', 'src/fingerprint'], { cwd: ROOT, encoding: 'utf8' }).trim()) commit += '+dirty';
} catch {}
const report = {
  benchmark: 'fingerprint before/after',
  date: new Date().toISOString(),
  before: baseCommit,
  after: commit,
  node: process.version,
  machine: { cpu: cpus()[0]?.model, cores: availableParallelism(), loadavg: loadavg().map((x) => Math.round(x * 100) / 100) },
  method: `${RUNS} processes per build, set and stage, the builds alternating (bench/fingerprint/compare-one.mjs); in each, 2 warm-up passes, then ${PASSES} timed passes over the whole set, CPU time (process.cpuUsage, user + system), not wall time; runsUsPerPage holds each process's median pass; the figures are their median and minimum (the least disturbed process on a shared machine). scan = HtmlTextExtractor (boilerplate remove), total = fingerprint({html}) at the defaults, text = fingerprint({text}) from the extracted text`,
  results,
};
writeFileSync(join(ROOT, 'bench', 'results', 'fingerprint-compare.json'), JSON.stringify(report, null, 1) + '\n');
