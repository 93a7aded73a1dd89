// Experiment behind the default options (docs/fingerprint.md): on the Python 3.11 library docs
// (one Sphinx template, ~300 pages) measure (a) Hamming distance after k random content-word edits
// and (b) the pairwise distance between distinct pages of the template, per option set.
import { createFingerprinter, hammingDistance } from '../../dist/src/fingerprint/index.js';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mulberry32 } from '../../dist/src/mulberry32.js';
const dir = process.argv[2] ?? '/usr/share/doc/python3.11/html/library/';
const names = readdirSync(dir).filter((f) => f.endsWith('.html')).sort();
const pages = names.map((n) => readFileSync(dir + n, 'utf8'));
const rng = mulberry32;
const WORD = /(?<=<p>[^<]*)\b[a-z]{6,}\b/g;
function edit(html, k, r) {
  const hits = [...html.matchAll(WORD)];
  if (hits.length === 0) return html;
  let out = html;
  for (let e = 0; e < k; e++) {
    const m = hits[Math.floor(r() * hits.length)];
    out = out.slice(0, m.index) + 'zqxwv' + out.slice(m.index + m[0].length);
  }
  return out;
}
const rows = [];
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const CONFIGS = [
  { shingleSize: 1, weighting: 'tf' }, { shingleSize: 1, weighting: 'log-tf' }, { shingleSize: 1, weighting: 'binary' },
  { shingleSize: 2, weighting: 'tf' }, { shingleSize: 2, weighting: 'log-tf' }, { shingleSize: 2, weighting: 'tf', stopWords: false },
  { shingleSize: 2, weighting: 'tf', boilerplate: 'keep' }, { shingleSize: 3, weighting: 'tf' }, { shingleSize: 3, weighting: 'log-tf' },
  { shingleSize: 4, weighting: 'tf' },
];
for (const opts of process.argv[3] ? JSON.parse(process.argv[3]) : CONFIGS) {
  const fp = await createFingerprinter(opts);
  const res = pages.map((h) => fp.fingerprint({ html: h }));
  const ok = res.map((r, i) => i).filter((i) => !res[i].short && !res[i].empty);
  const pair = [];
  for (let a = 0; a < ok.length; a++) for (let b = a + 1; b < ok.length; b++) {
    const x = res[ok[a]], y = res[ok[b]];
    if (x.exactHi === y.exactHi && x.exactLo === y.exactLo) continue;
    pair.push(hammingDistance(x.hi, x.lo, y.hi, y.lo));
  }
  const r = rng(7);
  const e1 = [], e5 = [];
  for (const i of ok) {
    const base = res[i];
    const v1 = fp.fingerprint({ html: edit(pages[i], 1, r) });
    const v5 = fp.fingerprint({ html: edit(pages[i], 5, r) });
    e1.push(hammingDistance(base.hi, base.lo, v1.hi, v1.lo));
    e5.push(hammingDistance(base.hi, base.lo, v5.hi, v5.lo));
  }
  const within3 = (xs) => (xs.filter((d) => d <= 3).length / xs.length).toFixed(3);
  rows.push({
    options: opts,
    pages: ok.length,
    distinctPairs: { count: pair.length, min: Math.min(...pair), p001: q(pair, 0.001), p01: q(pair, 0.01), within3: pair.filter((d) => d <= 3).length, within10: pair.filter((d) => d <= 10).length },
    oneEdit: { within3: Number(within3(e1)), p90: q(e1, 0.9), max: Math.max(...e1) },
    fiveEdits: { within3: Number(within3(e5)), p90: q(e5, 0.9), max: Math.max(...e5) },
  });
  console.log(JSON.stringify(opts), `pages=${ok.length}`, `distinct: min=${Math.min(...pair)} p01=${q(pair, 0.001)} p1=${q(pair, 0.01)} <=3:${pair.filter((d) => d <= 3).length} <=10:${pair.filter((d) => d <= 10).length} of ${pair.length}`,
    `| 1 edit: <=3 ${within3(e1)} p90=${q(e1, 0.9)} max=${Math.max(...e1)} | 5 edits: <=3 ${within3(e5)} p90=${q(e5, 0.9)}`);
}

if (!process.argv[3]) {
  writeFileSync(new URL('../results/fingerprint-defaults.json', import.meta.url), JSON.stringify({
    experiment: 'choose-defaults: Hamming distance after random content-word edits (seed 7) vs between distinct pages of one template',
    corpus: dir, date: new Date().toISOString(), node: process.version, rows,
  }, null, 1) + '\n');
}
