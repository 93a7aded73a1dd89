// CPU profile of fingerprint({html}) on one page set, or of fingerprint({text}) from the pages'
// extracted text (mode 'text'); prints self time per function.
// Usage: node bench/fingerprint/profile.mjs [set] [html|text]
import { createFingerprinter } from '../../dist/src/fingerprint/index.js';
import { HtmlTextExtractor } from '../../dist/src/fingerprint/html-text.js';
import { TextBuffer } from '../../dist/src/fingerprint/text-buffer.js';
import { pageSets } from './page-set.mjs';
import { Session } from 'node:inspector/promises';
const pages = pageSets()[process.argv[2] ?? 'text10k'];
const extractor = new HtmlTextExtractor('remove');
const inputs =
  process.argv[3] === 'text'
    ? pages.map((p) => {
        const b = new TextBuffer();
        extractor.extract(p.html, b);
        return { text: b.toString() };
      })
    : pages.map((p) => ({ html: p.html }));
const fp = await createFingerprinter();
for (let k = 0; k < 5; k++) for (const p of inputs) fp.fingerprint(p);
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
await session.post('Profiler.start');
const t = performance.now();
for (let k = 0; k < 20; k++) for (const p of inputs) fp.fingerprint(p);
const elapsed = performance.now() - t;
const { profile } = await session.post('Profiler.stop');
const dt = new Map();
profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const self = new Map();
for (const n of profile.nodes) {
  const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}`;
  self.set(k, (self.get(k) ?? 0) + (dt.get(n.id) ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
console.log(`${((elapsed / (20 * pages.length)) * 1000).toFixed(0)} us/page`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(((100 * v) / total).toFixed(1).padStart(5) + '%', k);
