/**
 * One sorted run of one table: entries (key32, ref) ordered by key32, then ref.
 *
 * Layouts (one class, so probe loops stay monomorphic):
 * - SMALL: keys: Uint32Array (key32), refs: Uint32Array, 8 bytes per entry;
 *   from 1024 entries also a directory over the top dirBits bits of key32
 *   (about 4 entries per slot, at most 1 byte per entry).
 * - LARGE (length >= LARGE_MIN): a direct-address directory over the top 16
 *   bits of key32 (65,537 offsets), res: Uint16Array (the low 16 bits of
 *   key32), and the refs: when they span less than 2^24 (a run covers a
 *   contiguous range of refs, so below 16.7M entries they do), as 24-bit
 *   offsets from refBase in refLo (Uint16Array) and refHi (Uint8Array), else
 *   refs (Uint32Array). 5 bytes per entry (6 with wide refs) plus at most 1
 *   byte of directory.
 * - COMPRESSED: paper section 3.2 blocks, see compressed-run.ts.
 */
import { buildCompressed, CompressedReader, type CompressedData } from './compressed-run.js';

export const RUN_SMALL = 0;
export const RUN_LARGE = 1;
export const RUN_COMPRESSED = 2;
export const LARGE_MIN = 1 << 18;
/**
 * Internal: the size from which runs use the large layouts, and the ref span below which a large
 * run keeps 24-bit refs (2^24; tests lower both to cover every layout on small data).
 */
export const runTuning = { largeMin: LARGE_MIN, narrowSpan: 1 << 24 };
const DIR_SIZE = 65537;

const EMPTY32 = new Uint32Array(0);
const EMPTY16 = new Uint16Array(0);
const EMPTY8 = new Uint8Array(0);

export class SortedRun {
  kind = RUN_SMALL;
  length = 0;
  /** SMALL runs: bits of key32 the directory addresses (0 = none, binary search). */
  dirBits = 0;
  keys: Uint32Array = EMPTY32;
  dir: Uint32Array = EMPTY32;
  res: Uint16Array = EMPTY16;
  refs: Uint32Array = EMPTY32;
  /** LARGE runs with narrow refs: ref i = refBase + refLo[i] + refHi[i] * 65536 (refs is empty). */
  refBase = 0;
  refLo: Uint16Array = EMPTY16;
  refHi: Uint8Array = EMPTY8;
  packed: CompressedData | null = null;

  get byteLength(): number {
    return this.keys.byteLength + this.dir.byteLength + this.res.byteLength + this.refs.byteLength + this.refLo.byteLength + this.refHi.byteLength + (this.packed?.byteLength ?? 0);
  }
}

/** Ref of entry i of a raw run. */
export function refAt(run: SortedRun, i: number): number {
  return run.refs.length > 0 ? run.refs[i]! : run.refBase + run.refLo[i]! + run.refHi[i]! * 65536;
}

/** Stores a large run's refs as 24-bit offsets when they span less than 2^24. */
function narrowRefs(run: SortedRun): void {
  const refs = run.refs;
  const n = refs.length;
  if (n === 0) return;
  let min = refs[0]!;
  let max = min;
  for (let i = 1; i < n; i++) {
    const r = refs[i]!;
    if (r < min) min = r;
    else if (r > max) max = r;
  }
  if (max - min >= runTuning.narrowSpan) return;
  const lo = new Uint16Array(n);
  const hi = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const d = refs[i]! - min;
    lo[i] = d & 0xffff;
    hi[i] = d >>> 16;
  }
  run.refBase = min;
  run.refLo = lo;
  run.refHi = hi;
  run.refs = EMPTY32;
}

/** Fills a raw (SMALL or LARGE) run of known length entry by entry, in order. */
export class RunWriter {
  private readonly run = new SortedRun();
  private j = 0;
  constructor(n: number) {
    const run = this.run;
    run.length = n;
    if (n < runTuning.largeMin) {
      run.kind = RUN_SMALL;
      run.keys = new Uint32Array(n);
    } else {
      run.kind = RUN_LARGE;
      run.dir = new Uint32Array(DIR_SIZE);
      run.res = new Uint16Array(n);
    }
    run.refs = new Uint32Array(n);
  }

