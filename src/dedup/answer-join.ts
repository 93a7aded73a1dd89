/**
 * Joins the shards' answers into verdicts. Every shard answers every sequence
 * number, but only hits are written out; "no hit" is implied by a watermark: a
 * page at sequence n is complete once every shard's watermark is past n, and
 * its verdict is then the closest of the hits that arrived, ties to the
 * smallest sequence: the same rule, over the same pages, as one index holding
 * every page (src/dedup/decider.ts).
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
  /** Set when this sequence is a reprobe: the verdict is the id's first one. */
  readonly firstSequence?: number;
}

export type Completion =
  | { readonly sequence: number; readonly verdict: JoinedVerdict; readonly repeatOf?: undefined }
  | { readonly sequence: number; readonly verdict?: undefined; readonly repeatOf: { first: number; hi: number; lo: number; short: boolean } };

interface Pending {
  readonly page: WatchedPage;
  bestId: string | null;
  bestDistance: number;
  bestSequence: number;
  bestHi: number | null;
  bestLo: number | null;
  repeatOf: { first: number; hi: number; lo: number; short: boolean } | null;
}

export class AnswerJoin {
  readonly shardCount: number;
  /** upTo[s]: shard s has applied every sequence below this. */
  private readonly upTo: Float64Array;
  private readonly pending = new Map<number, Pending>();
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

  /** Per-shard watermarks (for metrics: a shard that does not move is unowned or stuck). */
  shardWatermark(shard: number): number {
    return this.upTo[shard]!;
  }

  watch(sequence: number, page: WatchedPage): void {
    this.pending.set(sequence, { page, bestId: null, bestDistance: 65, bestSequence: Infinity, bestHi: null, bestLo: null, repeatOf: null });
  }

  forget(sequence: number): void {
    this.pending.delete(sequence);
  }

  apply(record: AnswerRecord): void {
    switch (record.type) {
      case 'hit': {
        const p = this.pending.get(record.sequence);
        if (!p) return;
        if (record.distance < p.bestDistance || (record.distance === p.bestDistance && record.candidateSequence < p.bestSequence)) {
          p.bestId = record.id;
          p.bestDistance = record.distance;
          p.bestSequence = record.candidateSequence;
          p.bestHi = record.hi;
          p.bestLo = record.lo;
        }
        return;
      }
      case 'repeat': {
        const p = this.pending.get(record.sequence);
        if (p) p.repeatOf = { first: record.first, hi: record.hi, lo: record.lo, short: record.short };
        return;
      }
      case 'watermark': {
        for (let i = 0; i < record.shards.length; i++) {
          const shard = record.shards[i]!;
          if (shard >= 0 && shard < this.shardCount && record.upTo[i]! > this.upTo[shard]!) this.upTo[shard] = record.upTo[i]!;
        }
        let low = Infinity;
        for (let s = 0; s < this.shardCount; s++) if (this.upTo[s]! < low) low = this.upTo[s]!;
        this.lowWatermark = low;
        return;
      }
    }
  }

  /** Removes and returns the pages every shard has answered, in sequence order. */
  drain(): Completion[] {
    const done: Completion[] = [];
    if (this.pending.size === 0) return done;
    for (const [sequence, p] of this.pending) {
      if (sequence >= this.lowWatermark) continue;
      this.pending.delete(sequence);
      if (p.repeatOf) {
        done.push({ sequence, repeatOf: p.repeatOf });
        continue;
      }
      const duplicate = p.bestId !== null;
      done.push({
        sequence,
        verdict: {
          verdict: duplicate ? 'duplicate' : 'novel',
          duplicateOf: p.bestId,
          distance: duplicate ? p.bestDistance : null,
          hi: p.page.hi >>> 0,
          lo: p.page.lo >>> 0,
          duplicateOfHi: p.bestHi,
          duplicateOfLo: p.bestLo,
          sequence: p.page.firstSequence ?? sequence,
          repeated: p.page.firstSequence !== undefined,
        },
      });
    }
    done.sort((a, b) => a.sequence - b.sequence);
    return done;
  }
}
