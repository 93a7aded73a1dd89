/**
 * dedup_routed_bytes_total and dedup_routed_records_total export what routed
 * mode's owner and holder counted (countWritten, countRead), by direction and
 * record kind: a scrape after any sequence of records read and written gives
 * their sums, and a later scrape never less (what the coordination bench reads
 * at the start and the end of its window). A property over generated records,
 * on a real prom-client registry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { addTraffic, countRead, countWritten, newTraffic, routedTrafficCounts } from '../../../src/kafka/routed-holder.js';
import { encodeOrder } from '../../../src/wire/routed-records.js';

const state = { indexFingerprints: () => 0, indexBytes: () => 0, indexMemoryLimitBytes: () => 0, indexTables: () => 4, planCandidatesPerProbe: () => 0, ready: () => true };

/** A record of kind 'order' (a real routed record) or counted as the id store's (a value that is no routed record: its first byte is no version). */
const recordArb = fc.record({
  owner: fc.boolean(),
  read: fc.boolean(),
  order: fc.boolean(),
  key: fc.option(fc.string({ maxLength: 12 }), { nil: null }),
  pages: fc.integer({ min: 1, max: 500 }),
  junk: fc.uint8Array({ minLength: 0, maxLength: 40 }),
});

async function scrape(registry: Registry): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await registry.metrics()).split('\n')) {
    const m = /^(dedup_routed_(?:bytes|records)_total)\{direction="(\w+)",kind="([^"]+)"\} (\S+)$/.exec(line);
    if (m) out.set(`${m[1]}|${m[2]}|${m[3]}`, Number(m[4]));
  }
  return out;
}

test('the routed traffic metrics sum the records counted, by direction and kind, and only grow', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(recordArb, { maxLength: 40 }), fc.integer({ min: 0, max: 40 }), async (records, cut) => {
      const owner = newTraffic();
      const holder = newTraffic();
      const registry = new Registry();
      createMetrics(registry, { ...state, routedTraffic: () => routedTrafficCounts(addTraffic(owner, holder)) }, { defaultMetrics: false });
      const expected = new Map<string, number>();
      const add = (key: string, n: number) => expected.set(key, (expected.get(key) ?? 0) + n);
      let before = new Map<string, number>();
      for (const [i, r] of records.entries()) {
        if (i === cut) before = await scrape(registry);
        const value = r.order ? encodeOrder({ chunk: { inputPartition: 1, firstOffset: 7n, attempt: 3 }, pages: r.pages, span: r.pages, touched: [0, 2], partitions: 4 }) : Buffer.from([0xff, ...r.junk]);
        const kind = r.order ? 'order' : 'ids';
        const bytes = value.length + (r.key === null ? 0 : Buffer.byteLength(r.key));
        const traffic = r.owner ? owner : holder;
        if (r.read) countRead(traffic, { key: r.key === null ? null : Buffer.from(r.key), value });
        else countWritten(traffic, [{ key: r.key, value }]);
        const direction = r.read ? 'read' : 'written';
        add(`dedup_routed_bytes_total|${direction}|${kind}`, bytes);
        add(`dedup_routed_records_total|${direction}|${kind}`, 1);
      }
      const after = await scrape(registry);
      assert.deepEqual(after, expected);
      for (const [key, value] of before) assert.ok((after.get(key) ?? 0) >= value, `${key} fell from ${value} to ${after.get(key)}`);
    }),
  );
});

test('without routed mode the routed traffic metrics export no series', async () => {
  const registry = new Registry();
  createMetrics(registry, state, { defaultMetrics: false });
  assert.equal((await scrape(registry)).size, 0);
});
