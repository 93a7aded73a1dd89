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
 * Typed arrays, nothing per page: each band of each ref keeps its key and the
 * previous ref whose key fell in the same slot (a chain, newest first); a
 * direct-mapped table of about twice the entries holds the newest ref per
 * slot. Keys that share a slot share a chain, and are told apart by the key
 * kept per entry. A chain is walked for at most CHAIN_LIMIT refs with the
 * band's key (a page with thousands of exact copies costs no more than one
 * with a few). Refs evicted from the page store stay in the chains until the
 * next rebuild and are skipped by the caller (PageStore.holds); the arrays
 * are rebuilt when the refs below the store's lowest held ref are half of
 * them, so memory follows what is held: 16 to 32 x bands bytes per page
 * (keys, links and the table, with room to grow).
 */
import { MINHASH_BINS } from '../fingerprint/feature-sketch.js';

/** Newest refs with the probed key looked at per band (older ones with the same key are not). */
export const CHAIN_LIMIT = 32;
/** Slots walked per band at most, keys of other bands and pages included. */
const STEP_LIMIT = 256;

/**
 * Bytes per band and page held, for sizing: the top of the 16 to 32 above. The middle (24)
 * under-counted: bench/dedup/second-stage.ts measured 27 bytes per band and page at 7 bands and
 * 32 at 14, with 1M pages held.
 */
export const BAND_BYTES_PER_PAGE = 32;

/** Band counts that cut the MINHASH_BINS (56) bins evenly. */
export const BAND_COUNTS: readonly number[] = [2, 4, 7, 8, 14, 28];

function bandKey(sketch: Uint8Array, band: number, rows: number): number {
  let h = Math.imul(band + 1, 0x9e3779b9) ^ 0x811c9dc5;
  const from = band * rows;
  for (let k = 0; k < rows; k++) h = Math.imul(h ^ sketch[from + k]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

export class SketchBands {
  readonly bands: number;
  private readonly rows: number;
  /** Slot -> newest ref + 1 whose key of some band falls there (0: none). */
  private heads = new Int32Array(0);
  private mask = -1;
  /** Per (ref - base) * bands + band: the key, and the previous ref + 1 in the slot's chain. */
  private keys = new Int32Array(0);
  private next = new Int32Array(0);
  private base = 0;
  /** One past the highest ref added. */
  private limit = 0;
  /** Refs added since the table was sized. */
  private entries = 0;
  /** Out of candidates(): the refs found, and how many. */
  found = new Uint32Array(64);
  private seen = new Uint32Array(0);
  private stamp = 0;

  constructor(bands: number) {
    if (!BAND_COUNTS.includes(bands)) throw new RangeError(`bands=${bands} must be one of ${BAND_COUNTS.join(', ')}`);
    this.bands = bands;
    this.rows = MINHASH_BINS / bands;
  }

  /** Bytes held. */
  get byteLength(): number {
    return this.heads.byteLength + this.keys.byteLength + this.next.byteLength + this.found.byteLength + this.seen.byteLength;
  }

  /**
   * Adds ref (above every ref added before) with its sketch. `lowRef`: no ref below it is held
   * any more; `sketchOf`: the sketch of a held ref, for a rebuild (which drops the refs below lowRef).
   */
  add(ref: number, sketch: Uint8Array, lowRef: number, sketchOf: (ref: number) => Uint8Array | null): void {
    if (ref < this.limit) throw new RangeError(`ref ${ref} is not above the refs added (${this.limit})`);
    const from = Math.max(this.base, lowRef);
    if (
      this.heads.length === 0 ||
      (lowRef > this.base && (lowRef - this.base) * 2 > this.limit - this.base) ||
      (this.entries + 1) * this.bands * 2 > this.heads.length ||
      (ref - this.base + 1) * this.bands > this.keys.length
    ) {
      this.rebuild(from, ref, sketchOf);
    }
    this.put(ref, sketch);
  }

  /**
   * Re-adds the refs in [from, upTo) that sketchOf still knows (held ones), in arrays sized for
   * the span up to upTo with room to double: the table at most a quarter full after it.
   */
  private rebuild(from: number, upTo: number, sketchOf: (ref: number) => Uint8Array | null): void {
    const oldLimit = this.limit;
    const span = upTo + 1 - from;
    let slots = 1024;
    while (slots < span * this.bands * 4) slots *= 2;
    this.heads = new Int32Array(slots);
    this.mask = slots - 1;
    const room = Math.max(1024, span * 2) * this.bands;
    this.keys = new Int32Array(room);
    this.next = new Int32Array(room);
    this.base = from;
    this.limit = from;
    this.entries = 0;
    for (let ref = from; ref < Math.min(upTo, oldLimit); ref++) {
      const sketch = sketchOf(ref);
      if (sketch !== null) this.put(ref, sketch);
    }
    this.limit = upTo;
  }

  private put(ref: number, sketch: Uint8Array): void {
    const bands = this.bands;
    const at = (ref - this.base) * bands;
    for (let b = 0; b < bands; b++) {
      const key = bandKey(sketch, b, this.rows);
      const slot = key & this.mask;
      this.keys[at + b] = key;
      this.next[at + b] = this.heads[slot]!;
      this.heads[slot] = ref + 1;
    }
    this.entries++;
    this.limit = ref + 1;
  }

  /**
   * The refs that share a band with `sketch` (each once, newest first per band, at most
   * CHAIN_LIMIT per band) into found[0..count); returns count. Evicted refs may be among them.
   */
  candidates(sketch: Uint8Array): number {
    const bands = this.bands;
    if (this.limit === this.base) return 0;
    const span = this.limit - this.base;
    if (this.seen.length < span) this.seen = new Uint32Array(Math.max(1024, span * 2));
    if (++this.stamp === 0xffffffff) {
      this.seen.fill(0);
      this.stamp = 1;
    }
    let count = 0;
    for (let b = 0; b < bands; b++) {
      const key = bandKey(sketch, b, this.rows);
      let ref = this.heads[key & this.mask]! - 1;
      let matched = 0;
      const slot = key & this.mask;
      for (let steps = 0; ref >= this.base && matched < CHAIN_LIMIT && steps < STEP_LIMIT; steps++) {
        // A slot's chain holds the entries of every band that fell there. Of this ref's entries in
        // the slot, the lowest band's links to the older chain (a later band's, put after it,
        // links back to this ref); any of them may hold the key.
        const i = (ref - this.base) * bands;
        let link = -1;
        let hit = false;
        for (let e = i; e < i + bands; e++) {
          const k = this.keys[e]!;
          if ((k & this.mask) !== slot) continue;
          if (link < 0) link = e;
          if (k === key) hit = true;
        }
        if (link < 0) break;
        if (hit) {
          matched++;
          const j = ref - this.base;
          if (this.seen[j] !== this.stamp) {
            this.seen[j] = this.stamp;
            if (count === this.found.length) {
              const grown = new Uint32Array(count * 2);
              grown.set(this.found);
              this.found = grown;
            }
            this.found[count++] = ref;
          }
        }
        ref = this.next[link]! - 1;
      }
    }
    return count;
  }
}
