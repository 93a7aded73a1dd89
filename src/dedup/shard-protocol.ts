/**
 * The messages of the sharded index, as plain data: what goes into the global
 * sequence (pages to decide) and what the shards answer. The wire format is
 * src/wire/shard-records.ts; the logic is shard-state.ts and answer-join.ts.
 */
export interface ProbeRecord {
  readonly type: 'probe';
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  readonly fetchedAt: number;
  /** Feature sketch (base64 of SKETCH_BINS bytes) when the second stage is on. */
  readonly sketch?: string;
  /** Source partition and offset in the pages topic (the emitter waiting for it). */
  readonly partition: number;
  readonly offset: string;
}

export interface ReprobeRecord {
  readonly type: 'reprobe';
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  /** Answer as of this sequence: only pages decided before it count. */
  readonly asOf: number;
  /** The sketch the id was first decided with (base64), when the second stage is on. */
  readonly sketch?: string;
  readonly partition: number;
  readonly offset: string;
}

export type SequenceRecord = ProbeRecord | ReprobeRecord;

export interface HitRecord {
  readonly type: 'hit';
  readonly sequence: number;
  /** The source record the probe came from: what the emitter waits on. */
  readonly partition: number;
  readonly offset: string;
  readonly shard: number;
  readonly id: string;
  readonly distance: number;
  readonly candidateSequence: number;
  /** Fingerprint of the candidate, when still held. */
  readonly hi: number | null;
  readonly lo: number | null;
}

export interface RepeatRecord {
  readonly type: 'repeat';
  readonly sequence: number;
  readonly partition: number;
  readonly offset: string;
  readonly shard: number;
  /** The id's first sequence, and the fingerprint it was decided with. */
  readonly first: number;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  /** ... and the sketch it was decided with (base64), when the second stage is on. */
  readonly sketch?: string;
}

export interface WatermarkRecord {
  readonly type: 'watermark';
  readonly instance: string;
  readonly shards: readonly number[];
  /** upTo[i]: shards[i] has applied every sequence number below this. */
  readonly upTo: readonly number[];
}

export type AnswerRecord = HitRecord | RepeatRecord | WatermarkRecord;

