/**
 * 64-bit feature hashes as two uint32 lanes, no BigInt, no strings built.
 *
 * A token is hashed by running the MurmurHash3 x86_32 body over its case-folded
 * UTF-16 code units twice in lock-step with two different seeds (lane A gives
 * bits 63..32, lane B bits 31..0), then the Murmur3 finaliser with the length.
 * A shingle of n tokens runs the same body over the n token lanes (A over the
 * A halves, B over the B halves) with shingle seeds, so a shingle hash costs
 * 2n mixing rounds and no allocation.
 *
 * Murmur3 is not cryptographic; simhash only needs each of the 64 bits to be
 * balanced and independent across natural-language features, which the
 * golden-vector and bit-balance tests check. Changing any constant here
 * changes every fingerprint: the golden vectors make that a visible decision.
 */
const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

// The seeds as int32 (`| 0`; mix reads them so anyway): a constant above 2^31 is a double in V8,
// and a hash state that starts as one is kept as a double through the loop that mixes into it.
export const TOKEN_SEED_A = 0x243f6a88;
export const TOKEN_SEED_B = 0x85a308d3 | 0;
export const SHINGLE_SEED_A = 0x13198a2e;
export const SHINGLE_SEED_B = 0x03707344;
export const EXACT_SEED_A = 0xa4093822 | 0;
export const EXACT_SEED_B = 0x299f31d0;

/** One Murmur3 body round: mixes the 32-bit value k into state h. */
export function mix(h: number, k: number): number {
  return mixKey(h, key(k));
}

/**
 * The first half of a Murmur3 body round, which depends on the value alone: both lanes of a hash
 * mix the same value, and a token is mixed into several shingles, so the key is computed once per
 * value (KEY_OF_UNIT holds it for every case-folded code unit) and mixed in with mixKey.
 */
export function key(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

/** The second half of a Murmur3 body round: mix(h, k) === mixKey(h, key(k)). */
export function mixKey(h: number, kk: number): number {
  h ^= kk;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** Murmur3 finaliser; returns a uint32. */
export function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Hash of a string exactly as the tokenizer hashes a word token with the same
 * code units (the caller folds case first). Used for stop-word, date-word and
 * IDF tables, and for segmenter output.
 */
export function hashUnits(s: string, out: Uint32Array): void {
  let a = TOKEN_SEED_A;
  let b = TOKEN_SEED_B;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    a = mix(a, c);
    b = mix(b, c);
  }
  out[0] = fmix(a ^ n);
  out[1] = fmix(b ^ n);
}
