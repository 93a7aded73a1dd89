/**
 * Verdicts: the one rule of the product, pure over its state.
 *
 * A page is a duplicate iff some page decided before it (in the pipeline's
 * order) has a fingerprint within k bits. The verdict names the CLOSEST such
 * page, ties broken by the EARLIEST (smallest decision sequence number, which
 * the changelog carries so a recovered index breaks ties the same way), with
 * the distance; exact
 * copies are duplicates at distance 0. Every decided page enters the index,
 * duplicates included, because "seen before" means every page seen before.
 *
 * Short pages (too few features for a meaningful simhash) are matched by
 * simhash only exactly: a short page is a duplicate only of a page with the
 * identical fingerprint, and a normal page is never called a duplicate of a
 * short one at a distance above 0, unless the second stage is on and their
 * sketches confirm the match (as beyond k, at any distance: the sketch's
 * estimate rests on the words and shingles themselves, not on 64 sums of
 * a few of them). Empty pages never reach the decider (they are errors:
 * see PAGE_EMPTY), so empty pages can never duplicate each other.
 *
 * Second stage (DeciderOptions.secondStage; on by default in the product's
 * config): simhash within k bits stays the first stage. Earlier pages beyond
 * k become candidates when they share a sketch band with the page
 * (sketch-bands.ts) or, with a wider radius, lie within it; such a candidate
 * counts only if the sketches of the two pages (b-bit MinHash of their words and shingles,
 * src/fingerprint/feature-sketch.ts, with their sizes) estimate that the other
 * page holds minSimilarity or more of the larger page's features, and the
 * pages hold the same content numbers and identifiers
 * with an underscore. These are checked within k as well: a page with other versions or
 * identifiers than its match (the release notes of the next version, the
 * sibling class's API page) is another document, however few bits apart;
 * such a candidate is turned down and the next eligible one counts. The rule
 * stays "closest, ties to the earliest" over the eligible pages; a
 * first-stage match is always closer than a second-stage one, so the second
 * stage only adds duplicates where the first found none.
 *
 * A page id decided before gets its recorded verdict again and changes
 * nothing: redelivery after a crash, or replay, is idempotent, for as long as
 * the page's fingerprint is held. Eviction (maxFingerprints, maxAgeSeconds)
 * drops the fingerprint and the page's record together, so memory is bounded
 * by the same limits; a page id redelivered after its eviction is decided
 * again as a new page.
 */
import { FingerprintIndex, createQueryResult, pushResult, type QueryResult } from '../index/index.js';
import { FLAG_SHORT, PageStore } from './page-store.js';
import { FetchTimeMinima, NO_TIME } from './fetch-time-minima.js';
import { MIN_CONFIRMING_SIZE, SKETCH_BINS, isKnownSketch, sketchSize } from '../fingerprint/feature-sketch.js';
import { hammingDistance } from '../fingerprint/fingerprint-hex.js';

export interface DecisionInput {
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  /** Feature sketch (SKETCH_BINS bytes) for the second stage; unused when it is off. */
  readonly sketch?: Uint8Array | null;
  /** Fetch time in milliseconds since the epoch (age eviction). */
  readonly fetchedAt: number;
}

export interface Verdict {
  readonly id: string;
  readonly verdict: 'novel' | 'duplicate';
  readonly duplicateOf: string | null;
  readonly distance: number | null;
  readonly hi: number;
  readonly lo: number;
  /** Fingerprint of the duplicated page, when it is still in the index. */
  readonly duplicateOfHi: number | null;
  readonly duplicateOfLo: number | null;
  /** True when this page id had been decided before (the recorded verdict is returned). */
  readonly repeated: boolean;
  /** Table entries examined for this probe (0 when repeated). */
  readonly candidates: number;
  /** Position of this page in the decision order (carried by the changelog). */
  readonly sequence: number;
  /**
   * What the second stage did: 'confirmed' when the duplicate was found by it,
   * 'rejected' when it had candidates and turned them all down (by their sketches
   * beyond k, by their content numbers within k too),
   * null when it did not run (off, repeated, or a first-stage match, or no candidate).
   */
  readonly secondStage: 'confirmed' | 'rejected' | null;
}

