// Before/after on a loaded machine: like compare.mjs (a process of its own per build, set and stage,
// alternating, CPU time), but each process reports its fastest pass and the figure is the fastest
// process, the least disturbed; it prints the per-round ratios too, so their spread shows the noise.
// Writes nothing. Usage: node bench/fingerprint/compare-min.mjs <baseline-repo-dir> [runs] [set/stage,...]
//   (stages: scan, tokenize, text, total; the baseline dir as compare.sh builds it)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageSets } from './page-set.mjs';
const [baseDir, runsArg, keysArg] = process.argv.slice(2);
const RUNS = Number(runsArg ?? 11);
const KEYS = (keysArg ?? 'text10k/total,text10k/text,zh/total').split(',');
const sets = pageSets();
const HERE = dirname(fileURLToPath(import.meta.url));
const list = join(mkdtempSync(join(tmpdir(), 'fp-compare-min-')), 'pages.json');
writeFileSync(list, JSON.stringify({ text10k: sets.text10k.map((p) => p.name), zh: sets.zh.map((p) => p.name) }));
const dirs = { base: baseDir, ours: join(HERE, '..', '..') };
const r = {};
for (let i = 0; i < RUNS; i++) for (const key of KEYS) for (const v of i % 2 ? ['ours', 'base'] : ['base', 'ours']) {
  const o = JSON.parse(execFileSync(process.execPath, [join(HERE, 'compare-one.mjs'), dirs[v], list, ...key.split('/'), '5'], { encoding: 'utf8' }));
  ((r[key] ??= { base: [], ours: [] })[v]).push(o.min);
}
const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const key of KEYS) {
  const { base, ours } = r[key];
  const b = Math.min(...base), o = Math.min(...ours);
  // Per-round ratio (the two processes of a round ran back to back).
  const ratios = base.map((x, i) => x / ours[i]);
  console.log(`${key.padEnd(18)} min base ${b.toFixed(1)} ours ${o.toFixed(1)} us/page x${(b / o).toFixed(3)}; median of per-round ratios x${med(ratios).toFixed(3)} [${[...ratios].sort((a,b)=>a-b).map((x) => x.toFixed(2)).join(' ')}]`);
}
