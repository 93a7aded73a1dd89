/**
 * Damaged real pages are decided, not refused, wherever a page enters: a
 * browser renders a page with a few broken bytes, NULs, controls, bidi marks,
 * a stray BOM, lone surrogates or mojibake, so the pipeline decides it too.
 * Only what is not a page at all (a binary format, random bytes) is refused,
 * as PAGE_BINARY; and a page id is never repaired, because two ids that
 * differ only in broken bytes must stay two ids.
 *
 * Properties over the real fixture pages and demo pages with generated
 * damage, through the three ways a page comes in: a `dedup batch` line
 * (runBatch), a JSON Kafka record (RecordCodec.decodePage) and an Avro html
 * field (bytes, toCrawledPage). The damage rate stays below the binary rule's
 * (at most 3 junk units per insertion, insertions at least 32 code points
 * apart: under 1/11, the rule refuses over 1/8).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { DedupError } from '../../../src/errors.js';
import { runBatch } from '../../../src/cli/batch-command.js';
import { createFingerprinter, decodePageBytes, type Fingerprinter } from '../../../src/fingerprint/index.js';
import { Decider } from '../../../src/dedup/decider.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { demoPages } from '../../../src/producers/demo-pages.js';
import { createRecordCodec, type RecordCodec } from '../../../src/wire/record-codec.js';
import { parseJsonRecord, toCrawledPage } from '../../../src/wire/crawled-page.js';
import { fixtureNames, readFixture, seeded } from '../fingerprint/fixtures.js';

const NOW = Date.UTC(2026, 5, 1);
const MAX_PAGE_BYTES = 4 * 1024 * 1024;
const topics = { pagesTopic: 'p', novelTopic: 'n', duplicateTopic: 'd', fingerprintsTopic: 'f' };
const encoder = new TextEncoder();
/** A JSON string keeps a BOM where it is (only a record's first bytes could hold one to drop). */
const utf8KeepingBom = new TextDecoder('utf-8', { ignoreBOM: true });

const demo = demoPages({ seed: 11 });
const BASE_PAGES: readonly string[] = [...fixtureNames().map(readFixture), ...Array.from({ length: 6 }, () => demo.next().value!.html)];

/** A damaged page: text, with raw bytes (what no JSON writer can escape) spliced in. */
type Part = { text: string } | { bytes: readonly number[] };

/** Text damage: in a JSON record it arrives escaped where JSON escapes it ("\u0000", "\ud800"), raw elsewhere. */
const TEXT_DAMAGE: Record<string, readonly string[]> = {
  nul: ['\u0000'],
  c0: ['\u0001', '\u0007', '\u000b', '\u001b', '\u001f', '\u007f'],
  c1: ['\u0080', '\u0085', '\u009b', '\u009f'],
  bidi: ['\u200e', '\u200f', '\u202e', '\u2066', '\u2069', '\u061c'],
  bom: ['\ufeff'],
  replacement: ['\ufffd'],
  'lone-surrogate': ['\ud800', '\udbff', '\udc00', '\udfff'],
  // UTF-8 read as Windows-1252 and written again: é, ’, 中, ü.
  mojibake: ['Ã©', 'â€™', 'ä¸\u00ad', 'Ã¼'],
};
/** Byte damage: at most 3 bytes, each at most one junk unit. */
const BYTE_DAMAGE: Record<string, readonly (readonly number[])[]> = {
  'invalid-utf8': [[0xff], [0xfe], [0xc0, 0x80], [0x80], [0xbf], [0xed, 0xa0, 0x80], [0xf8, 0x88]],
  'truncated-multibyte': [[0xc3], [0xe6, 0x97], [0xf0, 0x9f, 0x98]],
  'latin1-bytes': [[0xe9], [0xe8], [0xfc], [0xa0], [0x92]],
};
const KINDS = [...Object.keys(TEXT_DAMAGE), ...Object.keys(BYTE_DAMAGE)];

