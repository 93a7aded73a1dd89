/**
 * The online permuted-table index (Manku, Jain, Das Sarma, WWW 2007, section
 * 3.1): t tables, each a list of sorted runs of (key32, ref), where key32 is
 * the top 32 bits of the table's permutation of the fingerprint. The full
 * fingerprint is stored once per ref.
 *
 * Fresh inserts go to a small buffer (the last refs, scanned by brute force)
 * and are sorted into a new run when it fills; runs are merged size-tiered
 * (a run is merged into its older neighbour once the neighbour is at most
 * tuning.mergeRatio times larger), so every ref is rewritten O(log N) times.
 * Runs cover contiguous ref ranges, oldest first, identically in every table.
 *
 * Probe: per table, find the entries sharing the query's key32 prefix, reject
 * early on the key32 bits below the prefix (popcount of the stored bits is a
 * lower bound of the distance), then check the full fingerprint. A hit is
 * reported only by the first table whose chosen blocks all match, so each
 * stored fingerprint is reported once without a visited set.
 *
 * With table masks (an index partition of the routed design, src/dedup/
 * index-partition.ts), each ref is in the tables of its own mask only, and a
 * query names the tables to probe: a pair is reported by the first table,
 * among those both name, whose chosen blocks all match, in the runs and the
 * buffer alike, so what a query reports never depends on which refs are
 * still in the buffer.
 */
import { DedupError } from '../errors.js';
import { popcount32 } from '../fingerprint/fingerprint-hex.js';
import { compilePlan, firstCleanTable, firstCleanTableOf, key32, POP16, type CompiledPlan } from './permutation.js';
import { validatePlan, type TablePlan } from './plan.js';
import { pushResult, type QueryResult } from './query-result.js';
import { sortPairs } from './radix-sort.js';
import { probeCompressed } from './compressed-run.js';
import {
  buildRun,
  lowerBound,
  mergeRuns,
  refAt,
  RUN_LARGE,
  RUN_SMALL,
  runTuning,
  SortedRun,
} from './sorted-run.js';
import { decodeSnapshotFrom, encodeSnapshotChunks, maskBytes, snapshotByteLength } from './snapshot.js';
import { bufferSource, concatChunks, STREAM_CHUNK_BYTES, type ByteSource } from './byte-stream.js';

export interface IndexOptions {
  plan: TablePlan;
  /** Expected number of fingerprints (a hint; the index grows as needed). */
  initialCapacity?: number;
  /** Store large runs with the paper's section 3.2 compression. */
  compressed?: boolean;
  /**
   * Each ref in the tables of its own mask (insert's `tables`), not in all: at most 31 tables.
   * Its snapshot holds the masks too (snapshot.ts, flag bit 1).
   */
  tableMasks?: boolean;
}

const CHUNK_BITS = 16;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;
const MAX_REFS = 0xffffffff;
/**
 * Merge policy; internal, adjustable for benchmarks. The ratio grows as
 * cbrt(N / bufferLimit), which keeps about four runs per table at any size
 * (each costs a probe) for O(cbrt(N)) rewrites per insert.
 */
export const tuning = { bufferLimit: 256, mergeRatio: 4 };
const EMPTY = new Uint32Array(0);
const EMPTY_MASKS = new Uint8Array(0);
type MaskChunk = Uint8Array | Uint16Array | Uint32Array;

