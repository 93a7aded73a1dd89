/**
 * What an instance holding shards writes for a run of sequence records, and
 * in which order: answers (hits, repeats), changelog entries (pages recorded
 * in their home shard), and a watermark naming how far each shard has gone.
 *
 * The watermark is what makes a verdict visible: a page is decided once every
 * shard's watermark is past it. So the order of writes carries the rule of
 * durability: a watermark must not be written before the changelog entries
 * of the pages it covers are acknowledged, or a crash in between leaves a
 * verdict downstream whose page the changelog does not hold.
 *
 * Every holder of a shard writes what the owner writes, its warm standby
 * included: the outputs are a deterministic function of the sequence, so the
 * copies are identical (the answer join keeps the first; the changelog is
 * compacted by id). Two things follow. A standby's changelog entries are
 * durable up to where it has applied, so when it is promoted after the
 * owner died between computing a page and the acknowledgement of its entry,
 * nothing is left unwritten (a standby that wrote nothing would carry on past
 * those pages and their entries would never be written). And no page waits
 * for a dead owner: its standby has answered already.
 *
 * Pure: no Kafka, no I/O. The Kafka edge (src/consumers/sequence.consumer.ts)
 * sends each element of `appends` in turn, awaiting its acknowledgement.
 */
import type { AnswerRecord, SequenceRecord, WatermarkRecord } from './shard-protocol.js';
import { applySequenced, type ShardState } from './shard-state.js';

/** A shard held here: its owner also snapshots it; owner and standby write alike. */
export interface Holding {
  readonly state: ShardState;
  readonly owner: boolean;
}

/** One page recorded in its home shard: the changelog entry to write. */
export interface ChangeEntry {
  readonly shard: number;
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  readonly fetchedAt: number;
  readonly sequence: number;
  readonly sketch: Uint8Array | null;
}

export type ShardOutput = { readonly kind: 'answer'; readonly record: AnswerRecord } | { readonly kind: 'change'; readonly change: ChangeEntry };

export interface SequencedInput {
  readonly sequence: number;
  /** Null for a record that could not be decoded: every shard moves past it alike. */
  readonly record: SequenceRecord | null;
  readonly sketch: Uint8Array | null;
}

export interface BatchOutputs {
  /** Records of the run that some held shard applied. */
  readonly applied: number;
  /** Appends in order: each is sent only after the one before it is acknowledged. */
  readonly appends: readonly (readonly ShardOutput[])[];
}

/**
 * The watermark of every shard held here. Only valid once every answer and
 * changelog entry this holder computed below those positions is acknowledged.
 */
export function watermarkOf(holdings: readonly Holding[], instance: string): WatermarkRecord {
  return { type: 'watermark', instance, shards: holdings.map((h) => h.state.shard), upTo: holdings.map((h) => h.state.position) };
}

/**
 * Applies a run of sequence records to the held shards and says what to
 * write. `window` (0 = none): the sequence window; pages three windows
 * behind are freed.
 */
export function applyBatch(holdings: readonly Holding[], shardCount: number, instance: string, inputs: readonly SequencedInput[], window = 0): BatchOutputs {
  const out: ShardOutput[] = [];
  const shards = holdings.map((h) => h.state);
  let applied = 0;
  for (const { sequence, record, sketch } of inputs) {
    if (!shards.some((s) => s.position === sequence)) continue;
    applied++;
    if (record === null) {
      for (const s of shards) if (s.position === sequence) s.position = sequence + 1;
      continue;
    }
    const result = applySequenced(shards, shardCount, record, sequence, sketch);
    const source = { partition: record.partition, offset: record.offset };
    for (const hit of result.hits) out.push({ kind: 'answer', record: { type: 'hit', sequence, ...source, ...hit } });
    if (result.repeat) {
      const { sketch: repeatSketch, ...repeat } = result.repeat;
      out.push({ kind: 'answer', record: { type: 'repeat', sequence, ...source, ...repeat, ...(repeatSketch === null ? {} : { sketch: wire(repeatSketch) }) } });
    }
    if (result.inserted) {
      out.push({
        kind: 'change',
        change: { shard: result.inserted.shard, id: record.id, hi: record.hi >>> 0, lo: record.lo >>> 0, short: record.short, fetchedAt: record.type === 'probe' ? record.fetchedAt : 0, sequence, sketch },
      });
    }
  }
  if (applied === 0) return { applied, appends: [] };
  // Pages no probe can see any more are freed: three windows behind, so a
  // page asked again as of its first sequence still meets what it met.
  if (window > 0) for (const shard of shards) shard.evictBefore(shard.position - 3 * window);
  // Three appends, each sent once the one before is acknowledged. Records
  // for several partitions in one request may land on some and not others;
  // records for one partition land together. So: the answers first, then the
  // changelog entries (a restore puts the shard one past its last entry and
  // never answers again below it, so the answers below an entry must be
  // durable before it), then the watermark (which makes verdicts visible:
  // only once the entries of the pages it covers are durable).
  const answers = out.filter((o) => o.kind === 'answer');
  const changes = out.filter((o) => o.kind === 'change');
  const watermark: ShardOutput = { kind: 'answer', record: watermarkOf(holdings, instance) };
  // Answers and the watermark share the answers partition: one append lands whole.
  if (changes.length === 0) return { applied, appends: [[...answers, watermark]] };
  return { applied, appends: answers.length === 0 ? [changes, [watermark]] : [answers, changes, [watermark]] };
}

/** Base64 of a sketch, as the wire carries it (src/wire/sketch-wire.ts; kept here so the core imports no wire module). */
function wire(sketch: Uint8Array): string {
  return Buffer.from(sketch.buffer, sketch.byteOffset, sketch.byteLength).toString('base64');
}
