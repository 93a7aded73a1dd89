/**
 * A second, per-page sketch for the second stage that confirms candidates
 * beyond k (src/dedup/decider.ts), 64 bytes per page:
 *
 * - MINHASH_BINS (56) bins of one-permutation MinHash (Li, Owen & Zhang, NIPS
 *   2012) with rotation densification for empty bins (Shrivastava & Li, ICML
 *   2014), each bin keeping the low 8 bits of its minimum (b-bit MinHash, Li &
 *   König, WWW 2010). Unlike 64 simhash bits, the fraction of equal bins
 *   estimates the Jaccard similarity of the two pages' sets of words and
 *   shingles, which
 *   tells "three words changed" from "a paragraph rewritten";
 * - NUMBERS_BYTES (5): two order-free digests. LARGE_NUMBERS_BYTES (3): of
 *   the distinct content numbers of the page (a version, a code, an
 *   identifier with digits) and of its identifiers with an underscore
 *   (identifiers.ts); 2: of its plain numbers of one or two digits ("4",
 *   "30"). Of the number tokens and identifiers, not of the features that
 *   hold them, so that a word edited beside a number leaves the digests as
 *   they were. Two pages of one template with the same prose and other
 *   versions or constants have most words, and so most bins, in common (a
 *   hard negative); only their numbers and identifiers tell them apart
 *   (numbersAgreeAt). The small numbers have a digest of their own because
 *   a translation writes as a digit what its source writes as a word ("4个
 *   限制", "four limits"; "1 つ", "one"): across a change of script they may
 *   differ;
 * - SCRIPT_BYTES (1): the share of those shingles with a word of another
 *   script than Latin (Han, kana, hangul, Cyrillic...), in 255ths. A page
 *   left partly in its source language differs from its translation by
 *   text of one script replaced with text of another; scriptSwapOfEqualBins tells
 *   that from a rewrite (below);
 * - SIZE_BYTES (2): the page's size, its count of distinct shingles on a log
 *   scale (0.03% steps). With both sizes, the Jaccard estimate J gives the
 *   features the pages share, J (|A| + |B|) / (1 + J), and so the share of
 *   the larger page the other holds (sketchOverlap), which the second stage
 *   asks of a candidate. Jaccard counts a replaced paragraph twice (gone
 *   from one page, new in the other) and an added one once: 8% of a page
 *   replaced (a paragraph left in the source language) gives J 0.85, 8%
 *   added 0.93, so a Jaccard threshold that takes the one turns the other
 *   down or takes much larger additions. The overlap is 0.92 for both: it
 *   counts the changed share once, as the corpus labels do.
 *
 * The fingerprinter (fingerprinter.ts) adds the page's words (the tokens its
 * shingles are made of, stop words and counters or dates left out), each
 * twice, and its shingles, as one set. Definitions up to 3 held the shingles
 * alone: a word edited in prose changes every shingle that holds it, so a
 * few scattered edits on a short page moved the shingle set more than a
 * rewritten paragraph moves it (whose shingles change only once each). Words
 * alone would lose the order: distinct pages written from one narrow
 * vocabulary (listings, word salad, the demo feed) have nearly the same
 * words. On pairs generated from the tuning corpus's originals
 * (eval/sweep/sketch-words.ts), at 0.875 against the shingles' 0.85, word
 * edits on pages of fewer than 150 features were confirmed 505 of 558 times
 * against 473, substantive edits 52 of 2055 against 70; words alone
 * confirmed 525 and 62, and 520 of 1112 pairs of distinct demo articles,
 * which neither of the others confirms.
 *
 * Two hashes per word occurrence (a repeat cannot lower a minimum), one per
 * distinct shingle, and one per distinct content number or identifier.
 */
import { fmix } from './feature-hash.js';

/**
 * Bytes of a page's sketch: MINHASH_BINS one-byte bins, the NUMBERS_BYTES digest of its content
 * numbers, its SCRIPT_BYTES script share, its SIZE_BYTES size.
 */
