/**
 * A 64-bit hash of a JavaScript string as two uint32 halves, over UTF-16 code
 * units (no encoding step, no allocation). Two independent 32-bit lanes of a
 * murmur3-style mix with different seeds; used to key page ids in typed hash
 * tables. Not cryptographic: with 10^8 ids the chance of any 64-bit collision
 * is about 3·10^-4, documented where it matters (page-store.ts).
 */
export interface Hash64 {
  hi: number;
  lo: number;
}

function lane(s: string, seed: number): number {
  let h = seed >>> 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let k = Math.imul(s.charCodeAt(i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function hashString64(s: string, out: Hash64): Hash64 {
  out.hi = lane(s, 0x9747b28c);
  out.lo = lane(s, 0x5bd1e995);
  return out;
}
