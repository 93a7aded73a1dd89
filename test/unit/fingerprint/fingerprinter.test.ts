import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DedupError } from '../../../src/errors.js';
import {
  DEFAULT_FEATURE_OPTIONS,
  createFingerprinter,
  fingerprintToHex,
  hammingDistance,
  type FingerprintResult,
} from '../../../src/fingerprint/index.js';
import { seeded } from './fixtures.js';

const PARAGRAPH =
  'Simhash maps a document to a short fingerprint such that similar documents get fingerprints that differ ' +
  'in few bit positions. Crawlers use it to skip pages whose content they have already stored, which saves ' +
  'bandwidth, storage and index space. Each page becomes a set of weighted features; every feature is hashed ' +
  'to sixty four bits and added to sixty four counters, one per bit position, and the sign of each counter ' +
  'becomes one bit of the fingerprint. Boilerplate such as navigation menus, footers and advertisements is ' +
  'removed first so that distinct articles sharing a site template do not look alike.';

function checkShape(r: FingerprintResult): void {
  for (const k of ['hi', 'lo', 'exactHi', 'exactLo'] as const) {
    assert.ok(Number.isInteger(r[k]) && r[k] >= 0 && r[k] <= 0xffffffff, `${k} is a uint32`);
  }
  assert.equal(r.empty, r.features === 0);
  assert.ok(!(r.empty && r.short));
}

describe('createFingerprinter options', () => {
  it('exposes frozen defaults', async () => {
    const fp = await createFingerprinter();
    assert.deepEqual({ ...fp.options }, { ...DEFAULT_FEATURE_OPTIONS });
    assert.ok(Object.isFrozen(DEFAULT_FEATURE_OPTIONS));
    assert.ok(Object.isFrozen(fp.options));
  });

  it('rejects bad options with CONFIG_INVALID listing every problem', async () => {
    await assert.rejects(
      createFingerprinter({ shingleSize: 0, cjk: 'thai' as never, weighting: 'bm25' as never, minFeatures: -1, bogus: 1 } as never),
      (err: unknown) => {
        assert.ok(err instanceof DedupError);
        assert.equal(err.code, 'CONFIG_INVALID');
        for (const word of ['shingleSize', 'cjk', 'weighting', 'minFeatures', 'bogus']) assert.match(err.message, new RegExp(word));
        return true;
      },
    );
    await assert.rejects(createFingerprinter({ shingleSize: 2.5 }), { code: 'CONFIG_INVALID' });
    await assert.rejects(createFingerprinter({ stopWords: 'yes' as never }), { code: 'CONFIG_INVALID' });
  });

  it('accepts every documented option value', async () => {
    for (const cjk of ['jieba', 'bigram', 'off'] as const) {
      for (const weighting of ['tf', 'log-tf', 'tfidf', 'binary'] as const) {
        for (const boilerplate of ['remove', 'keep'] as const) {
          const fp = await createFingerprinter({ cjk, weighting, boilerplate, shingleSize: 2, stopWords: false });
          const r = fp.fingerprint({ text: PARAGRAPH + ' 中华人民共和国成立了，今天天气很好。ひらがなとカタカナ' });
          checkShape(r);
          assert.ok(r.features > 20);
        }
      }
    }
  });
});

