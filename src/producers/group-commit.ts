/**
 * Group commit: the chunks of several input partitions share one transaction.
 *
 * One transactional producer runs one transaction at a time. Committing each
 * partition's chunk in its own transaction, one after another, made every
 * partition wait for the others' round trips. Here a chunk is queued once it
 * is decided; whenever a transaction can start, every chunk queued so far
 * (up to `maxRecords` input records, at least one chunk) goes into it, with
 * the input offsets of all their partitions. Under load transactions grow;
 * when the input is slow each holds what is ready. An idle committer may
 * wait a few milliseconds for the other partitions' chunks of the same fetch
 * (`hold`), so that one fetch costs one transaction.
 *
 * Exactly once holds as with one chunk per transaction: a chunk's verdicts,
 * changelog entries and input offsets are still in one transaction. Chunks are
 * queued in the order they were decided, and a transaction takes a prefix of
 * the queue, so what is committed is always a prefix of the decisions: a
 * verdict never names a page whose own verdict is not committed with or
 * before it. A failed transaction rejects it and every chunk queued behind it,
 * and nothing is committed after it.
 */
import type { OutputMessage } from '../wire/output-record.js';
import { DedupError } from '../errors.js';
import type { CommittedOffsets, VerdictProducer } from '../kafka/verdict-producer.js';

export interface QueuedChunk {
  readonly topicMessages: Map<string, OutputMessage[]>;
  /** The next offset to consume on the chunk's input partition. */
  readonly offsets: CommittedOffsets;
  /** Input records the chunk holds (its share of the transaction's bound). */
  readonly records: number;
}

/**
 * One transaction's contents from chunks in queue order: each topic's
 * messages in queue order, and per input partition the offset of its last
 * chunk (a partition's chunks are queued in offset order).
 */
export function mergeChunks(chunks: readonly QueuedChunk[]): { topicMessages: Map<string, OutputMessage[]>; offsets: CommittedOffsets[] } {
  const topicMessages = new Map<string, OutputMessage[]>();
  const offsets = new Map<string, CommittedOffsets>();
  for (const chunk of chunks) {
    for (const [topic, messages] of chunk.topicMessages) {
      const into = topicMessages.get(topic);
      if (into) for (const m of messages) into.push(m);
      else topicMessages.set(topic, [...messages]);
    }
    offsets.set(`${chunk.offsets.topic}:${chunk.offsets.partition}`, chunk.offsets);
  }
  return { topicMessages, offsets: [...offsets.values()] };
}

/** How a chunk's transaction went, as `submit` resolves. */
export interface CommitReceipt {
  /** The last offset the transaction wrote per "topic:partition". */
  readonly written: Map<string, bigint>;
  /**
   * When (Date.now()) the chunk was queued, its transaction began (after the
   * transaction before it and the linger) and committed: where a chunk's
   * commit time goes (dedup_chunk_stage_seconds).
   */
  readonly queuedAt: number;
  readonly begunAt: number;
  readonly committedAt: number;
}

export interface GroupCommitter {
  /** Queues a decided chunk; resolves when the transaction holding it has committed. */
  submit(chunk: QueuedChunk): Promise<CommitReceipt>;
  /** Resolves when every chunk queued so far is committed (or has failed). */
  drained(): Promise<void>;
  /** Transactions committed so far. */
  readonly transactions: number;
  /** Says that `hold` may have turned false. */
  nudge(): void;
}

interface Waiting {
  chunk: QueuedChunk;
  queuedAt: number;
  resolve: (receipt: CommitReceipt) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitterOptions {
  /** Input records a transaction holds at most (a larger single chunk gets one of its own). */
  maxRecords: number;
  /** Called once per transaction, as it ends: how many chunks it held. */
  observe?: (outcome: 'committed' | 'aborted', chunks: number, error?: unknown) => void;
  /**
   * True while more chunks are about to be queued (other partitions' batches
   * of the same fetch, still being prepared): the next transaction waits for
   * them, at most `lingerMs` after its oldest chunk was queued, rather than
   * leave them to the transaction after. Call `nudge` when it may turn false.
   */
  hold?: () => boolean;
  lingerMs?: number;
  /** The clock of the linger and the receipts (Date.now by default). */
  now?: () => number;
}

export function createGroupCommitter(producer: VerdictProducer, consumerGroupId: string, options: GroupCommitterOptions): GroupCommitter {
  const { maxRecords } = options;
  const now = options.now ?? Date.now;
  const queue: Waiting[] = [];
  let running: Promise<void> | null = null;
  let failure: unknown = null;
  let transactions = 0;
  let wake: (() => void) | null = null;

  async function run(): Promise<void> {
    try {
      await drain();
    } finally {
      // Cleared in the same tick as the queue was seen empty, so a chunk
      // queued after this starts a new run.
      running = null;
    }
  }

  /** Waits while `hold` says more chunks are coming, up to the linger after the oldest queued chunk. */
  async function linger(): Promise<void> {
    const lingerMs = options.lingerMs ?? 0;
    while (options.hold?.() && queue.length > 0) {
      const left = queue[0]!.queuedAt + lingerMs - now();
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
    }
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      await linger();
      let records = 0;
      let take = 0;
      while (take < queue.length && (take === 0 || records + queue[take]!.chunk.records <= maxRecords)) records += queue[take++]!.chunk.records;
      const batch = queue.splice(0, take);
      const { topicMessages, offsets } = mergeChunks(batch.map((w) => w.chunk));
      const begunAt = now();
      try {
        const written = await producer.commit(topicMessages, consumerGroupId, offsets);
        const committedAt = now();
        transactions++;
        options.observe?.('committed', batch.length);
        for (const w of batch) w.resolve({ written, queuedAt: w.queuedAt, begunAt, committedAt });
      } catch (error) {
        options.observe?.('aborted', batch.length, error);
        // Nothing commits after a failed transaction: the decisions behind the
        // queued chunks may name pages of the failed one.
        failure = error;
        for (const w of [...batch, ...queue.splice(0)]) w.reject(error);
      }
    }
  }

  return {
    submit(chunk) {
      if (failure !== null) return Promise.reject(new DedupError('KAFKA', `not committed: an earlier transaction failed: ${(failure as Error).message}`, { cause: failure }));
      const done = new Promise<CommitReceipt>((resolve, reject) => queue.push({ chunk, queuedAt: now(), resolve, reject }));
      running ??= run();
      return done;
    },
    async drained() {
      while (running) await running;
    },
    get transactions() {
      return transactions;
    },
    nudge() {
      wake?.();
    },
  };
}
