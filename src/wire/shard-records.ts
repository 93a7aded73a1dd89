/**
 * The records of the sharded pipeline's two internal topics. Both are ours
 * alone (no other system reads them), small, and read by every instance, so
 * they are compact JSON with a version field rather than registry-backed Avro:
 * no registry round trip on the hot path, and a human can read them with kcat.
 *
 *   sequence topic (1 partition): the global order. Its offset IS the page's
 *     sequence number.
 *       probe    a page to decide: its fingerprint, where it came from
 *       reprobe  a page id seen before: ask again "as of" its first sequence
 *   answers topic (1 partition): what the shards say.
 *       hit        shard s's closest earlier page for sequence n
 *       repeat     the home shard knows this id from sequence `first`
 *       watermark  shards s1..sm have applied every sequence below `upTo[i]`
 */
import { DedupError } from '../errors.js';

export const SHARD_RECORD_VERSION = 1;

import type { AnswerRecord, SequenceRecord } from '../dedup/shard-protocol.js';

export type * from '../dedup/shard-protocol.js';

const TYPES = new Set(['probe', 'reprobe', 'hit', 'repeat', 'watermark']);

export function encodeShardRecord(record: SequenceRecord | AnswerRecord): Buffer {
  return Buffer.from(JSON.stringify({ v: SHARD_RECORD_VERSION, ...record }));
}

function decode(value: Buffer | null, where: string): Record<string, unknown> {
  if (value === null) throw new DedupError('RECORD_UNDECODABLE', `${where}: empty record`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch (error) {
    throw new DedupError('RECORD_UNDECODABLE', `${where}: not JSON: ${(error as Error).message}`, { cause: error });
  }
  const record = parsed as Record<string, unknown>;
  if (typeof parsed !== 'object' || parsed === null || record.v !== SHARD_RECORD_VERSION || !TYPES.has(record.type as string)) {
    throw new DedupError('RECORD_UNDECODABLE', `${where}: not a version ${SHARD_RECORD_VERSION} shard record`);
  }
  return record;
}

/** Decodes a sequence-topic record; anything else is RECORD_UNDECODABLE (the topic is ours: that is a bug or a stranger writing to it). */
export function decodeSequenceRecord(value: Buffer | null): SequenceRecord {
  const record = decode(value, 'sequence record');
  if (record.type !== 'probe' && record.type !== 'reprobe') throw new DedupError('RECORD_UNDECODABLE', `sequence record of type ${String(record.type)}`);
  return record as unknown as SequenceRecord;
}

export function decodeAnswerRecord(value: Buffer | null): AnswerRecord {
  const record = decode(value, 'answer record');
  if (record.type !== 'hit' && record.type !== 'repeat' && record.type !== 'watermark') throw new DedupError('RECORD_UNDECODABLE', `answer record of type ${String(record.type)}`);
  return record as unknown as AnswerRecord;
}