/** One verdict read back from the changelog, for Decider.restoreBatch. */
export interface RestoredDecision {
  readonly page: DecisionInput;
  readonly duplicateOf: string | null;
  readonly distance: number;
  readonly sequence: number;
}

export interface DeciderOptions {
  readonly index: FingerprintIndex;
  readonly store?: PageStore;
  /** Max Hamming distance; at most the plan's k. */
  readonly k: number;
  /** Keep at most this many fingerprints in the index (FIFO); 0 = unbounded. */
  readonly maxFingerprints?: number;
  /** Evict fingerprints of pages fetched longer ago than this; 0 = never. */
  readonly maxAgeSeconds?: number;
  /** The second stage; the store must keep SKETCH_BINS bytes of sketch per page. */
  readonly secondStage?: SecondStage | null;
}

export interface SecondStage {
  /**
   * The tables are probed at this radius (k to the plan's k); candidates beyond k are verified by
   * their sketches. k: no wider probe, the bands alone find candidates beyond k.
   */
  readonly radius: number;
  /**
   * Least estimated share of the larger page's features that the other holds (the overlap of the
   * two sketches, feature-sketch.ts) to confirm one.
   */
  readonly minSimilarity: number;
  /**
   * Also take as candidates the pages that share a band of their sketch (sketch-bands.ts), at any
   * simhash distance: this many bands of 56/bands bins (BAND_COUNTS); 0 or absent = none.
   */
  readonly bands?: number;
}

/**
 * Appends to `hits` the pages held in `store` that share a sketch band with `sketch` and lie
 * beyond `radius` bits (those within it the table probe found already), with their distance.
 * `refsBelow`: only refs below it count (the pages decided before the probe, where the store
 * holds later ones too: a shard asked as of an earlier sequence). The single index and every
 * shard call it alike, so both answer alike.
 */
export function addBandCandidates(store: PageStore, index: FingerprintIndex, hi: number, lo: number, sketch: Uint8Array | null | undefined, radius: number, hits: QueryResult, fp: Uint32Array, refsBelow = Infinity): void {
  const bands = store.bands;
  if (bands === null || sketch == null) return;
  const n = bands.candidates(sketch, store, refsBelow);
  const found = bands.found;
  for (let i = 0; i < n; i++) {
    const ref = found[i]!;
    if (!store.holds(ref) || !index.fingerprintOf(ref, fp)) continue;
    const distance = hammingDistance(fp[0]!, fp[1]!, hi, lo);
    if (distance > radius) pushResult(hits, ref, distance);
  }
}


/** The second stage of one probe, for closestRecorded: hits beyond k need this sketch's agreement. */
export interface SketchCheck {
  k: number;
  sketch: Uint8Array;
  /** The least share of the larger page's features the other must hold (feature-sketch.ts, overlapOfEqualBins). */
  minOverlap: number;
  /** The probing page's sketch is known (loadSketch); without one, candidates within k are not checked. */
  known: boolean;
  /** The size recorded in the probing page's sketch (feature-sketch.ts, sketchSize), read once per probe. */
  size: number;
  /** Out: candidates turned down by their sketches (beyond k) or their content numbers (within k too). */
  rejected: number;
}

/** The check of a second stage (null when it is off), for the single index and every shard alike. */
export function createSketchCheck(k: number, stage: SecondStage | null): SketchCheck | null {
  return stage === null ? null : { k, sketch: new Uint8Array(SKETCH_BINS), minOverlap: stage.minSimilarity, known: false, size: 0, rejected: 0 };
}

/** Sets the probing page's sketch; without one, zeros, which agree with a stored sketch only by chance. */
export function loadSketch(check: SketchCheck, sketch: Uint8Array | null | undefined): void {
  if (sketch != null && sketch.length === SKETCH_BINS) check.sketch.set(sketch);
  else check.sketch.fill(0);
  check.known = isKnownSketch(check.sketch, 0);
  check.size = sketchSize(check.sketch, 0);
}

/** The best candidate of one probe: ref -1 when there is none. */
export interface Closest {
  ref: number;
  distance: number;
  sequence: number;
}

