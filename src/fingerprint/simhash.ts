/**
 * Charikar's simhash over 64-bit features (Manku, Jain, Das Sarma, WWW 2007,
 * section 2): keep 64 counters; a feature of weight w adds w to counter i when
 * bit i of its hash is 1 and subtracts w when it is 0; bit i of the
 * fingerprint is 1 iff counter i > 0 (ties give 0).
 *
 * Counter i of the definition equals 2 * ones[i] - total, where ones[i] sums
 * the weights of features with bit i set and total sums all weights, so
 * bit i = (2 * ones[i] > total). ones[] is computed in one of two ways:
 *
 * - few features (< BYTE_HISTOGRAM_MIN): walk the set bits of each hash with
 *   clz32 and add the weight to ones[bit] (about 32 adds per feature);
 * - many features: byte histograms. For each of the 8 bytes of a hash add the
 *   weight to hist[byte position][byte value] (8 adds per feature), then
 *   ones[8k + j] = sum of hist[k][v] over byte values v with bit j set, in
 *   ascending v, the eight sums of a byte position in locals (at most
 *   8 x 256 x 8 adds per page, independent of the feature count).
 *
 * Both are exact for integer weights (tf, binary) and differ only in float
 * rounding order for fractional weights (log-tf, tfidf); the path is chosen
 * by the feature count alone, so a page always gets the same fingerprint.
 * Buffers are reused across pages; no BigInt.
 */
export const BYTE_HISTOGRAM_MIN = 128;

export class Simhash {
  private readonly ones = new Float64Array(64);
  private readonly hist = new Float64Array(8 * 256);

  /**
   * Fingerprint of features i < n with hash (hi[i], lo[i]) and weight w[i];
   * writes [hi, lo] (uint32) into out.
   */
  compute(hi: Int32Array, lo: Int32Array, w: Float64Array, n: number, out: Uint32Array, wholeWeights = false): void {
    const ones = this.ones;
    let total = 0;
    if (n < BYTE_HISTOGRAM_MIN) {
      ones.fill(0);
      for (let f = 0; f < n; f++) {
        const weight = w[f]!;
        total += weight;
        let x = lo[f]! | 0;
        while (x !== 0) {
          const bit = 31 - Math.clz32(x);
          ones[bit]! += weight;
          x ^= 1 << bit;
        }
        x = hi[f]! | 0;
        while (x !== 0) {
          const bit = 31 - Math.clz32(x);
          ones[32 + bit]! += weight;
          x ^= 1 << bit;
        }
      }
    } else {
      const hist = this.hist;
      hist.fill(0);
      for (let f = 0; f < n; f++) {
        const weight = w[f]!;
        total += weight;
        const l = lo[f]!;
        const h = hi[f]!;
        hist[l & 0xff]! += weight;
        hist[256 + ((l >>> 8) & 0xff)]! += weight;
        hist[512 + ((l >>> 16) & 0xff)]! += weight;
        hist[768 + (l >>> 24)]! += weight;
        hist[1024 + (h & 0xff)]! += weight;
        hist[1280 + ((h >>> 8) & 0xff)]! += weight;
        hist[1536 + ((h >>> 16) & 0xff)]! += weight;
        hist[1792 + (h >>> 24)]! += weight;
      }
      if (wholeWeights) this.foldHistograms();
      else for (let k = 0; k < 8; k++) {
        const base = k * 256;
        // Eight sums in locals, each over the byte values with its bit set, in ascending order.
        let o0 = 0;
        let o1 = 0;
        let o2 = 0;
        let o3 = 0;
        let o4 = 0;
        let o5 = 0;
        let o6 = 0;
        let o7 = 0;
        for (let v = 1; v < 256; v++) {
          const c = hist[base + v]!;
          if (c === 0) continue;
          if ((v & 1) !== 0) o0 += c;
          if ((v & 2) !== 0) o1 += c;
          if ((v & 4) !== 0) o2 += c;
          if ((v & 8) !== 0) o3 += c;
          if ((v & 16) !== 0) o4 += c;
          if ((v & 32) !== 0) o5 += c;
          if ((v & 64) !== 0) o6 += c;
          if ((v & 128) !== 0) o7 += c;
        }
        // Every counter of this byte position is written here: no fill needed on this path.
        const at = k * 8;
        ones[at] = o0;
        ones[at + 1] = o1;
        ones[at + 2] = o2;
        ones[at + 3] = o3;
        ones[at + 4] = o4;
        ones[at + 5] = o5;
        ones[at + 6] = o6;
        ones[at + 7] = o7;
      }
    }
    let outLo = 0;
    let outHi = 0;
    for (let i = 0; i < 32; i++) {
      if (2 * ones[i]! > total) outLo |= 1 << i;
      if (2 * ones[32 + i]! > total) outHi |= 1 << i;
    }
    out[0] = outHi >>> 0;
    out[1] = outLo >>> 0;
  }

  /**
   * ones[] from the byte histograms when every weight is a whole number: such sums are exact in
   * any order, so each byte position is halved in place, bit 7 down to bit 0 (ones[8k + j] is the
   * upper half's sum, then the upper half is added onto the lower): 510 adds a position, not
   * 255 x 8 tests. Fractional weights keep the ascending order above, so their rounding never moves.
   */
  private foldHistograms(): void {
    const hist = this.hist;
    const ones = this.ones;
    for (let k = 0; k < 8; k++) {
      const base = k * 256;
      for (let bit = 7; bit >= 0; bit--) {
        const half = 1 << bit;
        let upper = 0;
        for (let v = base + half, end = base + 2 * half; v < end; v++) {
          const c = hist[v]!;
          upper += c;
          hist[v - half]! += c;
        }
        ones[k * 8 + bit] = upper;
      }
    }
  }
}
