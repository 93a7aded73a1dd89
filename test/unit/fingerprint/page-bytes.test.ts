/**
 * Damaged real pages are decided; only what is not a page is refused.
 * Properties over the real fixture pages with generated damage, and over
 * random bytes, against Node's own UTF-8 decoder as the oracle for the
 * lenient decoding.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createFingerprinter, decodePageBytes, isBinaryContent, toWellFormedText, type Fingerprinter } from '../../../src/fingerprint/index.js';
import { fixtureNames, readFixture, seeded } from './fixtures.js';

const encoder = new TextEncoder();
const pages = fixtureNames().map((name) => ({ name, html: readFixture(name), bytes: encoder.encode(readFixture(name)) }));

type Damage = 'nul' | 'invalid-utf8' | 'bom' | 'controls' | 'bidi' | 'replacement' | 'truncated-multibyte' | 'unterminated-comment' | 'unterminated-script' | 'latin1-bytes';

/** Applies damage at a rate of about 1 in 200 positions (or once, for the structural kinds). */
function damage(bytes: Uint8Array, kind: Damage, seed: number): Uint8Array {
  const rnd = seeded(seed);
  const out: number[] = [];
  const text = new TextDecoder().decode(bytes);
  const headAt = Math.max(0, text.indexOf('<head>'));
  const insertAt = (s: string): Uint8Array => encoder.encode(text.slice(0, headAt + 6) + s + text.slice(headAt + 6));
  switch (kind) {
    case 'bom':
      return Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes]);
    case 'unterminated-comment':
      return insertAt('<!-- cut off by the crawler ');
    case 'unterminated-script':
      return insertAt('<script>var cut = "off');
    default:
  }
  for (let i = 0; i < bytes.length; i++) {
    out.push(bytes[i]!);
    if (rnd() >= 1 / 200) continue;
    if (kind === 'nul') out.push(0);
    else if (kind === 'invalid-utf8') out.push([0xff, 0xc0, 0x80, 0xfe][Math.floor(rnd() * 4)]!);
    else if (kind === 'controls') out.push([0x01, 0x07, 0x1b, 0x7f][Math.floor(rnd() * 4)]!);
    else if (kind === 'bidi') out.push(...encoder.encode(['\u200e', '\u202e', '\u2066', '\u2069', '\ufeff', '\u00ad'][Math.floor(rnd() * 6)]!));
    else if (kind === 'replacement') out.push(0xef, 0xbf, 0xbd);
    else if (kind === 'truncated-multibyte') out.push(0xe6, 0x97);
    else if (kind === 'latin1-bytes') out.push([0xe9, 0xe8, 0xfc, 0xa0][Math.floor(rnd() * 4)]!);
  }
  return Uint8Array.from(out);
}

const DAMAGE: Damage[] = ['nul', 'invalid-utf8', 'bom', 'controls', 'bidi', 'replacement', 'truncated-multibyte', 'unterminated-comment', 'unterminated-script', 'latin1-bytes'];

describe('decodePageBytes', () => {
  it('decodes any bytes like the WHATWG UTF-8 decoder (Node Buffer as oracle), never throwing', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
        if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return;
        const got = decodePageBytes(bytes);
        assert.equal(got, Buffer.from(bytes).toString('utf8'));
        assert.ok((got as string & { isWellFormed(): boolean }).isWellFormed());
      }),
      { numRuns: 5000, seed: 3 },
    );
  });

  it('round-trips well-formed text, drops a UTF-8 BOM and honours a UTF-16 BOM', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (s) => {
        if (s.startsWith('\ufeff')) return;
        assert.equal(decodePageBytes(encoder.encode(s)), s);
        assert.equal(decodePageBytes(Uint8Array.from([0xef, 0xbb, 0xbf, ...encoder.encode(s)])), s);
        assert.equal(decodePageBytes(Uint8Array.from([0xff, 0xfe, ...Buffer.from(s, 'utf16le')])), s);
      }),
      { numRuns: 500, seed: 4 },
    );
  });

  it('replaces lone surrogates in strings', () => {
    assert.equal(toWellFormedText('a\ud800b\udc00'), 'a\ufffdb\ufffd');
    assert.equal(toWellFormedText('ok \u{1f600}'), 'ok \u{1f600}');
  });
});

