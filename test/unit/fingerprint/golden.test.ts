/**
 * Golden vectors: fixed fingerprints for fixed pages, committed in
 * golden-vectors.json. A change of tokenizer, stop words, weights, shingling
 * or hash constants changes them, and this test makes that a visible,
 * reviewed decision: regenerate with
 *   UPDATE_GOLDEN=1 node --test dist/test/unit/fingerprint/golden.test.js
 * and say why in the commit message (stored fingerprints in a running index
 * become incomparable with new ones: plan a re-fingerprint).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createFingerprinter, fingerprintToHex, type FeatureOptions } from '../../../src/fingerprint/index.js';
import { fixtureNames, readFixture, repoRoot } from './fixtures.js';

const FILE = join(repoRoot(), 'test', 'unit', 'fingerprint', 'golden-vectors.json');

interface Vector {
  page: string;
  options: Partial<FeatureOptions>;
  simhash: string;
  exact: string;
  features: number;
  textLength: number;
}

const INLINE: Record<string, { html?: string; text?: string }> = {
  'inline:empty': { text: '' },
  'inline:english': { text: 'The quick brown fox jumps over the lazy dog while the crawler fetches another copy of the same page.' },
  'inline:chinese': { text: '中华人民共和国国务院新闻办公室今天发布白皮书，介绍了中国在生态环境保护方面取得的进展。' },
  'inline:mixed-html': {
    html: '<html><head><title>Caf&eacute; &amp; Co</title></head><body><nav>Home</nav><p>Ünïcödé wörds, 日本語のテキスト, 1,234 views.</p></body></html>',
  },
};

const OPTION_SETS: Partial<FeatureOptions>[] = [{}, { shingleSize: 1, weighting: 'binary', cjk: 'bigram', stopWords: false, boilerplate: 'keep' }, { weighting: 'tfidf' }, { weighting: 'log-tf', shingleSize: 3, cjk: 'off' }];

async function compute(): Promise<Vector[]> {
  const out: Vector[] = [];
  for (const options of OPTION_SETS) {
    const fp = await createFingerprinter(options);
    const pages: [string, { html?: string; text?: string }][] = [
      ...Object.entries(INLINE),
      ...fixtureNames().map((n): [string, { html: string }] => [n, { html: readFixture(n) }]),
    ];
    for (const [page, content] of pages) {
      const r = fp.fingerprint(content);
      out.push({
        page,
        options,
        simhash: fingerprintToHex(r.hi, r.lo),
        exact: fingerprintToHex(r.exactHi, r.exactLo),
        features: r.features,
        textLength: r.textLength,
      });
    }
  }
  return out;
}

describe('golden vectors', () => {
  it('fingerprints of fixed pages are unchanged', async () => {
    const got = await compute();
    if (process.env['UPDATE_GOLDEN'] === '1') {
      writeFileSync(FILE, JSON.stringify(got, null, 1) + '\n');
      return;
    }
    const want = JSON.parse(readFileSync(FILE, 'utf8')) as Vector[];
    assert.deepEqual(got, want);
  });
});
