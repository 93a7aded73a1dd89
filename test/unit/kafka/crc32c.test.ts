/**
 * crc32c (src/kafka/crc32c.ts), the slicing-by-16 CRC-32C that kafkajs's
 * record batch encoder uses in its place: the published check value, and the
 * same value as kafkajs's own bytewise implementation (the oracle) on every
 * generated buffer: every length from 0 to 64 and longer ones up to a few
 * blocks past 4 KB, as Uint8Arrays, unaligned subarrays and Buffer slices at
 * any byteOffset.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { crc32c } from '../../../src/kafka/crc32c.js';

// kafkajs's function itself, not its index module (the one the product's clients replace).
const kafkajsCrc32c = createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (bytes: Uint8Array) => number;

test('the check value: CRC-32C("123456789") = 0xE3069283 (RFC 3720, B.4); and of no bytes, 0', () => {
  assert.equal(crc32c(Buffer.from('123456789', 'latin1')), 0xe3069283);
  assert.equal(kafkajsCrc32c(Buffer.from('123456789', 'latin1')), 0xe3069283);
  assert.equal(crc32c(new Uint8Array(0)), 0);
});

test('RFC 3720 B.4 vectors: 32 bytes of zeros, of ones, ascending and descending', () => {
  const ascending = Uint8Array.from({ length: 32 }, (_, i) => i);
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
  assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
  assert.equal(crc32c(ascending), 0x46dd794e);
  assert.equal(crc32c(ascending.slice().reverse()), 0x113fdb5c);
});

test('every length from 0 to 64 over the same bytes gives kafkajs\'s value', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 64, maxLength: 64 }), (bytes) => {
      for (let length = 0; length <= 64; length++) {
        const prefix = bytes.subarray(0, length);
        assert.equal(crc32c(prefix), kafkajsCrc32c(prefix), `length ${length}`);
      }
    }),
    { numRuns: 200 },
  );
});

test('unaligned subarrays and Buffer slices of any length up to 4 KB and a bit give kafkajs\'s value', () => {
  fc.assert(
    fc.property(
      // size 'max': lengths spread over the whole range, not fast-check's default of a few elements.
      fc.uint8Array({ minLength: 0, maxLength: 4200, size: 'max' }),
      fc.nat({ max: 4200 }),
      fc.nat({ max: 4200 }),
      (bytes, a, b) => {
        const start = Math.min(a, b, bytes.length);
        const end = Math.min(Math.max(a, b), bytes.length);
        const view = bytes.subarray(start, end);
        // A small Buffer from Buffer.from comes from the shared pool, at an arbitrary byteOffset.
        const pooled = Buffer.from(view);
        const slice = Buffer.concat([Buffer.alloc(start % 16), view]).subarray(start % 16);
        const expected = kafkajsCrc32c(view);
        assert.equal(crc32c(view), expected);
        assert.equal(crc32c(pooled), expected);
        assert.equal(crc32c(slice), expected);
      },
    ),
    { numRuns: 500 },
  );
});
