/**
 * What README.md and docs/operations.md say about bad input is checked
 * against the code: the field limits and the fetchedAt window are the
 * constants the decoder uses, the kcat example's message.max.bytes is the
 * topic limit for the default page size, and every kind of page the docs say
 * the empty-page rule drops is empty for the fingerprinter (and the one they
 * say it keeps is not).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_OPTIONS } from '../../../src/config.js';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { MAX_FETCHED_AT_AHEAD_MS, MAX_ID_BYTES, MAX_URL_BYTES, MIN_FETCHED_AT_MS } from '../../../src/wire/crawled-page.js';

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
