/**
 * Page -> 64-bit simhash (Charikar 2002; Manku, Jain, Das Sarma 2007), the
 * pure core of the pipeline: no I/O, no environment, no Kafka. The steps,
 * with reasons, are in docs/fingerprint.md:
 *
 *   html --html-text--> content text --tokenizer--> normalised tokens
 *        --stop words--> word shingles --weights--> simhash (64 counters)
 *
 * A Fingerprinter reuses its buffers across calls: one per thread.
 */
import { ConfigError } from '../errors.js';
import { loadJiebaSegmenter, type CjkSegmenter } from './cjk-segmenter.js';
import * as featureHash from './feature-hash.js';
import { fmix, key, mixKey } from './feature-hash.js';
import { FeatureSketcher, SKETCH_BINS } from './feature-sketch.js';
import { FeatureCounter } from './hash-table-64.js';
import { HtmlTextExtractor } from './html-text.js';
import { identifierAround } from './identifiers.js';
import { holdsMojibake, repairMojibake, repairMojibakeString } from './mojibake.js';
import { Simhash } from './simhash.js';
import { TextBuffer } from './text-buffer.js';
import * as tokenKinds from './token-buffer.js';
import { TokenBuffer } from './token-buffer.js';
import { Tokenizer, type CjkMode } from './tokenizer.js';
import { dateCueTable, dateWordTable, loadIdfTable, smallNumberTable, wordKindTable, type IdfTable } from './word-tables.js';

// Imported constants as constants of this module, which V8 folds into the per-token loops (an
// imported binding is read through its module cell on every use; tokenizer.ts measures it).
const { EXACT_SEED_A, EXACT_SEED_B, SHINGLE_SEED_A, SHINGLE_SEED_B } = featureHash;
const { TOKEN_NUM, TOKEN_NUMBER, TOKEN_STOP } = tokenKinds;

/** `digest` with a distinct content number (lane A of its token's hash) added: order-free, as the sketch's digests are. */
function withNumber(digest: number, a: number): number {
  return (digest + fmix(a ^ 0x5bd1e995)) | 0;
}

export type Weighting = 'tf' | 'log-tf' | 'tfidf' | 'binary';

export interface FeatureOptions {
  /** Word n-gram length; 1 = single tokens. */
  shingleSize: number;
  /** Drop nav/header/footer/aside/forms/ads/widgets/counters/dates before tokenizing. */
  boilerplate: 'remove' | 'keep';
  /** Chinese segmentation; Japanese kana runs are always character bigrams (except 'off'). */
  cjk: CjkMode;
  weighting: Weighting;
  stopWords: boolean;
  /** Below this many features a page is "short". */
  minFeatures: number;
}

/**
 * Defaults, and why (measured by bench/fingerprint/choose-defaults.mjs on the
 * ~310 Python 3.11 library pages, one Sphinx template; docs/fingerprint.md):
 * - shingleSize 2 with weighting 'tf': a one-word edit stays within 3 bits on
 *   95% of pages (3-grams: 87-89%, log-tf 2-grams: 90%), and no two distinct
 *   pages of the template come within 10 bits (minimum 13). Single words with
 *   tf let frequent vocabulary dominate: two distinct pages came within 2 bits.
 * - boilerplate 'remove': shared chrome would otherwise pull every page of a
 *   site together (paper section 4).
 * - cjk 'jieba': words, not characters, are the features for Chinese.
 * - stopWords true, as in the paper's pipeline.
 * - minFeatures 32: below roughly one paragraph (~50 running words) a 3-bit
 *   neighbourhood is mostly noise, so the decider matches such pages by
 *   simhash only exactly (their sketches may confirm a match: decider.ts).
 */
export const DEFAULT_FEATURE_OPTIONS: Readonly<FeatureOptions> = Object.freeze({
  shingleSize: 2,
  boilerplate: 'remove',
  cjk: 'jieba',
  weighting: 'tf',
  stopWords: true,
  minFeatures: 32,
});

export interface PageContent {
  html?: string;
  text?: string;
}

