/**
 * The pool gives what one Fingerprinter in this thread gives, for every
 * page: the pages travel as bytes (page-wire.ts) and the results as packed
 * words (result-codec.ts), and neither may change a single field. A property
 * over batches of real fixture pages, demo pages and generated pages:
 * one-byte and UTF-16 strings, lone surrogates, controls, pages decoded from
 * damaged bytes, pages given as their bytes (decoded in the worker as
 * decodePageBytes decodes them), html, text and neither, in batches cut
 * into chunks of any size.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createFingerprinter, createFingerprintPool, decodePageBytes, type FingerprintPool, type Fingerprinter, type PageContent, type PoolPage } from '../../../src/fingerprint/index.js';
import { demoPages } from '../../../src/producers/demo-pages.js';
import { fixtureNames, readFixture } from './fixtures.js';

const demo = demoPages({ seed: 5 });
const REAL: readonly string[] = [...fixtureNames().map(readFixture), ...Array.from({ length: 4 }, () => demo.next().value!.html)];

/** Any UTF-16 code unit, lone surrogates included. */
const unitsArb = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 300 }).map((u) => String.fromCharCode(...u));

/** What the calling thread fingerprints for a pool page: bytes decoded as the wire decodes them. */
function inThread(page: PoolPage): PageContent {
  const read = (v: unknown): string | undefined => (typeof v === 'string' ? v : v instanceof Uint8Array ? decodePageBytes(v) : undefined);
  const html = read(page.html);
  if (html !== undefined) return { html };
  const text = read(page.text);
  return text !== undefined ? { text } : {};
}

/** A page as the pool may be given one. */
const pageArb: fc.Arbitrary<PoolPage> = fc.oneof(
  // A real page, whole or cut, with generated text spliced in.
  fc.record({ which: fc.nat(REAL.length - 1), at: fc.double({ min: 0, max: 1, noNaN: true }), cut: fc.double({ min: 0, max: 1, noNaN: true }), inserted: fc.oneof(unitsArb, fc.string({ unit: 'binary', maxLength: 80 }), fc.string({ maxLength: 80 })), field: fc.constantFrom('html', 'text') }).map(({ which, at, cut, inserted, field }) => {
    const page = REAL[which]!.slice(0, Math.max(1, Math.floor(REAL[which]!.length * Math.max(cut, 0.2))));
    const k = Math.floor(at * page.length);
    return { [field]: page.slice(0, k) + inserted + page.slice(k) };
  }),
  // A real page's bytes damaged, decoded as the wire decodes them.
  fc.record({ which: fc.nat(REAL.length - 1), damage: fc.array(fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }) }), { maxLength: 20 }) }).map(({ which, damage }) => {
    let bytes = Buffer.from(REAL[which]!);
    for (const d of damage) {
      const k = Math.floor(d.at * bytes.length);
      bytes = Buffer.concat([bytes.subarray(0, k), d.bytes, bytes.subarray(k)]);
    }
    return { html: decodePageBytes(bytes) };
  }),
  // Random bytes read as a page, generated strings, and the odd shapes fingerprint() accepts.
  fc.uint8Array({ maxLength: 2000 }).map((b) => ({ html: decodePageBytes(b) })),
  fc.uint8Array({ maxLength: 2000 }).map((b) => ({ text: Buffer.from(b).toString('latin1') })),
  unitsArb.map((text) => ({ text })),
  fc.string({ unit: 'grapheme', maxLength: 400 }).map((html) => ({ html, text: 'ignored: html wins' })),
  fc.constantFrom<PoolPage>({}, { text: '' }, { html: '' }, { html: 7 as never, text: 'a text beside an html that is no string' }),
  // Bytes as they arrive: a real page's UTF-8 with damage, UTF-16 with a BOM, random bytes; html or text.
  fc.record({ which: fc.nat(REAL.length - 1), damage: fc.array(fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }) }), { maxLength: 20 }), utf16: fc.boolean(), field: fc.constantFrom('html', 'text') }).map(({ which, damage, utf16, field }) => {
    let bytes = utf16 ? Buffer.from('\ufeff' + REAL[which]!, 'utf16le') : Buffer.from(REAL[which]!);
    for (const d of damage) {
      const k = Math.floor(d.at * bytes.length);
      bytes = Buffer.concat([bytes.subarray(0, k), d.bytes, bytes.subarray(k)]);
    }
    return { [field]: new Uint8Array(bytes) };
  }),
  fc.uint8Array({ maxLength: 2000 }).map((html) => ({ html, text: 'ignored: html wins' })),
);

describe('fingerprint pool', () => {
  let pool: FingerprintPool;
  let fp: Fingerprinter;
  before(async () => {
    pool = await createFingerprintPool({ threads: 2, chunkChars: 30_000 });
    fp = await createFingerprinter();
  });
  after(async () => {
    await pool.close();
  });

  it('property: every result equals the in-thread result, field by field, in order, however the batch is cut', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(pageArb, { maxLength: 40 }), async (pages) => {
        const want = pages.map((p) => fp.fingerprint(inThread(p)));
        assert.deepEqual(await pool.fingerprintMany(pages), want);
      }),
      { numRuns: 80, seed: 20260610 },
    );
  });

  it('serves concurrent batches, each in its own order, and empty ones', async () => {
    const pages = REAL.map((html) => ({ html }));
    const want = pages.map((p) => fp.fingerprint(p));
    const [a, b, c] = await Promise.all([pool.fingerprintMany(pages), pool.fingerprintMany(pages.slice(2)), pool.fingerprintMany([])]);
    assert.deepEqual(a, want);
    assert.deepEqual(b, want.slice(2));
    assert.deepEqual(c, []);
  });

  it('a page whose content cannot be read fails its own batch only', async () => {
    const bad = { get html(): string { throw new Error('unreadable'); } } as PoolPage;
    await assert.rejects(pool.fingerprintMany([bad]), /unreadable/);
    assert.deepEqual(await pool.fingerprintMany([{ html: REAL[0]! }]), [fp.fingerprint({ html: REAL[0]! })], 'the pool survives a bad batch');
  });

  it('a closed pool refuses work; options are validated in the calling thread', async () => {
    const closed = await createFingerprintPool({ threads: 1 });
    await closed.close();
    await assert.rejects(closed.fingerprintMany([{ text: 'x' }]));
    await assert.rejects(createFingerprintPool({ features: { shingleSize: 99 } }), { code: 'CONFIG_INVALID' });
  });
});
