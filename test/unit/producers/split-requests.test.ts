import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitRequests } from '../../../src/kafka/verdict-producer.js';

const msg = (bytes: number, key = 'k') => ({ key, value: Buffer.alloc(bytes) });

test('a transaction is cut into requests under the byte bound, order kept per topic', () => {
  const input = new Map([
    ['novel', [msg(400_000, 'a'), msg(400_000, 'b'), msg(400_000, 'c')]],
    ['dup', [msg(100, 'd')]],
    ['dlq', [msg(3_000_000, 'e')]],
  ]);
  const requests = splitRequests(input, 1_000_000);
  const flat = requests.flatMap((r) => r.flatMap((t) => t.messages.map((m) => `${t.topic}:${String(m.key)}`)));
  assert.deepEqual(flat, ['novel:a', 'novel:b', 'novel:c', 'dup:d', 'dlq:e']);
  for (const request of requests) {
    const bytes = request.reduce((sum, t) => sum + t.messages.reduce((s, m) => s + m.value.length, 0), 0);
    const single = request.length === 1 && request[0]!.messages.length === 1;
    assert.ok(bytes <= 1_000_000 || single, `request of ${bytes} bytes holds more than one oversized record`);
  }
  assert.equal(requests.length, 3);
  assert.deepEqual(splitRequests(new Map()), []);
});
