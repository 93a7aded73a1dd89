// Whether a change to the fingerprint code keeps every result: fingerprints every page of both eval
// streams (eval/.cache, written by eval/run.sh and eval/heldout.sh) with the current build (dist/)
// and with a baseline build, under the defaults and eight other option sets, and compares every
// field of every result (fingerprint, exact hash, feature count, text length, flags, sketch).
// A speed-up that claims "same results" runs this against the commit before it.
//
// Usage: node bench/fingerprint/same-results.mjs <baseline-repo-dir>
//   (the baseline dir holds `git archive <commit>` built with tsc; bench/fingerprint/same-results.sh does that)
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const STREAMS = [join(ROOT, 'eval', '.cache', 'pages.jsonl'), join(ROOT, 'eval', '.cache', 'heldout', 'pages.jsonl')];
const OPTION_SETS = [{}, { boilerplate: 'keep' }, { cjk: 'bigram' }, { cjk: 'off' }, { weighting: 'tfidf' }, { weighting: 'log-tf' }, { stopWords: false }, { shingleSize: 1 }, { shingleSize: 3, weighting: 'binary' }];

const [baseDir] = process.argv.slice(2);
if (!baseDir) throw new Error('usage: node bench/fingerprint/same-results.mjs <baseline-repo-dir>');
for (const f of STREAMS) if (!existsSync(f)) throw new Error(`${f} is missing: run bash eval/run.sh and bash eval/heldout.sh first`);
const load = (dir) => import(pathToFileURL(join(resolve(dir), 'dist', 'src', 'fingerprint', 'index.js')).href);
const [before, after] = await Promise.all([load(baseDir), load(ROOT)]);

const pages = [];
for (const f of STREAMS) {
  for (const line of readFileSync(f, 'utf8').split('\n')) {
    if (!line) continue;
    const p = JSON.parse(line);
    if (typeof p.html === 'string') pages.push({ id: p.id, page: { html: p.html } });
    else if (typeof p.text === 'string') pages.push({ id: p.id, page: { text: p.text } });
  }
}
const asJson = (r) => JSON.stringify({ ...r, sketch: Array.from(r.sketch) });
let compared = 0;
let differ = 0;
for (const options of OPTION_SETS) {
  const [a, b] = await Promise.all([before.createFingerprinter(options), after.createFingerprinter(options)]);
  for (const { id, page } of pages) {
    compared++;
    if (asJson(a.fingerprint(page)) !== asJson(b.fingerprint(page)) && differ++ < 10) console.log(`differs: ${id} ${JSON.stringify(options)}`);
  }
}
console.log(`${compared} results compared (${pages.length} pages x ${OPTION_SETS.length} option sets), ${differ} differ`);
process.exitCode = differ === 0 ? 0 : 1;