/**
 * The verdict rule over one probe's hits, shared by the single index and
 * every shard of a sharded one: the closest recorded page, ties to the
 * smallest decision sequence, among those decided in [notBefore, before); short
 * pages (too few features) match only exactly, on either side. Writes the
 * answer into `out` (no allocation on the hot path).
 */
export function closestRecorded(hits: QueryResult, store: PageStore, short: boolean, before: number, out: Closest, notBefore = -Infinity, check: SketchCheck | null = null): Closest {
  out.ref = -1;
  out.distance = 65;
  out.sequence = Infinity;
  if (check !== null) check.rejected = 0;
  for (let i = 0; i < hits.count; i++) {
    const ref = hits.refs[i]!;
    const distance = hits.distances[i]!;
    const sequence = store.sequenceOf(ref);
    if (sequence >= before || sequence < notBefore) continue;
    // A hit that cannot beat the page taken already is not weighed: what follows reads its record
    // from the tier (a disk read), and its outcome could not change the answer (its rejection is
    // counted only for a probe that takes no page).
    if (distance > out.distance || (distance === out.distance && sequence > out.sequence)) continue;
    // A short page's simhash says little (too few features): above distance 0 only its sketch can confirm a match.
    const shortPair = distance > 0 && (short || (store.flagsOf(ref) & FLAG_SHORT) !== 0);
    if (shortPair && (check === null || !check.known || check.size < MIN_CONFIRMING_SIZE || store.sketchSize(ref) < MIN_CONFIRMING_SIZE)) continue;
    if (check !== null) {
      if (distance > check.k || shortPair) {
        // Second stage, only on sketch agreement (the overlap, or one script's text for another's:
        // sketchesAgreeAt), and never past a closer match (a first-stage match is always closer
        // than one beyond k).
        if (distance > out.distance) continue;
        if (!store.sketchesAgree(ref, check.sketch, check.size, check.minOverlap) || !store.numbersAgree(ref, check.sketch, check.size)) {
          check.rejected++;
          continue;
        }
      } else if (check.known && !store.numbersAgree(ref, check.sketch, check.size) && store.holdsSketch(ref)) {
        // Within k, too, a page with other content numbers (release notes of another version, the
        // sibling class's API page) is another document, however few bits its simhash moved.
        check.rejected++;
        continue;
      }
    }
    if (distance < out.distance || (distance === out.distance && sequence < out.sequence)) {
      out.ref = ref;
      out.distance = distance;
      out.sequence = sequence;
    }
  }
  return out;
}

export class Decider {
  readonly index: FingerprintIndex;
  readonly store: PageStore;
  readonly k: number;
  private readonly maxFingerprints: number;
  private readonly maxAgeSeconds: number;
  /** Probe radius: k, or the second stage's radius. */
  private readonly radius: number;
  private readonly check: SketchCheck | null;
  /** The second stage's settings, or null when it is off. */
  readonly secondStage: SecondStage | null;
  private readonly hits: QueryResult = createQueryResult(64);
  private readonly closest: Closest = { ref: -1, distance: 65, sequence: Infinity };
  private readonly fp = new Uint32Array(2);
  /** No ref below this is held. */
  private lowHeld = 0;
  private readonly ages = new FetchTimeMinima();

  constructor(options: DeciderOptions) {
    this.index = options.index;
    this.store = options.store ?? new PageStore();
    this.k = options.k;
    this.maxFingerprints = options.maxFingerprints ?? 0;
    this.maxAgeSeconds = options.maxAgeSeconds ?? 0;
    if (!Number.isInteger(this.k) || this.k < 0 || this.k > this.index.plan.k) {
      throw new RangeError(`k=${this.k} is outside 0..${this.index.plan.k} of the table plan`);
    }
    const stage = options.secondStage ?? null;
    this.secondStage = stage;
    this.radius = stage?.radius ?? this.k;
    this.check = null;
    if (stage !== null) {
      if (!Number.isInteger(stage.radius) || stage.radius < this.k || stage.radius > this.index.plan.k) {
        throw new RangeError(`second-stage radius ${stage.radius} is outside ${this.k}..${this.index.plan.k} (k or above, within the table plan)`);
      }
      if (!(stage.minSimilarity >= 0 && stage.minSimilarity <= 1)) throw new RangeError(`second-stage similarity ${stage.minSimilarity} is outside 0..1`);
      if (this.store.sketchBytes !== SKETCH_BINS) throw new RangeError(`the second stage needs a page store keeping ${SKETCH_BINS}-byte sketches`);
      this.check = createSketchCheck(this.k, stage);
      this.store.useBands(stage.bands ?? 0);
    }
    // A restored state: rebuild the fetch-time minima from what is held.
    this.lowHeld = this.store.lowRef;
    const next = this.index.nextReference;
    for (let ref = this.lowHeld; ref < next; ref++) if (this.store.holds(ref)) this.ages.note(ref, this.store.fetchedAtOf(ref));
  }

