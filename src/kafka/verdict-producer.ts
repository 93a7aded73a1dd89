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
import type { Kafka } from 'kafkajs';
import { DedupError } from '../errors.js';
import { IDEMPOTENT_PRODUCER_RETRY } from './client.js';
import { producerWithCachedCoordinators } from './coordinator-cache.js';
import { RECORD_OVERHEAD_BYTES, type OutputMessage } from '../wire/output-record.js';

export interface CommittedOffsets {
  topic: string;
  partition: number;
  /** The next offset to consume (last decided + 1). */
  offset: string;
}

export interface VerdictProducer {
  /** Connects and fences older producers with the same transactional id. */
  connect(): Promise<void>;
  /**
   * Writes the messages and the consumed offsets (of one or more input
   * partitions) in one transaction. Resolves
   * with the last offset written per "topic:partition", so a snapshot can name
   * exactly what it includes even before the high watermark shows it.
   */
  commit(topicMessages: Map<string, OutputMessage[]>, consumerGroupId: string, offsets: readonly CommittedOffsets[]): Promise<Map<string, bigint>>;
  disconnect(): Promise<void>;
}

/** kafkajs error types that mean another producer took over: never retry, stop. */
const FENCED = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);
/** A record larger than an output topic accepts: retrying cannot help, and would stall the partition. */
const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

function errorTypeIn(error: unknown, types: Set<string>): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown; originalError?: unknown }).cause ?? (e as { originalError?: unknown }).originalError) {
    if (types.has((e as { type?: string }).type ?? '')) return true;
  }
  return false;
}

/**
 * kafkajs puts all of a request's records for one partition in ONE record
 * batch, and a batch larger than the topic's max.message.bytes is refused
 * whole. So a transaction's records go out in requests of at most this many
 * bytes: any output topic then takes them unless a single record is itself
 * over its limit.
 */
export const MAX_REQUEST_BYTES = 1024 * 1024;

type TopicMessages = { topic: string; messages: OutputMessage[] }[];

/** Cuts the messages into requests of at most MAX_REQUEST_BYTES (a larger single record gets a request of its own). */
export function splitRequests(topicMessages: Map<string, OutputMessage[]>, maxBytes = MAX_REQUEST_BYTES): TopicMessages[] {
  const requests: TopicMessages[] = [];
  let current: TopicMessages = [];
  let bytes = 0;
  for (const [topic, messages] of topicMessages) {
    let group: OutputMessage[] = [];
    for (const message of messages) {
      const size = message.value.length + (message.key?.length ?? 0) + 64;
      if (bytes + size > maxBytes && bytes > 0) {
        if (group.length > 0) current.push({ topic, messages: group });
        requests.push(current);
        current = [];
        group = [];
        bytes = 0;
      }
      group.push(message);
      bytes += size;
    }
    if (group.length > 0) current.push({ topic, messages: group });
  }
  if (current.length > 0) requests.push(current);
  return requests;
}

/**
 * The verdict producer's retry policy: IDEMPOTENT_PRODUCER_RETRY, with a first
 * pause of 2 ms, doubling (to the client's 5 s at most). A transaction begun
 * right after a commit meets CONCURRENT_TRANSACTIONS until the coordinator has
 * written the last one's markers, a few ms on a local broker; with the
 * client's 20 ms first pause, the wait was 20 to 75 ms on many transactions
 * (bench/scale latency trace, 224 pages/s), on the critical path of every
 * verdict behind it. Growing 1.5 times a retry, not 2, cost more refused
 * requests and more CPU for no shorter wait (docs/performance.md).
 */
export const TRANSACTION_RETRY = Object.freeze({ ...IDEMPOTENT_PRODUCER_RETRY, initialRetryTime: 2, multiplier: 2 });

/** How long a coordinator look-up is reused at most (src/kafka/coordinator-cache.ts); a failed request drops it sooner. */
const COORDINATOR_CACHE_MS = 10_000;

export interface VerdictProducerOptions {
  /** Told the kafkajs API name of each request the producer completes (kafkajs emits these only when listened to). */
  readonly onRequest?: (apiName: string) => void;
}

/**
 * @param maxRecordBytes the output topics' max.message.bytes: a request's
 *   batch for one partition must fit it too, so requests are cut at the
 *   smallest limit among the topics written (a topic left at Kafka's 1 MiB
 *   default, or set lower, would refuse a 1 MiB batch of small records).
 */
export function createVerdictProducer(
  kafka: Kafka,
  transactionalId: string,
  maxRecordBytes: ReadonlyMap<string, number> = new Map(),
  options: VerdictProducerOptions = {},
): VerdictProducer {
  const { producer } = producerWithCachedCoordinators(
    kafka,
    {
      transactionalId,
      idempotent: true,
      retry: TRANSACTION_RETRY,
      maxInFlightRequests: 1,
      transactionTimeout: 60_000,
      allowAutoTopicCreation: false,
    },
    COORDINATOR_CACHE_MS,
  );
  const { onRequest } = options;
  if (onRequest) producer.on(producer.events.REQUEST, (e) => onRequest(e.payload.apiName));
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
      const written = new Map<string, bigint>();
      try {
        let limit = MAX_REQUEST_BYTES;
        for (const topic of topicMessages.keys()) {
          const topicLimit = maxRecordBytes.get(topic);
          if (topicLimit !== undefined) limit = Math.min(limit, Math.max(1024, topicLimit - RECORD_OVERHEAD_BYTES));
        }
        for (const request of splitRequests(topicMessages, limit)) {
          const metadata = await transaction.sendBatch({ acks: -1, topicMessages: request });
          // Exact where a topic's messages of this request went to one
          // partition (the single-instance changelog); skipped otherwise.
          for (const m of metadata) {
            if (m.baseOffset === undefined || metadata.filter((x) => x.topicName === m.topicName).length !== 1) continue;
            const count = request.filter((r) => r.topic === m.topicName).reduce((n, r) => n + r.messages.length, 0);
            if (count > 0) written.set(`${m.topicName}:${m.partition}`, BigInt(m.baseOffset) + BigInt(count) - 1n);
          }
        }
        const topics = new Map<string, { partition: number; offset: string }[]>();
        for (const o of offsets) {
          const partitions = topics.get(o.topic) ?? [];
          partitions.push({ partition: o.partition, offset: o.offset });
          topics.set(o.topic, partitions);
        }
        await transaction.sendOffsets({ consumerGroupId, topics: [...topics].map(([topic, partitions]) => ({ topic, partitions })) });
        await transaction.commit();
        return written;
      } catch (error) {
        await transaction.abort().catch(() => undefined);
        const fenced = errorTypeIn(error, FENCED);
        const tooLarge = errorTypeIn(error, TOO_LARGE);
        const why = fenced
          ? ' (fenced by a newer instance)'
          : tooLarge
            ? ' (a record is larger than an output topic accepts: raise its max.message.bytes to at least 2 x maxPageBytes + 1 MiB, as the topics this process creates have)'
            : '';
        throw new DedupError('KAFKA', `transaction failed${why}: ${(error as Error).message}`, {
          cause: error,
          retriable: !fenced && !tooLarge,
          details: { fenced, tooLarge },
        });
      }
    },
    async disconnect() {
      await producer.disconnect();
    },
  };
}
