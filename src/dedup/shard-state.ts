/**
 * One shard of a sharded index: the pages whose id hashes to this shard, in a
 * permuted-table index of their own, plus what the shard remembers of each
 * (id, fetch time, global sequence number).
 *
 * The sharded pipeline puts every decided page in exactly one shard (its
 * *home*, by id hash) and asks every shard about every page, in the one global
 * order of the sequence log. A shard answers "my closest page within k bits
 * that came before sequence n" (ties to the smallest sequence); the closest of
 * the shards' answers is what a single index holding every page would have
 * answered, because the shards partition the pages and "closest, then
 * earliest" is a total order on candidates. Why by id and not by table
 * prefix: a page is then stored once (memory per instance falls as 1/S, the
 * page store included, not t/S), a re-sent id always meets its own home shard
 * (which recognises it), and every shard already reads the whole sequence, so
 * broadcasting a probe costs no extra message, only one local probe per shard
 * (see docs/architecture.md for the cost model).
 *
 * Pure: no Kafka, no I/O.
 */
import { FingerprintIndex, createQueryResult, type QueryResult, type TablePlan } from '../index/index.js';
import { FLAG_SHORT, PageStore } from './page-store.js';
import { Decider, addBandCandidates, closestRecorded, createSketchCheck, loadSketch, type Closest, type SecondStage, type SketchCheck } from './decider.js';
import { SKETCH_BINS } from '../fingerprint/feature-sketch.js';
import { hashString64, type Hash64 } from './string-hash.js';
import type { PageTier } from './blob-store.js';
import { firstRefFrom } from './sequence-search.js';

export interface ShardCandidate {
  /** Local ref of the candidate in this shard. */
  readonly ref: number;
  readonly distance: number;
  /** Global sequence number of the candidate's decision. */
  readonly sequence: number;
}

const idHash: Hash64 = { hi: 0, lo: 0 };

/** The shard a page id lives in: a frozen function of the id (changing it moves every page). */
export function homeShard(id: string, shards: number): number {
  hashString64(id, idHash);
  // hi is uniform over 2^32; multiply-shift maps it onto [0, shards) without modulo bias.
  return Math.floor((idHash.hi >>> 0) * shards / 4294967296);
}

export class ShardState {
  readonly shard: number;
  readonly index: FingerprintIndex;
  readonly store: PageStore;
  readonly k: number;
  /** Restores go through the decider's bulk path (sorted runs built by radix sort). */
  private readonly restorer: Decider;
  /** Next global sequence number this shard has not applied yet. */
  position = 0;
  /**
   * Sequence window (0 = none): a page is visible to a probe at sequence n
   * only if its own sequence is at least n - window. A rule of the sequence,
   * not of the clock, so every holder of the shard answers alike.
   */
  window = 0;
  private readonly hits: QueryResult = createQueryResult(64);
  private readonly closest: Closest = { ref: -1, distance: 65, sequence: Infinity };
  private readonly fp = new Uint32Array(2);
  /** Probe radius: k, or the second stage's radius. */
  private readonly radius: number;
  private readonly check: SketchCheck | null;

  /**
   * `state`: a loaded snapshot's index and page store; the position follows from its sequences.
   * `secondStage`: as the single-index decider's (DeciderOptions.secondStage), so both answer alike.
   * `tier`: where a new page store keeps records, ids and sketches (in memory if absent).
   */
  constructor(shard: number, plan: TablePlan, k: number, state?: { index: FingerprintIndex; store: PageStore }, secondStage: SecondStage | null = null, tier?: PageTier) {
    this.shard = shard;
    this.index = state?.index ?? FingerprintIndex.create({ plan, initialCapacity: 1024 });
    this.store = state?.store ?? new PageStore(1024, secondStage === null ? 0 : SKETCH_BINS, tier);
    this.k = k;
    this.radius = secondStage?.radius ?? k;
    this.check = createSketchCheck(k, secondStage);
    if (secondStage !== null && (this.store.sketchBytes !== SKETCH_BINS || secondStage.radius > plan.k)) {
      throw new RangeError(`shard ${shard}: the second stage needs ${SKETCH_BINS}-byte sketches in the page store and a plan for radius ${secondStage.radius}`);
    }
    this.store.useBands(secondStage?.bands ?? 0);
    this.position = state ? this.store.nextSequence : 0;
    this.restorer = new Decider({ index: this.index, store: this.store, k });
  }

