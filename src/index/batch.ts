/**
 * Batch mode (Manku, Jain, Das Sarma, WWW 2007, section 3.3): build the
 * tables over the small query set in memory and stream the big stored set
 * past them, chunk by chunk. And all pairs within k of one set, by sorting
 * each table's keys and comparing inside groups sharing a prefix.
 */
import { DedupError } from '../errors.js';
import { popcount32 } from '../fingerprint/fingerprint-hex.js';
import { FingerprintIndex } from './fingerprint-index.js';
import { compilePlan, firstCleanTable, key32, POP16 } from './permutation.js';
import type { TablePlan } from './plan.js';
import { planAllPairs } from './planner.js';
import { createQueryResult } from './query-result.js';
import { sortPairs } from './radix-sort.js';

export interface BatchResults {
  /** Index into the query arrays. */
  queryIndex: Uint32Array;
  /** storedRefs[i] of the matching stored fingerprint, or its position in the stream. */
  storedRef: Uint32Array;
  distance: Uint8Array;
}

export interface BatchMatcher {
  /** Streams a chunk of stored fingerprints past the query tables. */
  scan(storedHi: Uint32Array, storedLo: Uint32Array, storedRefs?: Uint32Array): void;
  /** Fingerprints scanned so far (the default ref of the next one). */
  readonly scanned: number;
  /** Matches sorted by (queryIndex, storedRef), each pair once. */
  results(): BatchResults;
}

export interface PairList {
  a: Uint32Array;
  b: Uint32Array;
  distance: Uint8Array;
}

/** Growable struct-of-arrays of (a, b, distance) triples. */
class Triples {
  a = new Uint32Array(1024);
  b = new Uint32Array(1024);
  d = new Uint8Array(1024);
  n = 0;
  push(a: number, b: number, d: number): void {
    if (this.n === this.a.length) {
      const cap = this.n * 2;
      const na = new Uint32Array(cap);
      na.set(this.a);
      const nb = new Uint32Array(cap);
      nb.set(this.b);
      const nd = new Uint8Array(cap);
      nd.set(this.d);
      this.a = na;
      this.b = nb;
      this.d = nd;
    }
    this.a[this.n] = a;
    this.b[this.n] = b;
    this.d[this.n++] = d;
  }
  /** Sorted by (a, b), duplicates dropped. */
  sorted(): { a: Uint32Array; b: Uint32Array; d: Uint8Array } {
    const n = this.n;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    const keys = this.b.slice(0, n);
    sortPairs(keys, order, n);
    for (let i = 0; i < n; i++) keys[i] = this.a[order[i]!]!;
    sortPairs(keys, order, n);
    const a = new Uint32Array(n);
    const b = new Uint32Array(n);
    const d = new Uint8Array(n);
    let m = 0;
    for (let i = 0; i < n; i++) {
      const j = order[i]!;
      const x = this.a[j]!;
      const y = this.b[j]!;
      if (m > 0 && a[m - 1] === x && b[m - 1] === y) continue;
      a[m] = x;
      b[m] = y;
      d[m++] = this.d[j]!;
    }
    return { a: a.slice(0, m), b: b.slice(0, m), d: d.slice(0, m) };
  }
}

function checkHalves(hi: Uint32Array, lo: Uint32Array, what: string): void {
  if (!(hi instanceof Uint32Array) || !(lo instanceof Uint32Array) || hi.length !== lo.length) {
    throw new DedupError('PLAN_INVALID', `${what}: hi and lo must be Uint32Arrays of equal length`);
  }
}

export function batchQuery(plan: TablePlan, queries: { hi: Uint32Array; lo: Uint32Array }, k: number): BatchMatcher {
  checkHalves(queries.hi, queries.lo, 'batchQuery');
  const index = FingerprintIndex.create({ plan, initialCapacity: queries.hi.length });
  if (!(Number.isInteger(k) && k >= 0 && k <= plan.k)) {
    throw new DedupError('PLAN_INVALID', `batch k must be an integer in 0..${plan.k}, got ${String(k)}`);
  }
  for (let i = 0; i < queries.hi.length; i++) index.insert(queries.hi[i]!, queries.lo[i]!);
  index.compact();
  const out = createQueryResult(64);
  const found = new Triples();
  let scanned = 0;
  return {
    get scanned() {
      return scanned;
    },
    scan(storedHi: Uint32Array, storedLo: Uint32Array, storedRefs?: Uint32Array): void {
      checkHalves(storedHi, storedLo, 'scan');
      if (storedRefs !== undefined && storedRefs.length !== storedHi.length) {
        throw new DedupError('PLAN_INVALID', 'scan: storedRefs must have one ref per fingerprint');
      }
      for (let i = 0; i < storedHi.length; i++) {
        const n = index.query(storedHi[i]!, storedLo[i]!, k, out);
        if (n === 0) continue;
        const ref = storedRefs === undefined ? scanned + i : storedRefs[i]!;
        for (let j = 0; j < n; j++) found.push(out.refs[j]!, ref, out.distances[j]!);
      }
      scanned += storedHi.length;
    },
    results(): BatchResults {
      const s = found.sorted();
      return { queryIndex: s.a, storedRef: s.b, distance: s.d };
    },
  };
}

/** Every pair i < j with hammingDistance(i, j) <= k, once each, sorted by (a, b). */
export function findAllPairs(hi: Uint32Array, lo: Uint32Array, k: number, plan?: TablePlan): PairList {
  checkHalves(hi, lo, 'findAllPairs');
  const n = hi.length;
  const usePlan = plan ?? planAllPairs(k, n);
  if (!(Number.isInteger(k) && k >= 0 && k <= usePlan.k)) {
    throw new DedupError('PLAN_INVALID', `k must be an integer in 0..${usePlan.k}, got ${String(k)}`);
  }
  const compiled = compilePlan(usePlan);
  const masks = compiled.masks;
  const found = new Triples();
  const keys = new Uint32Array(n);
  const order = new Uint32Array(n);
  for (let t = 0; t < compiled.tables.length; t++) {
    const ct = compiled.tables[t]!;
    for (let i = 0; i < n; i++) {
      keys[i] = key32(ct.segments, hi[i]!, lo[i]!);
      order[i] = i;
    }
    sortPairs(keys, order, n);
    const pm = ct.prefixMask;
    const rej = ct.rejectMask;
    let s = 0;
    while (s < n) {
      const group = (keys[s]! & pm) >>> 0;
      let e = s + 1;
      while (e < n && (keys[e]! & pm) >>> 0 === group) e++;
      for (let x = s; x < e - 1; x++) {
        const kx = keys[x]!;
        const i = order[x]!;
        const hiI = hi[i]!;
        const loI = lo[i]!;
        for (let y = x + 1; y < e; y++) {
          const x = (keys[y]! ^ kx) & rej;
          if (POP16[x & 0xffff]! + POP16[x >>> 16]! > k) continue;
          const j = order[y]!;
          const dHi = hi[j]! ^ hiI;
          const dLo = lo[j]! ^ loI;
          const d = popcount32(dHi) + popcount32(dLo);
          if (d > k || firstCleanTable(masks, dHi, dLo) !== t) continue;
          if (i < j) found.push(i, j, d);
          else found.push(j, i, d);
        }
      }
      s = e;
    }
  }
  const r = found.sorted();
  return { a: r.a, b: r.b, distance: r.d };
}
