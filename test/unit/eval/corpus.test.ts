import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NO_CHROME, randomChrome, renderWithChrome, type Chrome } from '../../../eval/corpus/chrome.js';
import { addTracking, aliasUrl, changeWidgets, editWords, reformatMarkup, shiftDates, swapAds, trackLinks } from '../../../eval/corpus/edits.js';
import { hostilePages } from '../../../eval/corpus/hostile.js';
import { chromeRanges, insideAny, joinParts, looksLikeLanguage, splitHtml, textTokens, visibleText } from '../../../eval/corpus/html-text.js';
import { createOverlapFilter } from '../../../eval/corpus/overlap-filter.js';
import { Rng } from '../../../eval/corpus/prng.js';
import { substantiveEdit } from '../../../eval/corpus/substantive.js';

const PROSE = [
  'The planner chooses a table design from the expected number of fingerprints and the memory budget of the process.',
  'Every probe returns the entries that share the top bits of the permuted query, and each candidate is checked with a popcount.',
  'Compressed blocks store the first fingerprint raw and then the position of the leading one bit of each difference.',
  'A crawler that fetches the same page twice should not index it twice, whatever the advertisement around it says.',
  'Batch mode builds the tables over the small query set and streams the large stored set past them once.',
  'Short pages are matched only exactly, because a few features do not make a meaningful neighbourhood.',
];

const PAGE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Index design</title><style>p { color: red }</style>
<script>var x = "<p>not text</p>";</script></head>
<body><div class="nav"><a href="/a">Home</a> <a href="/b?x=1&amp;y=2#top">Next</a></div>
<h1>Index design</h1>
${PROSE.map((p) => `<p>${p} Updated 2023-04-05.</p>`).join('\n')}
<pre>  keep   this
   spacing </pre><!-- a comment --><p>Copyright 2001-2023 the authors. Last updated on Oct 07, 2022.</p>