  push(key: number, ref: number): void {
    const run = this.run;
    const j = this.j++;
    if (run.kind === RUN_SMALL) {
      run.keys[j] = key;
    } else {
      run.dir[(key >>> 16) + 1]!++;
      run.res[j] = key & 0xffff;
    }
    run.refs[j] = ref;
  }

  finish(): SortedRun {
    const run = this.run;
    const n = run.length;
    if (run.kind === RUN_LARGE) {
      const dir = run.dir;
      for (let b = 1; b < DIR_SIZE; b++) dir[b]! += dir[b - 1]!;
      narrowRefs(run);
    } else {
      addSmallDirectory(run);
    }
    return run;
  }
}

/** A small run's directory over the top bits of its keys, from 1024 entries (about 4 entries per slot). */
function addSmallDirectory(run: SortedRun): void {
  const n = run.length;
  if (n < 1024) return;
  const bits = Math.min(16, 31 - Math.clz32(n) - 2);
  const shift = 32 - bits;
  const dir = new Uint32Array((1 << bits) + 1);
  const keys = run.keys;
  for (let i = 0; i < n; i++) dir[(keys[i]! >>> shift) + 1]!++;
  for (let b = 1; b < dir.length; b++) dir[b]! += dir[b - 1]!;
  run.dirBits = bits;
  run.dir = dir;
}

/** Builds a run from sorted keys/refs [0, n). */
export function buildRun(keys: Uint32Array, refs: Uint32Array, n: number, compressed: boolean): SortedRun {
  if (compressed && n >= runTuning.largeMin) {
    const run = new SortedRun();
    run.length = n;
    run.kind = RUN_COMPRESSED;
    run.packed = buildCompressed(keys, refs, n);
    return run;
  }
  const w = new RunWriter(n);
  for (let i = 0; i < n; i++) w.push(keys[i]!, refs[i]!);
  return w.finish();
}

/** Reads a run's entries in order, one at a time, whatever its layout. */
export class RunCursor {
  key = 0;
  ref = 0;
  private i = 0;
  private bucket = 0;
  private readonly reader: CompressedReader | null;
  constructor(private readonly run: SortedRun) {
    this.reader = run.kind === RUN_COMPRESSED ? new CompressedReader(run.packed!) : null;
  }

  next(): boolean {
    const run = this.run;
    const i = this.i;
    if (i >= run.length) return false;
    if (run.kind === RUN_SMALL) {
      this.key = run.keys[i]!;
      this.ref = run.refs[i]!;
    } else if (run.kind === RUN_LARGE) {
      const dir = run.dir;
      while (dir[this.bucket + 1]! <= i) this.bucket++;
      this.key = ((this.bucket << 16) | run.res[i]!) >>> 0;
      this.ref = refAt(run, i);
    } else {
      this.reader!.next();
      this.key = this.reader!.key;
      this.ref = this.reader!.ref;
    }
    this.i = i + 1;
    return true;
  }
}

/**
 * Merges run a with the newer run b (or rebuilds a alone), dropping refs for
 * which dead(ref) holds. Streams both inputs; a raw output is written in its
 * final layout directly, so a merge holds little more than its output.
 */
export function mergeRuns(
  a: SortedRun,
  b: SortedRun | null,
  dead: ((ref: number) => boolean) | null,
  compressed: boolean,
): SortedRun {
  let n = 0;
  if (dead === null) {
    n = a.length + (b === null ? 0 : b.length);
  } else {
    for (const run of b === null ? [a] : [a, b]) {
      const c = new RunCursor(run);
      while (c.next()) if (!dead(c.ref)) n++;
    }
  }
  const toArrays = compressed && n >= runTuning.largeMin;
  if (dead === null && !toArrays && b !== null && a.kind === RUN_LARGE && b.kind !== RUN_COMPRESSED) {
    return mergeIntoLarge(a, b, n);
  }
  if (dead === null && !toArrays && b !== null && a.kind === RUN_SMALL && b.kind === RUN_SMALL) {
    return mergeSmall(a, b, n);
  }
  const keys = toArrays ? new Uint32Array(n) : null;
  const refs = toArrays ? new Uint32Array(n) : null;
  const w = toArrays ? null : new RunWriter(n);
  let j = 0;
  const ca = new RunCursor(a);
  const cb = b === null ? null : new RunCursor(b);
  let ha = ca.next();
  let hb = cb !== null && cb.next();
  while (ha || hb) {
    let key: number;
    let ref: number;
    if (!hb || (ha && ca.key <= cb!.key)) {
      key = ca.key;
      ref = ca.ref;
      ha = ca.next();
    } else {
      key = cb!.key;
      ref = cb!.ref;
      hb = cb!.next();
    }
    if (dead !== null && dead(ref)) continue;
    if (w !== null) w.push(key, ref);
    else {
      keys![j] = key;
      refs![j++] = ref;
    }
  }
  return w !== null ? w.finish() : buildRun(keys!, refs!, n, true);
}