export class FingerprintIndex {
  readonly plan: TablePlan;
  readonly compressed: boolean;
  private readonly compiled: CompiledPlan;
  private readonly masks: Int32Array;
  /** Every table's bit. */
  private readonly allTables: number;
  /** With table masks: each ref's tables, one chunk per fpChunk; null without. */
  private readonly tableMaskChunks: MaskChunk[] | null;
  /** hi, lo interleaved; chunk c holds refs [c * CHUNK, (c + 1) * CHUNK). */
  private fpChunks: Uint32Array[] = [];
  /** Removed-ref bits, one chunk per fpChunk. */
  private deadChunks: Uint32Array[] = [];
  private nextRef = 0;
  private minLive = 0;
  private live = 0;
  private bufStart = 0;
  /** runs[t][r]; runStart/runEnd/runDead describe run r in every table. */
  private runs: SortedRun[][];
  private runStart: number[] = [];
  private runEnd: number[] = [];
  private runDead: number[] = [];
  private bestRef = -1;
  private bestDist = 0;
  /** warm(): per table and run, the entry its probe starts near; and what it read (kept, so the reads stay). */
  private readonly warmAt = new Int32Array(256);
  private warmed = 0;
  /**
   * A probe's entries that passed the early reject, in the order found (table, run, entry), checked
   * together once every table and run is scanned (checkPending): the run each is in, its place
   * there, its table, and then its ref (ints, not the runs themselves: a run merged away must
   * not stay reachable from here).
   */
  private pendingRun = new Int32Array(64);
  private pendingAt = new Int32Array(64);
  private pendingTable = new Int32Array(64);
  private pendingRef = new Uint32Array(64);
  private pending = 0;

  private constructor(plan: TablePlan, compressed: boolean, tableMasks = false) {
    validatePlan(plan);
    if (tableMasks && plan.tables.length > 31) throw new RangeError(`table masks hold 31 tables, not ${plan.tables.length}`);
    this.plan = plan;
    this.compressed = compressed;
    this.compiled = compilePlan(plan);
    this.masks = this.compiled.masks;
    this.allTables = plan.tables.length >= 31 ? -1 : (1 << plan.tables.length) - 1;
    this.tableMaskChunks = tableMasks ? [] : null;
    this.runs = plan.tables.map(() => []);
  }

  static create(options: IndexOptions): FingerprintIndex {
    return new FingerprintIndex(options.plan, options.compressed === true, options.tableMasks === true);
  }

  get size(): number {
    return this.live;
  }

  /** Refs handed out so far (the next insert returns this). */
  get nextReference(): number {
    return this.nextRef;
  }

  get byteLength(): number {
    let bytes = 0;
    for (const c of this.fpChunks) bytes += c.byteLength;
    for (const c of this.deadChunks) bytes += c.byteLength;
    for (const c of this.tableMaskChunks ?? []) bytes += c.byteLength;
    for (const table of this.runs) for (const run of table) bytes += run.byteLength;
    return bytes;
  }

  /** Adds a fingerprint; `tables`, with table masks only, the tables it goes in (a bit each). */
  insert(hi: number, lo: number, tables = this.allTables): number {
    const ref = this.nextRef;
    if (ref >= MAX_REFS) throw new DedupError('INDEX_LIMIT', 'index has handed out 2^32 - 1 refs');
    const c = ref >>> CHUNK_BITS;
    if (c === this.fpChunks.length) {
      this.fpChunks.push(new Uint32Array(CHUNK * 2));
      this.deadChunks.push(new Uint32Array(CHUNK >>> 5));
      this.tableMaskChunks?.push(this.newMaskChunk());
    }
    if (this.tableMaskChunks !== null) this.tableMaskChunks[c]![ref & CHUNK_MASK] = (tables & this.allTables) >>> 0;
    else if (tables !== this.allTables) throw new RangeError('an index without table masks puts every fingerprint in every table');
    const chunk = this.fpChunks[c]!;
    const o = (ref & CHUNK_MASK) << 1;
    chunk[o] = hi;
    chunk[o + 1] = lo;
    this.nextRef = ref + 1;
    this.live++;
    if (this.nextRef - this.bufStart >= tuning.bufferLimit) this.flush();
    return ref;
  }