export const SKETCH_BINS = 64;
export const MINHASH_BINS = 56;
export const SIZE_BYTES = 2;
export const SCRIPT_BYTES = 1;
export const NUMBERS_BYTES = SKETCH_BINS - MINHASH_BINS - SCRIPT_BYTES - SIZE_BYTES;
/** The first bytes of the NUMBERS_BYTES: the digest of content numbers and identifiers; the rest, of plain small numbers. */
export const LARGE_NUMBERS_BYTES = 3;
const SMALL_NUMBERS_AT = MINHASH_BINS + LARGE_NUMBERS_BYTES;
const SIZE_AT = SKETCH_BINS - SIZE_BYTES;
const SCRIPT_AT = SIZE_AT - SCRIPT_BYTES;
/** Size code steps per doubling: log2(1 + size) * SIZE_STEPS fits 16 bits for any size below 2^32. */
const SIZE_STEPS = 2048;
const SKETCH_SEED = 0x6a09e667;
/**
 * Marks the second copy of a word (FeatureSketcher.addWord), so the fingerprinter's sketch weighs
 * words twice against shingles: on pairs generated from the tuning corpus
 * (eval/sweep/sketch-words.ts), at the threshold 0.875, words at weight 2 confirmed more
 * short-page word edits than at weight 1 (505 against 491 of 558) and no more substantive edits
 * (52 against 53 of 2055); weight 3 confirmed 510 and 56.
 */
export const WORD_COPY_SALT = 0x3c6ef372;
const EMPTY = 0xffffffff;

/**
 * Accumulates one page's sketch: add() each feature (repeats change nothing: a minimum is a
 * minimum), then write() the bins and the digest.
 */
export class FeatureSketcher {
  private readonly mins = new Uint32Array(MINHASH_BINS).fill(EMPTY);
  private added = 0;

  reset(): void {
    this.mins.fill(EMPTY);
    this.added = 0;
  }

  add(a: number, b: number): void {
    const h = fmix(a ^ Math.imul(b ^ SKETCH_SEED, 0x9e3779b1));
    // floor(h * MINHASH_BINS / 2^32) for h as unsigned, in small-integer arithmetic (h split at bit 16).
    const bin = ((h >>> 16) * MINHASH_BINS + (((h & 0xffff) * MINHASH_BINS) >>> 16)) >>> 16;
    const value = fmix(h ^ b) >>> 0;
    if (value < this.mins[bin]!) this.mins[bin] = value;
    this.added++;
  }

  /** Adds a word twice (the second copy salted with WORD_COPY_SALT): words weigh twice a shingle. */
  addWord(a: number, b: number): void {
    this.add(a, b);
    this.add(a ^ WORD_COPY_SALT, b);
  }

  /**
   * Writes the sketch (SKETCH_BINS bytes) into out, with `numbers` as its digest of content
   * numbers and identifiers (its low LARGE_NUMBERS_BYTES bytes), `smallNumbers` as its digest of
   * plain small numbers (the rest of the NUMBERS_BYTES), `size` (the page's distinct shingles) as
   * its size and `otherScript` (those of them with a word of another script than Latin) as its
   * script share.
   */
  write(out: Uint8Array, numbers = 0, smallNumbers = 0, size = 0, otherScript = 0): void {
    const mins = this.mins;
    const empty = this.added === 0;
    for (let k = 0; k < MINHASH_BINS; k++) {
      let v = mins[k]!;
      // Densification: an empty bin borrows the next non-empty bin's value (rotation), salted by the distance.
      for (let step = 1; v === EMPTY && step < MINHASH_BINS && !empty; step++) {
        const w = mins[(k + step) % MINHASH_BINS]!;
        if (w !== EMPTY) v = fmix(w + step) >>> 0;
      }
      out[k] = empty ? 0 : v & 0xff;
    }
    for (let k = 0; k < LARGE_NUMBERS_BYTES; k++) out[MINHASH_BINS + k] = (numbers >>> (8 * k)) & 0xff;
    for (let k = 0; k < NUMBERS_BYTES - LARGE_NUMBERS_BYTES; k++) out[SMALL_NUMBERS_AT + k] = (smallNumbers >>> (8 * k)) & 0xff;
    out[SCRIPT_AT] = size > 0 ? Math.round((255 * Math.min(otherScript, size)) / size) : 0;
    const code = Math.min(0xffff, Math.round(Math.log2(1 + size) * SIZE_STEPS));
    out[SIZE_AT] = code & 0xff;
    out[SIZE_AT + 1] = code >>> 8;
  }
}

/**
 * The fewest distinct shingles a page needs for its sketch to confirm a match its simhash cannot
 * (a short page's, decider.ts): below it the page holds fewer words and shingles (about three per
 * shingle) than the 56 bins, most bins are copies of others (densification), and two near-empty
 * pages of one template (a title and a line) agree in most of them.
 */
export const MIN_CONFIRMING_SIZE = 16;

/** The size written into the sketch at a[aAt...] (distinct shingles, to 0.03%). */
export function sketchSize(a: Uint8Array, aAt: number): number {
  return 2 ** ((a[aAt + SIZE_AT]! | (a[aAt + SIZE_AT + 1]! << 8)) / SIZE_STEPS) - 1;
}

