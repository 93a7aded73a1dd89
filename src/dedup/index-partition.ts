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
 * A page is recorded here once, whatever routed it (one or more tables, band
 * keys): the table probe runs over every table of the partition's index,
 * which finds a superset of what the routed tables alone would, all of it
 * within the radius. Its band keys here are the only ones this partition
 * keeps, so a band probe sees exactly the key's pages. A re-sent id never
 * comes here (the input partition's id store answers it); an id recorded
 * already is answered but not recorded twice.
 *
 * Pure: no Kafka, no I/O. The layout (index, page store with sketches) is
 * the single index's; the routed design's compact layout replaces it in
 * both at once.
 */
import { FingerprintIndex, createQueryResult, pushResult, type QueryResult, type TablePlan } from '../index/index.js';
import { FLAG_SHORT, PageStore } from './page-store.js';
import { closestRecorded, createSketchCheck, loadSketch, type Closest, type SecondStage, type SketchCheck } from './decider.js';
import { SketchBands } from './sketch-bands.js';
import { SKETCH_BINS } from '../fingerprint/feature-sketch.js';
import { hammingDistance } from '../fingerprint/fingerprint-hex.js';

/** A page as an index partition receives it: what the entry record carries. */
export interface RoutedPage {
  readonly id: string;
  readonly hi: number;
  readonly lo: number;
  readonly short: boolean;
  /** Milliseconds since the epoch. */
  readonly fetchedAt: number;
  readonly sketch: Uint8Array | null;
  /** The page's band keys routed to this partition (routing.ts PartitionShare.bandKeys). */
  readonly bandKeys: readonly number[];
}

/** A partition's answer for one page: its closest eligible earlier page, or null. */
export interface PartitionAnswer {
  readonly id: string;
  readonly distance: number;
  /** Global sequence of the answer's decision (ties go to the smallest). */
  readonly sequence: number;
  readonly hi: number;
  readonly lo: number;
}

/** The closer of two answers (then the earlier); the join of a page's answers. */
export function closerAnswer(a: PartitionAnswer | null, b: PartitionAnswer | null): PartitionAnswer | null {
  if (a === null) return b;
  if (b === null) return a;
  return b.distance < a.distance || (b.distance === a.distance && b.sequence < a.sequence) ? b : a;
}

export class IndexPartition {
  readonly partition: number;
  readonly index: FingerprintIndex;
  readonly store: PageStore;
  readonly bands: SketchBands | null;
  /** Next global sequence this partition expects at least (pages come in increasing sequence). */
  position = 0;
  private readonly radius: number;
  private readonly check: SketchCheck | null;
  private readonly hits: QueryResult = createQueryResult(64);
  private readonly closest: Closest = { ref: -1, distance: 65, sequence: Infinity };
  private readonly fp = new Uint32Array(2);

  constructor(partition: number, plan: TablePlan, k: number, secondStage: SecondStage | null) {
    this.partition = partition;
    this.index = FingerprintIndex.create({ plan, initialCapacity: 1024 });
    this.store = new PageStore(1024, secondStage === null ? 0 : SKETCH_BINS);
    this.radius = secondStage?.radius ?? k;
    if (this.radius > plan.k) throw new RangeError(`partition ${partition}: the plan answers up to ${plan.k} bits, not ${this.radius}`);
    this.check = createSketchCheck(k, secondStage);
    this.bands = secondStage !== null && (secondStage.bands ?? 0) > 0 ? new SketchBands(secondStage.bands!) : null;
  }

  get size(): number {
    return this.index.size;
  }

  /**
   * Probes for `page`, decided at global sequence `sequence`, then records it. Sequences must
   * grow from call to call (the order log's order).
   */
  apply(page: RoutedPage, sequence: number): PartitionAnswer | null {
    if (sequence < this.position) throw new RangeError(`partition ${this.partition}: sequence ${sequence} is behind ${this.position}`);
    this.position = sequence + 1;
    const answer = this.probe(page);
    this.record(page, sequence);
    return answer;
  }

  private probe(page: RoutedPage): PartitionAnswer | null {
    const { hits, store, index, fp } = this;
    index.query(page.hi, page.lo, this.radius, hits);
    const bands = this.bands;
    if (bands !== null && page.sketch !== null && page.bandKeys.length > 0) {
      const n = bands.candidatesOfKeys(page.bandKeys, page.bandKeys.length, store);
      const found = bands.found;
      for (let i = 0; i < n; i++) {
        const ref = found[i]!;
        if (!index.fingerprintOf(ref, fp)) continue;
        const distance = hammingDistance(fp[0]!, fp[1]!, page.hi, page.lo);
        // Within the radius, the table probe found it already.
        if (distance > this.radius) pushResult(hits, ref, distance);
      }
    }
    const check = this.check;
    if (check !== null) loadSketch(check, page.sketch);
    const best = closestRecorded(hits, store, page.short, Infinity, this.closest, -Infinity, check);
    if (best.ref < 0) return null;
    index.fingerprintOf(best.ref, fp);
    return { id: store.idOf(best.ref), distance: best.distance, sequence: best.sequence, hi: fp[0]!, lo: fp[1]! };
  }

  private record(page: RoutedPage, sequence: number): void {
    const store = this.store;
    if (store.lookup(page.id) >= 0) return;
    const ref = this.index.insert(page.hi, page.lo);
    store.recordById(ref, page.id, null, 0, page.short ? FLAG_SHORT : 0, Math.max(0, Math.floor(page.fetchedAt / 1000)), sequence);
    if (store.sketchBytes > 0) store.setSketch(ref, page.sketch);
    if (this.bands !== null && page.sketch !== null && page.bandKeys.length > 0 && store.holdsSketch(ref)) {
      this.bands.addKeys(ref, page.bandKeys, page.bandKeys.length, store.lowRef);
    }
  }
}