/**
 * Fast path of the most frequent merge: two small runs, nothing removed, read from their arrays
 * directly (no cursor per entry); on equal keys a's entry first, as the cursors' merge does.
 * A small result is written straight into its arrays: this merge runs every few hundred inserts
 * and rewrites the newest runs whole.
 */
function mergeSmall(a: SortedRun, b: SortedRun, n: number): SortedRun {
  const aKeys = a.keys;
  const aRefs = a.refs;
  const bKeys = b.keys;
  const bRefs = b.refs;
  const na = a.length;
  const nb = b.length;
  if (n >= runTuning.largeMin) {
    const w = new RunWriter(n);
    let i = 0;
    let j = 0;
    while (i < na && j < nb) {
      if (aKeys[i]! <= bKeys[j]!) {
        w.push(aKeys[i]!, aRefs[i]!);
        i++;
      } else {
        w.push(bKeys[j]!, bRefs[j]!);
        j++;
      }
    }
    for (; i < na; i++) w.push(aKeys[i]!, aRefs[i]!);
    for (; j < nb; j++) w.push(bKeys[j]!, bRefs[j]!);
    return w.finish();
  }
  const keys = new Uint32Array(n);
  const refs = new Uint32Array(n);
  let i = 0;
  let j = 0;
  let o = 0;
  while (i < na && j < nb) {
    const ka = aKeys[i]!;
    const kb = bKeys[j]!;
    if (ka <= kb) {
      keys[o] = ka;
      refs[o++] = aRefs[i++]!;
    } else {
      keys[o] = kb;
      refs[o++] = bRefs[j++]!;
    }
  }
  if (i < na) {
    keys.set(aKeys.subarray(i, na), o);
    refs.set(aRefs.subarray(i, na), o);
  } else if (j < nb) {
    keys.set(bKeys.subarray(j, nb), o);
    refs.set(bRefs.subarray(j, nb), o);
  }
  const run = new SortedRun();
  run.kind = RUN_SMALL;
  run.length = n;
  run.keys = keys;
  run.refs = refs;
  addSmallDirectory(run);
  return run;
}

/** A large run of n entries with its directory (counts, zero) and residues allocated, for a merge to fill. */
function emptyLargeRun(n: number): SortedRun {
  const run = new SortedRun();
  run.kind = RUN_LARGE;
  run.length = n;
  run.dir = new Uint32Array(DIR_SIZE);
  run.res = new Uint16Array(n);
  return run;
}

