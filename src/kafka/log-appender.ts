/**
 * Appends records to the sharded pipeline's internal logs (the sequence, the
 * answers, the shard changelogs) with an idempotent, non-transactional
 * producer, and says at which offsets they landed.
 *
 * Why not transactions: everything written here is a deterministic function of
 * the sequence log, so writing it twice is harmless (a shard that replays the
 * sequence writes the same hits, the same watermarks, the same changelog
 * entries; a page appended twice is recognised by its home shard). Exactly
 * once is where the reader can see it: the verdicts, whose transaction also
 * commits the input offsets (src/kafka/verdict-producer.ts).
 *
 * Requests are serialised and coalesced: callers append concurrently (one per
 * input partition), the appender sends whatever is queued as one request, so
 * the single-partition sequence sees few, large batches, and offsets come back
 * as base offset + position (one batch per partition per request). An idle
 * appender waits for the current turn of the event loop to end before it
 * sends, so appends made in the same turn share the first request too: each
 * request costs the client and the broker far more than its records.
 */
import type { Kafka, Producer } from 'kafkajs';
import { DedupError } from '../errors.js';
import { IDEMPOTENT_PRODUCER_RETRY } from './client.js';

export interface LogRecord {
  readonly topic: string;
  readonly partition: number;
  readonly key: string | null;
  readonly value: Buffer;
  readonly headers?: Record<string, string>;
}

interface Queued {
  records: readonly LogRecord[];
  resolve: (offsets: number[]) => void;
  reject: (error: unknown) => void;
}

/** A record batch must stay under the topic's max.message.bytes; internal topics get 8 MiB, requests stay well below. */
const MAX_REQUEST_BYTES = 1024 * 1024;

export interface LogAppender {
  connect(): Promise<void>;
  /** Appends in order; resolves with each record's offset once acknowledged by all in-sync replicas. */
  append(records: readonly LogRecord[]): Promise<number[]>;
  disconnect(): Promise<void>;
}

export function createLogAppender(kafka: Kafka): LogAppender {
  const producer: Producer = kafka.producer({ idempotent: true, retry: IDEMPOTENT_PRODUCER_RETRY, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  const queue: Queued[] = [];
  let sending = false;
  let scheduled = false;

  async function pump(): Promise<void> {
    if (sending) return;
    sending = true;
    try {
      while (queue.length > 0) {
        const taken: Queued[] = [];
        let bytes = 0;
        while (queue.length > 0 && (taken.length === 0 || bytes + size(queue[0]!.records) <= MAX_REQUEST_BYTES)) {
          const next = queue.shift()!;
          bytes += size(next.records);
          taken.push(next);
        }
        const byTopic = new Map<string, { key: string | null; value: Buffer; partition: number; headers?: Record<string, string> }[]>();
        for (const q of taken) {
          for (const r of q.records) {
            let list = byTopic.get(r.topic);
            if (!list) byTopic.set(r.topic, (list = []));
            list.push({ key: r.key, value: r.value, partition: r.partition, ...(r.headers ? { headers: r.headers } : {}) });
          }
        }
        try {
          const metadata = await producer.sendBatch({ acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
          const base = new Map<string, number>();
          for (const m of metadata) base.set(`${m.topicName}\u0000${m.partition}`, Number(m.baseOffset));
          const next = new Map<string, number>();
          for (const q of taken) {
            const offsets = q.records.map((r) => {
              const at = `${r.topic}\u0000${r.partition}`;
              const offset = next.get(at) ?? base.get(at) ?? -1;
              next.set(at, offset + 1);
              return offset;
            });
            q.resolve(offsets);
          }
        } catch (error) {
          const failure = new DedupError('KAFKA', `appending to ${[...byTopic.keys()].join(', ')} failed: ${(error as Error).message}`, { cause: error, retriable: false });
          for (const q of taken) q.reject(failure);
        }
      }
    } finally {
      sending = false;
    }
  }

  return {
    async connect() {
      await producer.connect();
    },
    append(records) {
      if (records.length === 0) return Promise.resolve([]);
      return new Promise<number[]>((resolve, reject) => {
        queue.push({ records, resolve, reject });
        // Sent once the current callbacks are through: appends made in the same turn (several
        // input partitions' chunks, a fetch's replies) go as one request, not one each.
        if (!sending && !scheduled) {
          scheduled = true;
          setImmediate(() => {
            scheduled = false;
            void pump();
          });
        }
      });
    },
    async disconnect() {
      await producer.disconnect();
    },
  };
}

function size(records: readonly LogRecord[]): number {
  let bytes = 0;
  for (const r of records) bytes += r.value.length + (r.key?.length ?? 0) + 64;
  return bytes;
}
