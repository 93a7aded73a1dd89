/**
 * One partition of the routed index (docs/architecture.md, "Sharded mode,
 * routed by table prefix"): the pages whose table or band entries routing.ts
 * sends here, applied in the one global order, each probed before it is
 * recorded. It answers "my closest eligible page decided before this one":
 * the same rule as the single-index decider (closestRecorded), over the
 * candidates this partition can see. Those are a subset of the single
 * index's candidates (every page within the radius is one there too; a band
 * key's newest pages are all in the key's partition), and they hold the
 * single index's answer in some partition (routing.ts says why), so the
 * closest of the partitions' answers (closerAnswer) is the single index's.
 *
 * A page with a table entry here is recorded in the page store once, and in
 * the tables of the partition's index that routed it here only (the index's
 * table masks); a probe reads the tables that routed the probing page here,
 * and finds a pair through a table both were routed by, which is where
 * routing.ts says every pair within the radius meets. Band keys are held apart,
 * in a band log of their own (per page its sequence in RAM, and a 17-byte
 * record in the tier: fingerprint, short flag and the sketch's 8-byte tail,
 * read only for a band candidate; plus the key entries): most of a
 * page's partitions hold it for one band key alone, and such a page needs no
 * id, no table entries and no page-store record, since a band candidate
 * beyond the radius is always named by sequence and confirmed at its home. A
 * re-sent id never comes here (the input partition's id store answers it);
 * an id recorded already is answered but not recorded twice.
 *
 * Two rounds, so that a page's 64-byte sketch travels to one partition, its
 * home (the partition of its table-0 entry), and not to every partition its
 * band keys reach. Round one (apply): a partition settles what it can from
 * the fingerprints and the 8-byte tails it holds (content-number digests,
 * script share, size: feature-sketch.ts), and names the candidates that need
 * the sketches themselves (beyond k, or a short page's match above distance
 * 0) when they would beat its settled answer. Round two (confirm): the
 * candidates' homes say whether their sketches agree with the page's, in the
 * order of closeness (joinAnswers, decideJoined). The predicate is
 * closestRecorded's, split where it reads the bins.
 *
 * Pure: no Kafka, no I/O. The layout (index, page store) is the single
 * index's; the routed design's compact layout replaces it in both at once.
 */
import { FingerprintIndex, createQueryResult, type QueryResult, type TablePlan } from '../index/index.js';
import { FLAG_SHORT, PageStore } from './page-store.js';
import { memoryPageTier, type PageTier } from './blob-store.js';
import { createSketchCheck, loadSketch, type Closest, type SecondStage, type SketchCheck } from './decider.js';
import { BandLog } from './band-log.js';
import { firstRefFrom } from './sequence-search.js';
import { MINHASH_BINS, MIN_CONFIRMING_SIZE, SKETCH_BINS, isKnownSketch } from '../fingerprint/feature-sketch.js';
import { hammingDistance } from '../fingerprint/fingerprint-hex.js';
import type { IndexRouting } from './routing.js';

/** A page as an index partition receives it: what the entry record carries. */
export interface RoutedPage {
  /** The page id; null where only band entries came (a band hit is named by its home in round two). */
  readonly id: string | null;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  /** Milliseconds since the epoch. */
  readonly fetchedAt: number;
  /** The whole sketch at the page's home, its tail elsewhere (sketchTail), null without one. */
  readonly sketch: Uint8Array | null;
  /** Bit i: table i's entry is here (routing.ts PartitionShare.tableMask); bit 0 makes this the page's home. */
  readonly tables: number;
  /** The page's band keys routed to this partition (PartitionShare.bandKeys). */
  readonly bandKeys: readonly number[];
}

/** A partition's answer for one page: its closest eligible earlier page, or null. */
export interface PartitionAnswer {
  /** Null for a page this partition holds by its band entries only: its home names it in round two. */
  readonly id: string | null;
  readonly distance: number;
  /** Global sequence of the answer's decision (ties go to the smallest). */
  readonly sequence: number;
  readonly hi: number;
  readonly lo: number;
  /**
   * An unsettled candidate's home partition (routing's table-0 partition of its fingerprint), where
   * a reply names it so: its hi and lo are then 0, and the home's confirmation gives them.
   */
  readonly home?: number;
}