const damagedPageArb = fc
  .record({
    base: fc.integer({ min: 0, max: BASE_PAGES.length - 1 }),
    leadingBom: fc.boolean(),
    // Damage about as sparse as the fingerprinter's own damaged-page tests
    // (1 in 200 or rarer), or as dense as the binary rule allows (every 32 to
    // 48 code points of the html).
    damage: fc.oneof(
      fc.array(fc.record({ gap: fc.integer({ min: 200, max: 2000 }), kind: fc.constantFrom(...KINDS), pick: fc.nat() }), { minLength: 1, maxLength: 80 }),
      fc.array(fc.record({ gap: fc.integer({ min: 32, max: 48 }), kind: fc.constantFrom(...KINDS), pick: fc.nat() }), { minLength: 100, maxLength: 400 }),
    ),
    field: fc.constantFrom('html' as const, 'text' as const),
  })
  .map(({ base, leadingBom, damage, field }) => {
    const codePoints = Array.from(BASE_PAGES[base]!);
    const parts: Part[] = leadingBom ? [{ text: '\ufeff' }] : [];
    let at = 0;
    for (const d of damage) {
      if (at + d.gap >= codePoints.length) break;
      parts.push({ text: codePoints.slice(at, at + d.gap).join('') });
      at += d.gap;
      const text = TEXT_DAMAGE[d.kind];
      if (text) parts.push({ text: text[d.pick % text.length]! });
      else parts.push({ bytes: BYTE_DAMAGE[d.kind]![d.pick % BYTE_DAMAGE[d.kind]!.length]! });
    }
    parts.push({ text: codePoints.slice(at).join('') });
    return { parts, field, kinds: [...new Set(damage.map((d) => d.kind))], dense: damage[0]!.gap < 200 };
  });

/** The page as a crawler fetched it: bytes (a lone surrogate cannot be UTF-8; it is what U+FFFD stands for). */
function pageBytes(parts: readonly Part[]): Buffer {
  return Buffer.concat(parts.map((p) => ('text' in p ? encoder.encode(p.text) : Uint8Array.from(p.bytes))));
}

/** A JSON record as a writer that escapes what JSON must escape and passes broken bytes through. */
function jsonRecord(id: Buffer | string, field: string, parts: readonly Part[]): Buffer {
  const idJson = typeof id === 'string' ? Buffer.from(JSON.stringify(id)) : Buffer.concat([Buffer.from('"'), id, Buffer.from('"')]);
  return Buffer.concat([
    Buffer.from('{"id":'),
    idJson,
    Buffer.from(`,"url":"https://example.org/p","fetchedAt":${NOW - 1000},"${field}":"`),
    ...parts.map((p) => ('text' in p ? Buffer.from(JSON.stringify(p.text).slice(1, -1)) : Buffer.from(p.bytes))),
    Buffer.from('"}'),
  ]);
}

function newDecider(): Decider {
  return new Decider({ index: FingerprintIndex.create({ plan: planFromBlocks(3, [16, 16, 16, 16]) }), k: 3 });
}

/** `dedup batch` over these lines, in process: one output line each. */
async function batchLines(lines: readonly Buffer[], fingerprinter: Fingerprinter): Promise<{ id: string | null; verdict?: string; error?: string }[]> {
  const chunks: Buffer[] = [];
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  async function* input() {
    for (const line of lines) yield Buffer.concat([line, Buffer.from('\n')]);
  }
  await runBatch({ input: input(), output, decider: newDecider(), fingerprinter, maxPageBytes: MAX_PAGE_BYTES });
  const out = Buffer.concat(chunks).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string | null; verdict?: string; error?: string });
  assert.equal(out.length, lines.length, 'one output line per input line');
  return out;
}

async function codeOf(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
    return null;
  } catch (error) {
    assert.ok(error instanceof DedupError, `threw something other than a DedupError: ${String(error)}`);
    return error.code;
  }
}

let shared: { codec: RecordCodec; fingerprinter: Fingerprinter } | null = null;
async function setup(): Promise<{ codec: RecordCodec; fingerprinter: Fingerprinter }> {
  shared ??= { codec: await createRecordCodec({ registry: null, format: 'json', topics, maxPageBytes: MAX_PAGE_BYTES }), fingerprinter: await createFingerprinter() };
  return shared;
}

