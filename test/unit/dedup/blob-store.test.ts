/**
 * The tier's blob stores against a plain byte array: appends of any size
 * (across the file store's write buffer and the memory store's pages) read
 * back from any position.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { MemoryBlobStore, type BlobStore } from '../../../src/dedup/blob-store.js';
import { FileBlobStore } from '../../../src/storage/file-blob-store.js';

const dir = mkdtempSync(join(tmpdir(), 'blob-store-test-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
let files = 0;

for (const [name, make] of [
  ['memory', () => new MemoryBlobStore()],
  ['file', () => new FileBlobStore(join(dir, `blob-${++files}`), true)],
] as [string, () => BlobStore][]) {
  test(`property: the ${name} blob store reads back what was appended, at any position`, () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 300_000 }), fc.integer({ min: 0, max: 255 }), fc.nat()), { minLength: 1, maxLength: 12 }), (ops) => {
        const store = make();
        const all: number[] = [];
        for (const [length, fill, at] of ops) {
          const bytes = new Uint8Array(length);
          for (let i = 0; i < length; i++) bytes[i] = (fill + i * 13) & 0xff;
          assert.equal(store.append(bytes), all.length);
          for (const b of bytes) all.push(b);
          assert.equal(store.byteLength, all.length);
          if (all.length === 0) continue;
          const from = at % all.length;
          const into = new Uint8Array(Math.min(all.length - from, 1 + (at % 70_000)));
          store.read(from, into);
          assert.deepEqual([...into], all.slice(from, from + into.length));
        }
        assert.throws(() => store.read(all.length, new Uint8Array(1)), RangeError);
        (store as { close?: () => void }).close?.();
      }),
      { numRuns: 25 },
    );
  });
}
