// Fingerprint benchmark (not a test). Run through run.sh, which installs the page sources and
// the bench-only peers first. Writes bench/results/fingerprint.json.
//
// Every measurement: one warm-up pass, then RUNS timed runs; we report the median.
// Peers get the extracted content text of the same pages (none of them parses HTML; their
// READMEs say to extract text first); ours is timed both from raw HTML and from that same text.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFingerprinter, createFingerprintPool } from '../../dist/src/fingerprint/index.js';
import { HtmlTextExtractor } from '../../dist/src/fingerprint/html-text.js';
import { TextBuffer } from '../../dist/src/fingerprint/text-buffer.js';
import { pageSets } from './page-set.mjs';
import { stageBreakdown } from './stages.mjs';
import { poolVsInThread } from './pool.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILD = join(ROOT, 'bench', '.build', 'fp');
const RUNS = Number(process.argv[2] ?? 7);
const LOAD_AT_START = loadavg().map((x) => Math.round(x * 100) / 100);
mkdirSync(BUILD, { recursive: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const log = (...a) => console.error(...a);

const sets = pageSets();
const extractor = new HtmlTextExtractor('remove');
const textOf = (html) => {
  const b = new TextBuffer();
  extractor.extract(html, b);
  return b.toString();
};
for (const pages of Object.values(sets)) for (const p of pages) p.text = textOf(p.html);
const describe = (pages) => ({
  pages: pages.length,
  avgHtmlBytes: Math.round(pages.reduce((s, p) => s + Buffer.byteLength(p.html), 0) / pages.length),
  avgTextChars: Math.round(pages.reduce((s, p) => s + p.textChars, 0) / pages.length),
});

/** Times fn(pages) (a full pass); returns median pages/s and MB/s of HTML. */
async function timeIt(pages, fn, minMs = 400) {
  await fn(pages);
  let reps = 1;
  for (;;) {
    const t = performance.now();
    for (let r = 0; r < reps; r++) await fn(pages);
    if (performance.now() - t >= minMs / 4 || reps >= 1024) break;
    reps *= 2;
  }
  const rates = [];
  for (let r = 0; r < RUNS; r++) {
    const t = performance.now();
    for (let k = 0; k < reps; k++) await fn(pages);
    rates.push((reps * pages.length) / ((performance.now() - t) / 1000));
  }
  return rateResult(pages, rates);
}

function rateResult(pages, rates) {
  const pps = median(rates);
  const bytes = pages.reduce((s, p) => s + Buffer.byteLength(p.html), 0) / pages.length;
  return { pagesPerSec: Math.round(pps), htmlMBPerSec: Math.round((pps * bytes) / 1e5) / 10, runsPagesPerSec: rates.map(Math.round) };
}

const results = [];
const record = (name, set, input, r, extra = {}) => {
  results.push({ name, set, input, ...r, ...extra });
  log(`${name.padEnd(28)} ${set.padEnd(8)} ${input.padEnd(5)} ${String(r.pagesPerSec).padStart(7)} pages/s ${String(r.htmlMBPerSec).padStart(6)} MB/s html`);
};

// --- ours, one core
const fp = await createFingerprinter();
for (const [set, pages] of Object.entries(sets)) {
  record('ours (1 thread)', set, 'html', await timeIt(pages, (ps) => { for (const p of ps) fp.fingerprint({ html: p.html }); }));
}
record('ours (1 thread)', 'text10k', 'text', await timeIt(sets.text10k, (ps) => { for (const p of ps) fp.fingerprint({ text: p.text }); }));

// --- ours, worker pool against in-thread work on the same pages, 1, 2, 4 and 8 threads (pool.mjs)
const pool = await poolVsInThread(sets, fp, RUNS, log);
for (const row of pool.rows) if (row.threads === availableParallelism() && row.input === 'string') record(`ours (pool, ${row.threads} threads)`, row.set, 'html', row.poolResult);

// --- stage breakdown
const stages = {};
for (const set of ['text10k', 'zh']) stages[set] = (await stageBreakdown(sets[set], RUNS)).usPerPage;
log('stages (us/page)', JSON.stringify(stages));

// --- peers on extracted text of text10k
const peerSet = sets.text10k;
const textsJsonl = join(BUILD, 'texts-text10k.jsonl');
writeFileSync(textsJsonl, peerSet.map((p) => JSON.stringify(p.text)).join('\n') + '\n');
const peers = {};
try {
  const require = createRequire(join(ROOT, 'bench', '.peers', 'fp', 'node_modules', 'x.js'));
  const { SimHash } = require('simhash-js');
  const sh = new SimHash();
  const version = JSON.parse(readFileSync(join(ROOT, 'bench/.peers/fp/node_modules/simhash-js/package.json'), 'utf8')).version;
  record('simhash-js (npm)', 'text10k', 'text', await timeIt(peerSet, (ps) => { for (const p of ps) sh.hash(p.text); }), { version, width: 32, features: 'char 4-grams, 128 smallest, Jenkins32' });
} catch (err) {
  peers['simhash-js'] = `not run: ${err.message}`;
}
for (const [peer, venv, label, features] of [
  ['1e0ng', '1e0ng', 'simhash (PyPI, 1e0ng)', 'regex words, char 4-grams, tf, md5'],
  ['pybind', 'pybind', 'simhash-pybind (PyPI)', '\\W+ tokens, 4-shingles, md5, C++ compute'],
]) {
  const py = join(ROOT, 'bench', '.venv', 'fp', venv, 'bin', 'python');
  if (!existsSync(py)) {
    peers[peer] = 'not run: venv missing';
    continue;
  }
  const runs = Math.max(3, Math.min(RUNS, 5));
  const out = JSON.parse(execFileSync(py, [join(ROOT, 'bench/fingerprint/peers.py'), peer, textsJsonl, String(runs)], { encoding: 'utf8', maxBuffer: 1 << 24 }));
  const version = execFileSync(join(dirname(py), 'pip'), ['show', peer === '1e0ng' ? 'simhash' : 'simhash-pybind'], { encoding: 'utf8' }).match(/Version: (.*)/)?.[1];
  record(label, 'text10k', 'text', rateResult(peerSet, out.runs.map((s) => out.pages / s)), { version, width: 64, features });
}

// --- tight C baseline on the same texts
const bin = join(BUILD, 'baseline');
if (existsSync(bin)) {
  const chunks = [Buffer.alloc(4)];
  chunks[0].writeUInt32LE(peerSet.length);
  for (const p of peerSet) {
    const b = Buffer.from(p.text, 'utf8');
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    chunks.push(len, b);
  }
  const textsBin = join(BUILD, 'texts-text10k.bin');
  writeFileSync(textsBin, Buffer.concat(chunks));
  const out = JSON.parse(execFileSync(bin, [textsBin, String(RUNS)], { encoding: 'utf8' }));
  record('C baseline (gcc -O3)', 'text10k', 'text', rateResult(peerSet, out.runs.map((s) => out.pages / s)), { features: 'ASCII tokens, 3-shingles, 64 counters; no parsing/stop words/normalisation' });
}

// --- summary
const get = (name, set, input) => results.find((r) => r.name === name && r.set === set && r.input === input);
const oursHtml = get('ours (1 thread)', 'text10k', 'html').pagesPerSec;
const oursText = get('ours (1 thread)', 'text10k', 'text').pagesPerSec;
const ratios = {};
for (const r of results.filter((x) => !x.name.startsWith('ours') && x.set === 'text10k')) {
  ratios[r.name] = { oursFromHtml: Math.round((oursHtml / r.pagesPerSec) * 10) / 10, oursFromText: Math.round((oursText / r.pagesPerSec) * 10) / 10 };
}
let commit = 'uncommitted';
try {
  commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  if (execFileSync('git', ['status', '--porcelain', 'src/fingerprint'], { cwd: ROOT, encoding: 'utf8' }).trim()) commit += '+dirty';
} catch {}
const report = {
  benchmark: 'fingerprint',
  date: new Date().toISOString(),
  commit,
  node: process.version,
  machine: { cpu: cpus()[0]?.model, cores: availableParallelism(), loadavgAtStart: LOAD_AT_START, loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
  method: `median of ${RUNS} timed runs after one warm-up pass; single process; peers fed the extracted content text of the same pages, ours timed from raw HTML and from that text`,
  options: fp.options,
  sets: Object.fromEntries(Object.entries(sets).map(([k, v]) => [k, { ...describe(v), source: k === 'zh' ? 'debian-reference-zh-cn 2.100 (/usr/share/debian-reference/*.zh-cn.html)' : 'python3-doc 3.11 (/usr/share/doc/python3.11/html)' + (k === 'text10k' ? ', pages with 8,000-12,000 chars of content text' : '') }])),
  results,
  stagesUsPerPage: stages,
  pool: { ...pool, rows: pool.rows.map(({ poolResult, ...row }) => row) },
  ratiosVsPeers: ratios,
  targets: {
    'pages/s on 10 KB-text pages, one core (target > 6000)': oursHtml,
    'x every installable peer (target > 10)': Math.min(...Object.entries(ratios).filter(([k]) => !k.startsWith('C ')).map(([, v]) => v.oursFromHtml)),
  },
  notRun: peers,
};
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(ROOT, 'bench', 'results', 'fingerprint.json'), JSON.stringify(report, null, 1) + '\n');
log(JSON.stringify(report.targets), JSON.stringify(ratios));
