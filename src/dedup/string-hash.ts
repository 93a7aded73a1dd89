/**
 * A 64-bit hash of a JavaScript string as two uint32 halves, over UTF-16 code
 * units (no encoding step, no allocation): the MurmurHash3 x86_32 body and
 * finaliser, run as two lanes with seeds of our own. Used to key page ids in
 * typed hash tables, which snapshots persist, so this function is frozen: it
 * has its own copy of the Murmur3 rounds (a change to the fingerprint's
 * feature hashing must not re-key stored page ids), and
 * test/unit/dedup/string-hash.test.ts pins its output. Not cryptographic:
 * with 10^8 ids the chance of any 64-bit collision is about 3·10^-4,
 * documented where it matters (page-store.ts).
 */
export interface Hash64 {
  hi: number;
  lo: number;
}

const ID_SEED_A = 0x9747b28c;
const ID_SEED_B = 0x5bd1e995;
const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function round(h: number, k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function hashString64(s: string, out: Hash64): Hash64 {
  let a = ID_SEED_A;
  let b = ID_SEED_B;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    a = round(a, c);
    b = round(b, c);
  }
  out.hi = finish(a ^ n);
  out.lo = finish(b ^ n);
  return out;
}
