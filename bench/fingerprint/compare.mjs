// Before/after fingerprint throughput, in one process and one run: the current build (dist/) against
// a baseline build of an earlier commit, timed alternately (A B A B ...) on the same seeded page sets,
// so machine load hits both alike; it times CPU time, not wall time, so waiting for a core does not count. Writes bench/results/fingerprint-compare.json.
//
// Usage: node bench/fingerprint/compare.mjs <baseline-repo-dir> <baseline-commit> [runs]
//   (the baseline dir holds `git archive <commit>` built with tsc; bench/fingerprint/compare.sh does that)
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pageSets } from './page-set.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [baseDir, baseCommit, runsArg] = process.argv.slice(2);
const RUNS = Number(runsArg ?? 7);
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function load(dir) {
  const url = (p) => pathToFileURL(join(resolve(dir), 'dist', 'src', 'fingerprint', p)).href;
  const { createFingerprinter } = await import(url('index.js'));
  const { HtmlTextExtractor } = await import(url('html-text.js'));
  const { TextBuffer } = await import(url('text-buffer.js'));
  const fp = await createFingerprinter();
  const ex = new HtmlTextExtractor('remove');
  const buf = new TextBuffer();
  return { total: (html) => fp.fingerprint({ html }), scan: (html) => ex.extract(html, buf) };
}

const variants = { before: await load(baseDir), after: await load(ROOT) };
const sets = pageSets();
const results = [];
for (const set of ['text10k', 'zh']) {
  const pages = sets[set];
  for (const stage of ['scan', 'total']) {
    const rates = { before: [], after: [] };
    const pass = (v) => {
      const f = variants[v][stage];
      // CPU time of this process (user + system), not wall time: on a shared, oversubscribed
      // machine wall time is mostly waiting for a core.
      const t = process.cpuUsage();
      for (const p of pages) f(p.html);
      const used = process.cpuUsage(t);
      return (used.user + used.system) / 1000 / pages.length;
    };
    for (let w = 0; w < 2; w++) for (const v of ['before', 'after']) pass(v);
    for (let r = 0; r < RUNS; r++) for (const v of r % 2 === 0 ? ['before', 'after'] : ['after', 'before']) rates[v].push(pass(v));
    const row = { set, stage, pages: pages.length };
    for (const v of ['before', 'after']) {
      const us = median(rates[v]) * 1000;
      const best = Math.min(...rates[v]) * 1000;
      row[v] = { usPerPage: Math.round(us * 10) / 10, minUsPerPage: Math.round(best * 10) / 10, pagesPerSec: Math.round(1e6 / us), runsUsPerPage: rates[v].map((x) => Math.round(x * 10000) / 10) };
    }
    row.afterOverBefore = Math.round((row.before.usPerPage / row.after.usPerPage) * 1000) / 1000;
    // On a shared machine the fastest pass is the least disturbed one.
    row.afterOverBeforeBest = Math.round((row.before.minUsPerPage / row.after.minUsPerPage) * 1000) / 1000;
    results.push(row);
    console.error(`${set.padEnd(8)} ${stage.padEnd(6)} median: before ${String(row.before.usPerPage).padStart(7)} after ${String(row.after.usPerPage).padStart(7)} us/page (x${row.afterOverBefore}); best: before ${String(row.before.minUsPerPage).padStart(7)} after ${String(row.after.minUsPerPage).padStart(7)} (x${row.afterOverBeforeBest})`);
  }
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
  method: `one process; CPU time (process.cpuUsage, user + system), not wall time; per set and stage, 2 warm-up passes each, then ${RUNS} alternating timed passes over the whole set; medians and minima (the least disturbed pass on a shared machine). scan = HtmlTextExtractor (boilerplate remove), total = fingerprint({html}) at the defaults`,
  results,
};
writeFileSync(join(ROOT, 'bench', 'results', 'fingerprint-compare.json'), JSON.stringify(report, null, 1) + '\n');
