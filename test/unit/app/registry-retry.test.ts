/**
 * The pause between start-up attempts at a schema registry that does not
 * answer: it starts at 1 s, doubles, and never exceeds its cap, so an outage
 * of any length is waited out without hammering the registry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { registryRetryDelayMs } from '../../../src/app/pipeline.js';

test('registry start-up retries: 1 s first, doubling, capped, for any attempt count', () => {
  assert.equal(registryRetryDelayMs(1), 1000);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 5000, max: 120_000 }), (attempt, first, cap) => {
      const now = registryRetryDelayMs(attempt, first, cap);
      const next = registryRetryDelayMs(attempt + 1, first, cap);
      assert.ok(now >= Math.min(first, cap) && now <= cap, `attempt ${attempt}: ${now} ms`);
      assert.ok(next === cap || next === 2 * now, `attempt ${attempt + 1}: ${next} ms after ${now} ms`);
      assert.ok(Number.isFinite(next));
    }),
  );
});