/** Fast path of the common merge: a large raw run and a smaller raw run, nothing removed. */
function mergeIntoLarge(a: SortedRun, b: SortedRun, n: number): SortedRun {
  let bKeys: Uint32Array;
  if (b.kind === RUN_SMALL) {
    bKeys = b.keys;
  } else {
    bKeys = new Uint32Array(b.length);
    for (let bucket = 0; bucket < DIR_SIZE - 1; bucket++) {
      const top = bucket * 65536;
      for (let i = b.dir[bucket]!; i < b.dir[bucket + 1]!; i++) bKeys[i] = top + b.res[i]!;
    }
  }
  const nb = b.length;
  // The newer run's refs are all above the older's (runs cover ref ranges in order), so when the
  // older keeps 24-bit refs and the newer's fit under its base, the merged run keeps the same
  // base (narrowRefs would choose it) and is written in that layout directly: its entries of the
  // older run copied as they are, no 32-bit refs array and no second pass.
  let bMin = Infinity;
  let bMax = -1;
  for (let j = 0; j < nb; j++) {
    const ref = refAt(b, j);
    if (ref < bMin) bMin = ref;
    if (ref > bMax) bMax = ref;
  }
  if (a.refs.length === 0 && a.length > 0 && bMin >= a.refBase && bMax - a.refBase < runTuning.narrowSpan) {
    return mergeIntoNarrow(a, b, bKeys, n);
  }
  const run = emptyLargeRun(n);
  const dir = run.dir;
  const res = run.res;
  const refs = new Uint32Array(n);
  const aDir = a.dir;
  const aRes = a.res;
  let j = 0;
  let o = 0;
  for (let bucket = 0; bucket < DIR_SIZE - 1; bucket++) {
    const top = bucket * 65536;
    const end = aDir[bucket + 1]!;
    for (let i = aDir[bucket]!; i < end; i++) {
      const key = top + aRes[i]!;
      while (j < nb && bKeys[j]! < key) {
        const k = bKeys[j]!;
        dir[(k >>> 16) + 1]!++;
        res[o] = k & 0xffff;
        refs[o++] = refAt(b, j++);
      }
      dir[bucket + 1]!++;
      res[o] = aRes[i]!;
      refs[o++] = refAt(a, i);
    }
  }
  while (j < nb) {
    const k = bKeys[j]!;
    dir[(k >>> 16) + 1]!++;
    res[o] = k & 0xffff;
    refs[o++] = refAt(b, j++);
  }
  for (let bucket = 1; bucket < DIR_SIZE; bucket++) dir[bucket]! += dir[bucket - 1]!;
  run.refs = refs;
  narrowRefs(run);
  return run;
}

/** mergeIntoLarge where both runs' refs fit as 24-bit offsets from a's base: the merged run in that layout. */
function mergeIntoNarrow(a: SortedRun, b: SortedRun, bKeys: Uint32Array, n: number): SortedRun {
  const nb = b.length;
  const base = a.refBase;
  const run = emptyLargeRun(n);
  const dir = run.dir;
  const res = run.res;
  const refLo = new Uint16Array(n);
  const refHi = new Uint8Array(n);
  const aDir = a.dir;
  const aRes = a.res;
  const aLo = a.refLo;
  const aHi = a.refHi;
  let j = 0;
  let o = 0;
  // The next key of b (Infinity past its end), so that the inner copy loop compares one number.
  let nextB = nb > 0 ? bKeys[0]! : Infinity;
  for (let bucket = 0; bucket < DIR_SIZE - 1; bucket++) {
    const top = bucket * 65536;
    const from = aDir[bucket]!;
    const end = aDir[bucket + 1]!;
    // Entries of b below this bucket's end come between a's; outside the bucket's range none do.
    if (nextB >= top + 65536) {
      // No entry of b falls in this bucket's keys: a's entries are copied as a block.
      const count = end - from;
      if (count > 0) {
        res.set(aRes.subarray(from, end), o);
        refLo.set(aLo.subarray(from, end), o);
        refHi.set(aHi.subarray(from, end), o);
        o += count;
        dir[bucket + 1]! += count;
      }
      continue;
    }
    // a's entries in order, each after b's below it; past a's last, the bucket's end stands in
    // for a key, so that b's entries above a's last one (or of an empty bucket of a) come too.
    for (let i = from; i <= end; i++) {
      const key = i < end ? top + aRes[i]! : top + 65536;
      while (nextB < key) {
        const d = refAt(b, j) - base;
        dir[(nextB >>> 16) + 1]!++;
        res[o] = nextB & 0xffff;
        refLo[o] = d & 0xffff;
        refHi[o++] = d >>> 16;
        nextB = ++j < nb ? bKeys[j]! : Infinity;
      }
      if (i === end) break;
      dir[bucket + 1]!++;
      res[o] = aRes[i]!;
      refLo[o] = aLo[i]!;
      refHi[o++] = aHi[i]!;
    }
  }
  for (let bucket = 1; bucket < DIR_SIZE; bucket++) dir[bucket]! += dir[bucket - 1]!;
  run.refBase = base;
  run.refLo = refLo;
  run.refHi = refHi;
  return run;
}

/** First index in [lo, hi) with a[i] >= x (a sorted). */
export function lowerBound(a: Uint32Array | Uint16Array, lo: number, hi: number, x: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