  /**
   * Appends n fingerprints at once (a restore, a changelog replay): refs
   * nextReference .. nextReference + n - 1, exactly as n insert() calls would
   * hand them out, and the same answers afterwards. A batch of at least the
   * buffer size becomes one sorted run per table directly (one radix sort per
   * table, no buffer flushes, no merge cascade along the way); smaller batches
   * go through the buffer like single inserts. Returns the first ref.
   */
  bulkInsert(his: Uint32Array, los: Uint32Array, n = his.length): number {
    if (!Number.isInteger(n) || n < 0 || n > his.length || n > los.length) {
      throw new RangeError(`bulkInsert: n=${n} is outside the arrays (${his.length}, ${los.length})`);
    }
    const from = this.nextRef;
    if (from + n > MAX_REFS) throw new DedupError('INDEX_LIMIT', 'index has handed out 2^32 - 1 refs');
    if (this.tableMaskChunks !== null) throw new RangeError('bulkInsert puts fingerprints in every table; an index with table masks takes insert() only');
    if (n < tuning.bufferLimit) {
      for (let i = 0; i < n; i++) this.insert(his[i]!, los[i]!);
      return from;
    }
    this.flush();
    const to = from + n;
    for (let c = from >>> CHUNK_BITS; c <= (to - 1) >>> CHUNK_BITS; c++) {
      if (c === this.fpChunks.length) {
        this.fpChunks.push(new Uint32Array(CHUNK * 2));
        this.deadChunks.push(new Uint32Array(CHUNK >>> 5));
      }
    }
    for (let i = 0; i < n; ) {
      const ref = from + i;
      const chunk = this.fpChunks[ref >>> CHUNK_BITS]!;
      const o = ref & CHUNK_MASK;
      const m = Math.min(n - i, CHUNK - o);
      for (let j = 0; j < m; j++) {
        chunk[(o + j) << 1] = his[i + j]!;
        chunk[((o + j) << 1) + 1] = los[i + j]!;
      }
      i += m;
    }
    this.nextRef = to;
    this.live += n;
    this.bufStart = to;
    const keys = new Uint32Array(n);
    const refs = new Uint32Array(n);
    const tables = this.compiled.tables;
    for (let t = 0; t < tables.length; t++) {
      const seg = tables[t]!.segments;
      for (let i = 0; i < n; i++) {
        keys[i] = key32(seg, his[i]!, los[i]!);
        refs[i] = from + i;
      }
      sortPairs(keys, refs, n);
      this.runs[t]!.push(buildRun(keys, refs, n, this.compressed));
    }
    this.runStart.push(from);
    this.runEnd.push(to);
    this.runDead.push(0);
    this.cascade();
    return from;
  }

  private isDead(ref: number): boolean {
    if (ref < this.minLive || ref >= this.nextRef) return true;
    return (this.deadChunks[ref >>> CHUNK_BITS]![(ref & CHUNK_MASK) >>> 5]! & (1 << (ref & 31))) !== 0;
  }

  fingerprintOf(ref: number, out: Uint32Array): boolean {
    if (!Number.isInteger(ref) || this.isDead(ref)) return false;
    const chunk = this.fpChunks[ref >>> CHUNK_BITS]!;
    const o = (ref & CHUNK_MASK) << 1;
    out[0] = chunk[o]!;
    out[1] = chunk[o + 1]!;
    return true;
  }

  remove(ref: number): boolean {
    if (!Number.isInteger(ref) || this.isDead(ref)) return false;
    this.deadChunks[ref >>> CHUNK_BITS]![(ref & CHUNK_MASK) >>> 5]! |= 1 << (ref & 31);
    this.live--;
    const r = this.runOf(ref);
    if (r >= 0) {
      this.runDead[r]!++;
      if (this.runDead[r]! * 2 > this.runSize(r)) this.rebuildRun(r);
    }
    return true;
  }