  decide(page: DecisionInput): Verdict {
    const known = this.store.lookup(page.id);
    if (known >= 0) return this.recorded(known, page);

    const hits = this.hits;
    this.index.query(page.hi, page.lo, this.radius, hits);
    const store = this.store;
    const check = this.check;
    if (check !== null) loadSketch(check, page.sketch);
    closestRecorded(hits, store, page.short, Infinity, this.closest, -Infinity, check);
    // The bands' candidates lie beyond the radius, so they never beat a page the tables found
    // and the rule took (nor are they weighed then: closestRecorded skips a candidate farther
    // than its best). Only without one are they looked up, and the rule run again over all.
    if (this.closest.ref < 0 && store.bands !== null && page.sketch != null) {
      const tableHits = hits.count;
      addBandCandidates(store, this.index, page.hi, page.lo, page.sketch, this.radius, hits, this.fp);
      if (hits.count > tableHits) closestRecorded(hits, store, page.short, Infinity, this.closest, -Infinity, check);
    }
    const best = this.closest.ref;
    const bestDistance = this.closest.distance;
    let secondStage: Verdict['secondStage'] = null;
    if (check !== null) {
      if (best >= 0 && bestDistance > this.k) secondStage = 'confirmed';
      else if (best < 0 && check.rejected > 0) secondStage = 'rejected';
    }
    const ref = this.index.insert(page.hi, page.lo);
    const seconds = Math.floor(page.fetchedAt / 1000);
    const sequence = store.nextSequence;
    store.record(ref, page.id, best, best < 0 ? 0 : bestDistance, page.short ? FLAG_SHORT : 0, seconds, sequence);
    if (check !== null) store.setSketch(ref, page.sketch);
    this.ages.note(ref, seconds);
    let dupHi: number | null = null;
    let dupLo: number | null = null;
    if (best >= 0 && this.index.fingerprintOf(best, this.fp)) {
      dupHi = this.fp[0]!;
      dupLo = this.fp[1]!;
    }
    return {
      id: page.id,
      verdict: best < 0 ? 'novel' : 'duplicate',
      duplicateOf: best < 0 ? null : this.store.idOf(best),
      distance: best < 0 ? null : bestDistance,
      hi: page.hi >>> 0,
      lo: page.lo >>> 0,
      duplicateOfHi: dupHi,
      duplicateOfLo: dupLo,
      repeated: false,
      candidates: hits.candidates,
      sequence,
      secondStage,
    };
  }

  /**
   * Re-applies a verdict read back from the changelog, without deciding again:
   * the state after replay is the state that produced the committed verdicts.
   */
  restore(page: DecisionInput, duplicateOf: string | null, distance: number, sequence: number): void {
    if (this.store.lookup(page.id) >= 0) return;
    const ref = this.index.insert(page.hi, page.lo);
    const seconds = Math.floor(page.fetchedAt / 1000);
    this.store.recordById(ref, page.id, duplicateOf, distance, page.short ? FLAG_SHORT : 0, seconds, sequence);
    this.store.setSketch(ref, page.sketch);
    this.ages.note(ref, seconds);
  }

