/**
 * Decode-time bounds on every field of a crawled page, as properties over
 * generated records: a record either decodes to a page whose fields fit
 * everything downstream (the 1 MiB verdict topics, the page store's uint32
 * seconds) or is refused with one of the closed page codes. Nothing else.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DedupError } from '../../../src/errors.js';
import { createRecordCodec } from '../../../src/wire/record-codec.js';
import {
  MAX_FETCHED_AT_AHEAD_MS,
  MAX_ID_BYTES,
  MAX_URL_BYTES,
  MIN_FETCHED_AT_MS,
  toCrawledPage,
  type CrawledPage,
} from '../../../src/wire/crawled-page.js';

const NOW = Date.UTC(2026, 5, 1);
const PAGE_CODES = new Set(['PAGE_INVALID', 'PAGE_INVALID_UTF8', 'PAGE_TOO_LARGE', 'PAGE_BINARY']);
const MAX_PAGE_BYTES = 64 * 1024;
/** The broker's default max.message.bytes, which pages.duplicate and the changelog keep. */
const DEFAULT_TOPIC_MAX_BYTES = 1024 * 1024;
const topics = { pagesTopic: 'p', novelTopic: 'n', duplicateTopic: 'd', fingerprintsTopic: 'f' };

/** Strings around, below and far above a byte limit, in 1-, 2-, 3- and 4-byte characters, and odd ones. */
function sizedString(limit: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.tuple(fc.constantFrom('x', 'é', '中', '😀'), fc.integer({ min: 0, max: limit * 2 })).map(([c, n]) => c.repeat(Math.ceil(n / Buffer.byteLength(c)))),
    fc.tuple(fc.constantFrom('x', 'é'), fc.integer({ min: limit - 4, max: limit + 4 })).map(([c, n]) => c.repeat(Math.max(0, Math.floor(n / Buffer.byteLength(c))))),
    fc.constant('u'.repeat(2 * 1024 * 1024)),
    fc.constantFrom(undefined, null, 42, true, {}, [], '\ud800'),
  );
}

const fetchedAtArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(undefined, null),
  fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
  fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2150, 0, 1) }),
  fc.double(),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.string({ maxLength: 30 }),
);

const recordArb = fc.record(
  {
    id: sizedString(MAX_ID_BYTES),
    url: sizedString(MAX_URL_BYTES),
    fetchedAt: fetchedAtArb,
    html: fc.oneof(fc.string({ maxLength: 200 }), fc.uint8Array({ maxLength: 200 }), fc.constantFrom(null, 7)),
    text: fc.oneof(fc.string({ maxLength: 200 }), fc.constant(null)),
  },
  { requiredKeys: [] },
);

function decodeOrCode(record: unknown, fallback = NOW - 1000): CrawledPage | string {
  try {
    return toCrawledPage(record, { maxPageBytes: MAX_PAGE_BYTES, fallbackFetchedAt: fallback, now: NOW });
  } catch (error) {
    assert.ok(error instanceof DedupError, `threw something other than a DedupError: ${String(error)}`);
    assert.ok(PAGE_CODES.has(error.code), `unexpected code ${error.code}: ${error.message}`);
    return error.code;
  }
}

function assertFits(page: CrawledPage): void {
  assert.ok(Buffer.byteLength(page.id) <= MAX_ID_BYTES, `id of ${Buffer.byteLength(page.id)} bytes`);
  assert.ok(Buffer.byteLength(page.url) <= MAX_URL_BYTES, `url of ${Buffer.byteLength(page.url)} bytes`);
  assert.ok(page.fetchedAt >= 0 && page.fetchedAt <= NOW + MAX_FETCHED_AT_AHEAD_MS, `fetchedAt ${page.fetchedAt}`);
  const seconds = Math.floor(page.fetchedAt / 1000);
  assert.equal(seconds >>> 0, seconds, 'fetchedAt seconds survive the page store uint32');
}

test('property: every page record decodes within the bounds or is refused with a page code', () => {
  fc.assert(
    fc.property(recordArb, (record) => {
      const out = decodeOrCode(record);
      if (typeof out !== 'string') assertFits(out);
    }),
    { numRuns: 400 },
  );
});

test('property: a decoded page\'s duplicate verdict and changelog entry fit a default 1 MiB topic', async () => {
  // The default page limit: a record of up to 4 MiB + 64 KiB is read from the input topic.
  const codec = await createRecordCodec({ registry: null, format: 'json', topics, maxPageBytes: 4 * 1024 * 1024 });
  await fc.assert(
    fc.asyncProperty(recordArb, async (record) => {
      let page: CrawledPage;
      try {
        page = await codec.decodePage(Buffer.from(JSON.stringify(record, (_key, value: unknown) => (typeof value === 'bigint' ? Number(value) : value))), NOW - 1000);
      } catch (error) {
        assert.ok(error instanceof DedupError, String(error));
        assert.ok(PAGE_CODES.has(error.code) || error.code === 'RECORD_UNDECODABLE', error.code);
        return;
      }
      const duplicate = await codec.encodeDuplicate({ page, hi: 1, lo: 2, duplicateOf: page.id, distance: 1, duplicateOfHi: 1, duplicateOfLo: 3 });
      const change = await codec.encodeChange({ id: page.id, hi: 1, lo: 2, short: false, duplicateOf: page.id, distance: 1, fetchedAt: page.fetchedAt, sequence: 1 });
      // Two bounded ids and a bounded url, JSON-escaped (at most 6 bytes per byte), plus the fixed fields.
      assert.ok(duplicate.length < DEFAULT_TOPIC_MAX_BYTES, `duplicate verdict of ${duplicate.length} bytes`);
      assert.ok(change.length < DEFAULT_TOPIC_MAX_BYTES, `changelog entry of ${change.length} bytes`);
    }),
    { numRuns: 200 },
  );
});

