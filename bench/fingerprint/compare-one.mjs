// One build's fingerprint timing, for compare.mjs: loads the build in <repo-dir>/dist, times one
// page set and stage (2 warm-up passes, then <passes> timed ones) in CPU time, and prints one JSON
// line { median, pages }: the median pass in us per page. A process of its own for each, so no
// other build, and no other stage, shares its JIT's feedback; it reads the pages from the files
// compare.mjs chose (page-set.mjs runs the current build's scanner to choose them).
//
// Usage: node bench/fingerprint/compare-one.mjs <repo-dir> <page-list.json> <set> <stage> [passes]
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, pageList, set, stage, passesArg] = process.argv.slice(2);
const PASSES = Number(passesArg ?? 5);
const url = (p) => pathToFileURL(join(resolve(dir), 'dist', 'src', 'fingerprint', p)).href;
const { createFingerprinter } = await import(url('index.js'));
const { HtmlTextExtractor } = await import(url('html-text.js'));
const { TextBuffer } = await import(url('text-buffer.js'));
const pages = JSON.parse(readFileSync(pageList, 'utf8'))[set].map((name) => ({ html: readFileSync(name, 'utf8') }));
let f;
if (stage === 'total') {
  const fp = await createFingerprinter();
  f = (html) => fp.fingerprint({ html });
} else if (stage === 'text') {
  // From the extracted text (the input of the peers and the C baseline), as run.mjs's 'text' row.
  const fp = await createFingerprinter();
  const extractor = new HtmlTextExtractor('remove');
  const texts = new Map(pages.map((p) => {
    const b = new TextBuffer();
    extractor.extract(p.html, b);
    return [p.html, b.toString()];
  }));
  f = (html) => fp.fingerprint({ text: texts.get(html) });
} else if (stage === 'tokenize') {
  // The tokenizer alone, over the extracted text (jieba for Chinese), as stages.mjs times it.
  const { Tokenizer } = await import(url('tokenizer.js'));
  const { TokenBuffer } = await import(url('token-buffer.js'));
  const { loadJiebaSegmenter } = await import(url('cjk-segmenter.js'));
  const { wordKindTable, dateCueTable } = await import(url('word-tables.js'));
  const tokenizer = new Tokenizer('jieba', await loadJiebaSegmenter(), wordKindTable(), dateCueTable());
  const tokens = new TokenBuffer();
  const extractor = new HtmlTextExtractor('remove');
  const texts = new Map(pages.map((p) => {
    const b = new TextBuffer();
    extractor.extract(p.html, b);
    return [p.html, b];
  }));
  f = (html) => {
    const b = texts.get(html);
    tokens.clear();
    tokenizer.tokenize(b.units, b.length, tokens);
  };
} else {
  const extractor = new HtmlTextExtractor('remove');
  const buffer = new TextBuffer();
  f = (html) => extractor.extract(html, buffer);
}
const pass = () => {
  // CPU time (user + system), not wall time: waiting for a core on a shared machine does not count.
  const t = process.cpuUsage();
  for (const p of pages) f(p.html);
  const used = process.cpuUsage(t);
  return (used.user + used.system) / pages.length;
};
for (let w = 0; w < 2; w++) pass();
const xs = Array.from({ length: PASSES }, pass).sort((a, b) => a - b);
console.log(JSON.stringify({ median: xs[xs.length >> 1], min: xs[0], pages: pages.length }));
