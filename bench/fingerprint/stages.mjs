// Where the time goes, per page (median of 5 runs after warm-up), cumulative stages:
//   scan    = a bare charCodeAt loop over the HTML (the floor for any string-based parser)
//   parse   = HTML -> text buffer (html-text.ts)
//   tokenize= text -> hashed tokens (tokenizer.ts, incl. jieba for Chinese)
//   features= stop words + shingles + feature counting + weights + simhash, from text (fingerprint({text}) minus tokenize)
//   total   = fingerprint({html})
import { HtmlTextExtractor } from '../../dist/src/fingerprint/html-text.js';
import { TextBuffer } from '../../dist/src/fingerprint/text-buffer.js';
import { Tokenizer } from '../../dist/src/fingerprint/tokenizer.js';
import { TokenBuffer } from '../../dist/src/fingerprint/token-buffer.js';
import { loadJiebaSegmenter } from '../../dist/src/fingerprint/cjk-segmenter.js';
import { dateWordTable } from '../../dist/src/fingerprint/word-tables.js';
import { createFingerprinter } from '../../dist/src/fingerprint/index.js';

export async function stageBreakdown(pages, runs = 5) {
  const ex = new HtmlTextExtractor('remove');
  const tok = new Tokenizer('jieba', await loadJiebaSegmenter(), dateWordTable());
  const tokens = new TokenBuffer();
  const fp = await createFingerprinter();
  const texts = pages.map((p) => {
    const b = new TextBuffer();
    ex.extract(p.html, b);
    return b;
  });
  const strings = texts.map((b) => b.toString());
  const time = (f) => {
    for (let w = 0; w < 3; w++) pages.forEach(f);
    const xs = [];
    for (let r = 0; r < runs; r++) {
      const t = performance.now();
      for (let k = 0; k < 3; k++) pages.forEach(f);
      xs.push(((performance.now() - t) / (3 * pages.length)) * 1000);
    }
    return xs.sort((a, b) => a - b)[xs.length >> 1];
  };
  const scratch = new TextBuffer();
  let sink = 0;
  const scan = time((p) => {
    const h = p.html;
    for (let i = 0; i < h.length; i++) sink += h.charCodeAt(i);
  });
  const parse = time((p) => ex.extract(p.html, scratch));
  const tokenize = time((p, i) => {
    tokens.clear();
    tok.tokenize(texts[i].units, texts[i].length, tokens);
  });
  const fromText = time((p, i) => fp.fingerprint({ text: strings[i] }));
  const copyText = time((p, i) => scratch.setString(strings[i]));
  const total = time((p) => fp.fingerprint({ html: p.html }));
  const r = (x) => Math.round(x * 10) / 10;
  return {
    usPerPage: {
      scanHtmlFloor: r(scan),
      parse: r(parse),
      tokenize: r(tokenize),
      featuresAndSimhash: r(Math.max(0, fromText - tokenize - copyText)),
      total: r(total),
    },
    sink: sink & 1,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { pageSets } = await import('./page-set.mjs');
  const set = process.argv[2] ?? 'text10k';
  console.log(set, JSON.stringify((await stageBreakdown(pageSets()[set])).usPerPage));
}
