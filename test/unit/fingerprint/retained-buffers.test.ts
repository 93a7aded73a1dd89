/**
 * A thread's fingerprint buffers are reused from page to page, and one huge page must not leave
 * them at its size: each goes back to its first size when it is cleared for the next page, and
 * what the next page's fingerprint reads from them does not change.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { FeatureCounter, KEPT_SLOTS } from '../../../src/fingerprint/hash-table-64.js';
import { KEPT_UNITS, TextBuffer } from '../../../src/fingerprint/text-buffer.js';
import { KEPT_TOKENS, TokenBuffer } from '../../../src/fingerprint/token-buffer.js';
import { fixtureNames, readFixture } from './fixtures.js';

describe('buffers grown by a huge page', () => {
  it('a text buffer goes back to its first size when cleared, and holds what it is given after', () => {
    const buffer = new TextBuffer(1024);
    buffer.setString('x'.repeat(3 * KEPT_UNITS));
    assert.ok(buffer.units.length >= 3 * KEPT_UNITS);
    buffer.setString('short text');
    assert.equal(buffer.units.length, 1024);
    assert.equal(buffer.toString(), 'short text');
  });

  it('a token buffer and a feature counter go back to their first size when cleared, and count alike after', () => {
    const tokens = new TokenBuffer(64);
    for (let i = 0; i < 2 * KEPT_TOKENS; i++) tokens.push(i, -i, 0);
    tokens.clear();
    assert.equal(tokens.a.length, 64);
    tokens.push(7, 8, 2, 1);
    assert.deepEqual([tokens.a[0], tokens.b[0], tokens.num[0], tokens.script[0], tokens.length], [7, 8, 2, 1, 1]);

    const counter = new FeatureCounter(16);
    const small = new FeatureCounter(16);
    const slots = (c: FeatureCounter) => (c as unknown as { slots: Int32Array }).slots.length;
    for (let i = 0; i < KEPT_SLOTS; i++) counter.add(i, i * 31);
    assert.ok(slots(counter) > slots(small) * 64);
    counter.reset();
    small.reset();
    assert.equal(slots(counter), slots(small));
    for (const c of [counter, small]) for (const k of [5, 9, 5, 5, 12, 9]) c.add(k, -k);
    assert.deepEqual([counter.size, ...counter.countOf.subarray(0, 3), ...counter.entryA.subarray(0, 3)], [3, 3, 2, 1, 5, 9, 12]);
    assert.deepEqual([...counter.countOf.subarray(0, 3)], [...small.countOf.subarray(0, 3)]);
  });

  it('a fingerprinter gives every page the same result before and after a huge page', async () => {
    const fp = await createFingerprinter();
    const pages = fixtureNames().map(readFixture);
    const before = pages.map((html) => fp.fingerprint({ html }));
    // About 2.4 MB of HTML with Chinese and English words, numbers and underscores: every buffer grows.
    const huge = `<html><body>${Array.from({ length: 40_000 }, (_, i) => `<p>段落${i} 中文分词测试 the page_${i} words ${i}.${i % 7}</p>`).join('')}</body></html>`;
    const big = fp.fingerprint({ html: huge });
    assert.ok(big.features > 100_000, `features of the huge page: ${big.features}`);
    const after = pages.map((html) => fp.fingerprint({ html }));
    assert.deepEqual(after, before);
  });
});