  /**
   * Records many pages read back from the shard's changelog at once (ids
   * already held are skipped), at bulk-load speed; the position moves past
   * the highest sequence. Returns how many were new.
   */
  restoreBatch(pages: readonly { id: string; hi: number; lo: number; short: boolean; fetchedAt: number; sequence: number; sketch?: Uint8Array | null }[]): number {
    if (this.window > 0) {
      // With a window an id may have been recorded again after it left it:
      // replay one by one, as it was recorded, so the same record wins.
      const before = this.index.size;
      for (const p of pages) {
        this.insert(p.id, p.hi, p.lo, p.short, p.fetchedAt, p.sequence, p.sketch);
        if (p.sequence + 1 > this.position) this.position = p.sequence + 1;
      }
      return this.index.size - before;
    }
    const added = this.restorer.restoreBatch(pages.map((p) => ({ page: p, duplicateOf: null, distance: 0, sequence: p.sequence })));
    for (const p of pages) if (p.sequence + 1 > this.position) this.position = p.sequence + 1;
    return added;
  }

  get size(): number {
    return this.index.size;
  }

  get byteLength(): number {
    return this.index.byteLength + this.store.byteLength;
  }

  /** Ref of a page id recorded here and still inside the window as of `at`, or -1. */
  lookup(id: string, at = Infinity): number {
    const ref = this.store.lookup(id);
    if (ref < 0 || this.window === 0 || this.store.sequenceOf(ref) >= at - this.window) return ref;
    return -1;
  }

  /**
   * Frees the pages no probe can see any more: those more than `keep`
   * sequence numbers behind the position (refs follow sequence order, so
   * this is a prefix cut). `keep` is larger than the window, so that a page
   * asked again as of its first sequence still meets what it met then.
   */
  evictBefore(sequence: number): number {
    const store = this.store;
    const lo = this.firstRefFrom(sequence);
    if (lo <= store.lowRef) return 0;
    const removed = this.index.removeBefore(lo);
    store.forgetBefore(lo);
    return removed;
  }

  /** The first ref recorded at or after global sequence `sequence`. */
  private firstRefFrom(sequence: number): number {
    return firstRefFrom(this.store, this.store.lowRef, this.index.nextReference, sequence);
  }

  /**
   * The closest page within k bits decided before `before` (global sequence),
   * ties to the smallest sequence; short pages (too few features) match only
   * exactly, as in the single-index decider. Null when there is none.
   */
  closestBefore(hi: number, lo: number, short: boolean, before: number, sketch: Uint8Array | null = null): ShardCandidate | null {
    this.index.query(hi, lo, this.radius, this.hits);
    // Refs follow sequence order: the band rule's "newest pages before the probe" ends at the first ref at or after it.
    const check = this.check;
    if (check !== null) loadSketch(check, sketch);
    const notBefore = this.window > 0 ? before - this.window : -Infinity;
    const best = closestRecorded(this.hits, this.store, short, before, this.closest, notBefore, check);
    // As in the single-index decider: the bands' candidates, beyond the radius, only when the tables brought none the rule took.
    if (best.ref < 0 && this.store.bands !== null && sketch !== null) {
      const tableHits = this.hits.count;
      const refsBelow = before >= this.position ? Infinity : this.firstRefFrom(before);
      addBandCandidates(this.store, this.index, hi, lo, sketch, this.radius, this.hits, this.fp, refsBelow);
      if (this.hits.count > tableHits) closestRecorded(this.hits, this.store, short, before, this.closest, notBefore, check);
    }
    return best.ref < 0 ? null : { ref: best.ref, distance: best.distance, sequence: best.sequence };
  }

