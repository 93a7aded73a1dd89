/**
 * Candidates for the second stage from the feature sketches themselves
 * (locality-sensitive hashing by bands; Broder 1997, Indyk and Motwani 1998):
 * the 56 one-byte bins of a page's b-bit MinHash sketch (feature-sketch.ts)
 * are cut into `bands` bands of 56/bands bins, and two pages are candidates
 * when all the bins of some band are equal. Two pages whose sets of words and shingles have
 * Jaccard similarity J share a given band with probability about J^rows, so
 * at least one of `bands` with 1 - (1 - J^rows)^bands: with 7 bands of 8
 * bins, 0.95 at J = 0.875 and 0.03 at J = 0.5. Unlike a wider simhash radius,
 * this finds a near-copy however many bits its simhash moved (a short page
 * with a few words edited moves 5 to 15 bits). Every candidate is still
 * checked by the sketches (closestRecorded), so the bands decide only what is
 * looked at, not what is a duplicate.
 *
 * The rule: a probe's candidates are, for each band, the CHAIN_LIMIT newest
 * held pages (refs follow decision order) whose key in that band is the
 * probe's, among the refs below a bound (the pages decided before the probe).
 * A page with thousands of exact copies costs no more than one with a few.
 * The rule names pages and keys only, never where they are stored: one index
 * holding every page and an index split by band key (every page with a key
 * in the key's one partition; docs/architecture.md, the routed design) give
 * the same candidates. The layout this replaced walked hash-slot chains that
 * keys of other bands shared, stopped after 256 slots, and counted evicted
 * pages toward the limit, so its candidates depended on the table's size and
 * on what had been evicted.
 *
 * Layout, typed arrays only: every (page, band) is a 32-bit key and a ref.
 * - The run: the older entries sorted by (key, ref), in 65,536 buckets by the
 *   key's top 16 bits (an offsets array), each entry the key's low 16 bits
 *   and the ref: 6 bytes.
 * - The buffer: the newest entries in insertion order (so in ref order),
 *   with a chain per exact key (newest first) under an open-addressing
 *   table. When it holds a sixteenth of the run, it is merged into the run in
 *   place, from the back (a stable radix sort of the buffer by key, then one
 *   pass per bucket), and the entries of refs below the store's lowest held
 *   ref are dropped first.
 * So about 6 bytes per band and page held, plus the buffer (up to a
 * sixteenth of the run, about 20 bytes an entry) and the run's growth room
 * (an eighth): 7 to 9 bytes.
 */
import { MINHASH_BINS } from '../fingerprint/feature-sketch.js';
import { sortPairs } from '../index/radix-sort.js';

/** Newest pages with the probed key looked at per band (older ones with the same key are not). */
export const CHAIN_LIMIT = 32;

/**
 * Bytes per band and page held, for sizing: 6 in the run, its growth room (up to an eighth)
 * and the buffer's share (up to a sixteenth of the run at about 20 bytes an entry), rounded up.
 * bench/dedup/second-stage.ts measures it.
 */
export const BAND_BYTES_PER_PAGE = 9;

/** Band counts that cut the MINHASH_BINS (56) bins evenly. */
export const BAND_COUNTS: readonly number[] = [2, 4, 7, 8, 14, 28];

/** Which refs are held: the page store. */
export interface HeldRefs {
  holds(ref: number): boolean;
}

const BUCKET_BITS = 16;
const BUCKETS = 1 << BUCKET_BITS;
/** The buffer is merged into the run when it holds this many entries, or a sixteenth of the run. */
const MIN_BUFFER = 4096;

