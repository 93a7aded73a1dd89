/**
 * Input partitions do not wait for one another, on the real broker: while
 * one partition works off a backlog of thousands of pages, a page sent to
 * another partition gets its verdict long before that backlog is done. When
 * each partition's chunks were committed one after another, and the next
 * fetch waited for the whole backlog batch, the page waited for all of it.
 * Exactly once still holds: every page ends in exactly one verdict.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTopics, deleteTopics, freePort, readCommitted, requireInfra, runTopics, testKafka, uniqueName, waitFor } from '../support/infra.js';
import { startPipelineProcess, type PipelineProcess } from '../support/pipeline-process.js';

const BACKLOG = 2000;
const PROBES = 3;

const WORDS = 'river stone garden window letter morning silver harbor candle meadow thunder pocket ladder mirror forest cotton bridge lantern orchard velvet'.split(' ');

/** A short text page, different from every other (a pseudo-random word sequence per id). */
function page(id: string, n: number): Buffer {
  let x = n * 2654435761 + 12345;
  const words: string[] = [];
  for (let i = 0; i < 40; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    words.push(`${WORDS[x % WORDS.length]}${(x >>> 8) % 97}`);
  }
  return Buffer.from(JSON.stringify({ id, url: `https://example.test/${id}`, fetchedAt: Date.now(), text: words.join(' ') }));
}

test('a backlog on one partition does not hold back another partition’s verdicts', { timeout: 600_000 }, async (t) => {
  const infra = requireInfra();
  const run = uniqueName('parts');
  const topics = runTopics(run);
  const kafka = testKafka(infra);
  const admin = kafka.admin();
  await admin.connect();
  // The outputs exist before the pipeline starts, so the changelog follower is in place first.
  await createTopics(admin, [
    { topic: topics.DEDUP_PAGES_TOPIC, partitions: 2 },
    { topic: topics.DEDUP_NOVEL_TOPIC },
    { topic: topics.DEDUP_DUPLICATE_TOPIC },
    { topic: topics.DEDUP_DEAD_LETTER_TOPIC },
    { topic: topics.DEDUP_FINGERPRINTS_TOPIC, compact: true },
  ]);
  await admin.disconnect();
  const stateDir = await mkdtemp(join(tmpdir(), 'dedup-parts-'));
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const follower = kafka.consumer({ groupId: `${run}-follower`, readUncommitted: false, maxWaitTimeInMs: 50 });
  let pipeline: PipelineProcess | null = null;
  try {
    await producer.connect();
    // The backlog, all on partition 0, in place before the pipeline starts:
    // small pages, so that one fetch returns all of it as one batch.
    const backlog = Array.from({ length: BACKLOG }, (_, i) => ({ key: `backlog-${i}`, value: page(`backlog-${i}`, i), partition: 0 }));
    for (let i = 0; i < backlog.length; i += 200) await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: backlog.slice(i, i + 200) });

    // The changelog has one partition, written in commit order: a probe's
    // place in it says how much of the backlog was committed before it.
    const visibleAt = new Map<string, number>();
    let backlogVisible = 0;
    const backlogBefore = new Map<string, number>();
    await follower.connect();
    await follower.subscribe({ topics: [topics.DEDUP_FINGERPRINTS_TOPIC], fromBeginning: true });
    await follower.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const now = Date.now();
        for (const m of batch.messages) {
          const key = m.key?.toString('utf8') ?? '';
          if (visibleAt.has(key)) continue;
          visibleAt.set(key, now);
          if (key.startsWith('backlog-')) backlogVisible++;
          else backlogBefore.set(key, backlogVisible);
        }
      },
    });

    pipeline = startPipelineProcess(
      {
        ...topics,
        DEDUP_BROKERS: infra.brokers.join(','),
        DEDUP_GROUP_ID: `${run}-group`,
        DEDUP_STATE_DIR: stateDir,
        DEDUP_EXPECTED_FINGERPRINTS: '100000',
        // Many small transactions: working off the backlog takes seconds.
        DEDUP_MAX_BATCH_RECORDS: '10',
        DEDUP_FINGERPRINT_THREADS: '1',
      },
      await freePort(),
    );
    await pipeline.waitReady();
    await waitFor('the backlog to be under way', () => (backlogVisible > 0 ? true : undefined), 120_000, 20);

    // Probe pages on partition 1, one at a time, while the backlog runs.
    const probeLatencies: number[] = [];
    for (let i = 0; i < PROBES && backlogVisible < BACKLOG; i++) {
      const key = `probe-${i}`;
      const sent = Date.now();
      await producer.send({ topic: topics.DEDUP_PAGES_TOPIC, acks: -1, messages: [{ key, value: page(key, BACKLOG + i), partition: 1 }] });
      await waitFor(`the verdict of ${key}`, () => (visibleAt.has(key) ? true : undefined), 300_000, 10);
      probeLatencies.push(visibleAt.get(key)! - sent);
    }
    const behind = [...backlogBefore.values()];
    t.diagnostic(`backlog pages committed before each probe: ${behind.join(', ')} of ${BACKLOG}; probe latencies ${probeLatencies.join(', ')} ms`);
    assert.ok(behind.length > 0, `the backlog was done before a probe could be sent (${backlogVisible} of ${BACKLOG})`);
    // Before, each probe was committed only after the whole backlog batch
    // (BACKLOG pages); now the backlog is still far from done.
    for (const before of behind) {
      assert.ok(before < BACKLOG * 0.9, `a probe's verdict waited for the backlog: ${before} of ${BACKLOG} backlog pages were committed before it (probe latencies ${probeLatencies.join(', ')} ms)`);
    }

    // Exactly once: every page, one verdict.
    const out = await readCommitted(infra, [topics.DEDUP_NOVEL_TOPIC, topics.DEDUP_DUPLICATE_TOPIC, topics.DEDUP_DEAD_LETTER_TOPIC], (r) => r.length >= BACKLOG + behind.length, { timeoutMs: 300_000, settleMs: 2000 });
    const keys = out.map((r) => r.key);
    assert.equal(keys.length, BACKLOG + behind.length, 'one record per page, none repeated');
    assert.equal(new Set(keys).size, keys.length);
  } finally {
    await follower.disconnect().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    pipeline?.child.kill('SIGKILL');
    await deleteTopics(kafka, Object.values(topics));
    await rm(stateDir, { recursive: true, force: true });
  }
});
