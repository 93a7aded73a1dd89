/**
 * Reads one partition of a topic from an offset to the end it has when the
 * read begins (read_committed), record by record: how routed mode restores an
 * input partition's id store and finds the chunks a previous owner ordered.
 *
 * kafkajs has no manual assignment: a throwaway consumer group of one member
 * gets every partition; the others start at their end and are never read.
 * Offsets are never committed for it.
 */
import type { Kafka } from 'kafkajs';
import { DedupError } from '../errors.js';
import { endOffsets } from './admin.js';

export interface PartitionMessage {
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, string>;
}

export async function readPartition(options: {
  kafka: Kafka;
  topic: string;
  partition: number;
  from: bigint;
  groupIdPrefix: string;
  onMessage: (message: PartitionMessage) => void;
  timeoutMs?: number;
}): Promise<{ records: number; end: bigint }> {
  const { kafka, topic, partition } = options;
  const end = BigInt((await endOffsets(kafka, topic))[String(partition)] ?? '0');
  if (options.from >= end) return { records: 0, end };
  const consumer = kafka.consumer({
    groupId: `${options.groupIdPrefix}-read-${process.pid}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e9).toString(36)}`,
    readUncommitted: false,
    maxBytesPerPartition: 16 * 1024 * 1024,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  });
  let records = 0;
  let failure: unknown = null;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let position = options.from;
  const advance = (lastOffset: string): void => {
    const next = BigInt(lastOffset) + 1n;
    if (next > position) position = next;
    if (position >= end) finish();
  };
  // Batches of only transaction markers reach us solely as this event.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    if (payload.topic === topic && payload.partition === partition) advance(payload.lastOffset);
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: false });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat }) => {
        if (batch.partition !== partition) return;
        try {
          for (const m of batch.messages) {
            if (BigInt(m.offset) < options.from || BigInt(m.offset) >= end) continue;
            const headers: Record<string, string> = {};
            for (const [k, v] of Object.entries(m.headers ?? {})) if (v !== undefined) headers[k] = String(Array.isArray(v) ? v[0] : v);
            options.onMessage({ offset: m.offset, key: m.key, value: m.value, headers });
            records++;
          }
        } catch (error) {
          failure = error;
          finish();
          return;
        }
        await heartbeat();
      },
    });
    consumer.seek({ topic, partition, offset: options.from.toString() });
    const timeout = options.timeoutMs ?? 10 * 60_000;
    const timer = setTimeout(() => {
      failure = new DedupError('KAFKA', `reading ${topic} partition ${partition} did not reach offset ${end} within ${timeout} ms`, { retriable: true });
      finish();
    }, timeout);
    await done;
    clearTimeout(timer);
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
  if (failure) throw failure instanceof DedupError ? failure : new DedupError('KAFKA', `reading ${topic} partition ${partition} failed: ${(failure as Error).message}`, { cause: failure });
  return { records, end };
}