/**
 * Unsettled candidates one reply carries at most. A page of a template shared by thousands of
 * pages has CHAIN_LIMIT candidates under each band key, from each of the ~13 partitions its
 * band keys reach, and round two almost always confirms the first it asks: the rest are asked
 * for only when every candidate sent fails (IndexPartition.more, decideJoined).
 */
export const UNSETTLED_PER_REPLY = 4;

/** A partition's reply to one page in round one. */
export interface PartitionReply {
  /** Its closest earlier page whose eligibility the tails settle, or null. */
  readonly settled: PartitionAnswer | null;
  /**
   * Candidates closer than `settled` whose eligibility needs both sketches (round two, at their
   * homes), named by sequence (id null) and with the same content numbers as the page: the
   * closest (then earliest) first, at most UNSETTLED_PER_REPLY.
   */
  readonly unsettled: readonly PartitionAnswer[];
  /** Whether candidates after the last of `unsettled` were left out: IndexPartition.more gives them. */
  readonly more: boolean;
}

/** The next unsettled candidates of a page at one partition, after a cursor (IndexPartition.more). */
export interface MoreUnsettled {
  readonly unsettled: readonly PartitionAnswer[];
  readonly more: boolean;
}

const closer = (a: PartitionAnswer, b: PartitionAnswer): boolean => a.distance < b.distance || (a.distance === b.distance && a.sequence < b.sequence);
const byCloseness = (a: PartitionAnswer, b: PartitionAnswer): number => (closer(a, b) ? -1 : closer(b, a) ? 1 : 0);

/** The closer of two answers (then the earlier). */
export function closerAnswer(a: PartitionAnswer | null, b: PartitionAnswer | null): PartitionAnswer | null {
  if (a === null) return b;
  if (b === null) return a;
  return closer(b, a) ? b : a;
}

/** A page's round-one replies joined, and where round two may ask for more. */
export interface JoinedReplies {
  /** The closest settled answer of every partition. */
  readonly settled: PartitionAnswer | null;
  /** The unsettled candidates sent that are closer than `settled`, each once, closest (then earliest) first. */
  readonly unsettled: PartitionAnswer[];
  /** The partitions that left candidates out, each with the last candidate it sent (the cursor). */
  readonly open: { partition: number; last: PartitionAnswer }[];
}

/** Joins a page's round-one replies, each with the partition that sent it. */
export function joinReplies(replies: readonly { partition: number; reply: PartitionReply }[]): JoinedReplies {
  let settled: PartitionAnswer | null = null;
  for (const { reply } of replies) settled = closerAnswer(settled, reply.settled);
  const bySequence = new Map<number, PartitionAnswer>();
  const open: { partition: number; last: PartitionAnswer }[] = [];
  for (const { partition, reply } of replies) {
    for (const c of reply.unsettled) if (settled === null || closer(c, settled)) bySequence.set(c.sequence, c);
    if (reply.more && reply.unsettled.length > 0) open.push({ partition, last: reply.unsettled[reply.unsettled.length - 1]! });
  }
  return { settled, unsettled: [...bySequence.values()].sort(byCloseness), open };
}

/**
 * The verdict's answer: the first unsettled candidate, closest first over every partition's,
 * that its home confirms (confirm returns its id, or null when its sketch disagrees), else the
 * settled one. Before a candidate is asked, every partition that left candidates out after one
 * closer than it is asked for its next ones (more), so the order is the same as if every
 * partition had sent all of them.
 */
export function decideJoined(joined: JoinedReplies, confirm: (candidate: PartitionAnswer) => string | null, more: (partition: number, after: PartitionAnswer) => MoreUnsettled): PartitionAnswer | null {
  return new JoinedWalk(joined).run(confirm, more);
}

/**
 * decideJoined's walk over a page's candidates, kept between calls: when confirm or more throws
 * (round two over Kafka: the answer is not here yet), the walk stays where it was, and the next
 * call goes on from there with the same callbacks' answers, instead of walking the candidates
 * tried so far again. The cursors of `joined.open` are copied, not moved.
 */