</body></html>`;

const ZH_PAGE = `<html><body><p>近似重复网页检测需要把网页转换为特征集合，然后计算六十四位指纹，再在多个排列表中查找汉明距离很小的指纹。</p><p>爬虫多次抓取同一个网页时，广告、计数器和时间戳会改变，但是读者看到的正文没有变化。</p><p>如果只有几个词被修改，这两个网页仍然是近似重复，应该只保存一份。</p></body></html>`;

describe('prng', () => {
  it('is deterministic per seed and derived streams are independent', () => {
    const a = new Rng('s');
    const b = new Rng('s');
    const xs = Array.from({ length: 5 }, () => a.nextUint32());
    assert.deepEqual(Array.from({ length: 5 }, () => b.nextUint32()), xs);
    assert.notDeepEqual(Array.from({ length: 5 }, () => Rng.derive('s', 'x').nextUint32()), xs);
    const r = new Rng('ints');
    for (let i = 0; i < 1000; i++) {
      const v = r.int(3, 7);
      assert.ok(v >= 3 && v <= 7 && Number.isInteger(v));
    }
  });
});

describe('html-text', () => {
  it('splits losslessly and reads only visible text', () => {
    assert.equal(joinParts(splitHtml(PAGE)), PAGE);
    const text = visibleText(PAGE);
    assert.ok(text.startsWith('Index design'));
    assert.ok(!text.includes('not text') && !text.includes('color') && !text.includes('a comment'));
    assert.ok(text.includes('Next'));
  });

  it('finds the document\u2019s own chrome, so content edits stay out of it', () => {
    const html = '<body><div id="page-header"><p>Menu text here</p></div><div class="body"><p>Content one</p><p>Content two<ul class="toc"><li>x</li></ul></div><footer><p>Foot</p></footer></body>';
    const ranges = chromeRanges(html);
    const at = (needle: string): boolean => insideAny(ranges, html.indexOf(needle));
    assert.equal(at('Menu text'), true);
    assert.equal(at('Content one'), false);
    assert.equal(at('Content two'), false);
    assert.equal(at('<li>x'), true);
    assert.equal(at('Foot'), true);
  });

  it('tells languages apart', () => {
    assert.ok(looksLikeLanguage(visibleText(PAGE), 'en'));
    assert.ok(!looksLikeLanguage(visibleText(PAGE), 'de'));
    assert.ok(looksLikeLanguage(visibleText(ZH_PAGE).repeat(2), 'zh-cn'));
    assert.ok(!looksLikeLanguage(visibleText(ZH_PAGE).repeat(2), 'ja'));
  });
});

describe('near-duplicate edits keep what a reader gets', () => {
  it('reformatting and tracking parameters leave the visible text as it was', () => {
    for (let s = 0; s < 30; s++) {
      const rng = new Rng(`reformat-${s}`);
      const r = reformatMarkup(rng, PAGE);
      assert.equal(visibleText(r.html).replace(/\s+/g, ' '), visibleText(PAGE).replace(/\s+/g, ' '), r.detail);
      assert.ok(r.html.includes('  keep   this\n   spacing '), 'whitespace in <pre> is kept');
      const t = trackLinks(rng, PAGE, 'https://docs.example.org/a.html');
      assert.equal(visibleText(t.html), visibleText(PAGE));
      assert.notEqual(t.url, 'https://docs.example.org/a.html');
    }
  });

  it('adds tracking without breaking fragments or existing queries', () => {
    assert.equal(addTracking('/b?x=1&amp;y=2#top', { path: '', query: 'utm_source=a&utm_medium=b' }, '&amp;'), '/b?x=1&amp;y=2&amp;utm_source=a&amp;utm_medium=b#top');
    assert.equal(addTracking('/c.html', { path: ';jsessionid=AB', query: '' }, '&'), '/c.html;jsessionid=AB');
  });

  it('word edits change one to three words (or CJK characters runs) of the prose', () => {
    for (let s = 0; s < 40; s++) {
      const e = editWords(new Rng(`words-${s}`), PAGE)!;
      const before = textTokens(visibleText(PAGE));
      const after = textTokens(visibleText(e.html));
      const n = Number(e.detail.split(':')[0]);
      assert.ok(n >= 1 && n <= 3);
      assert.notDeepEqual(after, before);
      assert.ok(Math.abs(after.length - before.length) <= 3, e.detail);
      const z = editWords(new Rng(`zh-${s}`), ZH_PAGE)!;
      assert.notEqual(visibleText(z.html), visibleText(ZH_PAGE));
      assert.ok(Math.abs(visibleText(z.html).length - visibleText(ZH_PAGE).length) <= 6);
    }
  });

  it('chrome edits change only the chrome, and dates move', () => {
    const rng = new Rng('chrome');
    const titles = ['Alpha page', 'Beta page', 'Gamma page'];
    const chrome: Chrome = { ...randomChrome(rng, 'en', titles, 10), markup: 'semantic' };
    const ctx = { language: 'en', titles, day: 20 };
    const base = renderWithChrome(PAGE, chrome, 'en', 'docs.example.org');
    assert.ok(base.includes(PROSE[0]!));
    const ads = renderWithChrome(PAGE, swapAds(rng, chrome, ctx).chrome, 'en', 'docs.example.org');
    const widgets = renderWithChrome(PAGE, changeWidgets(rng, chrome, ctx).chrome, 'en', 'docs.example.org');
    for (const html of [ads, widgets]) for (const p of PROSE) assert.ok(html.includes(p));
    assert.notEqual(ads, base);
    const dated = shiftDates(rng, PAGE);
    assert.ok(dated.changed >= 3);
    assert.ok(!dated.html.includes('2023-04-05') || dated.html.includes('2025-'));
  });

  it('opaque chrome names nothing as chrome in its markup', () => {
    const rng = new Rng('opaque');
    const chrome: Chrome = { ...randomChrome(new Rng('opaque-2'), 'en', ['T1', 'T2'], 3), markup: 'opaque' };
    const full = swapAds(rng, changeWidgets(rng, chrome, { language: 'en', titles: ['T1', 'T2'], day: 3 }).chrome, { language: 'en', titles: ['T1'], day: 3 }).chrome;
    const html = renderWithChrome(PAGE, full, 'en', 'docs.example.org');
    const added = html.slice(html.indexOf('<body>') + 6);
    assert.ok(!/<(aside|footer|time|ins|form)\b/.test(added));
    assert.ok(!/class="[^"]*(ad-|widget|banner|meta|sponsor|views)/.test(added));
    assert.equal(renderWithChrome(PAGE, NO_CHROME, 'en', 'x'), PAGE);
  });

  it('URL aliases are other URLs of the same document', () => {
    for (let s = 0; s < 20; s++) {
      const a = aliasUrl(new Rng(`alias-${s}`), 'https://www.example.org/docs/page.html');
      assert.notEqual(a.url, 'https://www.example.org/docs/page.html');
      assert.ok(a.url.includes('page.html'));
    }
  });
});

describe('substantive edits and the overlap filter', () => {
  const donor = `<html><body>${PROSE.map((p) => `<p>${p.split(' ').reverse().join(' ')} And more words here.</p>`).join('')}</body></html>`;

  it('change about the share of text asked for', () => {
    for (const edit of ['paragraphs-rewritten', 'section-added', 'section-removed'] as const) {
      const r = substantiveEdit(new Rng(edit), PAGE, donor, edit, 0.3)!;
      assert.ok(r.changedFraction >= 0.2 && r.changedFraction <= 0.7, `${edit} ${r.changedFraction}`);
      assert.notEqual(visibleText(r.html), visibleText(PAGE));
    }
    assert.equal(substantiveEdit(new Rng('x'), '<p>tiny</p>', donor, 'section-added', 0.3), null);
  });

  it('flags near-identical originals and keeps distinct ones', () => {
    const f = createOverlapFilter(0.5);
    assert.equal(f.offer(PROSE.join(' ')).similarTo, -1);
    assert.equal(f.offer(PROSE.join(' ').replace('planner', 'scheduler')).similarTo, 0);
    assert.equal(f.offer(PROSE.slice().reverse().map((p) => p.split(' ').reverse().join(' ')).join(' ')).similarTo, -1);
  });
});

describe('hostile pages', () => {
  it('cover the promised cases and are deterministic', () => {
    const vocab = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'theta', 'kappa', 'lambda', 'sigma'];
    const a = hostilePages(new Rng('h'), vocab, ['<p>body</p>']);
    const b = hostilePages(new Rng('h'), vocab, ['<p>body</p>']);
    assert.deepEqual(a, b);
    const details = new Set(a.map((h) => h.detail));
    for (const d of ['empty', 'huge-5mb', 'binary-bytes', 'lone-surrogates', 'replacement-chars', 'deep-nesting-100k', 'only-script']) assert.ok(details.has(d), d);
    assert.ok(a.find((h) => h.detail === 'huge-5mb')!.html.length >= 5 * 1024 * 1024);
    assert.ok(!(a.find((h) => h.detail === 'lone-surrogates')!.html as string & { isWellFormed(): boolean }).isWellFormed());
  });
});