test('id and url limits are in UTF-8 bytes, and the refusal names the field', () => {
  const body = { html: '<p>x</p>', fetchedAt: NOW };
  assert.equal(decodeOrCode({ id: 'x'.repeat(MAX_ID_BYTES), ...body }) instanceof Object, true);
  assert.throws(() => toCrawledPage({ id: 'x'.repeat(MAX_ID_BYTES + 1), ...body }, { maxPageBytes: 100, fallbackFetchedAt: 0, now: NOW }), {
    code: 'PAGE_INVALID',
    message: /^id is 1025 bytes, over the 1024-byte limit$/,
  });
  assert.throws(() => toCrawledPage({ id: 'é'.repeat(MAX_ID_BYTES / 2 + 1), ...body }, { maxPageBytes: 100, fallbackFetchedAt: 0, now: NOW }), { code: 'PAGE_INVALID' });
  const url = `https://example.com/${'a'.repeat(MAX_URL_BYTES - 20)}`;
  assert.equal(toCrawledPage({ id: 'a', url, ...body }, { maxPageBytes: 100, fallbackFetchedAt: 0, now: NOW }).url, url);
  assert.throws(() => toCrawledPage({ id: 'a', url: 'u'.repeat(2 * 1024 * 1024), ...body }, { maxPageBytes: 100, fallbackFetchedAt: 0, now: NOW }), {
    code: 'PAGE_INVALID',
    message: /^url is 2097152 bytes, over the 8192-byte limit$/,
  });
});

test('property: fetchedAt in range decodes to itself; out of range is refused, never wrapped or clamped', () => {
  const latest = NOW + MAX_FETCHED_AT_AHEAD_MS;
  fc.assert(
    fc.property(fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), fc.boolean(), (ms, asIso) => {
      const value = asIso && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : ms;
      const out = decodeOrCode({ id: 'a', text: 'x', fetchedAt: value });
      if (ms >= MIN_FETCHED_AT_MS && ms <= latest) {
        assert.ok(typeof out !== 'string', `refused an in-range time ${new Date(ms).toISOString()}`);
        assert.equal(out.fetchedAt, ms);
      } else {
        assert.equal(out, 'PAGE_INVALID', `accepted ${String(value)}`);
      }
    }),
    { numRuns: 2000 },
  );
});

test('fetchedAt: the dates that used to wrap or stall eviction are refused with a clear message', () => {
  const decode = (fetchedAt: unknown) => toCrawledPage({ id: 'a', text: 'x', fetchedAt }, { maxPageBytes: 100, fallbackFetchedAt: 0, now: NOW });
  for (const bad of ['1960-01-01T00:00:00Z', -1, 1_700_000_000 /* seconds, not ms */, 1_700_000_000_000_000 /* microseconds */, '2106-03-01T00:00:00Z', 'yesterday', '1']) {
    assert.throws(() => decode(bad), { code: 'PAGE_INVALID', message: /^fetchedAt / }, String(bad));
  }
  assert.throws(() => decode(NOW + MAX_FETCHED_AT_AHEAD_MS + 1), { code: 'PAGE_INVALID', message: /outside 1990-01-01T00:00:00.000Z \.\. 2026-06-02T00:00:00.000Z/ });
  assert.equal(decode(NOW + MAX_FETCHED_AT_AHEAD_MS).fetchedAt, NOW + MAX_FETCHED_AT_AHEAD_MS, 'a day of clock skew is accepted');
  assert.equal(decode('2001-09-09T01:46:40Z').fetchedAt, 1_000_000_000_000);
  assert.equal(decode(1_000_000_000_000n).fetchedAt, 1_000_000_000_000, 'Avro longs may arrive as bigint');
});

test('property: a page without fetchedAt takes the record timestamp when it is a storable time, else is refused', () => {
  fc.assert(
    fc.property(fc.oneof(fc.integer({ min: -(2 ** 52), max: 2 ** 52 }), fc.constantFrom(-1, 0, Number.NaN)), (timestamp) => {
      const out = decodeOrCode({ id: 'a', text: 'x' }, timestamp);
      if (timestamp >= 0 && timestamp <= NOW + MAX_FETCHED_AT_AHEAD_MS) {
        assert.ok(typeof out !== 'string');
        assert.equal(out.fetchedAt, timestamp, 'the record timestamp, as before');
      } else {
        assert.equal(out, 'PAGE_INVALID');
      }
    }),
    { numRuns: 1000 },
  );
});