export class JoinedWalk {
  private readonly settled: PartitionAnswer | null;
  private pending: PartitionAnswer[];
  private readonly seen = new Set<number>();
  private readonly open: { partition: number; last: PartitionAnswer }[];
  /** Candidates before this one in `pending` were asked and did not agree. */
  private next = 0;

  constructor(joined: JoinedReplies) {
    const { settled } = joined;
    this.settled = settled;
    this.pending = joined.unsettled;
    for (const c of this.pending) this.seen.add(c.sequence);
    this.open = joined.open.filter((o) => settled === null || closer(o.last, settled)).map((o) => ({ ...o }));
  }

  /**
   * The partitions the walk asks for more, as it stands, if every candidate it knows fails its
   * confirmation: those whose last candidate sent is closer than the settled answer. Round two
   * asks them in the trip that asks the confirmations; an answer the walk does not ask for is
   * never used.
   */
  openBeforeSettled(): { partition: number; after: PartitionAnswer }[] {
    const { settled } = this;
    return this.open.filter((o) => settled === null || closer(o.last, settled)).map((o) => ({ partition: o.partition, after: o.last }));
  }

  run(confirm: (candidate: PartitionAnswer) => string | null, more: (partition: number, after: PartitionAnswer) => MoreUnsettled): PartitionAnswer | null {
    const { settled, open, seen } = this;
    for (;;) {
      const next = this.next < this.pending.length ? this.pending[this.next]! : null;
      // A partition's candidates left out all come after its last one sent; they may come before
      // `next` (or be any at all, closer than the settled answer) only when that last one does.
      const ask = open.findIndex((o) => (next === null ? settled === null || closer(o.last, settled) : closer(o.last, next)));
      if (ask >= 0) {
        const o = open[ask]!;
        const got = more(o.partition, o.last);
        const added: PartitionAnswer[] = [];
        for (const c of got.unsettled) {
          if ((settled !== null && !closer(c, settled)) || seen.has(c.sequence)) continue;
          seen.add(c.sequence);
          added.push(c);
        }
        // The candidates tried so far all come before the added ones (a partition's cursor only
        // moves past them), so sorting the whole keeps them where they are, before `next`.
        if (added.length > 0) this.pending = this.pending.concat(added).sort(byCloseness);
        if (got.more && got.unsettled.length > 0) o.last = got.unsettled[got.unsettled.length - 1]!;
        else open.splice(ask, 1);
        continue;
      }
      if (next === null) return settled;
      const id = confirm(next);
      this.next++;
      if (id !== null) return { ...next, id };
    }
  }
}

/**
 * What travels to, and stays at, a partition other than the page's home: the sketch's tail
 * (content-number digests, script share, size), and in place of the bins a mark that the page
 * has a sketch (isKnownSketch reads the bins). Nothing reads these bins as bins: round one never
 * compares bins, and round two asks the home.
 */
export function sketchTail(sketch: Uint8Array): Uint8Array {
  const out = new Uint8Array(SKETCH_BINS);
  out[0] = isKnownSketch(sketch, 0) ? 1 : 0;
  out.set(sketch.subarray(MINHASH_BINS), MINHASH_BINS);
  return out;
}

/** A partition's state as a snapshot gives it back (src/storage/partition-snapshot.ts): IndexPartition.fromParts. */
export interface PartitionParts {
  /** An index with table masks (its snapshot holds them). */
  readonly index: FingerprintIndex;
  /** Its page store, in the tier the partition is made with. */
  readonly store: PageStore;
  /** Its band log, its runs in that tier's blobs; null without bands. */
  readonly bands: BandLog | null;
  readonly position: number;
}

export class IndexPartition {
  readonly partition: number;
  readonly index: FingerprintIndex;
  readonly store: PageStore;
  /** The band keys routed here, with what a band candidate needs (band-log.ts); null without bands. */
  readonly bands: BandLog | null;
  /** Next global sequence this partition expects at least (pages come in increasing sequence). */
  position = 0;
  private readonly radius: number;
  private readonly check: SketchCheck | null;
  private readonly hits: QueryResult = createQueryResult(64);
  private readonly closest: Closest = { ref: -1, distance: 65, sequence: Infinity };
  private readonly fp = new Uint32Array(2);
  /** Names each unsettled candidate's home (its table-0 partition), as a reply sends it; null: candidates go without one. */
  private readonly routing: IndexRouting | null;