test('property: a damaged real page is decided through every entry point, with the text a browser would show', async () => {
  const { codec, fingerprinter } = await setup();
  await fc.assert(
    fc.asyncProperty(damagedPageArb, async ({ parts, field, kinds, dense }) => {
      const context = `${field} ${dense ? 'densely' : 'sparsely'} damaged by ${kinds.join(', ')}`;
      const bytes = pageBytes(parts);
      const record = jsonRecord('damaged', field, parts);

      // A Kafka JSON record: the body as decodePageBytes reads the page's bytes.
      const page = await codec.decodePage(record, 0);
      assert.equal(page.id, 'damaged');
      assert.equal(page[field], utf8KeepingBom.decode(bytes), context);

      // An Avro record's html bytes: decoded by the same rule, fingerprinted the same.
      const avro = toCrawledPage({ id: 'damaged', url: 'u', fetchedAt: NOW - 1000, html: bytes }, { maxPageBytes: MAX_PAGE_BYTES, fallbackFetchedAt: 0, now: NOW });
      assert.equal(avro.html, decodePageBytes(bytes), context);
      const viaJson = fingerprinter.fingerprint(field === 'html' ? { html: page.html! } : { text: page.text! });
      const viaBytes = fingerprinter.fingerprint(field === 'html' ? { html: avro.html! } : { text: avro.html! });
      assert.deepEqual([viaJson.hi, viaJson.lo, viaJson.empty], [viaBytes.hi, viaBytes.lo, viaBytes.empty], `${context}: the same fingerprint whichever way the page came`);
      // Damage as rare as the fingerprinter's own tests use leaves content to
      // decide on. Dense damage can leave the visible text (not the markup
      // around it) over the fingerprinter's own junk ratio: that page is
      // PAGE_EMPTY by the core's rule, never refused by the decoding.
      if (!dense) assert.equal(viaJson.empty, false, `${context}: has content`);

      // A batch line: what the core decides for that text, never a decoding error.
      const [line] = await batchLines([record], fingerprinter);
      assert.equal(line!.id, 'damaged');
      if (viaJson.empty) assert.match(line!.error ?? '', /^PAGE_EMPTY: /, context);
      else {
        assert.equal(line!.error, undefined, `${context}: ${line!.error}`);
        assert.match(line!.verdict!, /^(novel|duplicate)$/);
      }
    }),
    { numRuns: 150, seed: 20260601 },
  );
});

/** The fingerprint fields that say what a page is (textLength counts the characters extracted, noise included). */
function decidedAs(r: ReturnType<Fingerprinter['fingerprint']>): unknown {
  return [r.hi, r.lo, r.exactHi, r.exactLo, r.features, r.short, r.empty, [...r.sketch]];
}

/** A page body for the generated-page properties: a real or demo page, with generated text (any code points) inserted. */
const generatedPageArb = fc
  .record({ base: fc.integer({ min: 0, max: BASE_PAGES.length - 1 }), at: fc.double({ min: 0, max: 1, noNaN: true }), inserted: fc.string({ unit: 'binary', maxLength: 60 }) })
  .map(({ base, at, inserted }) => {
    const page = BASE_PAGES[base]!;
    const cut = Math.floor(at * page.length);
    // Not inside a surrogate pair: the page stays well-formed text.
    const k = cut > 0 && /[\ud800-\udbff]/.test(page[cut - 1]!) ? cut + 1 : cut;
    return (page.slice(0, k) + inserted + page.slice(k) as string & { toWellFormed(): string }).toWellFormed();
  });

/** Windows-1252's characters for 0x80..0x9F (its five holes read as the C1 controls), as WHATWG's "latin1" label reads them. */
const CP1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** The page as UTF-16 bytes with a BOM, little- or big-endian. */
function utf16Bytes(page: string, endian: 'le' | 'be'): Buffer {
  const bytes = Buffer.from('\ufeff' + page, 'utf16le');
  return endian === 'le' ? bytes : bytes.swap16();
}

