/**
 * A 64-bit hash of a JavaScript string as two uint32 halves, over UTF-16 code
 * units (no encoding step, no allocation): the fingerprinter's Murmur3 body
 * and finaliser (feature-hash.ts), run as two lanes with seeds of our own, so
 * page-id hashing does not change when token hashing does. Used to key page
 * ids in typed hash tables. Not cryptographic: with 10^8 ids the chance of
 * any 64-bit collision is about 3·10^-4, documented where it matters
 * (page-store.ts).
 */
import { fmix, mix } from '../fingerprint/feature-hash.js';

export interface Hash64 {
  hi: number;
  lo: number;
}

const ID_SEED_A = 0x9747b28c;
const ID_SEED_B = 0x5bd1e995;

export function hashString64(s: string, out: Hash64): Hash64 {
  let a = ID_SEED_A;
  let b = ID_SEED_B;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    a = mix(a, c);
    b = mix(b, c);
  }
  out.hi = fmix(a ^ n);
  out.lo = fmix(b ^ n);
  return out;
}
