/**
 * Joins the shards' answers into verdicts. Every shard answers every sequence
 * number, but only hits are written out; "no hit" is implied by a watermark: a
 * page at sequence n is complete once every shard's watermark is past n, and
 * its verdict is then the closest of the hits for n, ties to the smallest
 * sequence: the same rule, over the same pages, as one index holding every
 * page (src/dedup/decider.ts).
 *
 * Pages are watched by their source record (partition, offset), before they
 * are appended: a shard may answer before the append's acknowledgement tells
 * the emitter the page's sequence number, and the same record may stand in
 * the sequence more than once (appended again after a crash), so answers are
 * kept per sequence and only those for the sequence the emitter names count.
 *
 * A page id the home shard already knew comes back as a `repeat`: the emitter
 * then asks again as of the id's first sequence (a reprobe) and gets the
 * verdict the id got the first time.
 *
 * Pure: records in, completions out.
 */
import type { AnswerRecord } from './shard-protocol.js';

export interface JoinedVerdict {
  readonly verdict: 'novel' | 'duplicate';
  readonly duplicateOf: string | null;
  readonly distance: number | null;
  readonly hi: number;
  readonly lo: number;
  readonly duplicateOfHi: number | null;
  readonly duplicateOfLo: number | null;
  /** The page's own decision sequence (its first, for a re-sent id). */
  readonly sequence: number;
  readonly repeated: boolean;
}

export interface WatchedPage {
  readonly hi: number;
  readonly lo: number;
  /** Set when the page is asked again (a reprobe): the verdict is the id's first one. */
  readonly firstSequence?: number;
}

export interface RepeatOf {
  readonly first: number;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  /** Base64 feature sketch the id was first decided with (second stage on). */
  readonly sketch?: string;
}

export type Completion =
  | { readonly key: string; readonly sequence: number; readonly verdict: JoinedVerdict; readonly repeatOf?: undefined }
  | { readonly key: string; readonly sequence: number; readonly verdict?: undefined; readonly repeatOf: RepeatOf };

interface Answer {
  bestId: string | null;
  bestDistance: number;
  bestSequence: number;
  bestHi: number | null;
  bestLo: number | null;
  repeatOf: RepeatOf | null;
}

interface Pending {
  page: WatchedPage;
  /** The sequence whose answers count; null until the append is acknowledged. */
  sequence: number | null;
  answers: Map<number, Answer>;
}

export function sourceKey(partition: number, offset: string): string {
  return `${partition}:${offset}`;
}

const emptyAnswer = (): Answer => ({ bestId: null, bestDistance: 65, bestSequence: Infinity, bestHi: null, bestLo: null, repeatOf: null });

export class AnswerJoin {
  readonly shardCount: number;
  /** upTo[s]: shard s has applied every sequence below this. */
  private readonly upTo: Float64Array;
  private readonly pending = new Map<string, Pending>();
  private lowWatermark = 0;

  constructor(shardCount: number) {
    this.shardCount = shardCount;
    this.upTo = new Float64Array(shardCount);
  }

  /** Every sequence below this has been applied by every shard. */
  get watermark(): number {
    return this.lowWatermark;
  }

  get waiting(): number {
    return this.pending.size;
  }

  /** Starts collecting answers for a source record, before it is appended. */
  watch(key: string, page: WatchedPage): void {
    this.pending.set(key, { page, sequence: null, answers: new Map() });
  }

  /** The append was acknowledged: answers for this sequence are the ones that count. */
  sequenced(key: string, sequence: number): void {
    const p = this.pending.get(key);
    if (p) p.sequence = sequence;
  }

  /** Asks again for a watched record (after a repeat): its answers are collected anew. */
  rewatch(key: string, page: WatchedPage): void {
    const p = this.pending.get(key);
    if (!p) return this.watch(key, page);
    p.page = page;
    p.sequence = null;
  }

  forget(key: string): void {
    this.pending.delete(key);
  }

  apply(record: AnswerRecord): void {
    if (record.type === 'watermark') {
      for (let i = 0; i < record.shards.length; i++) {
        const shard = record.shards[i]!;
        if (shard >= 0 && shard < this.shardCount && record.upTo[i]! > this.upTo[shard]!) this.upTo[shard] = record.upTo[i]!;
      }
      let low = Infinity;
      for (let s = 0; s < this.shardCount; s++) if (this.upTo[s]! < low) low = this.upTo[s]!;
      this.lowWatermark = low;
      return;
    }
    const p = this.pending.get(sourceKey(record.partition, record.offset));
    if (!p || (p.sequence !== null && p.sequence !== record.sequence)) return;
    let answer = p.answers.get(record.sequence);
    if (!answer) p.answers.set(record.sequence, (answer = emptyAnswer()));
    if (record.type === 'repeat') {
      answer.repeatOf = { first: record.first, hi: record.hi, lo: record.lo, short: record.short, ...(record.sketch === undefined ? {} : { sketch: record.sketch }) };
      return;
    }
    if (record.distance < answer.bestDistance || (record.distance === answer.bestDistance && record.candidateSequence < answer.bestSequence)) {
      answer.bestId = record.id;
      answer.bestDistance = record.distance;
      answer.bestSequence = record.candidateSequence;
      answer.bestHi = record.hi;
      answer.bestLo = record.lo;
    }
  }

  /**
   * Returns the watched records every shard has answered, in sequence order.
   * A verdict ends the watch; a repeat keeps it, waiting for the reprobe's
   * sequence (`rewatch`, then `sequenced`).
   */
  drain(): Completion[] {
    const done: Completion[] = [];
    for (const [key, p] of this.pending) {
      if (p.sequence === null || p.sequence >= this.lowWatermark) continue;
      const sequence = p.sequence;
      const answer = p.answers.get(sequence) ?? emptyAnswer();
      p.answers.clear();
      if (answer.repeatOf) {
        p.sequence = null;
        done.push({ key, sequence, repeatOf: answer.repeatOf });
        continue;
      }
      this.pending.delete(key);
      const duplicate = answer.bestId !== null;
      done.push({
        key,
        sequence,
        verdict: {
          verdict: duplicate ? 'duplicate' : 'novel',
          duplicateOf: answer.bestId,
          distance: duplicate ? answer.bestDistance : null,
          hi: p.page.hi >>> 0,
          lo: p.page.lo >>> 0,
          duplicateOfHi: answer.bestHi,
          duplicateOfLo: answer.bestLo,
          sequence: p.page.firstSequence ?? sequence,
          repeated: p.page.firstSequence !== undefined,
        },
      });
    }
    done.sort((a, b) => a.sequence - b.sequence);
    return done;
  }
}
