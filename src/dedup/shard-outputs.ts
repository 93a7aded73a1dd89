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
 * Pure: no Kafka, no I/O. The Kafka edge (src/consumers/sequence.consumer.ts)
 * sends each element of `appends` in turn, awaiting its acknowledgement.
 */
import type { AnswerRecord, SequenceRecord, WatermarkRecord } from './shard-protocol.js';
import { applySequenced, type ShardState } from './shard-state.js';

/** A shard held here: the owner answers and writes its changelog; a standby only applies. */
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

/** The watermark of the shards that answer from here. */
export function watermarkOf(holdings: readonly Holding[], instance: string): WatermarkRecord {
  const answering = holdings.filter((h) => h.owner);
  return { type: 'watermark', instance, shards: answering.map((h) => h.state.shard), upTo: answering.map((h) => h.state.position) };
}

/**
 * Applies a run of sequence records to the held shards and says what to
 * write. `window` (0 = none): the sequence window; pages three windows
 * behind are freed.
 */
export function applyBatch(holdings: readonly Holding[], shardCount: number, instance: string, inputs: readonly SequencedInput[], window = 0): BatchOutputs {
  const out: ShardOutput[] = [];
  const shards = holdings.map((h) => h.state);
  const owned = new Set(holdings.filter((h) => h.owner).map((h) => h.state.shard));
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
    for (const hit of result.hits) if (owned.has(hit.shard)) out.push({ kind: 'answer', record: { type: 'hit', sequence, ...source, ...hit } });
    if (result.repeat && owned.has(result.repeat.shard)) {
      const { sketch: repeatSketch, ...repeat } = result.repeat;
      out.push({ kind: 'answer', record: { type: 'repeat', sequence, ...source, ...repeat, ...(repeatSketch === null ? {} : { sketch: wire(repeatSketch) }) } });
    }
    if (result.inserted && owned.has(result.inserted.shard)) {
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
  out.push({ kind: 'answer', record: watermarkOf(holdings, instance) });
  return { applied, appends: [out] };
}

/** Base64 of a sketch, as the wire carries it (src/wire/sketch-wire.ts; kept here so the core imports no wire module). */
function wire(sketch: Uint8Array): string {
  return Buffer.from(sketch.buffer, sketch.byteOffset, sketch.byteLength).toString('base64');
}
