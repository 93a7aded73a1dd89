import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFingerprinter, createFingerprintPool } from '../../../src/fingerprint/index.js';
import { fixtureNames, readFixture } from './fixtures.js';

describe('fingerprint pool', () => {
  it('returns the same results as a single fingerprinter, in order', async () => {
    const pages = [
      ...fixtureNames().map((n) => ({ html: readFixture(n) })),
      { text: '' },
      { text: 'short page' },
      { html: '<p>hello</p>', text: 'ignored' },
    ];
    const many = [...pages, ...pages, ...pages];
    const pool = await createFingerprintPool({ threads: 2, chunkChars: 50_000 });
    try {
      const fp = await createFingerprinter();
      const want = many.map((p) => fp.fingerprint(p));
      assert.deepEqual(await pool.fingerprintMany(many), want);
      assert.deepEqual(await pool.fingerprintMany([]), []);
      const [a, b] = await Promise.all([pool.fingerprintMany(pages), pool.fingerprintMany(pages.slice(2))]);
      assert.deepEqual(a, want.slice(0, pages.length));
      assert.deepEqual(b, want.slice(2, pages.length));
      await assert.rejects(pool.fingerprintMany([{ html: 'x', extra: () => 1 } as never]));
      assert.deepEqual(await pool.fingerprintMany(pages.slice(0, 1)), want.slice(0, 1), 'the pool survives a bad batch');
    } finally {
      await pool.close();
    }
    await assert.rejects(pool.fingerprintMany(pages));
  });

  it('validates options in the calling thread', async () => {
    await assert.rejects(createFingerprintPool({ features: { shingleSize: 99 } }), { code: 'CONFIG_INVALID' });
  });
});
