/**
 * Where a page's entries go in the routed sharded design (docs/architecture.md,
 * "Sharded mode, routed by table prefix"): one table entry per table, to the
 * index partition of its permuted prefix's range, and one band entry per
 * sketch band, to the partition of the band's key.
 *
 * Why this is exact: two fingerprints within the plan's k share every bit of
 * the chosen blocks of some table (the pigeonhole argument of plan.ts), so
 * that table's prefix, so its range, so its partition: every pair within k
 * meets in some partition. Two pages that share a band share its key, so its
 * partition. Every partition answers with its closest eligible earlier page,
 * and "closest, then earliest" is a total order, so the closest answer is the
 * answer of one index holding every page (index-partition.ts; the property
 * test test/unit/dedup/routed-decisions.test.ts).
 *
 * A frozen function of the plan, the partition count and the band count:
 * changing any of them moves entries, so they are fixed when the index topic
 * is created. Pure.
 */
import type { TablePlan } from '../index/index.js';
import { compilePlan, key32, type CompiledTable } from '../index/permutation.js';
import { MINHASH_BINS } from '../fingerprint/feature-sketch.js';
import { bandKey } from './sketch-bands.js';

/** One partition's share of a page: the tables that routed it there and its band keys there. */
export interface PartitionShare {
  readonly partition: number;
  /** Bit i set: table i's entry is here. */
  tableMask: number;
  /** The band keys routed here (unsigned 32-bit). */
  readonly bandKeys: number[];
}

export class IndexRouting {
  readonly partitions: number;
  readonly bands: number;
  private readonly rows: number;
  private readonly tables: readonly CompiledTable[];
  /** Per table: how many prefix ranges it is cut into (a power of two), as bits of its prefix. */
  private readonly rangeBits: readonly number[];

  constructor(plan: TablePlan, partitions: number, bands: number) {
    if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partitions=${partitions} must be a positive integer`);
    if (plan.tables.length > 31) throw new RangeError(`a plan of ${plan.tables.length} tables is more than routing supports (31)`);
    this.partitions = partitions;
    this.bands = bands;
    this.rows = bands > 0 ? MINHASH_BINS / bands : 0;
    this.tables = compilePlan(plan).tables;
    // About four ranges per partition in all: a table's ranges spread over the partitions, so
    // no partition takes a whole table, and hot prefixes spread with their ranges.
    let bits = 0;
    while (1 << bits < Math.ceil((4 * partitions) / this.tables.length)) bits++;
    this.rangeBits = this.tables.map((t) => Math.min(bits, t.prefix32));
  }

  get tableCount(): number {
    return this.tables.length;
  }

  /** The partition of table `table`'s entry for fingerprint (hi, lo). */
  tablePartition(table: number, hi: number, lo: number): number {
    const t = this.tables[table]!;
    const bits = this.rangeBits[table]!;
    const range = bits === 0 ? 0 : key32(t.segments, hi, lo) >>> (32 - bits);
    return ((table << bits) + range) % this.partitions;
  }

  /** The partition of a band key (multiply-shift: no modulo bias). */
  bandPartition(key: number): number {
    return Math.floor(((key >>> 0) * this.partitions) / 4294967296);
  }

  /** Band `band`'s key of a sketch. */
  bandKey(sketch: Uint8Array, band: number): number {
    return bandKey(sketch, band, this.rows);
  }

  /**
   * Every partition a page touches, with what it holds there, in partition order. A page
   * without a sketch (second stage off, or none recorded) has table entries only.
   */
  route(hi: number, lo: number, sketch: Uint8Array | null): PartitionShare[] {
    // A page touches a few partitions (t + bands at most): a list searched in place is cheaper than a map.
    const shares: PartitionShare[] = [];
    const share = (partition: number): PartitionShare => {
      for (let i = 0; i < shares.length; i++) if (shares[i]!.partition === partition) return shares[i]!;
      const s: PartitionShare = { partition, tableMask: 0, bandKeys: [] };
      shares.push(s);
      return s;
    };
    for (let t = 0; t < this.tables.length; t++) share(this.tablePartition(t, hi, lo)).tableMask |= 1 << t;
    if (sketch !== null && this.bands > 0) {
      for (let b = 0; b < this.bands; b++) {
        const key = this.bandKey(sketch, b);
        share(this.bandPartition(key)).bandKeys.push(key);
      }
    }
    return shares.sort((a, b) => a.partition - b.partition);
  }
}
