/**
 * The invariant: the same visible text, as a browser renders it, gives the
 * same fingerprint. Each real fixture page is reformatted (reformat.ts) with
 * generated combinations of markup-only changes, and every combination must
 * give exactly the simhash and exact hash of the plainly re-serialized page,
 * which must itself equal the original page's.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createFingerprinter, fingerprintToHex, type Fingerprinter } from '../../../src/fingerprint/index.js';
import { fixtureNames, readFixture } from './fixtures.js';
import { IDENTITY, reformat, type Reformat } from './reformat.js';

const arbitraryReformat: fc.Arbitrary<Reformat> = fc.record({
  voidSlash: fc.boolean(),
  numericRefs: fc.constantFrom('none', 'decimal', 'hex'),
  dropComments: fc.boolean(),
  attributeOrder: fc.constantFrom('same', 'reversed', 'shuffled'),
  quoting: fc.constantFrom('double', 'single', 'minimal'),
  upperCase: fc.boolean(),
  whitespace: fc.constantFrom('same', 'crlf', 'random'),
  wrapperDivs: fc.boolean(),
  commentsInText: fc.boolean(),
  seed: fc.integer({ min: 1, max: 1 << 30 }),
});

function hex(fp: Fingerprinter, html: string): string {
  const r = fp.fingerprint({ html });
  return `${fingerprintToHex(r.hi, r.lo)}/${fingerprintToHex(r.exactHi, r.exactLo)}`;
}

describe('same visible text, same fingerprint', () => {
  let fp: Fingerprinter;
  before(async () => {
    fp = await createFingerprinter();
  });

  for (const name of fixtureNames()) {
    it(`holds for markup-only reformatting of ${name}`, () => {
      const html = readFixture(name);
      const want = hex(fp, html);
      assert.equal(hex(fp, reformat(html, IDENTITY)), want, 'plain re-serialization');
      fc.assert(
        fc.property(arbitraryReformat, (r) => {
          assert.equal(hex(fp, reformat(html, r)), want, JSON.stringify(r));
        }),
        { numRuns: 12, seed: 9 },
      );
    });
  }

  it('holds for each single transform on every fixture page', () => {
    const singles: Partial<Reformat>[] = [
      { voidSlash: true },
      { numericRefs: 'decimal' },
      { numericRefs: 'hex' },
      { dropComments: true },
      { attributeOrder: 'reversed' },
      { quoting: 'single' },
      { quoting: 'minimal' },
      { upperCase: true },
      { whitespace: 'crlf' },
      { whitespace: 'random' },
      { wrapperDivs: true },
      { commentsInText: true },
    ];
    for (const name of fixtureNames()) {
      const html = readFixture(name);
      const want = hex(fp, html);
      for (const s of singles) assert.equal(hex(fp, reformat(html, { ...IDENTITY, ...s })), want, `${name} ${JSON.stringify(s)}`);
    }
  });
});
