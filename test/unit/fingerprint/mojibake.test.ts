/**
 * Mojibake is damage, not binary: a page whose UTF-8 bytes were read as
 * Latin-1 or Windows-1252 somewhere on its way (and sent on as UTF-8) is
 * full of C1 controls and accented Latin letters, which a browser shows as
 * garbage text. It is still a page, so it gets a fingerprint, never "empty"
 * (which the pipeline dead-letters as PAGE_EMPTY). Real binary stays junk: it
 * reaches the fingerprinter as U+FFFD (lenient UTF-8 decoding) or C0 controls.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { fixtureNames, readFixture } from './fixtures.js';

/** UTF-8 bytes read as Latin-1: every byte one code point, C1 controls included. */
function latin1Mojibake(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/** The cp1252 variant: 0x80..0x9F become the punctuation cp1252 puts there, except its five holes (kept as C1). */
const CP1252 = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
function cp1252Mojibake(text: string): string {
  return latin1Mojibake(text).replace(/[\u0080-\u009f]/g, (c) => CP1252[c.charCodeAt(0) - 0x80]!);
}

test('mojibake of any part of a real page (Latin-1 or Windows-1252) is fingerprinted, never empty', async () => {
  const fp = await createFingerprinter();
  const pages = fixtureNames().map(readFixture);
  fc.assert(
    fc.property(fc.nat(pages.length - 1), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0.2, max: 1, noNaN: true }), fc.boolean(), (which, from, share, windows) => {
      const html = pages[which]!;
      const start = Math.floor(from * html.length * (1 - share));
      const end = Math.min(html.length, start + Math.ceil(share * html.length));
      // Cut at tag boundaries so the damage hits text, as a mis-decoded body does.
      const a = html.lastIndexOf('>', start) + 1;
      const b = Math.max(a, html.indexOf('<', end) < 0 ? html.length : html.indexOf('<', end));
      const damaged = html.slice(0, a) + (windows ? cp1252Mojibake : latin1Mojibake)(html.slice(a, b)) + html.slice(b);
      const r = fp.fingerprint({ html: damaged });
      assert.equal(r.empty, false, `page ${which}, chars ${a}..${b} as ${windows ? 'cp1252' : 'latin1'}`);
    }),
    { numRuns: 200, seed: 7 },
  );
});

test('binary stays binary: U+FFFD and C0 controls over an eighth of the text are still "empty"', async () => {
  const fp = await createFingerprinter();
  assert.equal(fp.fingerprint({ text: 'ab\ufffd\ufffd\ufffd cd\ufffd\ufffd' }).empty, true);
  assert.equal(fp.fingerprint({ text: 'ab\u0001\u0002\u0003 cd\u0004\u0005' }).empty, true);
  // C1 controls alone are mojibake, not binary.
  assert.equal(fp.fingerprint({ text: 'ã\u0081\u0082ã\u0081\u0084 ã\u0081\u0086ã\u0081\u0088 ã\u0081\u008a' }).empty, false);
});