describe('fingerprint()', () => {
  it('is deterministic across instances and calls', async () => {
    const a = await createFingerprinter();
    const b = await createFingerprinter();
    const page = { html: `<p>${PARAGRAPH}</p>` };
    const r1 = a.fingerprint(page);
    a.fingerprint({ text: 'something else entirely, to dirty the reused buffers' });
    assert.deepEqual(a.fingerprint(page), r1);
    assert.deepEqual(b.fingerprint(page), r1);
  });

  it('prefers html over text', async () => {
    const fp = await createFingerprinter();
    const html = `<p>${PARAGRAPH}</p>`;
    assert.deepEqual(fp.fingerprint({ html, text: 'ignored words here' }), fp.fingerprint({ html }));
  });

  it('gives text and html of the same words the same fingerprint', async () => {
    const fp = await createFingerprinter();
    const fromText = fp.fingerprint({ text: PARAGRAPH });
    const fromHtml = fp.fingerprint({ html: `<html><body><div><p>${PARAGRAPH.replace(/, /g, ',\n  ')}</p></div></body></html>` });
    assert.equal(fingerprintToHex(fromHtml.hi, fromHtml.lo), fingerprintToHex(fromText.hi, fromText.lo));
    assert.equal(fromHtml.exactHi, fromText.exactHi);
    assert.equal(fromHtml.exactLo, fromText.exactLo);
    assert.equal(fromText.textLength, PARAGRAPH.length);
  });

  it('normalises numbers, dates and counters away (same exact hash)', async () => {
    const fp = await createFingerprinter();
    const a = fp.fingerprint({ text: `${PARAGRAPH} Posted on 2024-05-06 10:31:07 UTC, 1,234 views, Monday 6 May 2024.` });
    const b = fp.fingerprint({ text: `${PARAGRAPH} Posted on 2025-12-31 23:59:59 UTC, 98 views, Tuesday 31 December 2025.` });
    assert.deepEqual([a.hi, a.lo, a.exactHi, a.exactLo], [b.hi, b.lo, b.exactHi, b.exactLo]);
    const c = fp.fingerprint({ text: '发布于2024年5月6日 10点30分，阅读 1234 次' });
    const d = fp.fingerprint({ text: '发布于2025年12月31日 9点05分，阅读 7 次' });
    assert.deepEqual([c.hi, c.lo, c.exactHi, c.exactLo], [d.hi, d.lo, d.exactHi, d.exactLo]);
  });

  it('changes the exact hash when a word changes', async () => {
    const fp = await createFingerprinter();
    const a = fp.fingerprint({ text: PARAGRAPH });
    const b = fp.fingerprint({ text: PARAGRAPH.replace('bandwidth', 'bandwith') });
    assert.notDeepEqual([a.exactHi, a.exactLo], [b.exactHi, b.exactLo]);
    assert.ok(hammingDistance(a.hi, a.lo, b.hi, b.lo) <= 8);
  });

  it('counts distinct features and applies the short/empty policy', async () => {
    const fp = await createFingerprinter();
    const long = fp.fingerprint({ text: PARAGRAPH });
    assert.equal(long.short, false);
    assert.equal(long.empty, false);
    assert.ok(long.features >= DEFAULT_FEATURE_OPTIONS.minFeatures);

    const short = fp.fingerprint({ html: '<h1>Page not found</h1><p>Sorry.</p>' });
    assert.equal(short.short, true);
    assert.equal(short.empty, false);
    assert.ok(short.features > 0 && short.features < DEFAULT_FEATURE_OPTIONS.minFeatures);

    // Repeating the same words adds no distinct features.
    const unigrams = await createFingerprinter({ shingleSize: 1, stopWords: false });
    assert.equal(unigrams.fingerprint({ text: 'test '.repeat(10) }).features, 1);
    assert.equal(unigrams.fingerprint({ text: 'alpha beta gamma alpha' }).features, 3);
    const trigrams = await createFingerprinter({ shingleSize: 3, stopWords: false });
    assert.equal(trigrams.fingerprint({ text: 'alpha beta gamma delta' }).features, 2);
    assert.equal(trigrams.fingerprint({ text: 'alpha beta' }).features, 1, 'fewer tokens than a shingle make one feature');

    const strict = await createFingerprinter({ minFeatures: 1000 });
    assert.equal(strict.fingerprint({ text: PARAGRAPH }).short, true);
  });

  it('returns empty for pages without content features', async () => {
    const fp = await createFingerprinter();
    const inputs = [
      {},
      { text: '' },
      { html: '' },
      { text: '   \n\t ' },
      { html: '<html><head><script>var words = "lots of words in a script";</script><style>p{}</style></head><body></body></html>' },
      { html: '<!-- a comment with many words in it --><nav>home about contact</nav>' },
      { text: '2024-05-06 10:31:07 ... !!! --- 06/05/2024' },
      { text: '\u0000\u0001\u0002\ufffd\ufffd abc \u0003\u0004\ufffd\ufffd\u0005' },
      { text: Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) & 0xff)).toString('utf8') },
      { text: Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) & 0xff)).toString('latin1') },
    ];
    const ref = fp.fingerprint({});
    for (const page of inputs) {
      const r = fp.fingerprint(page as never);
      checkShape(r);
      assert.equal(r.empty, true, JSON.stringify(page).slice(0, 80));
      assert.equal(r.features, 0);
      assert.deepEqual([r.hi, r.lo], [ref.hi, ref.lo], 'empty pages share one deterministic fingerprint');
    }
  });

  it('never throws on hostile input and stays linear', async () => {
    const fp = await createFingerprinter();
    const rnd = seeded(99);
    const big = `<p>${PARAGRAPH}</p>`.repeat(Math.ceil((5 * 1024 * 1024) / (PARAGRAPH.length + 7)));
    const garbage = Array.from({ length: 200_000 }, () => String.fromCharCode(Math.floor(rnd() * 65536))).join('');
    const cases: [string, { html?: string; text?: string }][] = [
      ['5 MB page', { html: big }],
      ['100k nested divs', { html: '<div>'.repeat(100_000) + PARAGRAPH + '</div>'.repeat(100_000) }],
      ['100k unclosed tags', { html: '<div class="ad"><span>'.repeat(50_000) + PARAGRAPH }],
      ['100k stray end tags', { html: PARAGRAPH + '</nav>'.repeat(100_000) }],
      ['unclosed comment', { html: `<p>${PARAGRAPH}</p><!-- never closed ${'x'.repeat(1000)}` }],
      ['unclosed script', { html: `<p>${PARAGRAPH}</p><script>${'a<b '.repeat(1000)}` }],
      ['unclosed attribute', { html: `<p>${PARAGRAPH}</p><a href="${'x'.repeat(1000)}` }],
      ['angle brackets', { html: '<'.repeat(100_000) + '>'.repeat(100_000) }],
      ['many scripts', { html: '<script>'.repeat(50_000) }],
      ['lone surrogates', { text: '\ud800\udc00\udbff'.repeat(10_000) + PARAGRAPH + '\udc00\ud800' }],
      ['NUL bytes', { html: `<p>${PARAGRAPH.replace(/ /g, '\u0000')}</p>` }],
      ['random UTF-16', { html: garbage }],
      ['random UTF-16 text', { text: garbage }],
      ['entities', { html: '&#0;&#xD800;&#99999999;&#x110000;&bogus;&amp&lt;&' + '&amp;'.repeat(10_000) }],
      ['one huge word', { text: 'a'.repeat(1_000_000) }],
      ['huge chinese run', { text: '中华人民共和国成立了'.repeat(20_000) }],
      ['not a string', { html: 42 as never, text: {} as never }],
    ];
    for (const [name, page] of cases) {
      const t = performance.now();
      const r = fp.fingerprint(page);
      const ms = performance.now() - t;
      checkShape(r);
      assert.ok(ms < 5000, `${name} took ${ms.toFixed(0)} ms`);
    }
    assert.equal(fp.fingerprint({ html: '<div>'.repeat(100_000) + PARAGRAPH + '</div>'.repeat(100_000) }).empty, false);
    assert.equal(fp.fingerprint({ html: PARAGRAPH + '</nav>'.repeat(100_000) }).empty, false);
  });
});
