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
 * Layout: every (page, band) is an entry, a 32-bit key and a ref, and most
 * entries live in the disk tier, with about 1.2 bytes of each left in RAM.
 * - The buffer (RAM): the newest entries in insertion order (so in ref
 *   order), with a chain per exact key (newest first) under an open-addressing
 *   table, about 24 bytes an entry. It grows with the entries held (an eighth
 *   of them) up to a bound (2^19 entries by default, 12 MiB), then is sorted
 *   and written out as a run.
 * - The runs (disk): immutable sorted runs of (key, ref, check), 12 bytes an entry,
 *   in a blob each (a scratch file of the page tier, read with pread). The
 *   runs split the refs by range (a newer run holds only newer refs). When a
 *   run is written, the newest runs are merged while the newer is at least an
 *   eighth of the older (so a few runs, each over eight times the next: three
 *   at 10M pages, the smallest of which stays in the CPU caches), and
 *   a run whose refs are a quarter below the store's lowest held ref is
 *   rewritten without them.
 * - What RAM keeps of a run: its entries in buckets by the key's top bits
 *   (four to eight entries a bucket; one to two in a run of at most an eighth
 *   of the entries held), a 32-bit start per 32 buckets and a byte
 *   per bucket (its start less its block's; a block of over 255 entries
 *   keeps 32-bit starts apart), and an 8-bit fingerprint of each entry (one
 *   byte: the key's low byte, below the bucket bits, completed from the
 *   entry's check where fewer than 8 key bits lie below them:
 *   entryFingerprint). A probe scans its bucket's
 *   fingerprints and reads from disk only the span from the first entry with
 *   its fingerprint to the last, newest first, where the full keys and the
 *   checks (bandCheck, a second hash of the band) decide: a fingerprint that
 *   matches another key costs a read, never a candidate, and so does a key
 *   that only hashes like the probe's.
 *   About 1 lookup of an absent key in 40 reads in the largest run (4 to 8
 *   entries a bucket, each matching 1 in 256), 1 in 170 in the smaller ones.
 * So about 1.2 bytes of RAM per band and page held (17 at 14 bands), plus the
 * buffer (up to 12 MiB), and 12 bytes of disk.
 */
import { MINHASH_BINS } from '../fingerprint/feature-sketch.js';
import { sortPairs } from '../index/radix-sort.js';
import { bytesOf, readSliced, slicesOf, type ByteSource } from '../index/byte-stream.js';
import { DedupError } from '../errors.js';
import { memoryRunBlob, type RunBlob } from './blob-store.js';

/** Newest pages with the probed key looked at per band (older ones with the same key are not). */
export const CHAIN_LIMIT = 32;

/**
 * Bytes of RAM per band and page held, for sizing: the fingerprint (1), the bucket bytes and
 * block starts (about 0.2), rounded up; the buffer (up to 10 MiB) is apart. bench/dedup/memory.ts
 * measures it.
 */
export const BAND_BYTES_PER_PAGE = 1.5;

/** Bytes of disk per band and page held: an entry of the sorted runs (while two runs merge, their entries are on disk twice). */
export const BAND_DISK_BYTES_PER_PAGE = 12;

/** Band counts that cut the MINHASH_BINS (56) bins evenly. */
export const BAND_COUNTS: readonly number[] = [2, 4, 7, 8, 14, 28];

/** Which refs are held: the page store. */
export interface HeldRefs {
  holds(ref: number): boolean;
  /**
   * ref's sketch (held refs only; a view, valid until the next call), when the holder keeps
   * them: a probe then skips the disk read of a span whose entries are all of pages it found
   * already (collectAll).
   */
  sketchOf?(ref: number): Uint8Array;
}

/** A probe weighs skipping a span's read (collectAll) while it has found this many pages at most. */
const KNOWN_MAX = 4;

export interface SketchBandsOptions {
  /** New blobs for the runs (a scratch file each in the service); in memory when absent. */
  readonly blobs?: () => RunBlob;
  /** Most entries the buffer holds before it is written out as a run (about 2^19 by default). */
  readonly bufferEntries?: number;
}

/** The buffer starts at this many entries (or bufferEntries when lower), and grows to an eighth of the entries held. */
const MIN_BUFFER = 4096;
/** So that the buffer's table (twice the entries, a power of two) stays at 2^21 slots. */
const MAX_BUFFER = (1 << 19) - MINHASH_BINS;
/** A run's buckets hold BUCKET_LOAD to twice as many entries (a fingerprint of another key matches in about 1 lookup of 40). */
const BUCKET_LOAD = 4;
/**
 * A run of at most 1/SPARSE_SHARE of the entries held has buckets of SPARSE_LOAD to twice as many
 * entries (1 lookup of 170 reads disk for another key's fingerprint): a probe scans every run, so
 * each run costs its share of false reads whatever its size, and the smaller runs' bucket bytes
 * are few (at most an eighth of the entries, a byte per 1 to 2 of them: about 0.6 B a page at 14
 * bands, 0.15 at 10M pages as filled).
 */
const SPARSE_LOAD = 1;
const SPARSE_SHARE = 8;
/** A bucket's first entry is its block's (a 32-bit start per 2^BLOCK_BITS buckets) plus one byte of its own. */
const BLOCK_BITS = 5;
/** The newest runs are merged while the newer is at least 1/MERGE_RATIO of the older. */
const MERGE_RATIO = 8;
/** Entries per disk read and per merge chunk. */
const READ_ENTRIES = 64;
const MERGE_ENTRIES = 1 << 14;

