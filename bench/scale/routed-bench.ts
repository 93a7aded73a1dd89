/**
 * What the routed benches on the broker share (coordination.ts,
 * routed-restore.ts): a run's topics under one prefix, its input topic made,
 * the environment of a routed instance, and the wait until the group has
 * committed every page sent.
 */
import type { Admin } from 'kafkajs';
import { demoPages } from '../../src/producers/demo-pages.js';
import { largeTopicConfig, waitFor, type Stack } from '../pipeline/common.js';

/** The topics of one run, as the instances' DEDUP_*_TOPIC settings. */
export function routedTopics(run: string): Record<string, string> {
  return {
    DEDUP_PAGES_TOPIC: `${run}.pages`,
    DEDUP_NOVEL_TOPIC: `${run}.novel`,
    DEDUP_DUPLICATE_TOPIC: `${run}.duplicate`,
    DEDUP_DEAD_LETTER_TOPIC: `${run}.dlq`,
    DEDUP_FINGERPRINTS_TOPIC: `${run}.fingerprints`,
    DEDUP_INDEX_TOPIC: `${run}.index`,
    DEDUP_ORDER_TOPIC: `${run}.order`,
    DEDUP_REPLIES_TOPIC: `${run}.replies`,
    DEDUP_IDS_TOPIC: `${run}.ids`,
  };
}

/** Makes the input topic (the instances make the others); a busy broker can refuse a fresh topic's metadata for a moment, so it asks again. */
export async function createPagesTopic(admin: Admin, topic: string, partitions: number, replication = 1): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions, replicationFactor: replication, configEntries: largeTopicConfig(4 * 1024 * 1024) }] });
      return;
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
}

/** A routed instance's environment over `topics` (instance id, state directory and metrics port apart). */
export function routedEnv(stack: Stack, run: string, topics: Record<string, string>, options: { inputPartitions: number; indexPartitions: number; expectedFingerprints: number }): Record<string, string> {
  return {
    ...topics,
    DEDUP_MODE: 'routed',
    DEDUP_INDEX_PARTITIONS: String(options.indexPartitions),
    DEDUP_TOPIC_PARTITIONS: String(options.inputPartitions),
    DEDUP_BROKERS: stack.brokers.join(','),
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_EXPECTED_FINGERPRINTS: String(options.expectedFingerprints),
    DEDUP_METRICS_HOST: '127.0.0.1',
    DEDUP_LOG_LEVEL: 'info',
  };
}

/** Waits until the group has committed `count` records of `topic` in all. */
export async function waitAllCommitted(admin: Admin, groupId: string, topic: string, count: number, timeoutMs: number, intervalMs = 100): Promise<void> {
  await waitFor('every page committed', async () => {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const done = (t?.partitions ?? []).reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
    return done >= count ? true : undefined;
  }, timeoutMs, intervalMs);
}

/** `count` demo pages from the feed of `seed`, as the JSON records a crawler sends, with their keys (the page ids). */
export function demoRecords(count: number, seed: number): { keys: string[]; pages: Buffer[] } {
  const feed = demoPages({ seed });
  const keys: string[] = [];
  const pages: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const p = feed.next().value!;
    keys.push(p.id);
    pages.push(Buffer.from(JSON.stringify({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html })));
  }
  return { keys, pages };
}
