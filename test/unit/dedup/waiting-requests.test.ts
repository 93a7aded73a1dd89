/**
 * An index partition's waiting round-two requests (waiting-requests.ts): handed out as a plain
 * filter would, in the order they came, and looked at again only once the partition is past the
 * least need among them, so a replay that asks after every order record does not look at every
 * waiting request every time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { WaitingRequests } from '../../../src/dedup/waiting-requests.js';

interface Request { id: number; need: number }

test('requests come out as a plain filter gives them: those below the position, in the order they came', () => {
  const op = fc.oneof(fc.record({ push: fc.integer({ min: 0, max: 200 }) }), fc.record({ advance: fc.integer({ min: 0, max: 30 }) }));
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
      const waiting = new WaitingRequests<Request>((r) => r.need);
      let model: Request[] = [];
      let position = 0;
      let id = 0;
      for (const o of ops) {
        if ('push' in o) {
          const r = { id: id++, need: o.push };
          waiting.push(r);
          model.push(r);
        } else {
          position += o.advance;
          const expected = model.filter((r) => r.need < position);
          model = model.filter((r) => r.need >= position);
          assert.deepEqual(waiting.takeReady(position), expected);
          assert.equal(waiting.size, model.length);
        }
      }
    }),
    { numRuns: 500 },
  );
});

test('requests far ahead are looked at once, not again at every ask before the partition gets there', () => {
  const waiting = new WaitingRequests<Request>((r) => r.need);
  for (let i = 0; i < 1000; i++) waiting.push({ id: i, need: 1_000_000 + i });
  // A replay asks after each of 1,000 order records, far below what the requests need.
  for (let position = 1; position <= 1000; position++) assert.deepEqual(waiting.takeReady(position), []);
  // Looking at all of them at every ask would read 1,000,000 needs.
  assert.equal(waiting.needsRead, 1000);
  // A new request is looked at, and the others with it, at the next ask; then nothing until the least need.
  waiting.push({ id: 1000, need: 5 });
  assert.deepEqual(waiting.takeReady(1001), [{ id: 1000, need: 5 }]);
  assert.equal(waiting.needsRead, 2001);
  assert.deepEqual(waiting.takeReady(1_000_000), []);
  assert.equal(waiting.needsRead, 2001);
  assert.deepEqual(waiting.takeReady(1_000_001).map((r) => r.id), [0]);
  assert.equal(waiting.size, 999);
});
