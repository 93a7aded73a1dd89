import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeHTML } from 'entities';
import fc from 'fast-check';
import { decodeEntity } from '../../../src/fingerprint/html-entities.js';
import { LEGACY_REFERENCES, NAMED_REFERENCES } from '../../../src/fingerprint/named-references.js';
import { TextBuffer } from '../../../src/fingerprint/text-buffer.js';

/** Decodes every reference in s with our decoder (text state). */
function decodeAll(s: string): string {
  const out = new TextBuffer(16);
  for (let i = 0; i < s.length; ) {
    if (s.charCodeAt(i) === 0x26) i = decodeEntity(s, i, s.length, out);
    else out.reserve(1)[out.length++] = s.charCodeAt(i++);
  }
  return out.toString();
}

describe('character references against the `entities` package', () => {
  it('decodes all named references, with and without the semicolon, as the WHATWG table says', () => {
    assert.ok(NAMED_REFERENCES.size > 2000);
    for (const name of NAMED_REFERENCES.keys()) {
      for (const written of [`&${name};`, `x&${name};y`, `&${name}`, `&${name}x`]) {
        assert.equal(decodeAll(written), decodeHTML(written), written);
      }
    }
    assert.equal(LEGACY_REFERENCES.size, 106);
  });

  it('decodes numeric references as the WHATWG tokenizer does', () => {
    for (let cp = 0; cp < 0x400; cp++) {
      for (const written of [`&#${cp};`, `&#x${cp.toString(16)};`, `&#${cp}`]) assert.equal(decodeAll(written), decodeHTML(written), written);
    }
    for (const written of ['&#xD800;', '&#x10FFFF;', '&#x110000;', '&#99999999999999999999;', '&#x;', '&#;', '&#', '&#xFFFE;']) {
      assert.equal(decodeAll(written), decodeHTML(written), written);
    }
  });

  it('agrees on generated text full of ampersands', () => {
    const piece = fc.constantFrom('&', '#', 'x', ';', 'amp', 'lt', 'not', 'notin', 'it', 'copy', '2', 'A', 'F', '0', ' ', 'oelig', 'mdash', 'Eacute');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const s = pieces.join('');
        assert.equal(decodeAll(s), decodeHTML(s));
      }),
      { numRuns: 5000, seed: 7 },
    );
  });
});
