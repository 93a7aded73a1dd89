/**
 * Input for the benchmark: seeded pages encoded once as the crawler would send
 * them (Avro through the schema registry, the product's codec), topics created
 * with the settings the pipeline gives its own large-record topics, and
 * pre-loading in acks=all batches.
 */
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import { createRecordCodec, type RecordCodec } from '../../src/wire/record-codec.js';
import { benchPages, type PageSetOptions } from './pages.js';
import { largeTopicConfig, withAdmin, type Stack } from './common.js';

export interface EncodedPages {
  keys: string[];
  values: Buffer[];
  htmlBytes: number[];
  valueBytes: number;
  kinds: Record<string, number>;
}

export async function benchCodec(stack: Stack, topics: { pagesTopic: string; novelTopic: string; duplicateTopic: string; fingerprintsTopic: string }, maxPageBytes: number): Promise<RecordCodec> {
  const registry = new SchemaRegistry({ host: stack.registryUrl, clientId: 'dedup-bench' });
  return createRecordCodec({ registry, format: 'avro', topics, maxPageBytes });
}

export async function encodePages(codec: RecordCodec, options: PageSetOptions): Promise<EncodedPages> {
  const pages = benchPages(options);
  const keys: string[] = [];
  const values: Buffer[] = [];
  const htmlBytes: number[] = [];
  const kinds: Record<string, number> = {};
  let valueBytes = 0;
  for (const p of pages) {
    const value = await codec.encodePage({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html, text: null });
    keys.push(p.id);
    values.push(value);
    htmlBytes.push(Buffer.byteLength(p.html));
    valueBytes += value.length;
    kinds[p.kind] = (kinds[p.kind] ?? 0) + 1;
  }
  return { keys, values, htmlBytes, valueBytes, kinds };
}

export async function createInputTopic(kafka: Kafka, topic: string, partitions: number, maxPageBytes: number): Promise<void> {
  await withAdmin(kafka, (admin) =>
    admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries: largeTopicConfig(maxPageBytes) }],
    }),
  );
}

/**
 * Sends every page once (keys spread them over the partitions); returns
 * seconds taken. Sends are kept small, as a crawler's would be: the broker
 * returns whole record batches, so 2 MB batches would cap every fetch of
 * the pipeline's 4 MiB per partition at one batch, and so its transactions.
 */
export async function preload(kafka: Kafka, topic: string, pages: EncodedPages, batchBytes = 512 * 1024): Promise<number> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const started = performance.now();
  try {
    let batch: { key: string; value: Buffer }[] = [];
    let bytes = 0;
    for (let i = 0; i < pages.values.length; i++) {
      batch.push({ key: pages.keys[i]!, value: pages.values[i]! });
      bytes += pages.values[i]!.length;
      if (bytes >= batchBytes || i === pages.values.length - 1) {
        await producer.send({ topic, acks: -1, messages: batch });
        batch = [];
        bytes = 0;
      }
    }
  } finally {
    await producer.disconnect();
  }
  return (performance.now() - started) / 1000;
}