/** Bytes read one byte per character, as ISO-8859-1 or as Windows-1252 (what a crawler that assumed Latin-1 stored). */
function readAsLatin1(bytes: Buffer, reading: 'iso-8859-1' | 'windows-1252'): string {
  const text = bytes.toString('latin1');
  return reading === 'iso-8859-1' ? text : text.replace(/[\u0080-\u009f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!);
}

test('property: a UTF-16 page a crawler read as Latin-1 ("ÿþ" or "þÿ", a NUL beside every ASCII character) is decoded as UTF-16 through every entry point, and decided as the page itself', async () => {
  const { codec, fingerprinter } = await setup();
  await fc.assert(
    fc.asyncProperty(
      generatedPageArb,
      fc.constantFrom('le' as const, 'be' as const),
      fc.constantFrom('iso-8859-1' as const, 'windows-1252' as const),
      fc.constantFrom('html' as const, 'text' as const),
      async (page, endian, reading, field) => {
        const raw = utf16Bytes(page, endian);
        const misread = readAsLatin1(raw, reading);
        assert.equal(misread.slice(0, 2), endian === 'le' ? '\u00ff\u00fe' : '\u00fe\u00ff');
        const context = `UTF-16${endian.toUpperCase()} read as ${reading}, in ${field}`;
        const original = fingerprinter.fingerprint({ [field]: page });

        // A JSON record (Kafka or a batch line): the body is the page again.
        const record = Buffer.from(JSON.stringify({ id: 'misread', url: 'https://example.org/p', fetchedAt: NOW - 1000, [field]: misread }));
        const decoded = await codec.decodePage(record, 0);
        assert.equal(decoded[field], page, context);
        // An Avro record: the misread text as its html bytes (UTF-8) or its text string, and the raw UTF-16 bytes as html.
        const options = { maxPageBytes: MAX_PAGE_BYTES, fallbackFetchedAt: 0, now: NOW };
        assert.equal(toCrawledPage({ id: 'misread', html: Buffer.from(misread, 'utf8') }, options).html, page, `${context}, Avro html bytes`);
        assert.equal(toCrawledPage({ id: 'misread', text: misread }, options).text, page, `${context}, Avro text`);
        assert.equal(toCrawledPage({ id: 'misread', html: raw }, options).html, page, 'raw UTF-16 bytes with a BOM, Avro html bytes');
        assert.deepEqual(decidedAs(fingerprinter.fingerprint({ [field]: decoded[field]! })), decidedAs(original), context);

        // A batch line after the page itself: an exact copy of it (or the same refusal).
        const [first, second] = await batchLines([Buffer.from(JSON.stringify({ id: 'page', [field]: page })), record], fingerprinter);
        if (first!.error !== undefined) assert.equal(second!.error?.split(':')[0], first!.error.split(':')[0], context);
        else {
          assert.equal(second!.error, undefined, `${context}: ${second!.error}`);
          assert.equal((second as { fingerprint?: string }).fingerprint, (first as { fingerprint?: string }).fingerprint, context);
          assert.equal(second!.verdict, 'duplicate', context);
        }
      },
    ),
    { numRuns: 120, seed: 20260604 },
  );
});

/** Noise a crawler or a CMS leaves in front of a body: controls (C0, C1, DEL, NUL), bidi marks and zero-width characters. */
const NOISE: Record<string, readonly number[]> = {
  c0: [...Array.from({ length: 0x20 }, (_, c) => c), 0x7f],
  c1: Array.from({ length: 0x20 }, (_, c) => 0x80 + c),
  bidi: [0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x061c],
  'zero-width': [0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, 0x00ad],
};
NOISE.mixed = Object.values(NOISE).flat();

/** A noise prefix of any length, of one kind of noise or all of them mixed. */
const noiseArb = fc
  .record({ kind: fc.constantFrom(...Object.keys(NOISE)), length: fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 64, max: 4000 }), fc.integer({ min: 4000, max: 60_000 })), seed: fc.integer() })
  .map(({ kind, length, seed }) => {
    const rnd = seeded(seed);
    const units = NOISE[kind]!;
    return { kind, noise: String.fromCharCode(...Array.from({ length }, () => units[Math.floor(rnd() * units.length)]!)) };
  });

