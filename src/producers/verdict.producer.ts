/**
 * The transactional producer: verdicts, dead letters, changelog entries and
 * the consumed offsets of one chunk commit atomically, or not at all. With a
 * read_committed downstream this is exactly-once: a verdict is visible iff the
 * input offset behind it is committed, so a restart neither loses nor repeats
 * a visible verdict.
 *
 * The transactional id is stable per instance (<groupId>-<instanceId>): a
 * restarted instance fences its zombie predecessor and aborts its open
 * transaction.
 */
import type { Kafka, Producer } from 'kafkajs';
import { DedupError } from '../errors.js';
import type { OutputMessage } from '../consumers/page-batch-processor.js';

export interface CommittedOffsets {
  topic: string;
  partition: number;
  /** The next offset to consume (last decided + 1). */
  offset: string;
}

export interface VerdictProducer {
  /** Connects and fences older producers with the same transactional id. */
  connect(): Promise<void>;
  commit(topicMessages: Map<string, OutputMessage[]>, consumerGroupId: string, offsets: CommittedOffsets): Promise<void>;
  disconnect(): Promise<void>;
}

/** kafkajs error names that mean another producer took over: never retry, stop. */
const FENCED = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);

function isFenced(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown; originalError?: unknown }).cause ?? (e as { originalError?: unknown }).originalError) {
    if (FENCED.has((e as { type?: string }).type ?? '')) return true;
  }
  return false;
}

export function createVerdictProducer(kafka: Kafka, transactionalId: string): VerdictProducer {
  const producer: Producer = kafka.producer({
    transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: 60_000,
    allowAutoTopicCreation: false,
  });
  return {
    async connect() {
      try {
        await producer.connect();
        // kafkajs runs InitProducerId (which fences and aborts the zombie's
        // open transaction) on the first transaction(); do it now, before the
        // changelog is replayed, so replay reads up to a stable end.
        const transaction = await producer.transaction();
        await transaction.abort();
      } catch (error) {
        throw new DedupError('KAFKA', `transactional producer ${transactionalId} failed to start: ${(error as Error).message}`, { cause: error, retriable: true });
      }
    },
    async commit(topicMessages, consumerGroupId, offsets) {
      const transaction = await producer.transaction();
      try {
        if (topicMessages.size > 0) {
          await transaction.sendBatch({
            acks: -1,
            topicMessages: [...topicMessages].map(([topic, messages]) => ({ topic, messages })),
          });
        }
        await transaction.sendOffsets({
          consumerGroupId,
          topics: [{ topic: offsets.topic, partitions: [{ partition: offsets.partition, offset: offsets.offset }] }],
        });
        await transaction.commit();
      } catch (error) {
        await transaction.abort().catch(() => undefined);
        const fenced = isFenced(error);
        throw new DedupError('KAFKA', `transaction failed${fenced ? ' (fenced by a newer instance)' : ''}: ${(error as Error).message}`, {
          cause: error,
          retriable: !fenced,
          details: { fenced },
        });
      }
    },
    async disconnect() {
      await producer.disconnect();
    },
  };
}
