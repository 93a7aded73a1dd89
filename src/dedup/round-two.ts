/**
 * Round two of the routed design for every page of a chunk at once, in round
 * trips (docs/architecture.md, "Second stage"): decideJoined needs its answers
 * one at a time, and over Kafka each is a round trip, so each page's walk
 * (JoinedWalk, decideJoined's own) goes on after each round trip with the
 * answers got so far, from where it stopped, and says what the next round trip
 * must ask.
 *
 * Three things make the trips few. When a page needs a candidate confirmed,
 * every candidate of it known and not asked yet is asked too (its home answers
 * each the same whenever asked): a page whose first candidates fail costs one
 * trip, not one per candidate. The partitions its walk would ask for more if
 * all of those fail are asked in the same trip (most do fail, on a template's
 * pages). And an answer for more candidates may carry several pages of the
 * cursor at once (what as many requests in a row would get); its candidates
 * are then known for the next confirmation.
 *
 * The verdict is decideJoined's over the same replies, whatever the answers'
 * batching: the property test in test/unit/dedup/routed-decisions.test.ts
 * checks it against decideJoined with direct answers. Pure.
 */
import { JoinedWalk, type JoinedReplies, type MoreUnsettled, type PartitionAnswer } from './index-partition.js';

/** What the next round trip asks. */
export interface RoundTwoAsks {
  /** By home partition: per page (slot), the candidate sequences whose sketches must be compared with the page's. */
  readonly confirms: Map<number, Map<number, number[]>>;
  /** Requests for the candidates a partition left out of its reply to a page, after a cursor. */
  readonly mores: { readonly slot: number; readonly partition: number; readonly after: PartitionAnswer }[];
}

/** Thrown out of a walk's callbacks when an answer is not here yet: the walk stays where it was. */
const NEED = Symbol('need');

export class RoundTwo {
  private readonly confirmed: Map<number, string | null>[];
  private readonly asked: Set<number>[];
  private readonly known: PartitionAnswer[][];
  private readonly more = new Map<string, MoreUnsettled>();
  private readonly best: (PartitionAnswer | null | undefined)[];
  /** Per page, its walk over its candidates, kept from trip to trip. */
  private readonly walks: JoinedWalk[];
  /** Per page, how many of its known candidates were asked to confirm (all before this index). */
  private readonly knownAsked: number[];

  /** `home`: the partition that holds a candidate's sketch and id (routing's table-0 partition of its fingerprint). */
  constructor(
    private readonly joined: readonly JoinedReplies[],
    private readonly home: (candidate: PartitionAnswer) => number,
  ) {
    this.confirmed = joined.map(() => new Map());
    this.asked = joined.map(() => new Set());
    this.known = joined.map((j) => [...j.unsettled]);
    this.best = joined.map(() => undefined);
    this.walks = joined.map((j) => new JoinedWalk(j));
    this.knownAsked = joined.map(() => 0);
  }

  /** Every page's verdict answer when all are decided, else what to ask next (never nothing). */
  step(): { readonly done: true; readonly best: (PartitionAnswer | null)[] } | { readonly done: false; readonly asks: RoundTwoAsks } {
    const confirms = new Map<number, Map<number, number[]>>();
    const mores: { slot: number; partition: number; after: PartitionAnswer }[] = [];
    const askedMore = new Set<string>();
    const askMore = (slot: number, partition: number, after: PartitionAnswer): void => {
      const key = moreKey(slot, partition, after.sequence);
      if (askedMore.has(key) || this.more.has(key)) return;
      askedMore.add(key);
      mores.push({ slot, partition, after });
    };
    this.joined.forEach((_, slot) => {
      if (this.best[slot] !== undefined) return;
      try {
        this.best[slot] = this.walks[slot]!.run(
          (c) => {
            const got = this.confirmed[slot]!;
            if (got.has(c.sequence)) return got.get(c.sequence)!;
            const ask = (k: PartitionAnswer): void => {
              if (this.asked[slot]!.has(k.sequence)) return;
              this.asked[slot]!.add(k.sequence);
              const home = this.home(k);
              let bySlot = confirms.get(home);
              if (!bySlot) confirms.set(home, (bySlot = new Map()));
              let list = bySlot.get(slot);
              if (!list) bySlot.set(slot, (list = []));
              list.push(k.sequence);
            };
            ask(c);
            // Every known candidate before knownAsked was asked in an earlier trip: only the new ones are looked at.
            const known = this.known[slot]!;
            for (let i = this.knownAsked[slot]!; i < known.length; i++) ask(known[i]!);
            this.knownAsked[slot] = known.length;
            // Most candidates beyond k fail (a template's pages): the walk then asks the partitions
            // that left some out, so they are asked in this trip too, not in one of their own.
            for (const w of this.walks[slot]!.openBeforeSettled()) askMore(slot, w.partition, w.after);
            throw NEED;
          },
          (partition, after) => {
            const got = this.more.get(moreKey(slot, partition, after.sequence));
            if (got) return got;
            askMore(slot, partition, after);
            throw NEED;
          },
        );
      } catch (error) {
        if (error !== NEED) throw error;
      }
    });
    if (confirms.size > 0 || mores.length > 0) return { done: false, asks: { confirms, mores } };
    if (this.best.includes(undefined)) throw new RangeError('round two needs an answer it has asked for already');
    return { done: true, best: this.best as (PartitionAnswer | null)[] };
  }

  /** A home's answer: the candidate's id when the sketches agree, else null. */
  confirm(slot: number, sequence: number, id: string | null): void {
    this.confirmed[slot]!.set(sequence, id);
  }

  /** A partition's answer for more candidates of a page after the cursor `afterSequence`. */
  moreAnswered(slot: number, partition: number, afterSequence: number, got: MoreUnsettled): void {
    this.more.set(moreKey(slot, partition, afterSequence), got);
    this.known[slot]!.push(...got.unsettled);
  }
}

const moreKey = (slot: number, partition: number, after: number): string => `${slot}|${partition}|${after}`;
