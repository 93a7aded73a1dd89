import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRecordCodec } from '../../../src/wire/record-codec.js';
import { toCrawledPage } from '../../../src/wire/crawled-page.js';
import { readLines } from '../../../src/cli/line-reader.js';

const topics = { pagesTopic: 'p', novelTopic: 'n', duplicateTopic: 'd', fingerprintsTopic: 'f' };

test('JSON pages decode; every failure is classified by code', async () => {
  const codec = await createRecordCodec({ registry: null, format: 'json', topics, maxPageBytes: 1024 * 1024 });
  const page = await codec.decodePage(Buffer.from(JSON.stringify({ id: 'a', url: 'u', html: '<p>x</p>', fetchedAt: '2026-01-02T03:04:05Z' })), 5);
  assert.deepEqual(page, { id: 'a', url: 'u', fetchedAt: Date.parse('2026-01-02T03:04:05Z'), html: '<p>x</p>', text: null });
  const fallback = await codec.decodePage(Buffer.from(JSON.stringify({ id: 'b', text: 't' })), 1234);
  assert.equal(fallback.fetchedAt, 1234, 'the record timestamp when the page has none');
  const cases: [Buffer | null, string][] = [
    [null, 'RECORD_UNDECODABLE'],
    [Buffer.alloc(0), 'RECORD_UNDECODABLE'],
    [Buffer.from('not json'), 'RECORD_UNDECODABLE'],
    [Buffer.from('{"id":'), 'RECORD_UNDECODABLE'],
    [Buffer.from([0, 0, 0, 0, 1, 2]), 'SCHEMA_UNKNOWN'],
    [Buffer.from('{"id":"x\xff","html":"y"}', 'latin1'), 'PAGE_INVALID_UTF8'],
    [Buffer.from('{"id":"x","html":"\xff"}', 'latin1'), 'PAGE_BINARY'],
    [Buffer.from('{"id":"","html":"x"}'), 'PAGE_INVALID'],
    [Buffer.from('{"id":"x"}'), 'PAGE_INVALID'],
    [Buffer.from('{"id":"x","html":"y","fetchedAt":"yesterday"}'), 'PAGE_INVALID'],
    [Buffer.from(JSON.stringify({ id: 'x', html: 'y'.repeat(2 * 1024 * 1024) })), 'PAGE_TOO_LARGE'],
  ];
  for (const [value, code] of cases) {
    await assert.rejects(codec.decodePage(value, 0), { code }, `${value?.toString('latin1').slice(0, 30)} → ${code}`);
  }
});

test('changelog records round trip through JSON', async () => {
  const codec = await createRecordCodec({ registry: null, format: 'json', topics, maxPageBytes: 1024 });
  const change = { id: 'é', hi: 0xffffffff, lo: 1, short: true, duplicateOf: 'z', distance: 2, fetchedAt: 99, sequence: 42 };
  assert.deepEqual(await codec.decodeChange(await codec.encodeChange(change)), change);
});

test('crawled pages: html bytes are decoded leniently, binary is refused, ids are bounded', () => {
  assert.equal(toCrawledPage({ id: 'a', html: Buffer.from('café') }, { maxPageBytes: 100, fallbackFetchedAt: 0 }).html, 'café');
  const damaged = Buffer.concat([Buffer.from('<p>caf'), Buffer.from([0xe9]), Buffer.from(' au lait, a page with one Latin-1 byte</p>')]);
  assert.equal(toCrawledPage({ id: 'a', html: damaged }, { maxPageBytes: 100, fallbackFetchedAt: 0 }).html, '<p>caf\ufffd au lait, a page with one Latin-1 byte</p>');
  assert.throws(() => toCrawledPage({ id: 'a', html: Buffer.from([0xff]) }, { maxPageBytes: 100, fallbackFetchedAt: 0 }), { code: 'PAGE_BINARY' });
  assert.throws(() => toCrawledPage({ id: 'x'.repeat(2000), html: 'a' }, { maxPageBytes: 100, fallbackFetchedAt: 0 }), { code: 'PAGE_INVALID' });
  assert.throws(() => toCrawledPage('a string', { maxPageBytes: 100, fallbackFetchedAt: 0 }), { code: 'PAGE_INVALID' });
});

test('line reader splits on LF across chunk boundaries and strips CR', async () => {
  async function* chunks() {
    yield Buffer.from('ab');
    yield Buffer.from('c\r\nde');
    yield Buffer.from('f\n\ng');
  }
  const lines: string[] = [];
  for await (const line of readLines(chunks())) lines.push(line.toString());
  assert.deepEqual(lines, ['abc', 'def', '', 'g']);
});
