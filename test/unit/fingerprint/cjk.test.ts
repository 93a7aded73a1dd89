import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { loadJiebaSegmenter } from '../../../src/fingerprint/cjk-segmenter.js';
import { hashUnits } from '../../../src/fingerprint/feature-hash.js';
import { createFingerprinter, hammingDistance } from '../../../src/fingerprint/index.js';
import { TextBuffer } from '../../../src/fingerprint/text-buffer.js';
import { TokenBuffer } from '../../../src/fingerprint/token-buffer.js';
import { Tokenizer } from '../../../src/fingerprint/tokenizer.js';
import { dateWordTable } from '../../../src/fingerprint/word-tables.js';
import { readFixture } from './fixtures.js';

const NEWS =
  '中华人民共和国国务院新闻办公室今天发布白皮书，介绍了中国在生态环境保护方面取得的进展。白皮书指出，过去十年，' +
  '全国地级及以上城市细颗粒物平均浓度显著下降，重点流域水质明显改善，森林覆盖率持续提高。专家认为，' +
  '这些成绩来之不易，同时也要看到，生态环境保护结构性、根源性、趋势性压力总体上尚未根本缓解。下一步，' +
  '有关部门将继续深入打好污染防治攻坚战，推动经济社会发展全面绿色转型，努力建设人与自然和谐共生的现代化。';

function tokenize(tokenizer: Tokenizer, text: string, out: TokenBuffer): void {
  const buf = new TextBuffer(4);
  buf.setString(text);
  tokenizer.tokenize(buf.units, buf.length, out);
}

function tokenHashes(words: string[]): string[] {
  const h = new Uint32Array(2);
  return words.map((w) => {
    hashUnits(w, h);
    return `${h[0]! | 0}:${h[1]! | 0}`;
  });
}

describe('Chinese segmentation', () => {
  it('jieba cuts Han runs into dictionary words and keeps the run separator', async () => {
    const seg = await loadJiebaSegmenter();
    const words = seg.cutString('中华人民共和国成立了\n北京大学生前来应聘');
    assert.ok(words.includes('中华人民共和国'));
    assert.ok(words.includes('\n'));
    assert.ok(words.includes('北京'));
    assert.equal(words.join(''), '中华人民共和国成立了\n北京大学生前来应聘');
  });

  it('the tokenizer emits one token per jieba word, in order, between Latin words', async () => {
    const seg = await loadJiebaSegmenter();
    const tokenizer = new Tokenizer('jieba', seg, dateWordTable());
    const out = new TokenBuffer(4);
    tokenize(tokenizer, 'Debian 是一个自由的操作系统，由社区维护。Linux kernel', out);
    const got: string[] = [];
    for (let i = 0; i < out.length; i++) got.push(`${out.a[i]}:${out.b[i]}`);
    const want = tokenHashes(['debian', ...seg.cutString('是一个自由的操作系统'), ...seg.cutString('由社区维护'), 'linux', 'kernel']);
    assert.deepEqual(got, want);
  });

  it('bigram mode emits overlapping character bigrams; off mode one token per run', async () => {
    const dates = dateWordTable();
    const out = new TokenBuffer();
    tokenize(new Tokenizer('bigram', undefined, dates), '操作系统', out);
    assert.equal(out.length, 3);
    out.clear();
    tokenize(new Tokenizer('off', undefined, dates), '操作系统，社区', out);
    assert.equal(out.length, 2);
    out.clear();
    tokenize(new Tokenizer('jieba', await loadJiebaSegmenter(), dates), 'ひらがなカタカナ', out);
    assert.equal(out.length, 7, 'kana runs are character bigrams');
  });

  it('near-duplicate Chinese edits stay within 3 bits; different articles do not', async () => {
    const fp = await createFingerprinter();
    const base = fp.fingerprint({ text: NEWS });
    assert.equal(base.short, false);
    const edits = [
      NEWS.replace('显著下降', '明显下降'),
      NEWS.replace('今天', '昨天'),
      NEWS.replace('过去十年', '过去10年'),
      `<div class="share">分享到微博 微信</div><p>${NEWS}</p><div class="footer">版权所有</div>`,
    ];
    for (const text of edits) {
      const r = text.startsWith('<') ? fp.fingerprint({ html: text }) : fp.fingerprint({ text });
      const d = hammingDistance(base.hi, base.lo, r.hi, r.lo);
      assert.ok(d <= 3, `${text.slice(0, 30)}: ${d} bits`);
    }
    const html = readFixture('debref-pr01.zh-cn.html');
    const page = fp.fingerprint({ html });
    let k = 0;
    const edited = fp.fingerprint({ html: html.replace(/系统/g, (m) => (k++ === 3 ? '体系' : m)) });
    assert.ok(hammingDistance(page.hi, page.lo, edited.hi, edited.lo) <= 3);
    assert.ok(hammingDistance(page.hi, page.lo, base.hi, base.lo) > 10);
  });

  it('tfidf weighting uses the jieba IDF table', async () => {
    const tfidf = await createFingerprinter({ weighting: 'tfidf', shingleSize: 1 });
    const tf = await createFingerprinter({ weighting: 'tf', shingleSize: 1 });
    const a = tfidf.fingerprint({ text: NEWS });
    const b = tf.fingerprint({ text: NEWS });
    assert.equal(a.features, b.features);
    assert.notDeepEqual([a.hi, a.lo], [b.hi, b.lo]);
  });
});

describe('invisible characters inside CJK text', () => {
  it('bidi marks, soft hyphens, joiners, a BOM or a NUL between two CJK characters of a real page leave its fingerprint as it was', async () => {
    // Inside a Latin word they never cut it; inside a Han or kana run they must not cut the run
    // the segmenter (or the bigrams) sees either. Every cjk mode, on the Chinese fixture pages and
    // on Japanese text.
    const invisible = fc.constantFrom('\u200e', '\u200f', '\u202a', '\u202c', '\u202e', '\u2066', '\u2069', '\ufeff', '\u00ad', '\u200d', '\u0000');
    const japanese = '<p>この文書は、システムの設定方法について説明します。ひらがなとカタカナの混じった文章でも、同じように扱われます。</p>';
    const pages = [...['debref-apa.zh-cn.html', 'debref-ch08.zh-cn.html', 'debref-pr01.zh-cn.html'].map(readFixture), japanese];
    const cjk = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]{2}/g;
    for (const mode of ['jieba', 'bigram', 'off'] as const) {
      const fp = await createFingerprinter({ cjk: mode });
      const original = pages.map((html) => fp.fingerprint({ html }));
      fc.assert(
        fc.property(fc.nat(pages.length - 1), fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), invisible), { minLength: 1, maxLength: 8 }), (which, marks) => {
          const html = pages[which]!;
          const pairs = [...html.matchAll(cjk)].map((m) => m.index + 1);
          const at = [...new Set(marks.map(([where, mark]) => `${pairs[Math.floor(where * pairs.length)]!}:${mark}`))]
            .map((k) => [Number(k.slice(0, k.indexOf(':'))), k.slice(k.indexOf(':') + 1)] as const)
            .sort((x, y) => y[0] - x[0]);
          let damaged = html;
          for (const [i, mark] of at) damaged = damaged.slice(0, i) + mark + damaged.slice(i);
          const r = fp.fingerprint({ html: damaged });
          const o = original[which]!;
          assert.deepEqual([r.hi, r.lo, r.exactHi, r.exactLo], [o.hi, o.lo, o.exactHi, o.exactLo], `${mode}, page ${which}`);
        }),
        { numRuns: 60, seed: 8 },
      );
    }
  });
});
