/**
 * What integration tests need from the real stack that scripts/test.sh starts
 * (deploy/local/up.sh): addresses from the environment, unique names, topic
 * set-up and clean-up, polling waits with deadlines, and a read_committed
 * reader. No fakes: every call here talks to the real broker.
 */
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Admin, type IHeaders } from 'kafkajs';
import { useFastCrc32cInKafkajs } from '../../src/kafka/kafkajs-crc32c.js';

export interface Infra {
  brokers: string[];
  registryUrl: string;
  prometheusUrl: string;
  metricsPort: number;
}

/** Fails (never skips) when the stack is missing: run the suite with `npm test`. */
export function requireInfra(): Infra {
  const brokers = process.env.KAFKA_BROKERS;
  const registryUrl = process.env.SCHEMA_REGISTRY_URL;
  if (!brokers || !registryUrl) {
    throw new Error('integration tests need the local stack: run them with `npm test` (it starts Kafka, the registry and Prometheus)');
  }
  return {
    brokers: brokers.split(','),
    registryUrl,
    prometheusUrl: process.env.PROMETHEUS_URL ?? '',
    metricsPort: Number(process.env.METRICS_PORT ?? 0),
  };
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

/** The pipeline's five topics under one run prefix, as the DEDUP_* variables that name them. */
export function runTopics(run: string) {
  return {
    DEDUP_PAGES_TOPIC: `${run}.pages`,
    DEDUP_NOVEL_TOPIC: `${run}.novel`,
    DEDUP_DUPLICATE_TOPIC: `${run}.duplicate`,
    DEDUP_DEAD_LETTER_TOPIC: `${run}.dlq`,
    DEDUP_FINGERPRINTS_TOPIC: `${run}.fingerprints`,
  };
}

/** The settings every pipeline process of a test run shares: the broker, the registry, the group and a state directory. */
export function pipelineEnv(infra: Infra, run: string, stateDir: string, instanceId = 'dedup-0'): Record<string, string> {
  return {
    DEDUP_BROKERS: infra.brokers.join(','),
    DEDUP_SCHEMA_REGISTRY_URL: infra.registryUrl,
    DEDUP_GROUP_ID: `${run}-group`,
    DEDUP_INSTANCE_ID: instanceId,
    DEDUP_STATE_DIR: stateDir,
    DEDUP_EXPECTED_FINGERPRINTS: '100000',
  };
}

export function testKafka(infra: Infra, clientId = 'dedup-test'): Kafka {
  // The same CRC-32C as the product's clients, whichever client produces first in this process.
  useFastCrc32cInKafkajs();
  return new Kafka({ clientId, brokers: infra.brokers, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 50 } });
}

export async function createTopics(admin: Admin, topics: { topic: string; partitions?: number; compact?: boolean; maxMessageBytes?: number }[]): Promise<void> {
  await admin.createTopics({
    waitForLeaders: true,
    topics: topics.map((t) => ({
      topic: t.topic,
      numPartitions: t.partitions ?? 1,
      replicationFactor: 1,
      configEntries: [
        ...(t.compact ? [{ name: 'cleanup.policy', value: 'compact' }] : []),
        ...(t.maxMessageBytes
          ? [
              { name: 'max.message.bytes', value: String(t.maxMessageBytes) },
              { name: 'segment.bytes', value: String(Math.max(64 * 1024 * 1024, 2 * t.maxMessageBytes)) },
            ]
          : []),
      ],
    })),
  });
}

export async function deleteTopics(kafka: Kafka, topics: string[]): Promise<void> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.deleteTopics({ topics, timeout: 10_000 });
  } catch {
    // best effort: a leftover test topic is harmless on a throwaway broker
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Polls until `check` returns a value other than undefined, or fails at the deadline with `what`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export interface ReadRecord {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
}

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.map(String).join(',') : Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
  }
  return out;
}

/**
 * Reads every committed record of `topics` from the beginning (read_committed,
 * as a downstream consumer would) until `done(records)` holds or the deadline
 * passes, then keeps reading for `settleMs` more so extra (duplicate) records
 * would be seen too.
 */
export async function readCommitted(
  infra: Infra,
  topics: string[],
  done: (records: ReadRecord[]) => boolean,
  options: { timeoutMs?: number; settleMs?: number } = {},
): Promise<ReadRecord[]> {
  const kafka = testKafka(infra, 'dedup-test-reader');
  const consumer = kafka.consumer({ groupId: uniqueName('reader'), readUncommitted: false, maxBytesPerPartition: 16 * 1024 * 1024 });
  const records: ReadRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        records.push({ topic, partition, offset: message.offset, key: message.key?.toString('utf8') ?? null, value: message.value, headers: headersToStrings(message.headers) });
      },
    });
    await waitFor(`${topics.join(', ')} to hold the expected records (have ${records.length})`, () => (done(records) ? true : undefined), options.timeoutMs ?? 120_000, 250);
    await new Promise((resolve) => setTimeout(resolve, options.settleMs ?? 1500));
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/** Scrapes a Prometheus text endpoint and returns sample values by full series name (`name{labels}`). */
export async function scrapeMetrics(url: string): Promise<Map<string, number>> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  const text = await response.text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.length === 0 || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** Sum of all samples of one metric (any labels). */
export function metricSum(samples: Map<string, number>, name: string, labelFilter = ''): number {
  let sum = 0;
  for (const [series, value] of samples) {
    if ((series === name || series.startsWith(`${name}{`)) && series.includes(labelFilter)) sum += value;
  }
  return sum;
}

export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