  removeBefore(ref: number): number {
    const end = Math.min(Math.max(Math.floor(ref), this.minLive), this.nextRef);
    if (!(end > this.minLive)) return 0;
    let removed = 0;
    for (let r = this.minLive; r < end; r++) if (!this.isDead(r)) removed++;
    // Runs wholly below `end` go; a run cut by it counts its newly dead refs.
    let drop = 0;
    while (drop < this.runStart.length && this.runEnd[drop]! <= end) drop++;
    if (drop < this.runStart.length && this.runStart[drop]! < end) {
      let killed = 0;
      for (let r = Math.max(this.runStart[drop]!, this.minLive); r < end; r++) if (!this.isDead(r)) killed++;
      this.runDead[drop]! += killed;
    }
    if (drop > 0) {
      for (const table of this.runs) table.splice(0, drop);
      this.runStart.splice(0, drop);
      this.runEnd.splice(0, drop);
      this.runDead.splice(0, drop);
    }
    this.minLive = end;
    this.live -= removed;
    for (let c = 0; (c + 1) * CHUNK <= end && c < this.fpChunks.length; c++) {
      this.fpChunks[c] = EMPTY;
      this.deadChunks[c] = EMPTY;
      if (this.tableMaskChunks !== null) this.tableMaskChunks[c] = EMPTY_MASKS;
    }
    if (this.runStart.length > 0 && this.runDead[0]! * 2 > this.runSize(0)) this.rebuildRun(0);
    return removed;
  }

  /** Sorts the fresh-insert buffer into the runs and merges every run into one. */
  compact(): void {
    this.flush();
    while (this.runStart.length > 1) this.mergeRuns(this.runStart.length - 2);
    if (this.runStart.length === 1 && this.runDead[0]! > 0) this.rebuildRun(0);
  }

  /**
   * Every fingerprint within k of (hi, lo), once each. `tables`: the tables to probe (a bit each;
   * all by default); a fingerprint is found only through a table both name whose chosen blocks
   * match (with table masks, its own tables; without, every table).
   */
  query(hi: number, lo: number, k: number, out: QueryResult, tables = this.allTables): number {
    this.checkK(k);
    out.count = 0;
    out.candidates = this.probe(hi | 0, lo | 0, k, out, tables & this.allTables);
    return out.count;
  }

  nearest(hi: number, lo: number, k: number): number {
    this.checkK(k);
    this.bestRef = -1;
    this.bestDist = k + 1;
    this.probe(hi | 0, lo | 0, k, null, this.allTables);
    return this.bestRef;
  }

  /** Entries of run r, over its tables: what its dead refs are weighed against. */
  private runSize(r: number): number {
    if (this.tableMaskChunks === null) return this.runs[0]![r]!.length;
    let n = 0;
    for (const table of this.runs) n += table[r]!.length;
    return n;
  }

  /** The tables ref is in that a query of `tables` reads. */
  private sharedTables(ref: number, tables: number): number {
    return this.tableMaskChunks === null ? tables : tables & this.tableMaskChunks[ref >>> CHUNK_BITS]![ref & CHUNK_MASK]!;
  }

  private checkK(k: number): void {
    if (!(Number.isInteger(k) && k >= 0 && k <= this.plan.k)) {
      throw new DedupError('PLAN_INVALID', `query k must be an integer in 0..${this.plan.k}, got ${String(k)}`);
    }
  }

  /**
   * Reports a verified candidate found through table t (t < 0: in the buffer), for a query of
   * `tables`: once, through the first table both name whose blocks match.
   */
  private check(ref: number, hi: number, lo: number, k: number, t: number, out: QueryResult | null, tables: number): void {
    if (ref < this.minLive) return;
    const chunk = this.fpChunks[ref >>> CHUNK_BITS]!;
    const o = (ref & CHUNK_MASK) << 1;
    const dHi = chunk[o]! ^ hi;
    const dLo = chunk[o + 1]! ^ lo;
    const d = popcount32(dHi) + popcount32(dLo);
    if (d > k) return;
    if ((this.deadChunks[ref >>> CHUNK_BITS]![(ref & CHUNK_MASK) >>> 5]! & (1 << (ref & 31))) !== 0) return;
    if (tables !== this.allTables || this.tableMaskChunks !== null) {
      // Found through the first table both name whose blocks match, and only there (the buffer
      // holds refs of every table: it reports what some such table would).
      const first = firstCleanTableOf(this.masks, dHi, dLo, this.sharedTables(ref, tables));
      if (first < 0 || (t >= 0 && first !== t)) return;
    } else if (t >= 0 && firstCleanTable(this.masks, dHi, dLo) !== t) return;
    if (out === null) {
      if (d < this.bestDist || (d === this.bestDist && ref < this.bestRef)) {
        this.bestDist = d;
        this.bestRef = ref;
      }
      return;
    }
    pushResult(out, ref, d);
  }