test('property: a page whose body starts with a run of controls, bidi marks and zero-width characters of any length is decided through every entry point, as the page without them', async () => {
  const { codec, fingerprinter } = await setup();
  await fc.assert(
    fc.asyncProperty(generatedPageArb, noiseArb, fc.constantFrom('html' as const, 'text' as const), async (page, { kind, noise }, field) => {
      const context = `${noise.length} chars of ${kind} noise before the ${field}`;
      const body = noise + page;
      const original = fingerprinter.fingerprint({ [field]: page });
      // The tokenizer and the boilerplate rule skip invisible characters: the page is what it was.
      assert.deepEqual(decidedAs(fingerprinter.fingerprint({ [field]: body })), decidedAs(original), context);

      const record = Buffer.from(JSON.stringify({ id: 'noisy', url: 'https://example.org/p', fetchedAt: NOW - 1000, [field]: body }));
      const decoded = await codec.decodePage(record, 0);
      assert.equal(decoded[field], body, context);
      const avro = toCrawledPage({ id: 'noisy', html: Buffer.from(body, 'utf8') }, { maxPageBytes: MAX_PAGE_BYTES, fallbackFetchedAt: 0, now: NOW });
      assert.deepEqual(decidedAs(fingerprinter.fingerprint({ html: avro.html! })), decidedAs(fingerprinter.fingerprint({ html: page })), `${context}, Avro html bytes`);

      const [first, second] = await batchLines([Buffer.from(JSON.stringify({ id: 'page', [field]: page })), record], fingerprinter);
      if (first!.error !== undefined) assert.equal(second!.error?.split(':')[0], first!.error.split(':')[0], context);
      else {
        assert.equal(second!.error, undefined, `${context}: ${second!.error}`);
        assert.equal(second!.verdict, 'duplicate', context);
        assert.equal((second as { fingerprint?: string }).fingerprint, (first as { fingerprint?: string }).fingerprint, context);
      }
    }),
    { numRuns: 150, seed: 20260605 },
  );
});

/** Binary bodies: format signatures before random (compressed-looking) data, and random bytes alone. */
const SIGNATURES: Record<string, readonly number[]> = {
  png: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52],
  jpeg: [0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00],
  gif: [...encoder.encode('GIF89a')],
  pdf: [...encoder.encode('%PDF-1.7\n%\u00e2\u00e3\u00cf\u00d3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n3 0 obj\n<< /Length 4096 /Filter /FlateDecode >>\nstream\n')],
  zip: [0x50, 0x4b, 0x03, 0x04, 0x14, 0x00],
  gzip: [0x1f, 0x8b, 0x08, 0x00],
  random: [],
};

const binaryArb = fc
  .record({
    format: fc.constantFrom(...Object.keys(SIGNATURES)),
    length: fc.integer({ min: 256, max: 8192 }),
    seed: fc.integer(),
    // Noise in front does not make binary a page.
    noise: fc.option(noiseArb, { freq: 3 }),
  })
  .map(({ format, length, seed, noise }) => {
    const rnd = seeded(seed);
    const body = Buffer.from([...SIGNATURES[format]!, ...Array.from({ length }, () => Math.floor(rnd() * 256))]);
    return { format: noise === null ? format : `${format} after ${noise.noise.length} chars of ${noise.kind} noise`, bytes: noise === null ? body : Buffer.concat([Buffer.from(noise.noise, 'utf8'), body]) };
  });

/** A binary body in a JSON record as writers put it there: raw bytes with JSON's escapes, or decoded with U+FFFD (Go, Python errors='replace'). */
function binaryJsonRecords(id: string, bytes: Buffer): Buffer[] {
  const escaped: number[] = [];
  for (const b of bytes) {
    if (b < 0x20) escaped.push(...encoder.encode(`\\u${b.toString(16).padStart(4, '0')}`));
    else if (b === 0x22 || b === 0x5c) escaped.push(0x5c, b);
    else escaped.push(b);
  }
  return [
    Buffer.concat([Buffer.from(`{"id":"${id}","html":"`), Buffer.from(escaped), Buffer.from('"}')]),
    Buffer.from(JSON.stringify({ id, html: bytes.toString('utf8') })),
  ];
}

