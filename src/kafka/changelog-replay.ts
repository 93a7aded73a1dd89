/**
 * Start-up recovery: read the compacted fingerprints changelog from the
 * snapshot's offsets to its current end (read_committed) and re-apply every
 * entry to the decider. Run after the transactional producer has fenced its
 * predecessor, so no open transaction holds the end back.
 *
 * A throwaway consumer group is used only to borrow kafkajs's fetch loop;
 * offsets are never committed for it.
 */
import type { Kafka } from 'kafkajs';
import { DedupError } from '../errors.js';
import type { FingerprintChange, RecordCodec } from '../wire/record-codec.js';
import type { Decider, RestoredDecision } from '../dedup/decider.js';
import type { Logger } from '../logger.js';
import { FINGERPRINT_VERSION_HEADER } from '../wire/output-record.js';
import { endOffsets } from './admin.js';

export interface ReplayResult {
  records: number;
  /** Next offset per partition after replay (the snapshot offsets to write later). */
  offsets: Record<string, string>;
  seconds: number;
}

export async function replayChangelog(options: {
  kafka: Kafka;
  topic: string;
  from: Record<string, string>;
  codec: RecordCodec;
  /** Where each entry goes: the single-instance decider, or one shard of a sharded index. */
  apply: Decider | ((change: FingerprintChange) => void);
  logger: Logger;
  groupIdPrefix: string;
  /** Only these partitions (a sharded index restores the shards it owns); default all. */
  partitions?: readonly number[];
  /** The fingerprint definition this build computes: an entry made with another one stops the replay. */
  fingerprintVersion?: string;
  timeoutMs?: number;
}): Promise<ReplayResult> {
  const { kafka, topic, codec, logger } = options;
  const target = options.apply;
  // A decider restores each fetched batch in bulk (sorted runs built by radix sort).
  const restoring: RestoredDecision[] = [];
  const apply =
    typeof target === 'function'
      ? target
      : (change: FingerprintChange) =>
          restoring.push({ page: { id: change.id, hi: change.hi, lo: change.lo, short: change.short, fetchedAt: change.fetchedAt, sketch: change.sketch }, duplicateOf: change.duplicateOf, distance: change.distance, sequence: change.sequence });
  const flush = () => {
    if (restoring.length === 0 || typeof target === 'function') return;
    target.restoreBatch(restoring);
    restoring.length = 0;
  };
  const started = Date.now();
  const allEnds = await endOffsets(kafka, topic);
  const wanted = options.partitions ? new Set(options.partitions.map(String)) : null;
  const end = wanted ? Object.fromEntries(Object.entries(allEnds).filter(([p]) => wanted.has(p))) : allEnds;
  const position: Record<string, bigint> = {};
  const pending = new Set<string>();
  for (const [partition, high] of Object.entries(end)) {
    const from = BigInt(options.from[partition] ?? '0');
    position[partition] = from;
    if (from < BigInt(high)) pending.add(partition);
  }
  if (pending.size === 0) return { records: 0, offsets: end, seconds: (Date.now() - started) / 1000 };

  logger.info('replaying changelog', { topic, from: options.from, to: end });
  const consumer = kafka.consumer({
    groupId: `${options.groupIdPrefix}-replay-${process.pid}-${Date.now()}`,
    readUncommitted: false,
    maxBytesPerPartition: 16 * 1024 * 1024,
    allowAutoTopicCreation: false,
  });
  let records = 0;
  let failure: unknown = null;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const advance = (partition: string, lastOffset: string): void => {
    const next = BigInt(lastOffset) + 1n;
    if (next > position[partition]!) position[partition] = next;
    if (position[partition]! >= BigInt(end[partition]!)) {
      pending.delete(partition);
      if (pending.size === 0) finish();
    }
  };
  // Batches of only aborted records or transaction markers reach us solely as
  // this event; without it replay would wait forever at a commit marker.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    if (payload.topic === topic && String(payload.partition) in end) advance(String(payload.partition), payload.lastOffset);
  });
  try {
    await consumer.connect();
    // Partitions not replayed start at the end (nothing to read); the replayed ones are sought below.
    await consumer.subscribe({ topics: [topic], fromBeginning: wanted === null });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, heartbeat }) => {
        if (!(String(batch.partition) in end)) return;
        try {
          for (const message of batch.messages) {
            if (message.value === null) continue; // a tombstone: nothing to restore
            const version = message.headers?.[FINGERPRINT_VERSION_HEADER]?.toString();
            if (options.fingerprintVersion !== undefined && version !== undefined && version !== options.fingerprintVersion) {
              throw new DedupError(
                'CONFIG_INVALID',
                `changelog ${topic} holds fingerprints of another definition (${version}); this build computes ${options.fingerprintVersion}. ` +
                  'They cannot be compared: start with a new changelog topic and state directory, or run the build that wrote them',
              );
            }
            const change = await codec.decodeChange(message.value);
            if (change.sequence < 0) throw new DedupError('RECORD_UNDECODABLE', `changelog record ${change.id} has no sequence number`);
            apply(change);
            records++;
          }
          flush();
        } catch (error) {
          failure = error;
          finish();
          return;
        }
        await heartbeat();
      },
    });
    // Position every partition at the snapshot's offset once assigned.
    for (const partition of Object.keys(end)) {
      consumer.seek({ topic, partition: Number(partition), offset: options.from[partition] ?? '0' });
    }
    const timeout = options.timeoutMs ?? 30 * 60_000;
    const timer = setTimeout(() => {
      failure = new DedupError('KAFKA', `changelog replay did not reach the end within ${timeout} ms`, { retriable: true });
      finish();
    }, timeout);
    await done;
    clearTimeout(timer);
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
  if (failure) {
    if (failure instanceof DedupError) throw failure;
    throw new DedupError('SNAPSHOT_INVALID', `changelog replay failed: ${(failure as Error).message}`, { cause: failure });
  }
  const offsets = Object.fromEntries(Object.entries(position).map(([p, o]) => [p, o.toString()]));
  return { records, offsets, seconds: (Date.now() - started) / 1000 };
}
