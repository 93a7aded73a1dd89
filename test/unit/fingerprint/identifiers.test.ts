import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MINHASH_BINS, NUMBERS_BYTES } from '../../../src/fingerprint/feature-sketch.js';
import { identifierAround } from '../../../src/fingerprint/identifiers.js';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { TokenBuffer } from '../../../src/fingerprint/token-buffer.js';
import { Tokenizer } from '../../../src/fingerprint/tokenizer.js';
import { dateCueTable, wordKindTable } from '../../../src/fingerprint/word-tables.js';
import { fixtureNames, htmlToText, readFixture } from './fixtures.js';

function identifiers(text: string): string[] {
  const units = Uint16Array.from(text, (c) => c.charCodeAt(0));
  const out = new Uint32Array(2);
  const found: string[] = [];
  // The runs around each underscore, as the fingerprinter reads them (noteIdentifiers).
  for (let at = units.indexOf(0x5f); at >= 0; ) {
    const end = identifierAround(units, units.length, at, out);
    if (end >= 0) found.push(`${out[0]!.toString(16)}.${out[1]!.toString(16)}`);
    at = units.indexOf(0x5f, end >= 0 ? end : ~end);
  }
  return found;
}

describe('identifiers with an underscore', () => {
  it('are the runs of letters, digits and underscores with an underscore inside', () => {
    assert.equal(identifiers('Returns SQLITE_OPEN_EXCLUSIVE unless pg_ts_template or GIT_DIR is set').length, 3);
    assert.equal(identifiers('__init__ and ___ and _private and trailing_ are not; a_b is').length, 1);
    assert.equal(identifiers('no underscore at all, CamelCase neither').length, 0);
    assert.deepEqual(identifiers('x SQLITE_OPEN y'), identifiers('SQLITE_OPEN'));
    assert.notDeepEqual(identifiers('SQLITE_OPEN'), identifiers('sqlite_open'));
    assert.notDeepEqual(identifiers('SQLITE_OPEN'), identifiers('SQLITE_OPEN_X'));
  });

  it('are the same with invisible characters inside, as a browser shows them', () => {
    const invisible = fc.constantFrom('\u200e', '\u202e', '\u00ad', '\u200d', '\ufeff', '\u0000', '\u0007');
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9]{1,6}(_[A-Za-z0-9]{1,6}){1,3}$/), fc.nat(), invisible, (name, where, mark) => {
        const i = 1 + (where % (name.length - 1));
        assert.deepEqual(identifiers(`see ${name.slice(0, i)}${mark}${name.slice(i)} here`), identifiers(`see ${name} here`));
      }),
      { numRuns: 300, seed: 31 },
    );
  });

  it('are read around the underscores the tokenizer notes: every one of the text, in order', () => {
    // The fingerprinter reads identifiers only around tokenizer.underscoreAt, so the tokenizer must
    // meet every underscore, whatever surrounds it (words, numbers with joiners, dates, Han and kana
    // runs, surrogates, controls, invisible characters).
    const tokenizer = new Tokenizer('bigram', undefined, wordKindTable(), dateCueTable());
    const tokens = new TokenBuffer();
    const piece = fc.constantFrom('_', '__', 'a', 'Zq', '9', '1.5_2', ' ', '-', '.', ',', "'", '\u200e', '\u00ad', '\u0000', '\u0085', '\u00a0', '中文', 'かな', '\ud83d\ude00', '\ud800', '\ufffd', 'Ã©', '2024-05-06', '5 views', 'x_1', '&');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        const units = new Uint16Array(text.length);
        for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
        tokens.clear();
        tokenizer.tokenize(units, units.length, tokens);
        const expected = [...text.matchAll(/_/g)].map((m) => m.index);
        assert.deepEqual(Array.from(tokenizer.underscoreAt.subarray(0, tokenizer.underscores)), expected);
      }),
      { numRuns: 2000, seed: 41 },
    );
  });

  it('of a real page, renamed everywhere, change its digest; an ad with a brand name does not', async () => {
    // The API page of a sibling constant: one identifier with an underscore renamed everywhere in
    // the text, the prose the same. Only the digest tells the two apart.
    const fp = await createFingerprinter();
    const digest = (text: string): string => Buffer.from(fp.fingerprint({ text }).sketch.subarray(MINHASH_BINS, MINHASH_BINS + NUMBERS_BYTES)).toString('hex');
    const texts = fixtureNames()
      .map((n) => htmlToText(readFixture(n)))
      .filter((t) => /\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b/.test(t));
    assert.ok(texts.length >= 5);
    let renamed = 0;
    fc.assert(
      fc.property(fc.nat(texts.length - 1), fc.nat(), fc.constantFrom('OTHER', 'alt', 'Next'), (which, pick, suffix) => {
        const text = texts[which]!;
        const names = [...new Set(text.match(/\b[A-Za-z0-9]+_[A-Za-z0-9_]+\b/g))];
        const name = names[pick % names.length]!;
        const sibling = text.replace(new RegExp(`\\b${name}\\b`, 'g'), `${name}_${suffix}`);
        renamed++;
        assert.notEqual(digest(sibling), digest(text), `${name} renamed`);
        const cut = text.indexOf(' ', Math.floor(text.length / 2));
        const withAd = `${text.slice(0, cut)} Try CloudNimbus Pro today: faster builds with SkyForge. ${text.slice(cut)}`;
        assert.equal(digest(withAd), digest(text));
      }),
      { numRuns: 100, seed: 37 },
    );
    assert.equal(renamed, 100);
  });
});
