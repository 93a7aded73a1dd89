/** Seeded data and a brute-force oracle for the index tests. */
import assert from 'node:assert/strict';
import { hammingDistance } from '../../../src/fingerprint/fingerprint-hex.js';
import { createQueryResult, type FingerprintIndex, type QueryResult } from '../../../src/index/index.js';

/** 32-bit words from the shared mulberry32 (src/mulberry32.ts). */
export { mulberry32Uint32 as rng } from '../../support/rng.js';

export function flipBits(hi: number, lo: number, d: number, next: () => number): [number, number] {
  const bits = new Set<number>();
  while (bits.size < d) bits.add(next() & 63);
  for (const b of bits) {
    if (b >= 32) hi ^= 1 << (b - 32);
    else lo ^= 1 << b;
  }
  return [hi >>> 0, lo >>> 0];
}

/** Reference store: what the index should hold. */
export class Oracle {
  hi: number[] = [];
  lo: number[] = [];
  live: boolean[] = [];
  add(hi: number, lo: number): number {
    this.hi.push(hi >>> 0);
    this.lo.push(lo >>> 0);
    this.live.push(true);
    return this.hi.length - 1;
  }
  within(hi: number, lo: number, k: number): Map<number, number> {
    const out = new Map<number, number>();
    for (let r = 0; r < this.hi.length; r++) {
      if (!this.live[r]) continue;
      const d = hammingDistance(hi, lo, this.hi[r]!, this.lo[r]!);
      if (d <= k) out.set(r, d);
    }
    return out;
  }
}

const shared: QueryResult = createQueryResult(4);

/** Asserts the index answers exactly as the oracle: within k, nothing missed, once each. */
export function assertSameAnswer(index: FingerprintIndex, oracle: Oracle, hi: number, lo: number, k: number, label = ''): number {
  const n = index.query(hi, lo, k, shared);
  const want = oracle.within(hi, lo, k);
  const got = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const ref = shared.refs[i]!;
    assert.ok(!got.has(ref), `${label} ref ${ref} reported twice`);
    got.set(ref, shared.distances[i]!);
  }
  for (const [ref, d] of got) {
    assert.ok(want.has(ref), `${label} ref ${ref} at distance ${d} is not within ${k}`);
    assert.equal(d, want.get(ref), `${label} wrong distance for ref ${ref}`);
  }
  for (const [ref, d] of want) assert.ok(got.has(ref), `${label} missed ref ${ref} at distance ${d} (k=${k})`);
  let best = -1;
  let bestD = k + 1;
  for (const [ref, d] of want) if (d < bestD || (d === bestD && ref < best)) [best, bestD] = [ref, d];
  assert.equal(index.nearest(hi, lo, k), best, `${label} nearest`);
  return n;
}

/** Queries: stored fps moved by exactly k and k + 1 bits, plus random ones. */
export function plantedQueries(oracle: Oracle, k: number, count: number, next: () => number): [number, number][] {
  const out: [number, number][] = [];
  const n = oracle.hi.length;
  for (let i = 0; i < count; i++) {
    const r = next() % n;
    const kind = i % 4;
    if (kind === 3) out.push([next(), next()]);
    else out.push(flipBits(oracle.hi[r]!, oracle.lo[r]!, kind === 0 ? k : kind === 1 ? k + 1 : next() % (k + 1), next));
  }
  return out;
}