  /**
   * restore() for many verdicts at once, in order, with the same result
   * (same refs, same records): ids already held, or repeated within the
   * batch, are skipped; the new fingerprints enter the index in one bulk
   * insert (sorted runs built directly), so a replay restores at bulk speed.
   */
  restoreBatch(decisions: readonly RestoredDecision[]): number {
    const n = decisions.length;
    const his = new Uint32Array(n);
    const los = new Uint32Array(n);
    const first = this.index.nextReference;
    let added = 0;
    for (let i = 0; i < n; i++) {
      const { page, duplicateOf, distance, sequence } = decisions[i]!;
      const ref = first + added;
      const seconds = Math.floor(page.fetchedAt / 1000);
      if (!this.store.recordByIdIfNew(ref, page.id, duplicateOf, distance, page.short ? FLAG_SHORT : 0, seconds, sequence)) continue;
      this.store.setSketch(ref, page.sketch);
      this.ages.note(ref, seconds);
      his[added] = page.hi;
      los[added] = page.lo;
      added++;
    }
    this.index.bulkInsert(his, los, added);
    return added;
  }

  /**
   * Applies the capacity and age limits, to the index and the page store
   * alike. Called once per batch, not per page. Capacity is FIFO by ref (a
   * cut). Age holds for fetch times in any order: every page fetched before
   * now - maxAgeSeconds goes, found through per-block minima of fetch times;
   * the evicted prefix of refs is cut at once, pages past it one by one.
   */
  evict(nowMs: number): number {
    let evicted = 0;
    const next = this.index.nextReference;
    if (this.maxFingerprints > 0 && this.index.size > this.maxFingerprints) {
      evicted += this.cut(next - this.maxFingerprints);
    }
    if (this.maxAgeSeconds > 0) {
      const cutoff = Math.floor(nowMs / 1000) - this.maxAgeSeconds;
      if (cutoff <= 0) return evicted;
      const store = this.store;
      // Refs below `prefix` are all evictable or gone: cut them at once.
      let prefix = this.lowHeld;
      let open = true;
      const scattered: number[] = [];
      this.ages.scan(
        cutoff,
        this.lowHeld,
        next,
        (ref) => {
          if (!store.holds(ref)) {
            if (open) prefix = ref + 1;
            return NO_TIME;
          }
          const seconds = store.fetchedAtOf(ref);
          if (seconds >= cutoff) {
            open = false;
            return seconds;
          }
          if (open) prefix = ref + 1;
          else scattered.push(ref);
          return NO_TIME;
        },
        () => {
          open = false;
        },
      );
      evicted += this.cut(prefix);
      for (const ref of scattered) {
        if (this.index.remove(ref)) evicted++;
        store.forget(ref);
      }
    }
    return evicted;
  }

  /** Evicts every ref below `ref` from the index and the page store. */
  private cut(ref: number): number {
    if (ref <= this.lowHeld) return 0;
    const removed = this.index.removeBefore(ref);
    this.store.forgetBefore(ref);
    this.lowHeld = ref;
    return removed;
  }

  /** Bytes held by the index, the page store and the eviction bookkeeping. */
  get byteLength(): number {
    return this.index.byteLength + this.store.byteLength + this.ages.byteLength;
  }

  /** Page ids the decider remembers (for idempotent redelivery); the same pages as the index holds. */
  get pageIds(): number {
    return this.store.idCount;
  }

  /** Bytes of the page store alone. */
  get pageStoreBytes(): number {
    return this.store.byteLength;
  }

  private recorded(ref: number, page: DecisionInput): Verdict {
    const duplicateOf = this.store.duplicateOfId(ref);
    let hi = page.hi >>> 0;
    let lo = page.lo >>> 0;
    if (this.index.fingerprintOf(ref, this.fp)) {
      hi = this.fp[0]!;
      lo = this.fp[1]!;
    }
    let dupHi: number | null = null;
    let dupLo: number | null = null;
    if (duplicateOf !== null) {
      const dupRef = this.store.lookup(duplicateOf);
      if (dupRef >= 0 && this.index.fingerprintOf(dupRef, this.fp)) {
        dupHi = this.fp[0]!;
        dupLo = this.fp[1]!;
      }
    }
    return {
      id: page.id,
      verdict: duplicateOf === null ? 'novel' : 'duplicate',
      duplicateOf,
      distance: duplicateOf === null ? null : this.store.distanceOf(ref),
      hi,
      lo,
      duplicateOfHi: dupHi,
      duplicateOfLo: dupLo,
      repeated: true,
      candidates: 0,
      sequence: this.store.sequenceOf(ref),
      secondStage: null,
    };
  }
}