/**
 * The estimated share of the larger page's features that the other page holds, from `equal`
 * bins and the two sizes: J (|A| + |B|) / ((1 + J) max(|A|, |B|)), J the Jaccard estimate.
 * Replacing, adding or removing a share c of the larger page's text gives about 1 - c.
 */
export function overlapOfEqualBins(equal: number, sizeA: number, sizeB: number): number {
  const j = similarityOfEqualBins(equal);
  const larger = Math.max(sizeA, sizeB);
  if (larger <= 0) return j;
  return Math.min(1, (j * (sizeA + sizeB)) / ((1 + j) * larger));
}

/** The overlap of two sketches (overlapOfEqualBins). */
export function sketchOverlap(a: Uint8Array, b: Uint8Array): number {
  return overlapOfEqualBins(equalBins(a, 0, b), sketchSize(a, 0), sketchSize(b, 0));
}

const sketcher = new FeatureSketcher();

/**
 * Writes the sketch of the feature set (entryA/entryB[0..count)) into out (SKETCH_BINS bytes):
 * MINHASH_BINS bins, then `numbers` and `smallNumbers` (little-endian), the digests of the page's
 * content numbers and identifiers and of its plain small numbers (FeatureSketcher.write), which
 * the second stage asks to agree (numbersAgreeAt): pages of one template with the same prose but
 * other versions share most features, and so most bins, and only their numbers tell them apart.
 */
export function featureSketch(entryA: Int32Array | Uint32Array, entryB: Int32Array | Uint32Array, count: number, out: Uint8Array, numbers = 0, smallNumbers = 0): void {
  sketcher.reset();
  for (let e = 0; e < count; e++) sketcher.add(entryA[e]!, entryB[e]!);
  sketcher.write(out, numbers, smallNumbers, count);
}

/** Equal bins of the sketch at a[aAt, aAt + SKETCH_BINS) and the sketch b (MINHASH_BINS at most). */
export function equalBins(a: Uint8Array, aAt: number, b: Uint8Array): number {
  let equal = 0;
  for (let k = 0; k < MINHASH_BINS; k++) if (a[aAt + k] === b[k]) equal++;
  return equal;
}

/** The share of the page's distinct shingles with a word of another script than Latin, recorded in the sketch at a[aAt...]. */
export function sketchScriptShare(a: Uint8Array, aAt: number): number {
  return a[aAt + SCRIPT_AT]! / 255;
}

/**
 * The least share of the features two pages could share across a change of script that they must
 * share (scriptSwapOfEqualBins): all but a tenth.
 */
const SCRIPT_SWAP_SHARED = 0.9;
/** The least overlap (overlapOfEqualBins) a change of script may leave: below it, too little of the page is left to tell. */
const SCRIPT_SWAP_MIN_OVERLAP = 0.5;
/** The least share of the larger page by which each script's part must move, one down and the other up (quantization and noise stay below it). */
const SCRIPT_SWAP_MIN_MOVE = 0.05;
/**
 * The least share of the other-script part (Han, kana, hangul, Cyrillic...) that the page with less
 * of it keeps: a page left partly in its source language still has its own script's text; the
 * original of a full translation (a page in English against its Chinese translation, which share
 * their code and commands) has none. A quarter, not a half: on a page of code and little prose,
 * one Japanese paragraph left in English took 52% of the Japanese part (the tuning stream's
 * page-002019), while the English pages of full translations kept 0%.
 */
const SCRIPT_SWAP_MIN_KEPT = 0.25;

/**
 * Whether two pages differ by text of one script replaced with text of another, as a translated
 * page left partly in its source language differs from its translation: one page has fewer
 * features of other scripts than Latin and more Latin ones than the other, and the features they
 * share (from `equal` bins and their sizes, as overlapOfEqualBins counts them) are at least
 * SCRIPT_SWAP_SHARED of those they could share, the smaller of their two other-script parts and of
 * their two Latin parts: what changed is one script's text for another's, and nothing else. A
 * rewrite in the page's own script leaves both parts' sizes where they were but shares less; an
 * addition or a removal moves both parts the same way. Sizes are distinct shingles (the sketch's
 * size), shares the sketch's script share.
 */
export function scriptSwapOfEqualBins(equal: number, sizeA: number, shareA: number, sizeB: number, shareB: number): boolean {
  if (!scriptsMoved(sizeA, shareA, sizeB, shareB, SCRIPT_SWAP_MIN_MOVE)) return false;
  const larger = Math.max(sizeA, sizeB);
  const otherA = sizeA * shareA;
  const otherB = sizeB * shareB;
  const latinA = sizeA - otherA;
  const latinB = sizeB - otherB;
  if (Math.min(otherA, otherB) < SCRIPT_SWAP_MIN_KEPT * Math.max(otherA, otherB)) return false;
  const j = similarityOfEqualBins(equal);
  const shared = (j * (sizeA + sizeB)) / (1 + j);
  if (shared < SCRIPT_SWAP_MIN_OVERLAP * larger) return false;
  return shared >= SCRIPT_SWAP_SHARED * (Math.min(otherA, otherB) + Math.min(latinA, latinB));
}

