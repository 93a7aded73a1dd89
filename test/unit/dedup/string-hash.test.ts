/**
 * Page-id hashes are persisted (the page store in snapshots), so they are
 * frozen: these vectors must never change, whatever happens to the
 * fingerprint's own hashing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashString64 } from '../../../src/dedup/string-hash.js';

const FROZEN: [string, string][] = [
  ['', 'ebb6c228d9aaf7d3'],
  ['a', '11caa9f56ef24b24'],
  ['page-1', '8e88f47bec560b8b'],
  ['https://example.com/a?b=c', 'da8470366f340520'],
  ['日本語', 'ef16b4066b224278'],
  ['\u{1f600}', '40d2c1b92ae4b764'],
  ['x'.repeat(1000), 'c43167a0caddf1a3'],
];

describe('hashString64 (page ids)', () => {
  it('gives the frozen vectors', () => {
    for (const [s, want] of FROZEN) {
      const h = hashString64(s, { hi: 0, lo: 0 });
      assert.equal(h.hi.toString(16).padStart(8, '0') + h.lo.toString(16).padStart(8, '0'), want, JSON.stringify(s.slice(0, 20)));
    }
  });

  it('does not import the fingerprint feature hash', async () => {
    const { readFile } = await import('node:fs/promises');
    const { fileURLToPath } = await import('node:url');
    const source = await readFile(fileURLToPath(new URL('../../../src/dedup/string-hash.js', import.meta.url)), 'utf8');
    assert.doesNotMatch(source, /from ['"][^'"]*fingerprint/);
  });
});
