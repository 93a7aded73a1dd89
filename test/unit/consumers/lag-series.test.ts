/**
 * dedup_consumer_lag_records keeps a series per input partition: after an
 * assignment, only the partitions this instance owns keep theirs, so two
 * instances never report the same partition. A property over generated
 * series and assignments, on a real prom-client registry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { forgetLagOfUnowned } from '../../../src/consumers/crawled-pages.consumer.js';

const state = { indexFingerprints: () => 0, indexBytes: () => 0, indexMemoryLimitBytes: () => 0, indexTables: () => 4, planCandidatesPerProbe: () => 0, ready: () => true };

test('after an assignment, lag series remain exactly for the owned partitions of the pages topic; other topics are untouched', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.record({ topic: fc.constantFrom('pages', 'other'), partition: fc.integer({ min: 0, max: 11 }), lag: fc.nat(1000) }), { selector: (s) => `${s.topic}:${s.partition}`, maxLength: 20 }),
      fc.uniqueArray(fc.integer({ min: 0, max: 11 }), { maxLength: 12 }),
      async (series, owned) => {
        const metrics = createMetrics(new Registry(), state, { defaultMetrics: false });
        for (const s of series) metrics.consumerLag.set({ topic: s.topic, partition: String(s.partition) }, s.lag);
        await forgetLagOfUnowned(metrics.consumerLag, 'pages', owned);
        const left = (await metrics.consumerLag.get()).values.map((v) => `${v.labels.topic}:${v.labels.partition}=${v.value}`).sort();
        const expected = series.filter((s) => s.topic !== 'pages' || owned.includes(s.partition)).map((s) => `${s.topic}:${s.partition}=${s.lag}`).sort();
        assert.deepEqual(left, expected);
      },
    ),
  );
});
