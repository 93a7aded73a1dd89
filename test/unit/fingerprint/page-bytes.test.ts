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
import { isNoise } from '../../../src/fingerprint/char-class.js';

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

/**
 * The binary check's byte loop as it was before ASCII bytes were read through a table: the
 * oracle the table version is held to (signatures and BOMs are checked before the loop, alike).
 */
function referenceBinaryLoop(content: Uint8Array, start: number): boolean {
  const isBinaryDataByte = (b: number): boolean => b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f);
  const isNoiseUnit = (c: number): boolean => isNoise(c) || (c < 0x20 && isBinaryDataByte(c));
  const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
  const sequenceLength = (i: number, n: number): number => {
    const b = content[i]!;
    let need: number;
    let lower = 0x80;
    let upper = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lower = 0xa0;
      if (b === 0xed) upper = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lower = 0x90;
      if (b === 0xf4) upper = 0x8f;
    } else return 0;
    if (i + need >= n) return 0;
    for (let k = 1; k <= need; k++) {
      const c = content[i + k]!;
      if (c < lower || c > upper) return 0;
      lower = 0x80;
      upper = 0xbf;
    }
    return need + 1;
  };
  const isNoiseSequence = (i: number, len: number): boolean => {
    if (len === 4) return false;
    const b = content[i]!;
    const cp = len === 2 ? ((b & 0x1f) << 6) | (content[i + 1]! & 0x3f) : ((b & 0x0f) << 12) | ((content[i + 1]! & 0x3f) << 6) | (content[i + 2]! & 0x3f);
    return isNoise(cp);
  };
  const n = content.length;
  let counted = 0;
  let junk = 0;
  let inRun = false;
  let runJunk = false;
  for (let i = start; i < n && counted < 8192; ) {
    const b = content[i]!;
    if (b < 0x80) {
      if (isNoiseUnit(b)) {
        if (!inRun) counted++;
        inRun = true;
        if (!runJunk && isBinaryDataByte(b)) {
          junk++;
          runJunk = true;
        }
      } else if (!(inRun && isWhitespace(b))) {
        inRun = false;
        runJunk = false;
        counted++;
      }
      i++;
      continue;
    }
    const len = sequenceLength(i, n);
    if (len > 0 && isNoiseSequence(i, len)) {
      if (!inRun) counted++;
      inRun = true;
      i += len;
      continue;
    }
    inRun = false;
    runJunk = false;
    if (len === 0) {
      junk++;
      counted++;
      i++;
    } else {
      counted += len;
      i += len;
    }
  }
  return junk * 8 > counted;
}

describe('isBinaryContent on bytes, against the loop it replaced', () => {
  it('answers alike on generated bytes: visible text, whitespace, controls, noise runs, multibyte text and invalid bytes, over and under the 1/8 line', () => {
    const piece = fc.oneof(
      fc.constantFrom(...'<p>Plain text, 1.5 and café 東京</p>'.split('').map((c) => [...encoder.encode(c)])),
      fc.constantFrom([0x20], [0x09], [0x0a], [0x0d], [0x0c], [0x0b], [0x00], [0x01], [0x07], [0x1b], [0x1f], [0x7f]),
      fc.constantFrom([0xe2, 0x80, 0x8b], [0xc2, 0xad], [0xe2, 0x80, 0x8e], [0xef, 0xbb, 0xbf], [0xc2, 0x85], [0xe2, 0x81, 0xa6]),
      fc.constantFrom([0xff], [0xc0, 0x80], [0xe6, 0x97], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98, 0x80], [0xf4, 0x90, 0x80, 0x80]),
      fc.integer({ min: 0, max: 255 }).map((b) => [b]),
    );
    const bytes = fc.array(fc.array(piece, { minLength: 1, maxLength: 8 }).chain((run) => fc.integer({ min: 1, max: 200 }).map((times) => Array.from({ length: times }, () => run).flat(2))), { minLength: 0, maxLength: 30 });
    let binary = 0;
    let text = 0;
    fc.assert(
      fc.property(bytes, (parts) => {
        // A visible first byte: a binary format's signature and a BOM are decided before the loop,
        // and no signature starts with one ("....ftyp" at offset 4 aside, skipped).
        const content = Uint8Array.from([0x78, ...parts.flat()]);
        if (Buffer.from(content.subarray(4, 8)).toString('latin1') === 'ftyp') return;
        const want = referenceBinaryLoop(content, 0);
        assert.equal(isBinaryContent(content), want, Buffer.from(content.subarray(0, 48)).toString('hex'));
        if (want) binary++;
        else text++;
      }),
      { numRuns: 2000 },
    );
    assert.ok(binary > 100 && text > 100, `both answers generated: ${binary} binary, ${text} text`);
  });
});