export interface FingerprintResult {
  /** Bits 63..32 of the simhash, uint32. */
  hi: number;
  /** Bits 31..0 of the simhash, uint32. */
  lo: number;
  /** 64-bit hash of the normalised token stream (stop words included), for the exact-duplicate fast path. */
  exactHi: number;
  exactLo: number;
  /** Distinct weighted features that went into the hash. */
  features: number;
  /** Characters of extracted text (tags become one space each). */
  textLength: number;
  /** 0 < features < minFeatures. */
  short: boolean;
  /** No content features at all (empty, markup only, or binary junk). */
  empty: boolean;
  /**
   * b-bit MinHash sketch of the page's words and shingles (SKETCH_BINS bytes,
   * feature-sketch.ts): the second stage's check beyond k bits.
   */
  sketch: Uint8Array;
}

export interface Fingerprinter {
  readonly options: Readonly<FeatureOptions>;
  fingerprint(page: PageContent): FingerprintResult;
  /** The b-bit MinHash sketch (feature-sketch.ts, SKETCH_BINS bytes) of the words and shingles of the page last fingerprinted. */
  featureSketch(out: Uint8Array): void;
}

const MAX_SHINGLE = 8;
/**
 * The weight of a feature that holds a number that is content (TOKEN_NUMBER: a version, a
 * quantity, an identifier with digits), against 1 for one of words only. The numbers are what
 * tells the release notes of 1.5.11 from those of 1.6.8, or the page of Foo2 from that of Foo3,
 * when the prose around them is the same; twice the weight let the tuning corpus's hard negatives
 * called duplicate fall from 38 to 16 of 170 (1.5: 23; 3: 15, with more substantive edits and
 * fewer near-duplicates caught; docs/fingerprint.md).
 */
const NUMBER_WEIGHT = 2;
/** A text whose non-space code units are more than 1/8 controls, U+FFFD or lone surrogates is binary junk. */
const JUNK_RATIO = 8;