test('property: a binary body (a PNG, JPEG, GIF, PDF, archive, or random bytes) is refused as PAGE_BINARY through every entry point; empty and over-size pages keep their codes', async () => {
  const { codec, fingerprinter } = await setup();
  await fc.assert(
    fc.asyncProperty(binaryArb, async ({ format, bytes }) => {
      assert.throws(() => toCrawledPage({ id: 'bin', html: bytes }, { maxPageBytes: MAX_PAGE_BYTES, fallbackFetchedAt: 0, now: NOW }), { code: 'PAGE_BINARY' }, `${format} as Avro bytes`);
      // The size limit is checked first: a binary body over it is PAGE_TOO_LARGE, as any body is.
      assert.throws(() => toCrawledPage({ id: 'bin', html: bytes }, { maxPageBytes: bytes.length - 1, fallbackFetchedAt: 0, now: NOW }), { code: 'PAGE_TOO_LARGE' });
      const records = binaryJsonRecords('bin', bytes);
      for (const record of records) assert.equal(await codeOf(codec.decodePage(record, NOW)), 'PAGE_BINARY', `${format} as a JSON record`);
      for (const line of await batchLines(records, fingerprinter)) {
        assert.match(line.error ?? '', /^PAGE_BINARY: html is binary content/, `${format} as a batch line`);
        assert.equal(line.id, 'bin', 'the error line names the page');
      }
    }),
    { numRuns: 100, seed: 20260602 },
  );
  // Empty is not binary: an empty page (or one of only a BOM) is still PAGE_EMPTY.
  assert.equal(toCrawledPage({ id: 'e', html: Buffer.alloc(0) }, { maxPageBytes: 1024, fallbackFetchedAt: 0, now: NOW }).html, '');
  const out = await batchLines([Buffer.from('{"id":"empty","html":""}'), Buffer.from('{"id":"bom-only","html":"\ufeff"}')], fingerprinter);
  assert.deepEqual(out.map((o) => o.error?.split(':')[0]), ['PAGE_EMPTY', 'PAGE_EMPTY']);
});

/** Ids as bytes: printable ASCII and non-ASCII characters around raw invalid bytes. */
const brokenIdArb = fc
  .tuple(
    fc.string({ unit: fc.constantFrom('a', 'b', '-', '7', 'é', '中', '\ufffd'), minLength: 0, maxLength: 12 }),
    fc.constantFrom(...Object.values(BYTE_DAMAGE).flat()),
    fc.string({ unit: fc.constantFrom('a', 'z', '_', '\ufffd'), maxLength: 12 }),
  )
  .map(([before, broken, after]) => Buffer.concat([Buffer.from(before), Buffer.from(broken), Buffer.from(after)]));

test('property: an id with invalid UTF-8 is refused (PAGE_INVALID_UTF8), never repaired into another id; a damaged body beside a valid id is not', async () => {
  const { codec, fingerprinter } = await setup();
  const body: Part[] = [{ text: '<p>an ordinary article about the harbour railway station and its new ' }, { bytes: [0xe9] }, { text: 'timetable for the summer season</p>' }];
  await fc.assert(
    fc.asyncProperty(brokenIdArb, fc.string({ unit: fc.constantFrom('a', 'é', '\ufffd', '中'), minLength: 1, maxLength: 12 }), async (brokenId, goodId) => {
      const broken = jsonRecord(brokenId, 'html', body);
      assert.equal(await codeOf(codec.decodePage(broken, NOW)), 'PAGE_INVALID_UTF8');
      assert.throws(() => parseJsonRecord(broken, 'line'), { code: 'PAGE_INVALID_UTF8', message: /^id is not valid UTF-8/ });
      // A valid id, even one holding a real U+FFFD, is kept exactly while its damaged body is repaired.
      const good = jsonRecord(goodId, 'html', body);
      const page = await codec.decodePage(good, NOW);
      assert.equal(page.id, goodId);
      const [refused, decided] = await batchLines([broken, good], fingerprinter);
      assert.match(refused!.error ?? '', /^PAGE_INVALID_UTF8: /);
      assert.equal(decided!.error, undefined, decided!.error);
      assert.equal(decided!.id, goodId);
    }),
    { numRuns: 300, seed: 20260603 },
  );
  // Lone surrogates in a JSON id are refused the same way; in the url and the body they are repaired.
  const surrogates = Buffer.from('{"id":"a\\ud800","html":"<p>a page about the harbour railway station and its new timetable</p>"}');
  assert.equal(await codeOf(codec.decodePage(surrogates, NOW)), 'PAGE_INVALID_UTF8');
  const page = await codec.decodePage(Buffer.from('{"id":"a","url":"https://e.example/\\udc00","html":"<p>a page about the harbour railway station\\ud800 and its new timetable</p>"}'), NOW);
  assert.equal(page.url, 'https://e.example/\ufffd');
  assert.equal(page.html, '<p>a page about the harbour railway station\ufffd and its new timetable</p>');
});
