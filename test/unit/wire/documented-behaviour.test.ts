/**
 * What README.md and docs/operations.md say about bad input is checked
 * against the code: the field limits and the fetchedAt window are the
 * constants the decoder uses, the kcat example's message.max.bytes is the
 * topic limit for the default page size, and every kind of page the docs say
 * the empty-page rule drops is empty for the fingerprinter (and the one they
 * say it keeps is not). What they say about damaged and binary bodies and
 * broken ids is what the decoder does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_OPTIONS } from '../../../src/config.js';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { MAX_FETCHED_AT_AHEAD_MS, MAX_ID_BYTES, MAX_URL_BYTES, MIN_FETCHED_AT_MS, decodePageText, parseJsonRecord } from '../../../src/wire/crawled-page.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
const OPERATIONS = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8').replace(/\s+/g, ' ');

test('the documented field limits and fetchedAt window are the decoder\'s', () => {
  const idLimit = `id is over ${MAX_ID_BYTES / 1024} KiB`;
  const urlLimit = `url is over ${MAX_URL_BYTES / 1024} KiB`;
  assert.ok(README.includes(`whose ${idLimit} or whose ${urlLimit} (UTF-8 bytes)`), 'README: id and url limits');
  assert.ok(OPERATIONS.includes(`the id by ${MAX_ID_BYTES / 1024} KiB and the url by ${MAX_URL_BYTES / 1024} KiB (UTF-8 bytes)`), 'operations.md: id and url limits');
  const from = new Date(MIN_FETCHED_AT_MS).toISOString().slice(0, 10);
  assert.equal(MAX_FETCHED_AT_AHEAD_MS, 24 * 3600 * 1000, 'the docs say one day');
  assert.ok(README.includes(`outside ${from} to one day after decode time`), 'README: fetchedAt window');
  assert.ok(OPERATIONS.includes(`must lie between ${from} and one day after decode time`), 'operations.md: fetchedAt window');
});

test('the kcat example raises message.max.bytes to the limit of the topics the process creates', () => {
  const maxPageBytes = Number(CONFIG_OPTIONS.find((o) => o.key === 'maxPageBytes')!.default);
  assert.ok(OPERATIONS.includes(`-X message.max.bytes=${maxPageBytes * 2 + 1024 * 1024}`));
  assert.ok(OPERATIONS.includes('lacks Avro/Schema-Registry support'));
});

test('every kind of page the docs say the empty-page rule drops is empty; a lone word or a title is not', async () => {
  assert.ok(README.includes('"No text" means no feature at all, so this also drops'));
  const fingerprinter = await createFingerprinter();
  const dropped: [string, { html?: string; text?: string }][] = [
    ['boilerplate only', { html: '<html><body><nav><a href="/">Home</a> <a href="/about">About us</a></nav><div class="cookie-banner">We use cookies to improve your experience</div><footer>Copyright 2026 Example Inc.</footer></body></html>' }],
    ['stop words only', { text: 'the of and a' }],
    ['punctuation, symbols', { text: '!!! ??? ... — © ™ ¶ §' }],
    ['emoji only', { text: '😀 🎉 👍' }],
    ['attribute text only', { html: '<p><img src="cat.png" alt="a picture of a sleeping cat"></p>' }],
  ];
  for (const [kind, page] of dropped) assert.equal(fingerprinter.fingerprint(page).empty, true, kind);
  for (const [kind, page] of [
    ['a single real word', { text: 'giraffe' }],
    ['only a title', { html: '<html><head><title>Quarterly report</title></head><body></body></html>' }],
    ['only numbers (a number in content is content)', { text: '12345 67890 3.14' }],
  ] as const) {
    const r = fingerprinter.fingerprint(page);
    assert.equal(r.empty, false, kind);
    assert.equal(r.short, true, `${kind} is short, matched only exactly`);
  }
});

test('the documented damaged-page and binary-body rules are the decoder\'s', () => {
  assert.ok(README.includes('(`PAGE_BINARY`: a PNG, JPEG, PDF, archive or other binary format, or more than 1/8 control bytes and invalid UTF-8 in the first 8 KiB, where a run of controls counts once)'), 'README: PAGE_BINARY');
  assert.ok(OPERATIONS.includes('or more than 1/8 of its first 8 KiB are control bytes, invalid UTF-8 or U+FFFD. A run of controls, bidi marks and zero-width characters is one unit of those 8 KiB, and one junk unit at most'), 'operations.md: PAGE_BINARY');
  const code = (f: () => unknown): string | null => {
    try {
      f();
      return null;
    } catch (error) {
      return (error as { code: string }).code;
    }
  };
  // 1/8 of the first 8 KiB: 1024 scattered junk bytes are a page, 1025 are not; junk after 8 KiB does not count.
  const body = (junk: number, tail = 0) => {
    const bytes = Buffer.alloc(8192 + tail, 0x61);
    for (let k = 0; k < junk; k++) bytes[k * 7] = 0x01;
    bytes.fill(0xff, 8192);
    return bytes;
  };
  assert.equal(code(() => decodePageText(body(1024, 4096), 'html')), null);
  assert.equal(code(() => decodePageText(body(1025), 'html')), 'PAGE_BINARY');
  // A run of controls is one unit, however long: 8 KiB of them in front of a page leave it a page.
  assert.equal(code(() => decodePageText(Buffer.concat([Buffer.alloc(8192, 0x01), body(1024)]), 'html')), null);
  assert.equal(code(() => decodePageText(Buffer.concat([Buffer.alloc(8192, 0x01), body(1025)]), 'html')), 'PAGE_BINARY');
  assert.ok(README.includes('So is a body that starts with a run of controls, bidi marks and zero-width characters of any length (the page without them), and a UTF-16 page that a crawler read as Latin-1 (it starts with `ÿþ` or `þÿ`), which is decoded as UTF-16.'));
  const page = '<p>a page with enough ordinary words to stay a page</p>';
  assert.equal(decodePageText(Buffer.from('\ufeff' + page, 'utf16le').toString('latin1'), 'html'), page);
  for (const signature of [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0xff, 0xd8, 0xff], [...Buffer.from('%PDF-')], [0x50, 0x4b, 0x03, 0x04]]) {
    assert.equal(code(() => decodePageText(Buffer.concat([Buffer.from(signature), Buffer.from('<p>text after a binary signature</p>')]), 'html')), 'PAGE_BINARY', signature.join(','));
  }
  // README: "a truncated character, a Latin-1 byte, lone surrogates, NULs, controls or a stray BOM ... U+FFFD in place of each broken sequence".
  assert.ok(README.includes('A damaged page is not bad input: a body or url with a few invalid bytes (a truncated character, a Latin-1 byte), lone surrogates, NULs, controls or a stray BOM is decoded as a browser decodes it (U+FFFD in place of each broken sequence) and decided like any other page.'));
  const text = 'a page with enough ordinary words around the damage to stay a page';
  const damaged = Buffer.concat([Buffer.from(`{"id":"p","url":"https://e.example/caf`), Buffer.from([0xe9]), Buffer.from(`","html":"\ufeff${text} \\ud800 \\u0000 \\u0007 caf`), Buffer.from([0xe9, 0x20, 0xe6, 0x97]), Buffer.from(` ${text}"}`)]);
  const record = parseJsonRecord(damaged, 'record value') as { url: string; html: string };
  assert.equal(record.url, 'https://e.example/caf\ufffd');
  assert.equal(decodePageText(record.html, 'html'), `\ufeff${text} \ufffd \u0000 \u0007 caf\ufffd \ufffd ${text}`);
  // ...while an id with a broken byte is refused, never repaired.
  assert.equal(code(() => parseJsonRecord(Buffer.concat([Buffer.from('{"id":"caf'), Buffer.from([0xe9]), Buffer.from(`","html":"${text}"}`)]), 'record value')), 'PAGE_INVALID_UTF8');
});