  /**
   * `tier`: where the page store keeps its records, ids and sketches, and the band keys their
   * sorted runs (the service gives scratch files, as single mode's page store has; in memory
   * when absent).
   */
  constructor(partition: number, plan: TablePlan, k: number, secondStage: SecondStage | null, routing: IndexRouting | null = null, tier: PageTier = memoryPageTier(), parts: PartitionParts | null = null) {
    this.partition = partition;
    this.routing = routing;
    this.radius = secondStage?.radius ?? k;
    if (this.radius > plan.k) throw new RangeError(`partition ${partition}: the plan answers up to ${plan.k} bits, not ${this.radius}`);
    this.check = createSketchCheck(k, secondStage);
    const bands = secondStage?.bands ?? 0;
    if (parts === null) {
      this.index = FingerprintIndex.create({ plan, initialCapacity: 1024, tableMasks: true });
      this.store = new PageStore(1024, secondStage === null ? 0 : SKETCH_BINS, tier);
      this.bands = bands > 0 ? new BandLog(bands, tier.runs) : null;
      return;
    }
    if (!parts.index.hasTableMasks || JSON.stringify(parts.index.plan) !== JSON.stringify(plan)) throw new RangeError(`partition ${partition}: the index given is not one with table masks over this plan`);
    if (parts.store.sketchBytes !== (secondStage === null ? 0 : SKETCH_BINS)) throw new RangeError(`partition ${partition}: the page store given keeps ${parts.store.sketchBytes} sketch bytes a page`);
    if ((parts.bands?.bands.bands ?? 0) !== bands) throw new RangeError(`partition ${partition}: the band log given has ${parts.bands?.bands.bands ?? 0} bands, not ${bands}`);
    if (!(Number.isSafeInteger(parts.position) && parts.position >= 0)) throw new RangeError(`partition ${partition}: position ${parts.position}`);
    this.index = parts.index;
    this.store = parts.store;
    this.bands = parts.bands;
    this.position = parts.position;
  }

  /**
   * A partition over state loaded from a snapshot (src/storage/partition-snapshot.ts), which
   * goes on as the partition it was taken from (its store and band log in the tier they were
   * loaded into).
   */
  static fromParts(partition: number, plan: TablePlan, k: number, secondStage: SecondStage | null, routing: IndexRouting | null, parts: PartitionParts): IndexPartition {
    return new IndexPartition(partition, plan, k, secondStage, routing, undefined, parts);
  }

  get size(): number {
    return this.index.size;
  }

  /**
   * Round one for `page`, decided at global sequence `sequence`, then records it. Sequences
   * must grow from call to call (the order log's order).
   */
  apply(page: RoutedPage, sequence: number): PartitionReply {
    if (sequence < this.position) throw new RangeError(`partition ${this.partition}: sequence ${sequence} is behind ${this.position}`);
    const { settled, unsettled } = this.probe(page, Infinity);
    this.replay(page, sequence);
    const more = unsettled.length > UNSETTLED_PER_REPLY;
    if (more) unsettled.length = UNSETTLED_PER_REPLY;
    return { settled, unsettled, more };
  }

  /**
   * Records `page` at `sequence` as apply does, without its probe: for a page whose verdict is
   * committed already (a restore replaying the logs), whose reply nobody waits for. The state
   * after it is apply's (the probe changes nothing), so later pages, confirmations and requests
   * for more are answered alike; the probe is most of apply's cost. apply is this after its probe.
   */
  replay(page: RoutedPage, sequence: number): void {
    if (sequence < this.position) throw new RangeError(`partition ${this.partition}: sequence ${sequence} is behind ${this.position}`);
    this.position = sequence + 1;
    this.record(page, sequence);
  }