  /**
   * Reads, for every table and run a probe will scan, its directory entry, then its first entry
   * (a raw run's; a compressed run is left alone): at 10M fingerprints each is a cache and TLB
   * miss, and here the misses of all the tables and runs are in flight together, where the probe
   * would wait on each in turn (directory, then entries, run after run).
   */
  private warm(hi: number, lo: number, queried: number): void {
    const tables = this.compiled.tables;
    const at = this.warmAt;
    let n = 0;
    let touched = 0;
    for (let t = 0; t < tables.length; t++) {
      if ((queried & (1 << t)) === 0) continue;
      const ct = tables[t]!;
      const lowKey = (key32(ct.segments, hi, lo) & ct.prefixMask) >>> 0;
      const runs = this.runs[t]!;
      for (let r = 0; r < runs.length && n < at.length; r++) {
        const run = runs[r]!;
        if (run.kind === RUN_LARGE) {
          at[n++] = run.dir[lowKey >>> 16]!;
        } else if (run.kind === RUN_SMALL && run.dirBits > 0) {
          at[n++] = run.dir[lowKey >>> (32 - run.dirBits)]!;
        } else {
          at[n++] = -1;
        }
      }
    }
    n = 0;
    for (let t = 0; t < tables.length; t++) {
      if ((queried & (1 << t)) === 0) continue;
      const runs = this.runs[t]!;
      for (let r = 0; r < runs.length && n < at.length; r++) {
        const run = runs[r]!;
        const i = at[n++]!;
        if (i < 0 || i >= run.length) continue;
        touched ^= run.kind === RUN_LARGE ? run.res[i]! : run.keys[i]!;
      }
    }
    this.warmed = touched;
  }

  private probe(hi: number, lo: number, k: number, out: QueryResult | null, queried: number): number {
    let candidates = 0;
    const tables = this.compiled.tables;
    this.warm(hi, lo, queried);
    for (let t = 0; t < tables.length; t++) {
      if ((queried & (1 << t)) === 0) continue;
      const ct = tables[t]!;
      const qk = key32(ct.segments, hi, lo);
      const lowKey = (qk & ct.prefixMask) >>> 0;
      const highKey = (qk | ct.rejectMask) >>> 0;
      const rej = ct.rejectMask;
      const runs = this.runs[t]!;
      for (let r = 0; r < runs.length; r++) {
        const run = runs[r]!;
        if (run.kind === RUN_SMALL) {
          const keys = run.keys;
          let i: number;
          let n: number;
          if (run.dirBits > 0) {
            const shift = 32 - run.dirBits;
            i = run.dir[lowKey >>> shift]!;
            n = run.dir[(highKey >>> shift) + 1]!;
            while (i < n && keys[i]! < lowKey) i++;
          } else {
            n = run.length;
            i = lowerBound(keys, 0, n, lowKey);
          }
          for (; i < n; i++) {
            const key = keys[i]!;
            if (key > highKey) break;
            candidates++;
            const x = (key ^ qk) & rej;
            if (POP16[x & 0xffff]! + POP16[x >>> 16]! <= k) this.pend(r, i, t);
          }
        } else if (run.kind === RUN_LARGE) {
          const dir = run.dir;
          const res = run.res;
          const qres = qk & 0xffff;
          if (ct.prefix32 <= 16) {
            const b0 = lowKey >>> 16;
            const b1 = (highKey >>> 16) + 1;
            const end = dir[b1]!;
            candidates += end - dir[b0]!;
            for (let i = dir[b0]!; i < end; i++) {
              if (POP16[res[i]! ^ qres]! <= k) this.pend(r, i, t);
            }
          } else {
            const b = qk >>> 16;
            const end = dir[b + 1]!;
            const highRes = highKey & 0xffff;
            const rejRes = rej & 0xffff;
            let i = lowerBound(res, dir[b]!, end, lowKey & 0xffff);
            for (; i < end; i++) {
              const x = res[i]!;
              if (x > highRes) break;
              candidates++;
              if (POP16[(x ^ qres) & rejRes]! <= k) this.pend(r, i, t);
            }
          }
        } else {
          // Its entries are checked as they are decoded: the ones pending go first, in order.
          this.checkPending(hi, lo, k, out, queried);
          candidates += probeCompressed(run.packed!, lowKey, highKey, qk, rej, k, this, t, hi, lo, out, queried);
        }
      }
    }
    this.checkPending(hi, lo, k, out, queried);
    const from = Math.max(this.bufStart, this.minLive);
    candidates += this.nextRef - from;
    for (let ref = from; ref < this.nextRef; ref++) this.check(ref, hi, lo, k, -1, out, queried);
    return candidates;
  }