export function validateFeatureOptions(options: Partial<FeatureOptions> | undefined): Readonly<FeatureOptions> {
  const problems: string[] = [];
  const given = (options ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object' || given === null) throw new ConfigError(['fingerprint options must be an object']);
  for (const key of Object.keys(given)) {
    if (!(key in DEFAULT_FEATURE_OPTIONS)) problems.push(`fingerprint option "${key}" is unknown`);
  }
  const merged = { ...DEFAULT_FEATURE_OPTIONS } as FeatureOptions;
  for (const key of Object.keys(DEFAULT_FEATURE_OPTIONS) as (keyof FeatureOptions)[]) {
    if (given[key] !== undefined) (merged as unknown as Record<string, unknown>)[key] = given[key];
  }
  const int = (name: keyof FeatureOptions, min: number, max: number): void => {
    const v = merged[name];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      problems.push(`fingerprint option "${name}" must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
    }
  };
  const oneOf = (name: keyof FeatureOptions, allowed: readonly unknown[]): void => {
    if (!allowed.includes(merged[name])) {
      problems.push(`fingerprint option "${name}" must be one of ${allowed.join(', ')}, got ${JSON.stringify(merged[name])}`);
    }
  };
  int('shingleSize', 1, MAX_SHINGLE);
  int('minFeatures', 0, 1_000_000);
  oneOf('boilerplate', ['remove', 'keep']);
  oneOf('cjk', ['jieba', 'bigram', 'off']);
  oneOf('weighting', ['tf', 'log-tf', 'tfidf', 'binary']);
  oneOf('stopWords', [true, false]);
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(merged);
}

export async function createFingerprinter(options?: Partial<FeatureOptions>): Promise<Fingerprinter> {
  const opts = validateFeatureOptions(options);
  const segmenter = opts.cjk === 'jieba' ? await loadJiebaSegmenter() : undefined;
  const idf = opts.weighting === 'tfidf' ? await loadIdfTable() : undefined;
  return new SimhashFingerprinter(opts, segmenter, idf);
}

class SimhashFingerprinter implements Fingerprinter {
  private readonly html: HtmlTextExtractor;
  private readonly tokenizer: Tokenizer;
  private readonly text = new TextBuffer();
  private readonly tokens = new TokenBuffer();
  private readonly counter = new FeatureCounter();
  private readonly simhash = new Simhash();
  private weights = new Float64Array(1024);
  private readonly out = new Uint32Array(2);
  /** The exact hash's lanes (collectFeatures). */
  private exactA = 0;
  private exactB = 0;
  /** Per ring slot: the hash round keys (feature-hash.ts key) of the token's two lanes. */
  private readonly ringA: Int32Array;
  private readonly ringB: Int32Array;
  private readonly ringNum: Uint8Array;
  /** Per ring slot: the token is of another script than Latin (TokenBuffer.script). */
  private readonly ringScript: Uint8Array;
  /** Distinct shingles (features, for shingleSize 1) with a token of another script than Latin: the sketch's script share. */
  private otherScript = 0;
  private readonly ringIdf: Float64Array;
  /**
   * Digest of the distinct content numbers of the page and of its identifiers with an underscore
   * (identifiers.ts; the sketch's last bytes): of the number tokens and identifiers, not of the
   * shingles that hold them, so an edit next to a number leaves it as it was.
   */
  private numbers = 0;
  private readonly numbersSeen = new FeatureCounter(64);
  /**
   * Plain numbers of one or two digits ("4", "30"), content tokens but left out of the digest:
   * one language writes as a digit what another writes as a word ("4个限制", "four limits";
   * "1 つ", "one"), so they tell a translation left partly in its source language from its
   * translation, not one document from another (versions, codes and identifiers do that).
   */
  private readonly smallNumberTokens = smallNumberTable();
  /** Digest of the page's distinct plain small numbers (smallNumberTokens), as `numbers` of the others. */
  private smallNumbers = 0;
  private readonly identifier = new Uint32Array(2);
  /**
   * The second stage's sketch (feature-sketch.ts) of the page's words (the tokens the shingles are
   * made of, stop words and counters left out) and of its shingles: an edited word moves the words
   * by one, the shingles by every shingle that holds it.
   */
  private readonly sketcher = new FeatureSketcher();

  constructor(
    readonly options: Readonly<FeatureOptions>,
    segmenter: CjkSegmenter | undefined,
    private readonly idf: IdfTable | undefined,
  ) {
    this.html = new HtmlTextExtractor(options.boilerplate);
    // With stop words on, the tokenizer marks them (TOKEN_STOP) in the lookup it makes for date words.
    this.tokenizer = new Tokenizer(options.cjk, segmenter, options.stopWords ? wordKindTable() : dateWordTable(), dateCueTable());
    const n = options.shingleSize;
    this.ringA = new Int32Array(n);
    this.ringB = new Int32Array(n);
    this.ringNum = new Uint8Array(n);
    this.ringScript = new Uint8Array(n);
    this.ringIdf = new Float64Array(n);
  }

  fingerprint(page: PageContent): FingerprintResult {
    const html = page?.html;
    const text = this.text;
    if (typeof html === 'string') this.html.extract(html, text);
    else text.setString(typeof page?.text === 'string' ? page.text : '');
    const tokens = this.tokens;
    tokens.clear();
    this.tokenizer.tokenize(text.units, text.length, tokens);
    // Mojibake (UTF-8 read as Latin-1 or Windows-1252, mojibake.ts) is read back as UTF-8 and the
    // page fingerprinted again from there. The tokenizer's count of misread-looking pairs keeps
    // other pages from paying for the check, and the check on the extracted text keeps pages with
    // real text that only looks like it (French "é »") from paying for a copy of their HTML.
    if (this.tokenizer.stats.misread > 0 && holdsMojibake(text.units, text.length)) {
      let repaired = false;
      if (typeof html === 'string') {
        const fixed = repairMojibakeString(html);
        if (fixed !== undefined) {
          this.html.extract(fixed, text);
          repaired = true;
        }
      } else {
        const length = repairMojibake(text.units, text.length);
        repaired = length !== text.length;
        text.length = length;
      }
      if (repaired) {
        tokens.clear();
        this.tokenizer.tokenize(text.units, text.length, tokens);
      }
    }
    const { junk, nonSpace } = this.tokenizer.stats;
    const binary = junk > 0 && junk * JUNK_RATIO > nonSpace;

    const len = binary ? 0 : tokens.length;
    const counter = this.counter;
    counter.reset();
    this.numbers = 0;
    this.smallNumbers = 0;
    this.numbersSeen.reset();
    this.sketcher.reset();
    this.otherScript = 0;
    // The exact hash over the whole normalised stream is taken in the same pass.
    this.exactA = EXACT_SEED_A;
    this.exactB = EXACT_SEED_B;
    if (!binary) this.collectFeatures(len);
    const exactHi = fmix(this.exactA ^ len);
    const exactLo = fmix(this.exactB ^ len);
    // The sketch holds the shingles beside the words: words alone lose the order, and pages written
    // from one narrow vocabulary (listings, word-salad spam, the demo feed) would all look alike.
    for (let e = 0; e < counter.size; e++) this.sketcher.add(counter.entryA[e]!, counter.entryB[e]!);
    if (!binary) this.noteIdentifiers(text.units, text.length);
    const features = counter.size;

    // Sized to the features, and not kept at a huge page's size either.
    if (this.weights.length < features || this.weights.length > Math.max(4 * features, 1 << 16)) this.weights = new Float64Array(Math.max(1024, counter.entryA.length));
    const weights = this.weights;
    const weighting = this.options.weighting;
    const countOf = counter.countOf;
    const extraOf = counter.extraOf;
    for (let e = 0; e < features; e++) {
      const tf = countOf[e]!;
      let w = weighting === 'tf' ? tf : weighting === 'binary' ? 1 : weighting === 'log-tf' ? 1 + Math.log(tf) : tf;
      w *= extraOf[e]!; // the number weight (and the IDF for tfidf)
      weights[e] = w;
    }
    // Weights are whole numbers (counts times NUMBER_WEIGHT) unless they are logarithms or IDFs.
    this.simhash.compute(counter.entryA, counter.entryB, weights, features, this.out, weighting === 'tf' || weighting === 'binary');
    const sketch = new Uint8Array(SKETCH_BINS);
    this.featureSketch(sketch);
    return {
      hi: this.out[0]!,
      lo: this.out[1]!,
      exactHi,
      exactLo,
      features,
      textLength: text.length,
      short: features > 0 && features < this.options.minFeatures,
      empty: features === 0,
      sketch,
    };
  }

  featureSketch(out: Uint8Array): void {
    this.sketcher.write(out, this.numbers, this.smallNumbers, this.counter.size, this.otherScript);
  }

  /** Stop-word removal and shingling of tokens[0..len) into the feature counter; the exact hash of all of them. */
  private collectFeatures(len: number): void {
    const { a: ta, b: tb, num: tn, script: ts } = this.tokens;
    const n = this.options.shingleSize;
    const counter = this.counter;
    const idf = this.idf;
    const ringA = this.ringA;
    const ringB = this.ringB;
    const ringNum = this.ringNum;
    const ringScript = this.ringScript;
    const ringIdf = this.ringIdf;
    let filled = 0;
    /** filled % n, kept without a division. */
    let slot = 0;
    let ea = this.exactA;
    let eb = this.exactB;
    // The defaults' shingles (pairs, no IDF) are hashed here from the previous token's keys, with
    // no ring; addShingle's loop does the same for other sizes.
    const pairs = n === 2 && idf === undefined;
    let prevA = 0;
    let prevB = 0;
    let prevKind = 0;
    let prevScript = 0;
    for (let i = 0; i < len; i++) {
      const a = ta[i]!;
      const b = tb[i]!;
      // Each token's keys serve the exact hash and every shingle it is part of.
      const ka = key(a);
      const kb = key(b);
      ea = mixKey(ea, ka);
      eb = mixKey(eb, kb);
      const kind = tn[i]!;
      if (kind === TOKEN_STOP) continue;
      if (kind === TOKEN_NUMBER && this.numbersSeen.add(a, b) < 0) {
        if (this.smallNumberTokens.get(a, b, 0) === 1) this.smallNumbers = withNumber(this.smallNumbers, a);
        else this.numbers = withNumber(this.numbers, a);
      }
      if (kind !== TOKEN_NUM) this.sketcher.addWord(a, b);
      if (n === 1) {
        if (kind === TOKEN_NUM) continue;
        const e = counter.add(a, b);
        if (e < 0) {
          counter.extraOf[~e] = (idf !== undefined ? idf.table.get(a, b, idf.defaultIdf) : 1) * (kind === TOKEN_NUMBER ? NUMBER_WEIGHT : 1);
          this.otherScript += ts[i]!;
        }
        continue;
      }
      if (pairs) {
        const script = ts[i]!;
        if (filled > 0) {
          if (prevKind !== TOKEN_NUM || kind !== TOKEN_NUM) {
            const e = counter.add(fmix(mixKey(mixKey(SHINGLE_SEED_A, prevA), ka) ^ 2), fmix(mixKey(mixKey(SHINGLE_SEED_B, prevB), kb) ^ 2));
            if (e < 0) {
              counter.extraOf[~e] = prevKind === TOKEN_NUMBER || kind === TOKEN_NUMBER ? NUMBER_WEIGHT : 1;
              this.otherScript += prevScript | script;
            }
          }
        } else {
          // A text of one token makes a shingle of one (addShingle, below), from the ring.
          ringA[0] = ka;
          ringB[0] = kb;
          ringNum[0] = kind;
          ringScript[0] = script;
        }
        prevA = ka;
        prevB = kb;
        prevKind = kind;
        prevScript = script;
        filled++;
        continue;
      }
      ringA[slot] = ka;
      ringB[slot] = kb;
      ringNum[slot] = kind;
      ringScript[slot] = ts[i]!;
      if (idf !== undefined) ringIdf[slot] = kind === TOKEN_NUM ? idf.defaultIdf : idf.table.get(a, b, idf.defaultIdf);
      filled++;
      if (++slot === n) slot = 0;
      // The shingle of the last n tokens starts at the oldest slot, the one written next.
      if (filled >= n) this.addShingle(slot, n);
    }
    this.exactA = ea;
    this.exactB = eb;
    if (n > 1 && filled > 0 && filled < n) this.addShingle(0, filled);
  }

  /** Adds the shingle of `size` tokens starting at ring position `start` (mod n); all-NUM shingles are dropped. */
  private addShingle(start: number, size: number): void {
    const n = this.options.shingleSize;
    let sa = SHINGLE_SEED_A;
    let sb = SHINGLE_SEED_B;
    let words = 0;
    let numbers = 0;
    let idfSum = 0;
    let other = 0;
    const ringA = this.ringA;
    const ringB = this.ringB;
    for (let k = 0, slot = start; k < size; k++, slot = slot + 1 === n ? 0 : slot + 1) {
      sa = mixKey(sa, ringA[slot]!);
      sb = mixKey(sb, ringB[slot]!);
      const kind = this.ringNum[slot]!;
      if (kind !== TOKEN_NUM) words++;
      if (kind === TOKEN_NUMBER) numbers++;
      other |= this.ringScript[slot]!;
      idfSum += this.ringIdf[slot]!;
    }
    if (words === 0) return;
    const e = this.counter.add(fmix(sa ^ size), fmix(sb ^ size));
    if (e < 0) {
      this.counter.extraOf[~e] = (this.idf !== undefined ? idfSum / size : 1) * (numbers > 0 ? NUMBER_WEIGHT : 1);
      this.otherScript += other;
    }
  }

  /**
   * Adds the identifiers with an underscore of text[0..n) (identifiers.ts) to the page's digest of
   * content numbers, read around the underscores the tokenizer met in that text.
   */
  private noteIdentifiers(units: Uint16Array, n: number): void {
    const { underscoreAt, underscores } = this.tokenizer;
    const h = this.identifier;
    let from = 0;
    for (let k = 0; k < underscores; k++) {
      const at = underscoreAt[k]!;
      if (at < from) continue;
      const end = identifierAround(units, n, at, h);
      if (end < 0) {
        from = ~end;
        continue;
      }
      from = end;
      const a = h[0]! | 0;
      const b = h[1]! | 0;
      if (this.numbersSeen.add(a, b) < 0) this.numbers = withNumber(this.numbers, a);
    }
  }
}