  /**
   * Records a page decided at global sequence `sequence`; returns its ref. A
   * known id inside the window is left as it is; one outside it is forgotten
   * and recorded anew (it is decided again as a new page, as after eviction).
   */
  insert(id: string, hi: number, lo: number, short: boolean, fetchedAtMs: number, sequence: number, sketch: Uint8Array | null = null): number {
    const known = this.store.lookup(id);
    if (known >= 0 && (this.window === 0 || this.store.sequenceOf(known) >= sequence - this.window)) return known;
    if (known >= 0) {
      this.index.remove(known);
      this.store.forget(known);
    }
    const ref = this.index.insert(hi, lo);
    this.store.recordById(ref, id, null, 0, short ? FLAG_SHORT : 0, Math.max(0, Math.floor(fetchedAtMs / 1000)), sequence);
    this.store.setSketch(ref, sketch);
    return ref;
  }

  /** Fingerprint of a ref as [hi, lo], or null once evicted. */
  fingerprintOf(ref: number): [number, number] | null {
    return this.index.fingerprintOf(ref, this.fp) ? [this.fp[0]!, this.fp[1]!] : null;
  }

  idOf(ref: number): string {
    return this.store.idOf(ref);
  }

  sequenceOf(ref: number): number {
    return this.store.sequenceOf(ref);
  }

  isShort(ref: number): boolean {
    return (this.store.flagsOf(ref) & FLAG_SHORT) !== 0;
  }

  /** A copy of ref's feature sketch, or null when the second stage is off. */
  sketchOf(ref: number): Uint8Array | null {
    return this.store.sketchBytes === 0 ? null : this.store.sketchOf(ref).slice();
  }
}

/** What applying one sequence record to the shards held here yields. */
export interface ShardOutputs {
  /** The closest earlier page of each shard that has one. */
  hits: { shard: number; id: string; distance: number; candidateSequence: number; hi: number | null; lo: number | null }[];
  /** Set when the page's home shard is held here and already knows its id. */
  repeat: { shard: number; first: number; hi: number; lo: number; short: boolean; sketch: Uint8Array | null } | null;
  /** Set when the page was recorded in its home shard (held here): the changelog entry to write. */
  inserted: { shard: number } | null;
}

export interface SequencedPage {
  readonly type: 'probe' | 'reprobe';
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  readonly fetchedAt?: number;
  /** For a reprobe: the sequence to answer as of. */
  readonly asOf?: number;
}

/**
 * Applies the record at global sequence `sequence` to every shard in `held`
 * whose position is that sequence, in the one order every instance applies
 * them: probe each shard (only pages before the record count), then record a
 * new page in its home shard. `sketch`: the page's feature sketch, for shards
 * running the second stage. A reprobe only asks, as of its `asOf`.
 * Deterministic: any instance holding a shard computes the same outputs.
 */
export function applySequenced(held: Iterable<ShardState>, shardCount: number, page: SequencedPage, sequence: number, sketch: Uint8Array | null = null): ShardOutputs {
  const out: ShardOutputs = { hits: [], repeat: null, inserted: null };
  const home = page.type === 'probe' ? homeShard(page.id, shardCount) : -1;
  const before = page.type === 'reprobe' ? page.asOf! : sequence;
  for (const shard of held) {
    // Exactly the next record of each shard: one behind (restored from an
    // older point) waits for the tail to come back to it; one ahead skips.
    if (shard.position !== sequence) continue;
    shard.position = sequence + 1;
    if (shard.shard === home) {
      const known = shard.lookup(page.id, sequence);
      if (known >= 0) {
        // A re-sent id: its answer is the one it got as of its first sequence,
        // which the emitter asks for with a reprobe. Nothing changes here.
        const fp = shard.fingerprintOf(known);
        out.repeat = { shard: shard.shard, first: shard.sequenceOf(known), hi: fp ? fp[0] : page.hi >>> 0, lo: fp ? fp[1] : page.lo >>> 0, short: shard.isShort(known), sketch: shard.sketchOf(known) };
        continue;
      }
    }
    const best = shard.closestBefore(page.hi, page.lo, page.short, before, sketch);
    if (best) {
      const fp = shard.fingerprintOf(best.ref);
      out.hits.push({ shard: shard.shard, id: shard.idOf(best.ref), distance: best.distance, candidateSequence: best.sequence, hi: fp ? fp[0] : null, lo: fp ? fp[1] : null });
    }
    if (shard.shard === home) {
      shard.insert(page.id, page.hi, page.lo, page.short, page.fetchedAt ?? 0, sequence, sketch);
      out.inserted = { shard: shard.shard };
    }
  }
  return out;
}