  /** Notes entry i of run r of table t, past the early reject, for checkPending. */
  private pend(r: number, i: number, t: number): void {
    const j = this.pending++;
    if (j === this.pendingAt.length) {
      const grow = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
        const b = new Int32Array(j * 2);
        b.set(a);
        return b;
      };
      this.pendingRun = grow(this.pendingRun);
      this.pendingAt = grow(this.pendingAt);
      this.pendingTable = grow(this.pendingTable);
      this.pendingRef = new Uint32Array(j * 2);
    }
    this.pendingRun[j] = r;
    this.pendingAt[j] = i;
    this.pendingTable[j] = t;
  }

  /**
   * Checks the pending entries, in the order they were found (so the results come in the order
   * a check per entry gave). Each step is a pass over all of them: their refs (at 10M
   * fingerprints each a cache and TLB miss in the run's ref arrays), then their fingerprints
   * (another, in the fingerprint chunks), then the checks. The misses of one pass do not wait on
   * each other, so the CPU has them in flight together, where checking entry after entry waited
   * on two or three misses in turn.
   */
  private checkPending(hi: number, lo: number, k: number, out: QueryResult | null, queried: number): void {
    const n = this.pending;
    if (n === 0) return;
    this.pending = 0;
    const run = this.pendingRun;
    const at = this.pendingAt;
    const table = this.pendingTable;
    const refs = this.pendingRef;
    for (let j = 0; j < n; j++) refs[j] = refAt(this.runs[table[j]!]![run[j]!]!, at[j]!);
    let touched = 0;
    const minLive = this.minLive;
    for (let j = 0; j < n; j++) {
      const ref = refs[j]!;
      if (ref >= minLive) touched ^= this.fpChunks[ref >>> CHUNK_BITS]![(ref & CHUNK_MASK) << 1]!;
    }
    this.warmed ^= touched;
    for (let j = 0; j < n; j++) this.check(refs[j]!, hi, lo, k, table[j]!, out, queried);
  }

  /** @internal Entry point for the compressed-run decoder. */
  verify(ref: number, hi: number, lo: number, k: number, t: number, out: QueryResult | null, tables: number): void {
    this.check(ref, hi, lo, k, t, out, tables);
  }

  private runOf(ref: number): number {
    let lo = 0;
    let hi = this.runStart.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.runEnd[mid]! <= ref) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.runStart.length && this.runStart[lo]! <= ref ? lo : -1;
  }

  /** Sorts the buffer into a new run, then merges runs size-tiered. */
  private flush(): void {
    const from = this.bufStart;
    const to = this.nextRef;
    if (to === from) return;
    this.bufStart = to;
    const refs0 = new Uint32Array(to - from);
    let n = 0;
    for (let ref = Math.max(from, this.minLive); ref < to; ref++) if (!this.isDead(ref)) refs0[n++] = ref;
    if (n === 0) return;
    const keys = new Uint32Array(n);
    const refs = new Uint32Array(n);
    const tables = this.compiled.tables;
    const maskChunks = this.tableMaskChunks;
    for (let t = 0; t < tables.length; t++) {
      const seg = tables[t]!.segments;
      let m = 0;
      for (let i = 0; i < n; i++) {
        const ref = refs0[i]!;
        if (maskChunks !== null && (maskChunks[ref >>> CHUNK_BITS]![ref & CHUNK_MASK]! & (1 << t)) === 0) continue;
        const chunk = this.fpChunks[ref >>> CHUNK_BITS]!;
        const o = (ref & CHUNK_MASK) << 1;
        keys[m] = key32(seg, chunk[o]!, chunk[o + 1]!);
        refs[m++] = ref;
      }
      sortPairs(keys, refs, m);
      this.runs[t]!.push(buildRun(keys, refs, m, this.compressed));
    }
    this.runStart.push(from);
    this.runEnd.push(to);
    this.runDead.push(0);
    this.cascade();
  }

  private cascade(): void {
    for (;;) {
      const m = this.runStart.length;
      if (m < 2) return;
      const older = this.runSize(m - 2);
      const newer = this.runSize(m - 1);
      // Small runs (below the large layout's size per table: they sit in the CPU caches, so a
      // probe of one costs little) merge at the base ratio; a merge into a large run uses the
      // ratio that keeps a few large runs. One ratio for all (cbrt(N / bufferLimit), 34 at 10M)
      // rewrote the newest small runs whole every few hundred inserts: about 50 entries per
      // insert and table at 10M, against about 12 so.
      const small = older < runTuning.largeMin * (this.tableMaskChunks === null ? 1 : this.runs.length);
      const ratio = small ? tuning.mergeRatio : Math.max(tuning.mergeRatio, Math.cbrt(this.live / tuning.bufferLimit));
      if (older > ratio * newer) return;
      this.mergeRuns(m - 2);
    }
  }

  /** Merges runs r and r + 1 in every table, purging removed refs. */
  private mergeRuns(r: number): void {
    const clean = this.runDead[r] === 0 && this.runDead[r + 1] === 0 && this.runStart[r]! >= this.minLive;
    const dead = clean ? null : (ref: number): boolean => this.isDead(ref);
    let length = 0;
    for (const table of this.runs) {
      const merged = mergeRuns(table[r]!, table[r + 1]!, dead, this.compressed);
      table.splice(r, 2, merged);
      length += merged.length;
    }
    this.runEnd.splice(r, 2, this.runEnd[r + 1]!);
    this.runStart.splice(r + 1, 1);
    this.runDead.splice(r, 2, 0);
    if (length === 0) this.dropRun(r);
  }

  private rebuildRun(r: number): void {
    const dead = (ref: number): boolean => this.isDead(ref);
    let length = 0;
    for (const table of this.runs) {
      table[r] = mergeRuns(table[r]!, null, dead, this.compressed);
      length += table[r]!.length;
    }
    this.runDead[r] = 0;
    if (length === 0) this.dropRun(r);
  }

  private dropRun(r: number): void {
    for (const table of this.runs) table.splice(r, 1);
    this.runStart.splice(r, 1);
    this.runEnd.splice(r, 1);
    this.runDead.splice(r, 1);
  }

  /** A byte a ref for up to 8 tables (the default plans have 4 to 10). */
  private newMaskChunk(): MaskChunk {
    const width = maskBytes(this.plan.tables.length);
    return width === 1 ? new Uint8Array(CHUNK) : width === 2 ? new Uint16Array(CHUNK) : new Uint32Array(CHUNK);
  }

  /** Whether each ref is in the tables of its own mask only (IndexOptions.tableMasks). */
  get hasTableMasks(): boolean {
    return this.tableMaskChunks !== null;
  }

  /** The whole snapshot in one buffer (see snapshotChunks() for large indexes). */
  toBuffer(): Uint8Array {
    return concatChunks(this.snapshotChunks());
  }

  /** Bytes snapshotChunks() yields in all. */
  get snapshotByteLength(): number {
    return snapshotByteLength(this.plan, this.minLive, this.nextRef, this.tableMaskChunks !== null);
  }

  /** The snapshot (format in snapshot.ts) in chunks of at most about `chunkBytes`. */
  snapshotChunks(chunkBytes = STREAM_CHUNK_BYTES): Generator<Uint8Array> {
    const maskChunks = this.tableMaskChunks;
    const maskOf = maskChunks === null ? null : (ref: number): number => maskChunks[ref >>> CHUNK_BITS]![ref & CHUNK_MASK]!;
    return encodeSnapshotChunks(this.plan, this.compressed, this.minLive, this.nextRef, (ref, out) => {
      const chunk = this.fpChunks[ref >>> CHUNK_BITS]!;
      const o = (ref & CHUNK_MASK) << 1;
      out[0] = chunk[o]!;
      out[1] = chunk[o + 1]!;
      return !this.isDead(ref);
    }, chunkBytes, maskOf);
  }

  static fromBuffer(bytes: Uint8Array): FingerprintIndex {
    if (!(bytes instanceof Uint8Array)) throw new DedupError('SNAPSHOT_INVALID', 'snapshot must be a Uint8Array');
    return FingerprintIndex.readFrom(bufferSource(bytes));
  }

  /**
   * Reads a snapshot that fills `source` exactly, straight into the index's storage; one with
   * table masks makes an index with them (IndexOptions.tableMasks).
   */
  static readFrom(source: ByteSource): FingerprintIndex {
    let index: FingerprintIndex | null = null;
    const dead = decodeSnapshotFrom(source, {
      begin: (plan, compressed, minLive, nextRef, masked) => {
        index = new FingerprintIndex(plan, compressed, masked);
        index.allocate(minLive, nextRef);
      },
      fingerprints: (ref, count) => {
        const o = (ref & CHUNK_MASK) << 1;
        return index!.fpChunks[ref >>> CHUNK_BITS]!.subarray(o, o + count * 2);
      },
      masks: (ref, masks) => {
        index!.tableMaskChunks![ref >>> CHUNK_BITS]!.set(masks, ref & CHUNK_MASK);
      },
    });
    const restored = index as FingerprintIndex | null;
    if (restored === null) throw new DedupError('SNAPSHOT_INVALID', 'snapshot is empty');
    restored.applyRemoved(dead);
    return restored;
  }

  private allocate(minLive: number, nextRef: number): void {
    const firstChunk = minLive >>> CHUNK_BITS;
    const lastChunk = nextRef === 0 ? -1 : (nextRef - 1) >>> CHUNK_BITS;
    for (let c = 0; c <= lastChunk; c++) {
      if (c < firstChunk) {
        this.fpChunks.push(EMPTY);
        this.deadChunks.push(EMPTY);
        this.tableMaskChunks?.push(EMPTY_MASKS);
      } else {
        this.fpChunks.push(new Uint32Array(CHUNK * 2));
        this.deadChunks.push(new Uint32Array(CHUNK >>> 5));
        this.tableMaskChunks?.push(this.newMaskChunk());
      }
    }
    this.minLive = minLive;
    this.bufStart = minLive;
    this.nextRef = nextRef;
  }

  /** After allocate() and the fingerprints: marks removed refs, counts the live ones and sorts the tables. */
  private applyRemoved(dead: Uint32Array): void {
    let live = 0;
    for (let ref = this.minLive; ref < this.nextRef; ref++) {
      const i = ref - this.minLive;
      if ((dead[i >>> 5]! & (1 << (i & 31))) !== 0) {
        this.deadChunks[ref >>> CHUNK_BITS]![(ref & CHUNK_MASK) >>> 5]! |= 1 << (ref & 31);
      } else {
        live++;
      }
    }
    this.live = live;
    this.flushAll();
  }

  /**
   * Sorts every live ref into a single run per table (after a restore), as a flush of a buffer
   * holding them all would (with table masks, each ref in its own tables only).
   */
  private flushAll(): void {
    this.bufStart = this.minLive;
    this.flush();
  }
}