/**
 * A second 32-bit hash of a band's bins, independent of bandKey, kept with each entry on disk (not
 * in RAM): a probe takes an entry only when both match. With bandKey alone, 14 bands of 10M
 * pages put 140M keys in 2^32 values, so a page's 14 keys met about 0.46 unrelated pages (a
 * band-run read, then a tier read of the page's record to turn it down); with both, 2^-64 a
 * pair. The routed partitions (addKeys, candidatesOfKeys) get keys only and keep 0 here.
 */
export function bandCheck(sketch: Uint8Array, band: number, rows: number): number {
  let h = Math.imul(band + 1, 0x85ebca77) ^ 0x27d4eb2f;
  const from = band * rows;
  const to = from + rows;
  for (let k = from; k < to; k += 4) {
    let w = sketch[k]!;
    if (k + 1 < to) w |= sketch[k + 1]! << 8;
    if (k + 2 < to) w |= sketch[k + 2]! << 16;
    if (k + 3 < to) w |= sketch[k + 3]! << 24;
    h = Math.imul(h ^ w, 0xcc9e2d51);
    h = Math.imul((h << 15) | (h >>> 17), 0x1b873593);
    h ^= h >>> 13;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

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

/**
 * The 8-bit fingerprint of an entry kept in RAM: the key bits its run's buckets leave free (the
 * low 32 - bits), up to a byte, and below 32 - 8 bucket bits the rest of the byte from the
 * entry's check (bandCheck, independent of the key). The bucket is the key's top bits and keys
 * are hashes, so within a bucket the low byte is as good as any hash of the key when 8 or more
 * bits lie below the bucket's. In the largest run, where fewer do (a run written with room for
 * 2^27 entries or more, 14 bands over 9.6M pages, has 2^25 buckets), a fingerprint of the key
 * alone repeated bucket bits and matched another key in about 1 lookup of 30 (4 entries a bucket,
 * 7 free bits), each a read from disk for nothing; the check's bit halves that. A probe compares
 * the fingerprint of its own key and check: an entry that could be taken (same key, same check,
 * readSpan) always has the probe's fingerprint.
 */
function entryFingerprint(key: number, check: number, bits: number): number {
  const free = Math.min(32 - bits, fingerprintTuning.keyBits);
  if (free >= 8) return key & 0xff;
  return ((key & ((1 << free) - 1)) | (check << free)) & 0xff;
}

/**
 * Internal: most key bits in an entry's fingerprint (8: as many as it holds). Tests lower it, so
 * that runs of a few entries complete their fingerprints from the checks as the largest runs do.
 */
export const fingerprintTuning = { keyBits: 8 };

/** Words per entry of a run on disk: the key, the ref and the check (bandCheck). */
const ENTRY_WORDS = 3;
const ENTRY_BYTES = ENTRY_WORDS * 4;

/** A sorted run: entries on disk (key, ref, check; 12 bytes, sorted by key then ref), what locates them in RAM. */
interface Run {
  readonly blob: RunBlob;
  readonly length: number;
  /** Buckets are the key's top `bits` bits. */
  readonly bits: number;
  /**
   * The first entry of the buckets of block j (j << BLOCK_BITS ...), and, last, the length; plus
   * WIDE when the block keeps its starts in `wide`, so that a probe asks the map only then.
   */
  readonly blocks: Uint32Array;
  /**
   * Block by block, at blocks[j] + BLOCK * j: a byte per bucket (its first entry less its
   * block's), then the fingerprint (entryFingerprint) of each of the block's entries, so that a
   * probe reads adjacent bytes. A block of more than 255 entries keeps its starts in `wide`.
   */
  readonly bytes: Uint8Array;
  /** Blocks of more than 255 entries (a key shared by many pages): each bucket's first entry. */
  readonly wide: Map<number, Uint32Array>;
  readonly minRef: number;
  readonly maxRef: number;
}

/** Buckets per block. */
const BLOCK = 1 << BLOCK_BITS;
/** The flag of a block start (Run.blocks) whose block keeps 32-bit starts in Run.wide; a run holds fewer than 2^31 entries. */
const WIDE = 0x80000000;
const START = 0x7fffffff;

/** Most bits of a run's buckets. */
const MAX_RUN_BITS = 28;

/**
 * SKETCH_BANDS_LAYOUT, the bands' snapshot (SketchBands.snapshotChunks), little-endian u32:
 *   magic 'SKBD', version 1, bands, limit (one past the highest ref added), the buffer's
 *   capacity and length, runs; per run (oldest first): entries, bucket bits, min ref, max ref;
 *   the buffer's keys, refs and checks (length each, in insertion order); each run's entries as
 *   on disk (key, ref, check; sorted by key, then ref).
 * A run's RAM part (bucket starts, fingerprints) is rebuilt from its entries on load.
 */
const SKETCH_BANDS_MAGIC = 0x44424b53; // 'SKBD'
const SKETCH_BANDS_VERSION = 1;
const SNAPSHOT_HEAD_WORDS = 7;
const RUN_HEAD_WORDS = 4;
/** Bounds a snapshot's counts are checked against before anything is allocated. */
const MAX_SNAPSHOT_BUFFER = 1 << 21;
const MAX_SNAPSHOT_RUNS = 64;

function bandsInvalid(message: string): DedupError {
  return new DedupError('SNAPSHOT_INVALID', `sketch bands snapshot: ${message}`);
}

/** A run's entries from `source` through `writer`, checked: sorted by key then ref, refs within [minRef, maxRef], both met. */
function readRun(source: ByteSource, writer: RunWriter, length: number, minRef: number, maxRef: number, r: number): Run {
  const chunk = new Uint32Array(Math.min(length, MERGE_ENTRIES) * ENTRY_WORDS);
  let lastKey = -1;
  let lastRef = -1;
  for (let at = 0; at < length; ) {
    const n = Math.min(MERGE_ENTRIES, length - at);
    readSliced(source, bytesOf(chunk.subarray(0, n * ENTRY_WORDS)));
    for (let i = 0; i < n; i++) {
      const key = chunk[i * ENTRY_WORDS]!;
      const ref = chunk[i * ENTRY_WORDS + 1]!;
      if (key < lastKey || (key === lastKey && ref < lastRef) || ref < minRef || ref > maxRef) throw bandsInvalid(`run ${r} is out of order at entry ${at + i}`);
      lastKey = key;
      lastRef = ref;
      writer.put(key, ref, chunk[i * ENTRY_WORDS + 2]!);
    }
    at += n;
  }
  const run = writer.finish();
  if (run.minRef !== minRef || run.maxRef !== maxRef) throw bandsInvalid(`run ${r} does not span the refs its head says`);
  return run;
}

/** Builds a run as its entries arrive in order. */
class RunWriter {
  private readonly blob: RunBlob;
  private readonly bits: number;
  private readonly shift: number;
  /** Entries per bucket while building (made into the blocks and the start bytes at finish). */
  private readonly counts: Uint32Array;
  private bytes: Uint8Array;
  private readonly chunk = new Uint32Array(MERGE_ENTRIES * ENTRY_WORDS);
  private readonly chunkBytes = new Uint8Array(this.chunk.buffer);
  private chunked = 0;
  private length = 0;
  private minRef = Infinity;
  private maxRef = -1;

  /**
   * `most`: at most this many entries will be written; `held`: the entries held in all (this
   * run's included). `bits`: the buckets' bits as a run had them (a snapshot's), else sized here.
   */
  constructor(blob: RunBlob, most: number, held: number, bits = -1) {
    if (!(most < WIDE)) throw new RangeError(`a run holds fewer than 2^31 entries, not ${most}`);
    this.blob = blob;
    if (bits < 0) {
      const load = most * SPARSE_SHARE <= held ? SPARSE_LOAD : BUCKET_LOAD;
      bits = BLOCK_BITS;
      while (bits < MAX_RUN_BITS && (1 << bits) * load * 2 <= most) bits++;
    }
    this.bits = bits;
    this.shift = 32 - bits;
    this.counts = new Uint32Array(1 << bits);
    this.bytes = new Uint8Array(most + (1 << bits));
  }

  put(key: number, ref: number, check: number): void {
    const u = key >>> this.shift;
    this.counts[u]!++;
    // Entry i of block j sits after the start bytes of blocks 0..j.
    this.bytes[this.length++ + ((u >>> BLOCK_BITS) + 1) * BLOCK] = entryFingerprint(key, check, this.bits);
    if (ref < this.minRef) this.minRef = ref;
    if (ref > this.maxRef) this.maxRef = ref;
    const o = this.chunked++ * ENTRY_WORDS;
    this.chunk[o] = key;
    this.chunk[o + 1] = ref;
    this.chunk[o + 2] = check;
    if (this.chunked === MERGE_ENTRIES) this.flush();
  }

  private flush(): void {
    if (this.chunked === 0) return;
    this.blob.append(this.chunkBytes.subarray(0, this.chunked * ENTRY_BYTES));
    this.chunked = 0;
  }

  finish(): Run {
    this.flush();
    const buckets = 1 << this.bits;
    const blocks = new Uint32Array(buckets / BLOCK + 1);
    const bytes = this.bytes;
    const wide = new Map<number, Uint32Array>();
    let at = 0;
    for (let j = 0; j * BLOCK < buckets; j++) {
      const first = at;
      blocks[j] = first;
      let over = false;
      for (let u = j * BLOCK; u < (j + 1) * BLOCK; u++) {
        if (at - first > 255) over = true;
        bytes[first + j * BLOCK + (u - j * BLOCK)] = at - first;
        at += this.counts[u]!;
      }
      if (over) {
        const each = new Uint32Array(BLOCK);
        for (let u = j * BLOCK, a = first; u < (j + 1) * BLOCK; u++) {
          each[u - j * BLOCK] = a;
          a += this.counts[u]!;
        }
        wide.set(j, each);
        blocks[j] = first + WIDE;
      }
    }
    blocks[buckets / BLOCK] = at;
    // Trimmed when entries were dropped on the way (the bound was generous).
    const used = this.length + buckets;
    this.bytes = used < bytes.length ? bytes.slice(0, used) : bytes;
    return { blob: this.blob, length: this.length, bits: this.bits, blocks, bytes: this.bytes, wide, minRef: this.minRef, maxRef: this.maxRef };
  }
}

/** Reads a run's entries in order, a chunk at a time. */
class RunReader {
  /** The entries of the chunk last read (fill), ENTRY_WORDS words each. */
  readonly chunk = new Uint32Array(MERGE_ENTRIES * ENTRY_WORDS);
  private readonly chunkBytes = new Uint8Array(this.chunk.buffer);
  private at = 0;

  constructor(private readonly run: Run) {}

  /** Reads the next chunk of entries into `chunk`; returns how many (0 at the end). */
  fill(): number {
    const n = Math.min(MERGE_ENTRIES, this.run.length - this.at);
    if (n === 0) return 0;
    this.run.blob.read(this.at * ENTRY_BYTES, this.chunkBytes.subarray(0, n * ENTRY_BYTES));
    this.at += n;
    return n;
  }
}

export class SketchBands {
  readonly bands: number;
  private readonly rows: number;
  private readonly newBlob: () => RunBlob;
  private readonly maxBuffer: number;

  /** The runs, oldest first (a run's refs are all below the next one's). */
  private runs: Run[] = [];

  /** The buffer, in insertion (ref) order; bufNext links an entry to the previous one with its key (-1: none). */
  private bufKeys = new Uint32Array(0);
  private bufRefs = new Uint32Array(0);
  /** Each entry's check (bandCheck; 0 for keys given without one). */
  private bufChecks = new Uint32Array(0);
  private bufNext = new Int32Array(0);
  private bufLength = 0;
  /** Open addressing by key: the newest buffer entry with that key, + 1 (0: empty). */
  private bufHeads = new Int32Array(0);
  private bufMask = 0;

  /** One past the highest ref added. */
  private limit = 0;
  private readonly keyScratch = new Uint32Array(MINHASH_BINS);
  private readonly checkScratch = new Uint32Array(MINHASH_BINS);
  /**
   * The bins keyScratch and checkScratch were computed from (hashed: false when they are not
   * current): a decision probes a page's keys, then adds the page with the same ones.
   */
  private readonly hashedBins = new Uint8Array(MINHASH_BINS);
  private hashed = false;
  /** The checks of a probe by keys alone (candidatesOfKeys): zeros. */
  private probeChecks = new Uint32Array(MINHASH_BINS);
  /** A probe's keys (candidatesOfKeys), and per key a place looked up in RAM ahead (collectAll). */
  private probeKeys = new Uint32Array(MINHASH_BINS);
  private lookups = new Uint32Array(MINHASH_BINS);
  /** Per run and key of a probe, the span of entries with the key's fingerprint (-1: none), and how many of its entries have it. */
  private spanFirst = new Int32Array(0);
  private spanLast = new Int32Array(0);
  private spanCount = new Int32Array(0);
  /** One disk read of run entries. */
  private readonly readWords = new Uint32Array(READ_ENTRIES * ENTRY_WORDS);
  private readonly readBytes = new Uint8Array(this.readWords.buffer);

  /** Out of candidates(): the refs found, and how many. */
  found = new Uint32Array(64);
  private count = 0;
  /** Per ref found (up to KNOWN_MAX), the bands its sketch shares with the probe's, a bit each; -1 until read (knownEntries). */
  private readonly foundBands = new Int32Array(KNOWN_MAX);
  /** A small set of the refs found by one probe (each once across bands). */
  private readonly seenRefs = new Uint32Array(1024);
  private readonly seenStamps = new Uint32Array(1024);
  private stamp = 0;
  /** Reads of run entries from their blobs since the start (for the benchmarks). */
  diskReads = 0;
  /** Reads of run entries skipped since the start: their entries were all of pages found already (for the benchmarks). */
  skippedReads = 0;
  /** What collectAll's passes read, kept so that no pass is optimised away. */
  private touched = 0;

  constructor(bands: number, options: SketchBandsOptions = {}) {
    if (!BAND_COUNTS.includes(bands)) throw new RangeError(`bands=${bands} must be one of ${BAND_COUNTS.join(', ')}`);
    this.bands = bands;
    this.rows = MINHASH_BINS / bands;
    this.newBlob = options.blobs ?? memoryRunBlob;
    this.maxBuffer = Math.max(1, options.bufferEntries ?? MAX_BUFFER);
    this.sizeBuffer(this.bufferCapacity(0));
  }

  /** Bytes of RAM held (the runs' blobs apart: bytesOnDisk). */
  get byteLength(): number {
    let bytes =
      this.bufKeys.byteLength +
      this.bufRefs.byteLength +
      this.bufChecks.byteLength +
      this.bufNext.byteLength +
      this.bufHeads.byteLength +
      this.found.byteLength +
      this.seenRefs.byteLength +
      this.seenStamps.byteLength +
      this.readBytes.byteLength;
    for (const run of this.runs) bytes += run.bytes.byteLength + run.blocks.byteLength + run.wide.size * 4 * BLOCK;
    return bytes;
  }

  /** Bytes of the runs' blobs (on disk with a file tier). */
  get bytesOnDisk(): number {
    let bytes = 0;
    for (const run of this.runs) bytes += run.length * ENTRY_BYTES;
    return bytes;
  }

  /** Entries held (bands per page added and not dropped yet). */
  get entries(): number {
    let n = this.bufLength;
    for (const run of this.runs) n += run.length;
    return n;
  }

  /** One past the highest ref added (0: none). */
  get nextRef(): number {
    return this.limit;
  }

  /** Runs on disk (for tests and benchmarks). */
  get runCount(): number {
    return this.runs.length;
  }

  /**
   * The snapshot of the bands (layout: SKETCH_BANDS_LAYOUT, above RunWriter) in chunks of at most about
   * `chunkBytes`: the runs' entries stream from their blobs a chunk at a time.
   */
  *snapshotChunks(chunkBytes: number): Generator<Uint8Array> {
    const head = new Uint32Array(SNAPSHOT_HEAD_WORDS + this.runs.length * RUN_HEAD_WORDS);
    head.set([SKETCH_BANDS_MAGIC, SKETCH_BANDS_VERSION, this.bands, this.limit, this.bufKeys.length, this.bufLength, this.runs.length]);
    this.runs.forEach((run, r) => head.set([run.length, run.bits, run.minRef, run.maxRef], SNAPSHOT_HEAD_WORDS + r * RUN_HEAD_WORDS));
    yield bytesOf(head);
    for (const column of [this.bufKeys, this.bufRefs, this.bufChecks]) yield* slicesOf(column.subarray(0, this.bufLength), chunkBytes);
    const entries = Math.max(1, Math.floor(chunkBytes / ENTRY_BYTES));
    const out = new Uint8Array(Math.min(entries, MERGE_ENTRIES) * ENTRY_BYTES);
    for (const run of this.runs) {
      for (let at = 0; at < run.length; ) {
        const n = Math.min(out.byteLength / ENTRY_BYTES, run.length - at);
        run.blob.read(at * ENTRY_BYTES, out.subarray(0, n * ENTRY_BYTES));
        yield out.subarray(0, n * ENTRY_BYTES);
        at += n;
      }
    }
  }

  /** Bytes snapshotChunks() yields. */
  get snapshotByteLength(): number {
    return (SNAPSHOT_HEAD_WORDS + this.runs.length * RUN_HEAD_WORDS + 3 * this.bufLength) * 4 + this.bytesOnDisk;
  }

  /**
   * Bands read from their snapshot in `source` (which holds it and maybe more after it): the runs'
   * entries written to new blobs (`options.blobs`), their RAM part rebuilt with the buckets they
   * had, and the buffer filled again in its order, at its size; so the layout, RAM and disk, is
   * the one written. Every order a probe relies on (entries by key then ref, runs by ref range,
   * the buffer's refs newer than the runs') is checked; a bad one is SNAPSHOT_INVALID, and the
   * blobs made so far are disposed.
   */
  static readFrom(source: ByteSource, bands: number, options: SketchBandsOptions = {}): SketchBands {
    const words = (n: number): Uint32Array => {
      if (n * 4 > source.remaining) throw bandsInvalid('truncated');
      const out = new Uint32Array(n);
      readSliced(source, bytesOf(out));
      return out;
    };
    const [magic, version, bandCount, limit, capacity, bufLength, runCount] = words(SNAPSHOT_HEAD_WORDS) as unknown as number[];
    if (magic !== SKETCH_BANDS_MAGIC || version !== SKETCH_BANDS_VERSION) throw bandsInvalid('bad magic or version');
    if (bandCount !== bands) throw bandsInvalid(`holds ${bandCount} bands, not ${bands}`);
    if (capacity! < MINHASH_BINS + 1 || capacity! > MAX_SNAPSHOT_BUFFER || bufLength! > capacity! || runCount! > MAX_SNAPSHOT_RUNS) throw bandsInvalid('bad buffer or run counts');
    const heads = words(runCount! * RUN_HEAD_WORDS);
    let total = 3 * bufLength! * 4;
    for (let r = 0; r < runCount!; r++) total += heads[r * RUN_HEAD_WORDS]! * ENTRY_BYTES;
    if (total > source.remaining) throw bandsInvalid('truncated');
    const keys = words(bufLength!);
    const refs = words(bufLength!);
    const checks = words(bufLength!);
    const out = new SketchBands(bands, options);
    out.limit = limit!;
    try {
      let below = 0;
      for (let r = 0; r < runCount!; r++) {
        const [length, bits, minRef, maxRef] = heads.subarray(r * RUN_HEAD_WORDS, (r + 1) * RUN_HEAD_WORDS) as unknown as number[];
        if (length === 0 || length! >= WIDE || bits! < BLOCK_BITS || bits! > MAX_RUN_BITS || minRef! < below || maxRef! < minRef! || maxRef! >= limit!) throw bandsInvalid(`run ${r} has a bad head`);
        // A run has at most as many buckets as the entries it was sized for (RunWriter), and as
        // many as its entries unless some were dropped on the way (below lowRef; never in a band
        // log): kept to that, so that a bad head cannot make the load allocate more than its
        // entries' bytes bound. The buckets change where a probe looks, never what it finds.
        const fitted = Math.max(BLOCK_BITS, Math.min(bits!, Math.floor(Math.log2(length!))));
        const blob = out.newBlob();
        try {
          out.runs.push(readRun(source, new RunWriter(blob, length!, 0, fitted), length!, minRef!, maxRef!, r));
        } catch (error) {
          blob.dispose();
          throw error;
        }
        below = maxRef! + 1;
      }
      out.sizeBuffer(capacity!);
      for (let i = 0; i < bufLength!; i++) {
        if (refs[i]! < below || refs[i]! >= limit!) throw bandsInvalid(`buffer entry ${i} has ref ${refs[i]} out of order`);
        below = refs[i]!;
        out.bufferPut(keys[i]!, refs[i]!, checks[i]!);
      }
    } catch (error) {
      out.dispose();
      throw error;
    }
    return out;
  }

  /** Drops every run's blob (the bands are not used again). */
  dispose(): void {
    for (const run of this.runs) run.blob.dispose();
    this.runs = [];
  }

  /**
   * Adds ref (above every ref added before) with its sketch. `lowRef`: no ref below it is held
   * any more; their entries are dropped when the runs are written.
   */
  add(ref: number, sketch: Uint8Array, lowRef: number): void {
    this.hashKeys(sketch);
    this.addKeys(ref, this.keyScratch, this.bands, lowRef, this.checkScratch);
  }

  /**
   * Adds ref (above every ref added before) under the first `count` of `keys`: the band keys of
   * a page that an index partition holds (a routed index keeps each key where it is routed).
   */
  addKeys(ref: number, keys: ArrayLike<number>, count: number, lowRef: number, checks: ArrayLike<number> | null = null): void {
    if (ref < this.limit) throw new RangeError(`ref ${ref} is not above the refs added (${this.limit})`);
    if (this.bufLength + count > this.bufKeys.length) this.writeBuffer(lowRef);
    for (let b = 0; b < count; b++) this.bufferPut(keys[b]! >>> 0, ref, checks === null ? 0 : checks[b]! >>> 0);
    this.limit = ref + 1;
  }

  private bufferPut(key: number, ref: number, check: number): void {
    const i = this.bufLength++;
    this.bufKeys[i] = key;
    this.bufRefs[i] = ref;
    this.bufChecks[i] = check;
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

  /** Entries the buffer takes before it is written out, with `held` entries in the runs. */
  private bufferCapacity(held: number): number {
    return Math.min(this.maxBuffer, Math.max(MIN_BUFFER, Math.ceil(held / 8))) + MINHASH_BINS;
  }

  /** Buffer arrays for `capacity` entries, empty, with the table at most half full. */
  private sizeBuffer(capacity: number): void {
    if (this.bufKeys.length !== capacity) {
      this.bufKeys = new Uint32Array(capacity);
      this.bufRefs = new Uint32Array(capacity);
      this.bufChecks = new Uint32Array(capacity);
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

  /** Writes the buffer out as a run (without the refs below lowRef), then merges and trims the runs. */
  private writeBuffer(lowRef: number): void {
    const n = this.bufLength;
    if (n > 0) {
      // Sorted in place: the buffer is emptied below (sizeBuffer), and a copy of 2^19 entries
      // would be 4 MiB more allocated per write, which drives the collector.
      const keys = this.bufKeys;
      const refs = this.bufRefs;
      const checks = this.bufChecks;
      // The keys sort with each entry's place in the buffer (in bufNext's array, not needed any
      // more), which then names its ref and check. Stable: entries of one key stay in ref order
      // (the buffer is in ref order).
      const order = new Uint32Array(this.bufNext.buffer, 0, n);
      for (let i = 0; i < n; i++) order[i] = i;
      sortPairs(keys, order, n);
      const writer = new RunWriter(this.newBlob(), n, this.entries);
      for (let i = 0; i < n; i++) {
        const e = order[i]!;
        if (refs[e]! >= lowRef) writer.put(keys[i]!, refs[e]!, checks[e]!);
      }
      const run = writer.finish();
      if (run.length > 0) this.runs.push(run);
      else run.blob.dispose();
    }
    this.trim(lowRef);
    for (;;) {
      const k = this.runs.length;
      if (k < 2 || this.runs[k - 1]!.length * MERGE_RATIO < this.runs[k - 2]!.length) break;
      const merged = this.merge(this.runs[k - 2]!, this.runs[k - 1]!, lowRef);
      this.runs.splice(k - 2, 2, ...(merged === null ? [] : [merged]));
    }
    let held = 0;
    for (const run of this.runs) held += run.length;
    this.sizeBuffer(this.bufferCapacity(held));
  }

  /** Drops the runs wholly below lowRef, and rewrites those a quarter of whose refs are below it. */
  private trim(lowRef: number): void {
    const kept: Run[] = [];
    for (const run of this.runs) {
      if (run.maxRef < lowRef) {
        run.blob.dispose();
        continue;
      }
      if (run.minRef < lowRef && (lowRef - run.minRef) * 4 >= run.maxRef - run.minRef + 1) {
        const rewritten = this.merge(run, null, lowRef);
        if (rewritten !== null) kept.push(rewritten);
        continue;
      }
      kept.push(run);
    }
    this.runs = kept;
  }

  /** One run of the entries of `older` and `newer` (whose refs are all above older's) at or above lowRef; disposes both. */
  private merge(older: Run, newer: Run | null, lowRef: number): Run | null {
    const writer = new RunWriter(this.newBlob(), older.length + (newer?.length ?? 0), this.entries);
    // Both inputs are read a chunk at a time and walked with local cursors: a merge rewrites
    // every entry of both runs (at 10M pages, over a hundred entries per page added), so the
    // loop keeps no per-entry state in objects.
    const a = new RunReader(older);
    const aw = a.chunk;
    let an = a.fill() * ENTRY_WORDS;
    let ai = 0;
    const b = newer === null ? null : new RunReader(newer);
    const bw = b === null ? aw : b.chunk;
    let bn = b === null ? 0 : b.fill() * ENTRY_WORDS;
    let bi = 0;
    while (an > 0 || bn > 0) {
      let key: number;
      let ref: number;
      let check: number;
      // On equal keys the older run's entry goes first: its ref is the lower.
      if (an > 0 && (bn === 0 || aw[ai]! <= bw[bi]!)) {
        key = aw[ai]!;
        ref = aw[ai + 1]!;
        check = aw[ai + 2]!;
        ai += ENTRY_WORDS;
        if (ai === an) {
          an = a.fill() * ENTRY_WORDS;
          ai = 0;
        }
      } else {
        key = bw[bi]!;
        ref = bw[bi + 1]!;
        check = bw[bi + 2]!;
        bi += ENTRY_WORDS;
        if (bi === bn) {
          bn = b!.fill() * ENTRY_WORDS;
          bi = 0;
        }
      }
      if (ref >= lowRef) writer.put(key, ref, check);
    }
    older.blob.dispose();
    newer?.blob.dispose();
    const run = writer.finish();
    if (run.length > 0) return run;
    run.blob.dispose();
    return null;
  }

  /**
   * The refs that share a band with `sketch`: for each band, the CHAIN_LIMIT newest refs held
   * (`held`; all when absent) below `refsBelow` with the sketch's key in that band, each ref once,
   * into found[0..count); returns count.
   */
  candidates(sketch: Uint8Array, held: HeldRefs | null = null, refsBelow = Infinity): number {
    this.hashKeys(sketch);
    this.collectAll(this.keyScratch, this.checkScratch, this.bands, held, refsBelow, this.hashedBins);
    return this.count;
  }

  /** The band keys and checks of `sketch` into keyScratch and checkScratch, unless they are there (the same bins as last time). */
  private hashKeys(sketch: Uint8Array): void {
    const bins = this.hashedBins;
    if (this.hashed) {
      let same = true;
      for (let i = 0; i < MINHASH_BINS; i++) {
        if (bins[i] !== sketch[i]) {
          same = false;
          break;
        }
      }
      if (same) return;
    }
    for (let i = 0; i < MINHASH_BINS; i++) bins[i] = sketch[i]!;
    const keys = this.keyScratch;
    const checks = this.checkScratch;
    for (let band = 0; band < this.bands; band++) {
      keys[band] = bandKey(sketch, band, this.rows);
      checks[band] = bandCheck(sketch, band, this.rows);
    }
    this.hashed = true;
  }

  /** candidates() for the first `count` of `keys` (the band keys a routed partition holds). */
  candidatesOfKeys(keys: ArrayLike<number>, count: number, held: HeldRefs | null = null, refsBelow = Infinity): number {
    if (count > this.probeKeys.length) {
      this.probeKeys = new Uint32Array(count);
      this.probeChecks = new Uint32Array(count);
    }
    const own = this.probeKeys;
    for (let i = 0; i < count; i++) own[i] = keys[i]! >>> 0;
    this.collectAll(own, this.probeChecks, count, held, refsBelow, null);
    return this.count;
  }

  /**
   * Pushes, key by key, the CHAIN_LIMIT newest held refs below refsBelow under each key: the
   * buffer's first, then each run's, newest run first. Each array a probe reads in RAM (the
   * buffer's table and keys; each run's block starts, bucket starts and fingerprints) is read
   * for all the keys in one pass before the next array: at 10M pages each read is a cache and
   * TLB miss, and misses in one pass do not wait on each other, so the CPU overlaps them, where
   * key after key (or a scan after its bucket start) would wait on each miss in turn.
   */
  private collectAll(keys: Uint32Array, checks: Uint32Array, count: number, held: HeldRefs | null, refsBelow: number, sketch: Uint8Array | null): void {
    if (++this.stamp === 0xffffffff) {
      this.seenStamps.fill(0);
      this.stamp = 1;
    }
    this.count = 0;
    const runs = this.runs;
    const runCount = runs.length;
    if (this.spanFirst.length < count * runCount || this.lookups.length < count * (runCount + 1)) {
      this.spanFirst = new Int32Array(Math.max(this.spanFirst.length, count * runCount));
      this.spanLast = new Int32Array(this.spanFirst.length);
      this.spanCount = new Int32Array(this.spanFirst.length);
      this.lookups = new Uint32Array(Math.max(this.lookups.length, count * (runCount + 1)));
    }
    // lookups: per run r and key i at r * count + i, its block's entry in run.blocks; the buffer's
    // head of key i at runCount * count + i.
    const lookups = this.lookups;
    const heads = count * runCount;
    const mask = this.bufMask;
    const bufHeads = this.bufHeads;
    const bufKeys = this.bufKeys;
    const spanFirst = this.spanFirst;
    const spanLast = this.spanLast;
    const spanCount = this.spanCount;
    // Each pass reads one array per run for every key of every run (and the buffer), so that the
    // misses of all the runs are in flight together: block starts, then bucket start bytes,
    // then buckets, then the first fingerprint of each, then the scans.
    for (let i = 0; i < count; i++) lookups[heads + i] = bufHeads[keys[i]! & mask]!;
    for (let r = 0; r < runCount; r++) {
      const run = runs[r]!;
      if (run.minRef >= refsBelow) continue;
      // Two shifts: one of 32 (a run of 2^BLOCK_BITS buckets) would shift by none.
      const shift = 32 - run.bits;
      const blocks = run.blocks;
      const o = r * count;
      for (let i = 0; i < count; i++) lookups[o + i] = blocks[keys[i]! >>> shift >>> BLOCK_BITS]!;
    }
    let touched = 0;
    // The key the buffer's head names (what collectBuffer compares first).
    for (let i = 0; i < count; i++) {
      const head = lookups[heads + i]!;
      if (head !== 0) touched ^= bufKeys[head - 1]!;
    }
    // The byte of each key's bucket start, at its block's start + the bucket number.
    for (let r = 0; r < runCount; r++) {
      const run = runs[r]!;
      if (run.minRef >= refsBelow) continue;
      const shift = 32 - run.bits;
      const bytes = run.bytes;
      const o = r * count;
      for (let i = 0; i < count; i++) touched ^= bytes[(lookups[o + i]! & START) + (keys[i]! >>> shift)]!;
    }
    // Each key's bucket [start, end) (kept in spanFirst, spanLast until the scan), and the first
    // fingerprint of each bucket (the scan then finds its line in the cache).
    for (let r = 0; r < runCount; r++) {
      const run = runs[r]!;
      if (run.minRef >= refsBelow) continue;
      const o = r * count;
      for (let i = 0; i < count; i++) this.bucketOf(run, keys[i]!, lookups[o + i]!, o + i);
    }
    for (let r = 0; r < runCount; r++) {
      const run = runs[r]!;
      if (run.minRef >= refsBelow) continue;
      const shift = 32 - run.bits;
      const bytes = run.bytes;
      const o = r * count;
      for (let i = 0; i < count; i++) {
        const at = spanFirst[o + i]!;
        if (at < spanLast[o + i]!) touched ^= bytes[at + (((keys[i]! >>> shift >>> BLOCK_BITS) + 1) << BLOCK_BITS)]!;
      }
    }
    for (let r = 0; r < runCount; r++) {
      const run = runs[r]!;
      if (run.minRef >= refsBelow) continue;
      const o = r * count;
      for (let i = 0; i < count; i++) this.scanBucket(run, keys[i]!, checks[i]!, o + i);
    }
    this.touched = touched;
    // With the probe's sketch (its keys are its bands, in order) and the holder's, a span whose
    // entries are all of pages found already (a near copy shares several bands with its page,
    // each a span of one entry) is not read: reading it would push only those pages again.
    const known = sketch !== null && held !== null && held.sketchOf !== undefined ? held : null;
    for (let i = 0; i < count; i++) {
      const key = keys[i]!;
      const check = checks[i]!;
      let matched = this.collectBuffer(key, check, held, refsBelow);
      for (let r = runCount - 1; r >= 0 && matched < CHAIN_LIMIT; r--) {
        const run = runs[r]!;
        if (run.minRef >= refsBelow) continue;
        const first = spanFirst[r * count + i]!;
        if (first < 0) continue;
        const m = spanCount[r * count + i]!;
        if (known !== null && m <= this.count && this.count <= KNOWN_MAX && this.knownEntries(run, i, sketch!, known) === m) {
          // Each of the m is held, below refsBelow, under this key and check: each would count.
          matched = Math.min(CHAIN_LIMIT, matched + m);
          this.skippedReads++;
          continue;
        }
        matched = this.readSpan(run, key, check, first, spanLast[r * count + i]!, held, refsBelow, matched);
      }
    }
  }

  /**
   * How many of the pages found so far have an entry under band `band` of `sketch` in `run`:
   * those in its refs whose sketch has the probe's bins in that band (so its key and check). A
   * run holds every entry of the held refs in its range, and one entry per page and band, so
   * each such page is one entry of the span with the probe's fingerprint there.
   */
  private knownEntries(run: Run, band: number, sketch: Uint8Array, held: HeldRefs): number {
    const rows = this.rows;
    let n = 0;
    for (let j = 0; j < this.count; j++) {
      const ref = this.found[j]!;
      if (ref < run.minRef || ref > run.maxRef) continue;
      let shared = this.foundBands[j]!;
      if (shared < 0) {
        const other = held.sketchOf!(ref);
        shared = 0;
        for (let b = 0; b < this.bands; b++) {
          let same = true;
          for (let k = b * rows; k < (b + 1) * rows; k++) {
            if (other[k] !== sketch[k]) {
              same = false;
              break;
            }
          }
          if (same) shared |= 1 << b;
        }
        this.foundBands[j] = shared;
      }
      if (((shared >>> band) & 1) !== 0) n++;
    }
    return n;
  }

  /** The buffer's CHAIN_LIMIT newest held refs below refsBelow under `key` and `check`; returns how many. */
  private collectBuffer(key: number, check: number, held: HeldRefs | null, refsBelow: number): number {
    let matched = 0;
    const mask = this.bufMask;
    for (let slot = key & mask; ; slot = (slot + 1) & mask) {
      const head = this.bufHeads[slot]!;
      if (head === 0) break;
      if (this.bufKeys[head - 1] !== key) continue;
      for (let i = head - 1; i >= 0 && matched < CHAIN_LIMIT; i = this.bufNext[i]!) {
        const ref = this.bufRefs[i]!;
        if (this.bufChecks[i] !== check || ref >= refsBelow || (held !== null && !held.holds(ref))) continue;
        this.push(ref);
        matched++;
      }
      break;
    }
    return matched;
  }

  /**
   * In `run`, where `block` is the entry of key's block in run.blocks: the bucket's first entry and one past
   * its last, into spanFirst and spanLast at `slot`.
   */
  private bucketOf(run: Run, key: number, block: number, slot: number): void {
    const u = key >>> (32 - run.bits);
    const j = u >>> BLOCK_BITS;
    const w = u & (BLOCK - 1);
    const base = block & START;
    if (block < WIDE) {
      const bytes = run.bytes;
      const at = base + j * BLOCK;
      this.spanFirst[slot] = base + bytes[at + w]!;
      this.spanLast[slot] = w === BLOCK - 1 ? run.blocks[j + 1]! & START : base + bytes[at + w + 1]!;
    } else {
      const wide = run.wide.get(j)!;
      this.spanFirst[slot] = wide[w]!;
      this.spanLast[slot] = w === BLOCK - 1 ? run.blocks[j + 1]! & START : wide[w + 1]!;
    }
  }

  /**
   * In `run`, the bucket [spanFirst, spanLast) at `slot` (bucketOf): the first and the last entry
   * with the fingerprint of key and check, into spanFirst and spanLast at `slot` (-1: none).
   */
  private scanBucket(run: Run, key: number, check: number, slot: number): void {
    const start = this.spanFirst[slot]!;
    const end = this.spanLast[slot]!;
    // Entry i's fingerprint is at i + (j + 1) * BLOCK.
    const shift = (((key >>> (32 - run.bits)) >>> BLOCK_BITS) + 1) * BLOCK;
    const bytes = run.bytes;
    const fp = entryFingerprint(key, check, run.bits);
    let first = -1;
    let last = -1;
    let n = 0;
    for (let i = start; i < end; i++) {
      if (bytes[i + shift] !== fp) continue;
      if (first < 0) first = i;
      last = i;
      n++;
    }
    this.spanFirst[slot] = first;
    this.spanLast[slot] = last;
    this.spanCount[slot] = n;
  }

  /** The entries [first, last] of `run` read from disk, newest first: those of `key` and `check` held and below refsBelow are pushed; returns matched. */
  private readSpan(run: Run, key: number, check: number, first: number, last: number, held: HeldRefs | null, refsBelow: number, matched: number): number {
    // Entries of one key sit together, by ref: read the span from its end, newest first.
    const words = this.readWords;
    for (let hi = last + 1; hi > first && matched < CHAIN_LIMIT; ) {
      const lo = Math.max(first, hi - READ_ENTRIES);
      run.blob.read(lo * ENTRY_BYTES, this.readBytes.subarray(0, (hi - lo) * ENTRY_BYTES));
      this.diskReads++;
      for (let j = hi - lo - 1; j >= 0 && matched < CHAIN_LIMIT; j--) {
        const o = j * ENTRY_WORDS;
        if (words[o] !== key || words[o + 2] !== check) continue;
        const ref = words[o + 1]!;
        if (ref >= refsBelow || (held !== null && !held.holds(ref))) continue;
        this.push(ref);
        matched++;
      }
      hi = lo;
    }
    return matched;
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
    if (this.count < KNOWN_MAX) this.foundBands[this.count] = -1;
    this.found[this.count++] = ref;
  }
}