export function bandKey(sketch: Uint8Array, band: number, rows: number): number {
  let h = Math.imul(band + 1, 0x9e3779b9) ^ 0x811c9dc5;
  const from = band * rows;
  for (let k = 0; k < rows; k++) h = Math.imul(h ^ sketch[from + k]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class SketchBands {
  readonly bands: number;
  private readonly rows: number;

  /** The run: offsets[u]..offsets[u + 1] are bucket u's entries, sorted by (low key bits, ref). */
  private readonly offsets = new Uint32Array(BUCKETS + 1);
  private runLow = new Uint16Array(0);
  private runRefs = new Uint32Array(0);
  private runLength = 0;
  /** No entry of the run has a ref below this that is still held (refs below were dropped). */
  private runBase = 0;

  /** The buffer, in insertion (ref) order; bufNext links an entry to the previous one with its key (-1: none). */
  private bufKeys = new Uint32Array(0);
  private bufRefs = new Uint32Array(0);
  private bufNext = new Int32Array(0);
  private bufLength = 0;
  /** Open addressing by key: the newest buffer entry with that key, + 1 (0: empty). */
  private bufHeads = new Int32Array(0);
  private bufMask = 0;

  /** One past the highest ref added. */
  private limit = 0;
  private readonly keyScratch = new Uint32Array(MINHASH_BINS);

  /** Out of candidates(): the refs found, and how many. */
  found = new Uint32Array(64);
  private count = 0;
  /** A small set of the refs found by one probe (each once across bands). */
  private readonly seenRefs = new Uint32Array(1024);
  private readonly seenStamps = new Uint32Array(1024);
  private stamp = 0;

  constructor(bands: number) {
    if (!BAND_COUNTS.includes(bands)) throw new RangeError(`bands=${bands} must be one of ${BAND_COUNTS.join(', ')}`);
    this.bands = bands;
    this.rows = MINHASH_BINS / bands;
    this.sizeBuffer(MIN_BUFFER + MINHASH_BINS);
  }

  /** Bytes held. */
  get byteLength(): number {
    return (
      this.offsets.byteLength +
      this.runLow.byteLength +
      this.runRefs.byteLength +
      this.bufKeys.byteLength +
      this.bufRefs.byteLength +
      this.bufNext.byteLength +
      this.bufHeads.byteLength +
      this.found.byteLength +
      this.seenRefs.byteLength +
      this.seenStamps.byteLength
    );
  }

  /** Entries held (bands per page added and not dropped yet). */
  get entries(): number {
    return this.runLength + this.bufLength;
  }

  /**
   * Adds ref (above every ref added before) with its sketch. `lowRef`: no ref below it is held
   * any more; their entries are dropped at the next merge.
   */
  add(ref: number, sketch: Uint8Array, lowRef: number): void {
    const keys = this.keyScratch;
    for (let b = 0; b < this.bands; b++) keys[b] = bandKey(sketch, b, this.rows);
    this.addKeys(ref, keys, this.bands, lowRef);
  }

  /**
   * Adds ref (above every ref added before) under the first `count` of `keys`: the band keys of
   * a page that an index partition holds (a routed index keeps each key where it is routed).
   */
  addKeys(ref: number, keys: ArrayLike<number>, count: number, lowRef: number): void {
    if (ref < this.limit) throw new RangeError(`ref ${ref} is not above the refs added (${this.limit})`);
    if (this.bufLength + count > this.bufKeys.length) this.merge(lowRef);
    for (let b = 0; b < count; b++) this.bufferPut(keys[b]! >>> 0, ref);
    this.limit = ref + 1;
  }

  private bufferPut(key: number, ref: number): void {
    const i = this.bufLength++;
    this.bufKeys[i] = key;
    this.bufRefs[i] = ref;
    const mask = this.bufMask;
    let slot = key & mask;
    for (;;) {
      const head = this.bufHeads[slot]!;
      if (head === 0) {
        this.bufNext[i] = -1;
        break;
      }
      if (this.bufKeys[head - 1] === key) {
        this.bufNext[i] = head - 1;
        break;
      }
      slot = (slot + 1) & mask;
    }
    this.bufHeads[slot] = i + 1;
  }

  /** Buffer arrays for `capacity` entries, empty, with the table at most half full. */
  private sizeBuffer(capacity: number): void {
    if (this.bufKeys.length !== capacity) {
      this.bufKeys = new Uint32Array(capacity);
      this.bufRefs = new Uint32Array(capacity);
      this.bufNext = new Int32Array(capacity);
      let slots = 1024;
      while (slots < capacity * 2) slots *= 2;
      this.bufHeads = new Int32Array(slots);
      this.bufMask = slots - 1;
    } else {
      this.bufHeads.fill(0);
    }
    this.bufLength = 0;
  }

  /** Merges the buffer into the run, dropping the entries of refs below lowRef. */
  private merge(lowRef: number): void {
    // Refs below lowRef are not held: drop them from the run first when they are a quarter of
    // the refs it spans, so that memory follows what is held.
    if (lowRef > this.runBase && (lowRef - this.runBase) * 4 >= this.limit - this.runBase) this.dropBelow(lowRef);
    const n = this.bufLength;
    const keys = this.bufKeys.slice(0, n);
    const refs = this.bufRefs.slice(0, n);
    // Stable: entries of one key stay in ref order (the buffer is in ref order).
    sortPairs(keys, refs, n);
    let kept = 0;
    for (let i = 0; i < n; i++) {
      if (refs[i]! < lowRef) continue;
      keys[kept] = keys[i]!;
      refs[kept++] = refs[i]!;
    }
    const total = this.runLength + kept;
    if (total > this.runLow.length) {
      const capacity = Math.max(MIN_BUFFER, Math.ceil(total * 1.125));
      const low = new Uint16Array(capacity);
      const rrefs = new Uint32Array(capacity);
      low.set(this.runLow.subarray(0, this.runLength));
      rrefs.set(this.runRefs.subarray(0, this.runLength));
      this.runLow = low;
      this.runRefs = rrefs;
    }
    // In place, from the back: bucket u moves up by the buffer's entries in the buckets below
    // it, never below where it was, so no entry is overwritten before it is read.
    const below = new Uint32Array(BUCKETS + 1);
    for (let i = 0; i < kept; i++) below[(keys[i]! >>> BUCKET_BITS) + 1]!++;
    for (let u = 1; u <= BUCKETS; u++) below[u]! += below[u - 1]!;
    const offsets = this.offsets;
    const runLow = this.runLow;
    const runRefs = this.runRefs;
    let b = kept - 1;
    let w = total - 1;
    for (let u = BUCKETS - 1; u >= 0; u--) {
      const start = offsets[u]!;
      let r = offsets[u + 1]! - 1;
      for (; b >= 0 && keys[b]! >>> BUCKET_BITS === u; b--) {
        const low = keys[b]! & 0xffff;
        // Equal low bits: the buffer's ref is the newer one, so it goes after the run's.
        while (r >= start && runLow[r]! > low) {
          runLow[w] = runLow[r]!;
          runRefs[w--] = runRefs[r--]!;
        }
        runLow[w] = low;
        runRefs[w--] = refs[b]!;
      }
      while (r >= start) {
        runLow[w] = runLow[r]!;
        runRefs[w--] = runRefs[r--]!;
      }
      // Bucket u + 1's old start is read no more (bucket u needed it as its end).
      offsets[u + 1] = offsets[u + 1]! + below[u + 1]!;
    }
    this.runLength = total;
    this.sizeBuffer(Math.max(MIN_BUFFER, Math.ceil(total / 16)) + MINHASH_BINS);
  }

  /**
   * The refs that share a band with `sketch`: for each band, the CHAIN_LIMIT newest refs held
   * (`held`; all when absent) below `refsBelow` with the sketch's key in that band, each ref once,
   * into found[0..count); returns count.
   */
  candidates(sketch: Uint8Array, held: HeldRefs | null = null, refsBelow = Infinity): number {
    this.startProbe();
    for (let band = 0; band < this.bands; band++) this.collect(bandKey(sketch, band, this.rows), held, refsBelow);
    return this.count;
  }

  /** candidates() for the first `count` of `keys` (the band keys a routed partition holds). */
  candidatesOfKeys(keys: ArrayLike<number>, count: number, held: HeldRefs | null = null, refsBelow = Infinity): number {
    this.startProbe();
    for (let i = 0; i < count; i++) this.collect(keys[i]! >>> 0, held, refsBelow);
    return this.count;
  }

  private startProbe(): void {
    if (++this.stamp === 0xffffffff) {
      this.seenStamps.fill(0);
      this.stamp = 1;
    }
    this.count = 0;
  }

  /** Pushes the CHAIN_LIMIT newest held refs below refsBelow under `key`. */
  private collect(key: number, held: HeldRefs | null, refsBelow: number): void {
    let matched = 0;
    // The buffer first: its refs are all newer than the run's.
    const mask = this.bufMask;
    for (let slot = key & mask; ; slot = (slot + 1) & mask) {
      const head = this.bufHeads[slot]!;
      if (head === 0) break;
      if (this.bufKeys[head - 1] !== key) continue;
      for (let i = head - 1; i >= 0 && matched < CHAIN_LIMIT; i = this.bufNext[i]!) {
        const ref = this.bufRefs[i]!;
        if (ref >= refsBelow || (held !== null && !held.holds(ref))) continue;
        this.push(ref);
        matched++;
      }
      break;
    }
    if (matched === CHAIN_LIMIT || this.runLength === 0) return;
    // Then the run: the entries with this key sit together, oldest ref first.
    const u = key >>> BUCKET_BITS;
    const low = key & 0xffff;
    const runLow = this.runLow;
    const runRefs = this.runRefs;
    const start = this.offsets[u]!;
    let lo = start;
    let hi = this.offsets[u + 1]!;
    // Past the key's last entry, or, with a bound, to its first ref at or above the bound.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (runLow[mid]! < low || (runLow[mid] === low && runRefs[mid]! < refsBelow)) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= start && runLow[i] === low && matched < CHAIN_LIMIT; i--) {
      const ref = runRefs[i]!;
      if (held !== null && !held.holds(ref)) continue;
      this.push(ref);
      matched++;
    }
  }

  /** Appends ref to found unless this probe found it already. */
  private push(ref: number): void {
    const seen = this.seenRefs;
    const stamps = this.seenStamps;
    const mask = seen.length - 1;
    for (let slot = Math.imul(ref, 0x9e3779b1) >>> 22; ; slot = (slot + 1) & mask) {
      if (stamps[slot] !== this.stamp) {
        stamps[slot] = this.stamp;
        seen[slot] = ref;
        break;
      }
      if (seen[slot] === ref) return;
    }
    if (this.count === this.found.length) {
      const grown = new Uint32Array(this.count * 2);
      grown.set(this.found);
      this.found = grown;
    }
    this.found[this.count++] = ref;
  }

  /** Drops the run's entries of refs below lowRef, in place, bucket by bucket. */
  private dropBelow(lowRef: number): void {
    const offsets = this.offsets;
    const runLow = this.runLow;
    const runRefs = this.runRefs;
    let w = 0;
    let r = 0;
    for (let u = 0; u < BUCKETS; u++) {
      const end = offsets[u + 1]!;
      offsets[u] = w;
      for (; r < end; r++) {
        const ref = runRefs[r]!;
        if (ref < lowRef) continue;
        runLow[w] = runLow[r]!;
        runRefs[w++] = ref;
      }
    }
    offsets[BUCKETS] = w;
    this.runLength = w;
    this.runBase = lowRef;
  }
}