describe('isBinaryContent: the rule for what is not a page', () => {
  it('no real fixture page, as bytes or as text, is binary', () => {
    for (const p of pages) {
      assert.equal(isBinaryContent(p.bytes), false, p.name);
      assert.equal(isBinaryContent(p.html), false, p.name);
    }
  });

  it('no damaged real page is binary, and every one is decided (has features)', async () => {
    const fp = await createFingerprinter();
    for (const p of pages) {
      for (const kind of DAMAGE) {
        for (const seed of [1, 2]) {
          const bytes = damage(p.bytes, kind, seed);
          assert.equal(isBinaryContent(bytes), false, `${p.name} ${kind}`);
          const html = decodePageBytes(bytes);
          assert.equal(isBinaryContent(html), false, `${p.name} ${kind} (text)`);
          const r = fp.fingerprint({ html });
          assert.equal(r.empty, false, `${p.name} ${kind} decided`);
        }
      }
    }
  });

  it('binary formats are binary: signatures, random bytes, random UTF-16 garbage', () => {
    const sig = (head: number[]): Uint8Array => Uint8Array.from([...head, ...encoder.encode('<html><body><p>text</p></body></html>')]);
    for (const head of [[0x25, 0x50, 0x44, 0x46, 0x2d, 0x31], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0xff, 0xd8, 0xff, 0xe0], [0x50, 0x4b, 0x03, 0x04], [0x1f, 0x8b, 0x08, 0x00], [0x7f, 0x45, 0x4c, 0x46]]) {
      assert.equal(isBinaryContent(sig(head)), true, head.join(','));
    }
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 512, maxLength: 4096 }), (bytes) => {
        assert.equal(isBinaryContent(bytes), true);
        assert.equal(isBinaryContent(decodePageBytes(bytes)), true);
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it('a page after a run of controls, bidi marks and zero-width characters of any length is not binary, as bytes or text; random bytes after one still are', () => {
    const noise = [...Array.from({ length: 0x20 }, (_, c) => c), 0x7f, ...Array.from({ length: 0x20 }, (_, c) => 0x80 + c), 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202e, 0x2060, 0x2066, 0x2069, 0xfeff, 0x061c];
    fc.assert(
      fc.property(fc.nat(pages.length - 1), fc.nat(40_000), fc.integer({ min: 1, max: noise.length }), fc.integer(), fc.uint8Array({ minLength: 512, maxLength: 4096 }), (which, length, kinds, seed, random) => {
        const rnd = seeded(seed);
        const prefix = String.fromCharCode(...Array.from({ length }, () => noise[Math.floor(rnd() * kinds)]!));
        const text = prefix + pages[which]!.html;
        assert.equal(isBinaryContent(text), false, `${pages[which]!.name} after ${length} noise chars (text)`);
        assert.equal(isBinaryContent(encoder.encode(text)), false, `${pages[which]!.name} after ${length} noise chars (bytes)`);
        const binary = Uint8Array.from([...encoder.encode(prefix), ...random]);
        assert.equal(isBinaryContent(binary), true, `random bytes after ${length} noise chars`);
        assert.equal(isBinaryContent(decodePageBytes(binary)), true, `random bytes after ${length} noise chars (text)`);
      }),
      { numRuns: 300, seed: 6 },
    );
  });

  it('empty content is not binary (it is refused as empty, not as binary)', () => {
    assert.equal(isBinaryContent(new Uint8Array(0)), false);
    assert.equal(isBinaryContent(''), false);
  });
});