  /**
   * Round one's reply to `page` as apply gave it at `sequence`, for a page recorded already: the
   * probe as of `sequence` (the pages decided before it). A partition restored from a snapshot
   * answers so the chunks its owners may still wait for.
   */
  replyAsOf(page: RoutedPage, sequence: number): PartitionReply {
    if (sequence >= this.position) throw new RangeError(`partition ${this.partition}: the page of sequence ${sequence} is not applied here yet`);
    const { settled, unsettled } = this.probe(page, sequence);
    const more = unsettled.length > UNSETTLED_PER_REPLY;
    if (more) unsettled.length = UNSETTLED_PER_REPLY;
    return { settled, unsettled, more };
  }

  /**
   * The unsettled candidates round one gave `page` (decided at `sequence`, as this partition got
   * it) that come after `after`, closest first, at most UNSETTLED_PER_REPLY: the probe again, as
   * of `sequence` (the pages decided before it), which gives what it gave then.
   *
   * With `steps` > 1: what as many calls in a row give, each after the last candidate of the one
   * before, stopping at the first that has no more, joined (at most steps x UNSETTLED_PER_REPLY
   * candidates). The probe's list is sorted, so that is one probe and a longer cut, not `steps`
   * probes.
   */
  more(page: RoutedPage, sequence: number, after: PartitionAnswer, steps = 1): MoreUnsettled {
    if (sequence >= this.position) throw new RangeError(`partition ${this.partition}: the page of sequence ${sequence} is not applied here yet`);
    if (!Number.isInteger(steps) || steps < 1) throw new RangeError(`steps=${steps} must be a positive integer`);
    const unsettled = this.probe(page, sequence).unsettled.filter((c) => closer(after, c));
    const limit = steps * UNSETTLED_PER_REPLY;
    const more = unsettled.length > limit;
    if (more) unsettled.length = limit;
    return { unsettled, more };
  }

  /**
   * Round two, at the candidate's home: the candidate's id when its sketch agrees with the page's
   * (the overlap, or one script's text for another's, and the same content numbers), as
   * closestRecorded asks of a candidate beyond k or of a short page's; null when it does not, or
   * when the page decided at `sequence` is not held here. With `fingerprint`, an agreeing
   * candidate's fingerprint goes there too ([hi, lo]): the verdict names it, and the candidate
   * came by sequence and home, without it.
   */
  confirm(sequence: number, sketch: Uint8Array | null, fingerprint?: Uint32Array): string | null {
    const check = this.check;
    const ref = this.refOfSequence(sequence);
    if (check === null || ref < 0) return null;
    loadSketch(check, sketch);
    const agree = this.store.sketchesAgree(ref, check.sketch, check.size, check.minOverlap) && this.store.numbersAgree(ref, check.sketch, check.size);
    if (!agree) return null;
    if (fingerprint !== undefined) this.index.fingerprintOf(ref, fingerprint);
    return this.store.idOf(ref);
  }

  /** The ref recorded at `sequence`, or -1. */
  private refOfSequence(sequence: number): number {
    const store = this.store;
    const end = this.index.nextReference;
    const ref = firstRefFrom(store, store.lowRef, end, sequence);
    return ref < end && store.holds(ref) && store.sequenceOf(ref) === sequence ? ref : -1;
  }