/**
 * Whether one page has fewer features of other scripts than Latin and more Latin ones than the
 * other page, each by `minMove` of the larger page or more: text of one script replaced with
 * another's (sizes are distinct shingles, shares the sketch's script share).
 */
export function scriptsMoved(sizeA: number, shareA: number, sizeB: number, shareB: number, minMove: number): boolean {
  const larger = Math.max(sizeA, sizeB);
  if (larger <= 0) return false;
  const otherMove = sizeB * shareB - sizeA * shareA;
  const latinMove = sizeA * (1 - shareA) - sizeB * (1 - shareB);
  return Math.abs(otherMove) >= minMove * larger && Math.abs(latinMove) >= minMove * larger && otherMove > 0 === latinMove > 0;
}

/**
 * The least share of the larger page by which each script's part must move (scriptsMoved) for
 * the digests of small numbers to be let differ (numbersAgreeAt): above the script share's
 * quantization (1/255 of the page). On partly untranslated pages, substantive edits and hard
 * negatives made from the tuning stream's originals (eval/sweep/generated-pairs.ts), 0.01, 0.02,
 * 0.03 and 0.05 took 809, 806, 803 and 786 of 836 partly untranslated pages (782 with the small
 * numbers in the one digest), and called 101, 100, 100 and 100 of 2,048 substantive edits
 * duplicates (99 before); leaving small numbers out of the digest everywhere took 813 and called 113.
 */
export const SMALL_NUMBERS_MIN_MOVE = 0.02;

/**
 * Whether the sketch at a[aAt...] and the sketch b (whose size a caller may have read already)
 * have the same content numbers, as the decider asks of a candidate: the same digest of content
 * numbers and identifiers, and the same digest of plain small numbers unless text of one script
 * was replaced with another's (scriptsMoved), where a translation writes "4个" for "four" or
 * "1 つ" for "one".
 */
export function numbersAgreeAt(a: Uint8Array, aAt: number, b: Uint8Array, bSize = sketchSize(b, 0)): boolean {
  for (let k = MINHASH_BINS; k < SMALL_NUMBERS_AT; k++) if (a[aAt + k] !== b[k]) return false;
  let small = true;
  for (let k = SMALL_NUMBERS_AT; k < SCRIPT_AT; k++) if (a[aAt + k] !== b[k]) small = false;
  return small || scriptsMoved(sketchSize(a, aAt), sketchScriptShare(a, aAt), bSize, sketchScriptShare(b, 0), SMALL_NUMBERS_MIN_MOVE);
}

/**
 * Whether the sketch at a[aAt...] and the sketch b (whose size a caller may have read already)
 * agree, as the second stage asks of a candidate: an overlap (overlapOfEqualBins) of `minOverlap`
 * or more, or one script's text replaced with another's (scriptSwapOfEqualBins). Bins and sizes
 * are read once for both. The content numbers are numbersAgreeAt's to check.
 */
export function sketchesAgreeAt(a: Uint8Array, aAt: number, b: Uint8Array, minOverlap: number, bSize = sketchSize(b, 0)): boolean {
  const equal = equalBins(a, aAt, b);
  const aSize = sketchSize(a, aAt);
  return overlapOfEqualBins(equal, aSize, bSize) >= minOverlap || scriptSwapOfEqualBins(equal, aSize, sketchScriptShare(a, aAt), bSize, sketchScriptShare(b, 0));
}

/**
 * Whether the sketch at a[aAt...] is a page's: a store writes zeros in every bin for a page whose
 * sketch it was not given, and no page with features has all its bins zero but by a 1 in 256^56 chance.
 */
export function isKnownSketch(a: Uint8Array, aAt: number): boolean {
  for (let k = 0; k < MINHASH_BINS; k++) if (a[aAt + k] !== 0) return true;
  return false;
}

/** Estimated Jaccard similarity from the number of equal bins (b-bit correction for chance 8-bit agreement). */
export function similarityOfEqualBins(equal: number): number {
  const chance = 1 / 256;
  return Math.max(0, (equal / MINHASH_BINS - chance) / (1 - chance));
}

/** Estimated Jaccard similarity of two sketches. */
export function sketchSimilarity(a: Uint8Array, b: Uint8Array): number {
  return similarityOfEqualBins(equalBins(a, 0, b));
}
