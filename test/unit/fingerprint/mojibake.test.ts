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
import { repairMojibake, repairMojibakeString } from '../../../src/fingerprint/mojibake.js';
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

/**
 * About `share` of html starting near `from` (both 0..1), widened to tag boundaries so that damage
 * applied to it hits text, as a mis-decoded body does: [start, end).
 */
function textSpan(html: string, from: number, share: number): [number, number] {
  const start = Math.floor(from * html.length * (1 - share));
  const end = Math.min(html.length, start + Math.ceil(share * html.length));
  const a = html.lastIndexOf('>', start) + 1;
  const next = html.indexOf('<', end);
  return [a, Math.max(a, next < 0 ? html.length : next)];
}

test('mojibake of any part of a real page (Latin-1 or Windows-1252) is fingerprinted, never empty', async () => {
  const fp = await createFingerprinter();
  const pages = fixtureNames().map(readFixture);
  fc.assert(
    fc.property(fc.nat(pages.length - 1), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0.2, max: 1, noNaN: true }), fc.boolean(), (which, from, share, windows) => {
      const html = pages[which]!;
      const [a, b] = textSpan(html, from, share);
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

/**
 * Whether mojibake.ts reads back every misread character of text (and it has one): a run of two
 * or more non-ASCII characters is a run of sequences; a lone one must be punctuation or currency
 * from U+2000, or a Latin-1 or Latin Extended character right after "Â" (U+00A0..U+00BF) or
 * touching an ASCII letter or digit; any character beyond U+FFFF.
 */
function readBack(text: string): boolean {
  const chars = [...text];
  let any = false;
  const alnum = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Za-z]$/.test(c);
  for (let i = 0; i < chars.length; i++) {
    const cp = chars[i]!.codePointAt(0)!;
    if (cp < 0x80) continue;
    any = true;
    const inRun = (i > 0 && chars[i - 1]!.codePointAt(0)! >= 0x80) || (i + 1 < chars.length && chars[i + 1]!.codePointAt(0)! >= 0x80);
    if (inRun || (cp >= 0x2000 && cp <= 0x20cf) || cp >= 0x10000) continue;
    if (cp >= 0xa0 && cp <= 0x24f && (cp <= 0xbf || alnum(chars[i - 1]) || alnum(chars[i + 1]))) continue;
    return false;
  }
  return any;
}

test('mojibake of any part of a real page is read back: the same fingerprint as the page', async () => {
  const fp = await createFingerprinter();
  const pages = fixtureNames().map(readFixture);
  const original = pages.map((html) => fp.fingerprint({ html }));
  let checked = 0;
  fc.assert(
    fc.property(fc.nat(pages.length - 1), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0.05, max: 1, noNaN: true }), fc.boolean(), (which, from, share, windows) => {
      const html = pages[which]!;
      const [a, b] = textSpan(html, from, share);
      const part = html.slice(a, b);
      fc.pre(readBack(part));
      checked++;
      const r = fp.fingerprint({ html: html.slice(0, a) + (windows ? cp1252Mojibake : latin1Mojibake)(part) + html.slice(b) });
      const o = original[which]!;
      assert.deepEqual([r.hi, r.lo, r.exactHi, r.exactLo], [o.hi, o.lo, o.exactHi, o.exactLo], `page ${which}, chars ${a}..${b} as ${windows ? 'cp1252' : 'latin1'}`);
    }),
    { numRuns: 300, seed: 11 },
  );
  assert.ok(checked >= 100, `only ${checked} damaged pages held mojibake to read back`);
});

test('text that is not mojibake is never "repaired": every fixture page keeps its HTML and its text', async () => {
  const { HtmlTextExtractor } = await import('../../../src/fingerprint/html-text.js');
  const { TextBuffer } = await import('../../../src/fingerprint/text-buffer.js');
  const extractor = new HtmlTextExtractor('keep');
  const text = new TextBuffer();
  let nonAsciiPages = 0;
  for (const name of fixtureNames()) {
    const html = readFixture(name);
    assert.equal(repairMojibakeString(html), undefined, name);
    extractor.extract(html, text);
    const before = text.units.slice(0, text.length);
    if (before.some((u) => u >= 0x80)) nonAsciiPages++;
    assert.equal(repairMojibake(text.units, text.length), text.length, name);
    assert.deepEqual(text.units.slice(0, text.length), before, name);
  }
  assert.ok(nonAsciiPages >= 5, `only ${nonAsciiPages} fixture pages hold non-ASCII text`);
});

test('repairMojibake reads misread UTF-8 back and leaves what is not a valid sequence', () => {
  const units = (s: string): [Uint16Array, number] => {
    const u = new Uint16Array(s.length);
    for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return [u, s.length];
  };
  const repaired = (s: string): string => {
    const [u, n] = units(s);
    return String.fromCharCode(...u.subarray(0, repairMojibake(u, n)));
  };
  assert.equal(repaired(latin1Mojibake('café crème')), 'café crème');
  assert.equal(repaired(cp1252Mojibake('l’été — 中文 😀 Привет')), 'l’été — 中文 😀 Привет');
  // Real text that looks like mojibake: French puts a no-break space between "é" and "»" (a
  // valid three-byte sequence), a quoted "ß’" or "«ÉTÉ»" holds a valid two-byte one.
  for (const real of ['« Sécurité\u00a0»', '‘ß’ and ‘È’', '«ÉTÉ»', 'naïve ½ cup']) assert.equal(repaired(real), real);
  // Overlong, surrogate and truncated sequences are not UTF-8: left alone.
  assert.equal(repaired('\u00e0\u0080\u0080 \u00ed\u00a0\u0080 \u00e4\u00b8'), '\u00e0\u0080\u0080 \u00ed\u00a0\u0080 \u00e4\u00b8');
});
