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
 * Short pages (too few features for a meaningful simhash) are matched only
 * exactly: a short page is a duplicate only of a page with the identical
 * fingerprint, and a normal page is never called a duplicate of a short one
 * at a distance above 0. Empty pages never reach the decider (they are errors:
 * see PAGE_EMPTY), so empty pages can never duplicate each other.
 *
 * A page id decided before gets its recorded verdict again and changes
 * nothing: redelivery after a crash, or replay, is idempotent.
 */
import { FingerprintIndex, createQueryResult, type QueryResult } from '../index/index.js';
import { FLAG_SHORT, PageStore } from './page-store.js';

export interface DecisionInput {
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
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
}

export class Decider {
  readonly index: FingerprintIndex;
  readonly store: PageStore;
  readonly k: number;
  private readonly maxFingerprints: number;
  private readonly maxAgeSeconds: number;
  private readonly hits: QueryResult = createQueryResult(64);
  private readonly fp = new Uint32Array(2);
  /** Refs below this have been considered for age eviction. */
  private ageCursor = 0;

  constructor(options: DeciderOptions) {
    this.index = options.index;
    this.store = options.store ?? new PageStore();
    this.k = options.k;
    this.maxFingerprints = options.maxFingerprints ?? 0;
    this.maxAgeSeconds = options.maxAgeSeconds ?? 0;
    if (!Number.isInteger(this.k) || this.k < 0 || this.k > this.index.plan.k) {
      throw new RangeError(`k=${this.k} is outside 0..${this.index.plan.k} of the table plan`);
    }
  }

  decide(page: DecisionInput): Verdict {
    const known = this.store.lookup(page.id);
    if (known >= 0) return this.recorded(known, page);

    const hits = this.hits;
    this.index.query(page.hi, page.lo, this.k, hits);
    const store = this.store;
    let best = -1;
    let bestDistance = 65;
    let bestSequence = Infinity;
    for (let i = 0; i < hits.count; i++) {
      const ref = hits.refs[i]!;
      const distance = hits.distances[i]!;
      if (distance > 0 && (page.short || (store.flagsOf(ref) & FLAG_SHORT) !== 0)) continue;
      if (distance < bestDistance || (distance === bestDistance && store.sequenceOf(ref) < bestSequence)) {
        best = ref;
        bestDistance = distance;
        bestSequence = store.sequenceOf(ref);
      }
    }
    const ref = this.index.insert(page.hi, page.lo);
    const seconds = Math.floor(page.fetchedAt / 1000);
    const sequence = store.nextSequence;
    store.record(ref, page.id, best, best < 0 ? 0 : bestDistance, page.short ? FLAG_SHORT : 0, seconds, sequence);
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
    };
  }

  /** Decides pages in order; later pages see earlier ones of the same batch. */
  decideBatch(pages: readonly DecisionInput[]): Verdict[] {
    const out = new Array<Verdict>(pages.length);
    for (let i = 0; i < pages.length; i++) out[i] = this.decide(pages[i]!);
    return out;
  }

  /**
   * Re-applies a verdict read back from the changelog, without deciding again:
   * the state after replay is the state that produced the committed verdicts.
   */
  restore(page: DecisionInput, duplicateOf: string | null, distance: number, sequence: number): void {
    if (this.store.lookup(page.id) >= 0) return;
    const ref = this.index.insert(page.hi, page.lo);
    this.store.recordById(ref, page.id, duplicateOf, distance, page.short ? FLAG_SHORT : 0, Math.floor(page.fetchedAt / 1000), sequence);
  }

  /**
   * Applies the capacity and age limits. Called once per batch, not per page:
   * eviction is FIFO by ref, so it is a cursor walk, not a scan.
   */
  evict(nowMs: number): number {
    let evicted = 0;
    const next = this.nextRef();
    if (this.maxFingerprints > 0 && this.index.size > this.maxFingerprints) {
      evicted += this.index.removeBefore(next - this.maxFingerprints);
    }
    if (this.maxAgeSeconds > 0) {
      const cutoff = Math.floor(nowMs / 1000) - this.maxAgeSeconds;
      let cursor = this.ageCursor;
      while (cursor < next && this.store.fetchedAtOf(cursor) < cutoff) cursor++;
      if (cursor > this.ageCursor) {
        evicted += this.index.removeBefore(cursor);
        this.ageCursor = cursor;
      }
    }
    return evicted;
  }

  /** Bytes held by the index and the page store. */
  get byteLength(): number {
    return this.index.byteLength + this.store.byteLength;
  }

  /** Refs are dense from 0, one per recorded page. */
  private nextRef(): number {
    return this.store.size;
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
    };
  }
}