  /**
   * closestRecorded, split where it reads the sketches' bins: those candidates go unsettled, all
   * of them, closest first. Over the pages decided before `asOf` only (Infinity: all held).
   */
  private probe(page: RoutedPage, asOf: number): { settled: PartitionAnswer | null; unsettled: PartitionAnswer[] } {
    const { hits, store, index } = this;
    // A pair within the radius meets where a table that matches it routes both pages, in that
    // table here; a page here by its bands alone has no table entry to meet one by.
    if (page.tables !== 0) index.query(page.hi, page.lo, this.radius, hits, page.tables);
    else hits.count = 0;
    const check = this.check;
    if (check !== null) loadSketch(check, page.sketch);
    const best = this.closest;
    best.ref = -1;
    best.distance = 65;
    best.sequence = Infinity;
    const unsettled: PartitionAnswer[] = [];
    for (let i = 0; i < hits.count; i++) {
      const ref = hits.refs[i]!;
      const distance = hits.distances[i]!;
      const sequence = store.sequenceOf(ref);
      if (sequence >= asOf) continue;
      const shortPair = distance > 0 && (page.short || (store.flagsOf(ref) & FLAG_SHORT) !== 0);
      if (shortPair && (check === null || !check.known || check.size < MIN_CONFIRMING_SIZE || store.sketchSize(ref) < MIN_CONFIRMING_SIZE)) continue;
      if (check !== null) {
        if (distance > check.k || shortPair) {
          // Round two asks for the same content numbers too, which the tails tell here: a
          // candidate without them is not sent to be confirmed.
          if (store.numbersAgree(ref, check.sketch, check.size)) {
            index.fingerprintOf(ref, this.fp);
            unsettled.push(this.unsettled(distance, sequence, this.fp[0]!, this.fp[1]!));
          }
          continue;
        }
        if (check.known && !store.numbersAgree(ref, check.sketch, check.size) && store.holdsSketch(ref)) continue;
      }
      if (distance < best.distance || (distance === best.distance && sequence < best.sequence)) {
        best.ref = ref;
        best.distance = distance;
        best.sequence = sequence;
      }
    }
    const bands = this.bands;
    if (bands !== null && check !== null && page.sketch !== null && page.bandKeys.length > 0) {
      // Band candidates within the radius are a table probe's (here or where their table meets);
      // beyond it they are beyond k (radius >= k), so never settled here: named by sequence for
      // round two when the tails say their numbers agree, as above.
      const n = bands.candidates(page.bandKeys, page.bandKeys.length, asOf);
      const found = bands.bands.found;
      // A candidate's record is one read of the tier (BandLog.load); its sequence is in RAM.
      for (let i = 0; i < n; i++) {
        const ref = found[i]!;
        const record = bands.load(ref);
        const hi = record.hi;
        const lo = record.lo;
        const distance = hammingDistance(hi, lo, page.hi, page.lo);
        if (distance <= this.radius) continue;
        if ((page.short || record.isShort) && (!check.known || check.size < MIN_CONFIRMING_SIZE || record.size < MIN_CONFIRMING_SIZE)) continue;
        if (record.numbersAgree(check.sketch, check.size)) unsettled.push(this.unsettled(distance, bands.sequenceOf(ref), hi, lo));
      }
    }
    const settled = best.ref < 0 ? null : this.answer(best.ref, best.distance, best.sequence);
    if (settled !== null) {
      // Only candidates closer than the settled answer can change the verdict.
      let kept = 0;
      for (const c of unsettled) if (closer(c, settled)) unsettled[kept++] = c;
      unsettled.length = kept;
    }
    unsettled.sort(byCloseness);
    return { settled, unsettled };
  }

  /** A candidate for round two, named by sequence, with its home when this partition knows the routing. */
  private unsettled(distance: number, sequence: number, hi: number, lo: number): PartitionAnswer {
    const routing = this.routing;
    return routing === null ? { id: null, distance, sequence, hi, lo } : { id: null, distance, sequence, hi, lo, home: routing.tablePartition(0, hi, lo) };
  }

  private answer(ref: number, distance: number, sequence: number): PartitionAnswer {
    this.index.fingerprintOf(ref, this.fp);
    return { id: this.store.idOf(ref), distance, sequence, hi: this.fp[0]!, lo: this.fp[1]! };
  }

  private record(page: RoutedPage, sequence: number): void {
    if (page.tables !== 0) {
      const store = this.store;
      if (page.id === null) throw new RangeError(`partition ${this.partition}: a page with table entries comes with its id (sequence ${sequence})`);
      if (store.lookup(page.id) >= 0) return;
      const ref = this.index.insert(page.hi, page.lo, page.tables);
      store.recordById(ref, page.id, null, 0, page.short ? FLAG_SHORT : 0, Math.max(0, Math.floor(page.fetchedAt / 1000)), sequence);
      if (store.sketchBytes > 0) store.setSketch(ref, page.sketch);
    }
    // A page without a known sketch has no band keys in the single index either.
    if (this.bands !== null && page.sketch !== null && page.bandKeys.length > 0 && isKnownSketch(page.sketch, 0)) {
      this.bands.add(page.hi, page.lo, sequence, page.short, page.sketch, page.bandKeys, page.bandKeys.length);
    }
  }
}
