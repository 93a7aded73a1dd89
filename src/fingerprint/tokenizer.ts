/**
 * Text -> normalised token stream, hashed on the fly (no token strings are
 * built for non-CJK text).
 *
 * - Words are maximal runs of letters, marks and digits (Unicode-aware, see
 *   char-class.ts), case-folded code unit by code unit; an apostrophe between
 *   letters stays inside the word.
 * - A number is content: "1.5.11" and "1.6.8", "Foo2" and "Foo3" give other
 *   tokens; a number keeps its joiners (. - / : , +), so a version, a section
 *   number or "1,234" is one token, and its sign ("-1", "−1": a minus with no
 *   letter or digit right before it), so "-1" and "1" are other tokens. Only where a number is a date, a time or a counter does it become
 *   the single NUM token: date words (month and weekday names, UTC/GMT,
 *   星期一 ...) and numbers next to them, numeric dates (2024-05-06,
 *   06/05/2024), times (10:31, 2024-05-06T10:31:07Z), counters (1,234 views,
 *   5 minutes ago, 阅读 5 次) and CJK dates (2024年5月6日); consecutive NUM
 *   tokens collapse into one. So "Updated 2024-05-06 10:31:07 UTC" leaves one
 *   NUM behind: counters and timestamps do not move the hash, but their
 *   position still shapes the shingles around them.
 * - Han runs are segmented by the CJK mode: 'jieba' (words, each run cut where
 *   it lies), 'bigram' (overlapping character bigrams) or 'off' (a run is one
 *   token). Kana runs (Japanese) are always character bigrams, except in 'off'.
 *   A date suffix (年月日号时点分秒) directly after a digit belongs to the number.
 * - Controls, U+FFFD and lone surrogates are counted as junk, so the caller can
 *   tell binary garbage from text, with two exceptions: a C1 control that
 *   continues a UTF-8 sequence read as Latin-1 or Windows-1252 (mojibake:
 *   "ã\u0081\u0082" for "あ") is a damaged page's text, not binary (see
 *   continuesMisreadUtf8); and a run of noise (controls, invisible characters
 *   and U+200B, with whitespace inside it: char-class.ts isNoise) counts once,
 *   however many controls it holds (runHasJunk): 2,000 of them in front of a
 *   page are one place of damage. Binary read as Latin-1 has its C0 and C1
 *   bytes scattered among visible ones, so they still count.
 */
import * as charClass from './char-class.js';
import { isAstralHan, isInvisible, isNoise } from './char-class.js';
import type { CjkSegmenter } from './cjk-segmenter.js';
import * as featureHash from './feature-hash.js';
import { fmix, hashUnits, key, mix, mixKey } from './feature-hash.js';
import { StaticTable64 } from './hash-table-64.js';
import { CJK_DATE_SUFFIXES } from './stop-words.js';
import { isMisreadContinuation, isMisreadLead } from './mojibake.js';
import { TextBuffer } from './text-buffer.js';
import * as tokenKinds from './token-buffer.js';
import type { TokenBuffer } from './token-buffer.js';
import * as wordTables from './word-tables.js';
import { addWords } from './word-tables.js';

/**
 * Imported constants are copied into constants of this module: V8's optimizing compiler folds a
 * module's own constants into the code of its hot loops, but reads an imported binding through its
 * module cell on every use (read in place, they made the tokenizer take 127 µs a page on the
 * English bench set, not 106).
 */
const { APOS, CLASS, CONTROL, DIGIT, FOLD, FOLD_KEY, HAN, HIGH, IGNORE, JUNK, KANA, SPACE, WORD } = charClass;
const { TOKEN_SEED_A, TOKEN_SEED_B } = featureHash;
const { TOKEN_NUM, TOKEN_NUMBER, TOKEN_STOP, TOKEN_WORD } = tokenKinds;
const { WORD_DATE, WORD_STOP } = wordTables;

/**
 * True when the C1 control at text[i] is a continuation byte of a UTF-8
 * sequence read as Latin-1 or Windows-1252: a lead byte (U+00C2..U+00F4) at
 * most three back with only continuation bytes between, the sequence not yet
 * complete. Runs only for C1 controls, which normal text does not have.
 */
function continuesMisreadUtf8(text: Uint16Array, i: number): boolean {
  for (let back = 1; back <= 3 && i - back >= 0; back++) {
    const p = text[i - back]!;
    if (p >= 0xc2 && p <= 0xf4) return back < (p >= 0xf0 ? 4 : p >= 0xe0 ? 3 : 2);
    if (!isMisreadContinuation(p)) return false;
  }
  return false;
}

/**
 * Whether the control at text[i] continues a run of noise (isNoise, with whitespace inside it)
 * whose junk was counted already: a junk control before it with only noise and whitespace
 * between. Scans back to the previous control at most, so a text's scans read each unit once.
 */
function runHasJunk(text: Uint16Array, i: number): boolean {
  for (let j = i - 1; j >= 0; j--) {
    const c = text[j]!;
    const cls = CLASS[c];
    if (cls === CONTROL) return !(c >= 0x80 && c <= 0x9f && continuesMisreadUtf8(text, j));
    if (cls !== SPACE && !isNoise(c)) return false;
  }
  return false;
}

export type CjkMode = 'jieba' | 'bigram' | 'off';

const scratch = new Uint32Array(2);
hashUnits('\u0000NUM', scratch);
/** The hash of the NUM token (numbers, dates, counters). */
export const NUM_A = scratch[0]! | 0;
export const NUM_B = scratch[1]! | 0;

/** The hash round keys of '-' (a sign) and "'" (inside a word). */
const KEY_MINUS = key(0x2d);
const KEY_APOS = key(0x27);

const DATE_SUFFIX = new Uint8Array(65536);
for (let i = 0; i < CJK_DATE_SUFFIXES.length; i++) DATE_SUFFIX[CJK_DATE_SUFFIXES.charCodeAt(i)] = 1;

/** The index after the invisible characters (isInvisible) from i. */
function skipInvisible(text: Uint16Array, i: number, n: number): number {
  while (i < n && isInvisible(text[i]!)) i++;
  return i;
}

/** The index after the invisible characters (IGNORE: bidi marks, soft hyphens, ZWJ, BOM, NUL) from i. */
function skipIgnorable(text: Uint16Array, i: number, n: number): number {
  while (i < n && CLASS[text[i]!] === IGNORE) i++;
  return i;
}

/**
 * End (exclusive) of the Han run starting at i (Han code units and astral Han pairs). Invisible
 * characters between two Han characters are inside the run, as they are inside a word: a bidi
 * mark in "提过\u200f的" must not cut the text the segmenter sees (the run's readers skip them).
 */
function hanRunEnd(text: Uint16Array, i: number, n: number): number {
  while (i < n) {
    const c = text[i]!;
    const cls = CLASS[c];
    if (cls === HAN) i++;
    else if (cls === HIGH && i + 1 < n) {
      const d = text[i + 1]!;
      if (d < 0xdc00 || d > 0xdfff || !isAstralHan(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000)) break;
      i += 2;
    } else if (cls === IGNORE) {
      const j = skipIgnorable(text, i, n);
      if (j < n && isHanStart(text, j, n, text[j]!)) i = j;
      else break;
    } else break;
  }
  return i;
}

/** End (exclusive) of the kana run starting at i; invisible characters between kana are inside it. */
function kanaRunEnd(text: Uint16Array, i: number, n: number): number {
  while (i < n) {
    const cls = CLASS[text[i]!];
    if (cls === KANA) i++;
    else if (cls === IGNORE) {
      const j = skipIgnorable(text, i, n);
      if (j < n && CLASS[text[j]!] === KANA) i = j;
      else break;
    } else break;
  }
  return i;
}

function isHanStart(text: Uint16Array, i: number, n: number, c: number): boolean {
  if (CLASS[c] === HAN) return true;
  if (i + 1 >= n) return false;
  const d = text[i + 1]!;
  return d >= 0xdc00 && d <= 0xdfff && isAstralHan(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000);
}

/** Start of the run's content after a date suffix that follows a digit. */
function skipDateSuffix(text: Uint16Array, s: number, e: number): number {
  return s > 0 && s < e && CLASS[text[s - 1]!] === DIGIT && DATE_SUFFIX[text[s]!] === 1 ? s + 1 : s;
}

/** Underscore positions kept from one text to the next (a huge page's go back to 256). */
const KEPT_UNDERSCORES = 1 << 16;

const LAST_WORD = 0;
/** The NUM token (a date, time or counter). */
const LAST_NUM = 1;
/** A number emitted as content. */
const LAST_NUMBER = 2;

/** Characters that join the parts of a date, time, version or formatted number: - / . : , + */
function isJoiner(c: number): boolean {
  return c === 0x2d || c === 0x2f || c === 0x2e || c === 0x3a || c === 0x2c || c === 0x2b;
}

/** Whether text[i - 1] is a minus sign (U+002D or U+2212) that no letter or digit comes right before. */
function isSignBefore(text: Uint16Array, i: number): boolean {
  if (i === 0) return false;
  const c = text[i - 1]!;
  if (c !== 0x2d && c !== 0x2212) return false;
  if (i === 1) return true;
  const cls = CLASS[text[i - 2]!];
  return cls !== WORD && cls !== DIGIT;
}

function isAsciiAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
}

const TIME = /(?:^|[^0-9])[0-2]?[0-9]:[0-5][0-9](?![0-9])/;
const YEAR_FIRST = /(?:^|[^0-9.])(?:1[89]|20)[0-9]{2}([-/.])(?:0?[1-9]|1[0-2])\1(?:0?[1-9]|[12][0-9]|3[01])(?![0-9])/;
const YEAR_LAST = /(?:^|[^0-9.])(?:0?[1-9]|[12][0-9]|3[01])([-/.])(?:0?[1-9]|[12][0-9]|3[01])\1(?:1[89]|20)[0-9]{2}(?![0-9.])/;
/**
 * Words after a number that make it a counter (views, comments...) or a render time (12 queries,
 * 597 ms). Only the common web languages: a counter line is chrome whose number changes on every
 * fetch, and its word goes with the number (see emitWord).
 */
const COUNTER_WORDS = new Set(
  [
    // English
    'views view comments comment likes like shares share replies reply votes vote points reads visits hits followers',
    'subscribers downloads clicks reactions retweets queries ms msec upvotes stars forks answers',
    // German, French, Spanish, Italian, Portuguese, Dutch
    'aufrufe kommentare kommentar antworten vues visites commentaires commentaire réponses',
    'visitas vistas comentarios comentario respuestas visualizzazioni commenti commento risposte',
    'visualizações visualizacoes comentários comentarios respostas weergaven reacties',
    // Polish, Russian, Ukrainian
    'wyświetleń wyświetlenia komentarzy komentarze',
    'просмотров просмотра просмотр комментариев комментария комментарий ответов ответа переглядів коментарів',
    // Korean counters, written onto the number or after it: 조회 1,234회 (views), 댓글 5개 or 5건 (comments), 구독자 12명
    '회 개 건 명',
  ]
    .join(' ')
    .split(' '),
);
const TIME_UNITS = new Set('second seconds sec secs minute minutes min mins hour hours hr hrs day days week weeks month months year years'.split(' '));
/** Korean date and time units written onto their numbers: 2022년 9월 26일 16시 20분 10초. */
const HANGUL_DATE_UNITS = ['년', '월', '일', '시', '분', '초'];
/** Han characters that, after a number, count something: 阅读 5 次, 3 条评论, コメント 2 件, 10 回閲覧. */
const CJK_COUNTERS = '次条則件回';

function skipSpace(text: Uint16Array, i: number, n: number): number {
  while (i < n && CLASS[text[i]!] === SPACE) i++;
  return i;
}

/** What a word after a number is (WORDS_AFTER_NUMBER): a counter's word, a time unit, "ago". */
const AFTER_COUNTER = 1;
const AFTER_TIME_UNIT = 2;
const AFTER_AGO = 3;
const WORDS_AFTER_NUMBER = new StaticTable64(COUNTER_WORDS.size + TIME_UNITS.size + 1);
addWords(WORDS_AFTER_NUMBER, COUNTER_WORDS, AFTER_COUNTER);
addWords(WORDS_AFTER_NUMBER, TIME_UNITS, AFTER_TIME_UNIT);
addWords(WORDS_AFTER_NUMBER, ['ago'], AFTER_AGO);

/**
 * The word (letters, case-folded, at most 24 units) starting at or after i (skipping spaces):
 * returns its kind in WORDS_AFTER_NUMBER (0: another word), or -1 when no word starts there, and
 * sets wordAfterEnd to its end. Hashes the word as a token is hashed (hashUnits), so no string is
 * built per number.
 */
function wordAfter(text: Uint16Array, i: number, n: number): number {
  i = skipSpace(text, i, n);
  let a = TOKEN_SEED_A;
  let b = TOKEN_SEED_B;
  let length = 0;
  for (; i < n && length < 24; i++) {
    const c = text[i]!;
    if (CLASS[c] === WORD) {
      const k = FOLD_KEY[c]!;
      a = mixKey(a, k);
      b = mixKey(b, k);
      length++;
    } else if (!isInvisible(c)) break;
  }
  wordAfterEnd = i;
  return length === 0 ? -1 : WORDS_AFTER_NUMBER.get(fmix(a ^ length), fmix(b ^ length), 0);
}
/** wordAfter's second answer: the end of the word it read. */
let wordAfterEnd = 0;

/** dateTimeOrCounter's answer for a number that is content. */
const CONTENT = -1;
/** dateTimeOrCounter's answer for a date or a time (a counter answers with the end of its words). */
const DATE_OR_TIME = 0;

/**
 * Whether the number text[s..e) is part of a date (2024-05-06, 06/05/2024), a time (10:31,
 * 2024-05-06T10:31:07Z), or a counter (1,234 views; 5 minutes ago; 阅读 5 次). These are what
 * changes between fetches of one page; any other number is content. Returns CONTENT,
 * DATE_OR_TIME, or for a counter followed by its words ("views", "minutes ago") the index just
 * after those words: they belong to the counter, which becomes one NUM with them, so a counter
 * line added to a page adds no word of its own to the shingles.
 */
function dateTimeOrCounter(text: Uint16Array, s: number, e: number, n: number): number {
  // A counter's word or a Korean date unit written onto the number: "16,222회", "118개", "2022년", "539ms".
  let ls = e;
  while (ls > s && CLASS[text[ls - 1]!] !== DIGIT) ls--;
  if (ls < e) {
    let suffix = '';
    for (let k = ls; k < e; k++) if (CLASS[text[k]!] === WORD) suffix += String.fromCharCode(FOLD[text[k]!]!);
    if (COUNTER_WORDS.has(suffix) || HANGUL_DATE_UNITS.includes(suffix)) return DATE_OR_TIME;
  }
  // The group: alphanumerics joined by - / . : , + around the number, at most 40 units each side;
  // invisible characters (a bidi mark, a NUL) inside it are skipped, as a browser shows nothing for them.
  let gs = s;
  while (gs > 0 && s - gs < 40) {
    const c = text[gs - 1]!;
    if (isAsciiAlnum(c) || isInvisible(c) || (isJoiner(c) && gs > 1 && (isAsciiAlnum(text[gs - 2]!) || isInvisible(text[gs - 2]!)))) gs--;
    else break;
  }
  let ge = e;
  while (ge < n && ge - e < 40) {
    const c = text[ge]!;
    if (isAsciiAlnum(c) || isInvisible(c) || (isJoiner(c) && ge + 1 < n && (isAsciiAlnum(text[ge + 1]!) || isInvisible(text[ge + 1]!)))) ge++;
    else break;
  }
  // Times need a ':' inside the group, dates a '-', '/' or '.' and a year (four digits in a row,
  // invisible characters skipped): most numbers, and versions ("3.11", "1.5.11"), skip the
  // regular expressions.
  let colon = false;
  let separated = false;
  let digits = 0;
  let year = false;
  for (let k = gs; k < ge; k++) {
    const c = text[k]!;
    if (c >= 0x30 && c <= 0x39) {
      if (++digits === 4) year = true;
      continue;
    }
    if (!isInvisible(c)) digits = 0;
    if (c === 0x3a) colon = true;
    else if (c === 0x2d || c === 0x2f || c === 0x2e) separated = true;
  }
  separated &&= year;
  if (colon || separated) {
    let group = '';
    for (let k = gs; k < ge; k++) if (!isInvisible(text[k]!)) group += String.fromCharCode(text[k]!);
    if (colon && TIME.test(group)) return DATE_OR_TIME;
    if (separated && (YEAR_FIRST.test(group) || YEAR_LAST.test(group))) return DATE_OR_TIME;
  }
  const word = wordAfter(text, ge, n);
  if (word >= 0) {
    if (word === AFTER_COUNTER) return wordAfterEnd;
    if (word === AFTER_TIME_UNIT && wordAfter(text, wordAfterEnd, n) === AFTER_AGO) return wordAfterEnd;
    return CONTENT;
  }
  const k = skipSpace(text, ge, n);
  if (k >= n) return CONTENT;
  const next = text[k]!;
  return (k === ge && DATE_SUFFIX[next] === 1) || CJK_COUNTERS.includes(String.fromCharCode(next)) ? DATE_OR_TIME : CONTENT;
}

export interface TokenizeStats {
  /** Code units that are neither whitespace nor junk-free text: all non-space units. */
  nonSpace: number;
  /** Controls, U+FFFD, lone surrogates. */
  junk: number;
  /**
   * Characters that look like a UTF-8 continuation byte read as Latin-1 or Windows-1252 right
   * after a lead byte read the same way (mojibake.ts): above 0, the text may be mojibake.
   */
  misread: number;
}

export class Tokenizer {
  readonly stats: TokenizeStats = { nonSpace: 0, junk: 0, misread: 0 };
  /** A Han run without its invisible characters, for the segmenter (emitSegmented). */
  private readonly runs = new TextBuffer(1024);
  /** What the last emitted token was (LAST_*), and what came before it when it is a number. */
  private last = LAST_WORD;
  private beforeNumber = LAST_WORD;
  /** The end of the words of the last counter met (emitWord): words that end up to there are part of its NUM. */
  private counterWordsEnd = -1;
  /**
   * Where the text's underscores are (underscoreAt[0..underscores), ascending): the identifier
   * scan (identifiers.ts) reads only around them, and the tokenizer meets every one on its way.
   */
  underscoreAt = new Int32Array(256);
  underscores = 0;

  constructor(
    private readonly cjk: CjkMode,
    private readonly segmenter: CjkSegmenter | undefined,
    /**
     * What a word is: WORD_DATE (a date word, which becomes part of a NUM), WORD_STOP (a stop word,
     * emitted as TOKEN_STOP), or missing (word-tables.ts: dateWordTable, or wordKindTable with the
     * stop words too). One lookup per word for both.
     */
    private readonly wordKinds: StaticTable64,
    /** Words that introduce a date, time or counter (DATE_CUE_WORDS); none when undefined. */
    private readonly dateCues?: StaticTable64,
  ) {}

  /** Tokenizes text[0..n) into out. */
  tokenize(text: Uint16Array, n: number, out: TokenBuffer): void {
    // Segmentation runs once, when the first Han run is met (English pages never pay for it).
    const segmenting = this.cjk === 'jieba' && this.segmenter !== undefined;

    let junk = 0;
    let misread = 0;
    let spaces = 0;
    let wa = TOKEN_SEED_A;
    let wb = TOKEN_SEED_B;
    let wlen = 0;
    let digit = false;
    /** The word has a letter of another script than Latin (U+0370 and up). */
    let other = 0;
    this.last = LAST_WORD;
    this.counterWordsEnd = -1;
    this.underscores = 0;
    if (this.underscoreAt.length > KEPT_UNDERSCORES) this.underscoreAt = new Int32Array(256);
    let i = 0;
    while (i < n) {
      const c = text[i]!;
      const cls = CLASS[c];
      if (cls === WORD || cls === DIGIT) {
        // "-1" and "1" are other content (a minimum and a maximum, an error and a count): a sign
        // starts the number's hash. A dash after a letter or digit ("UTF-8", "2-4") is none.
        if (wlen === 0 && cls === DIGIT && isSignBefore(text, i)) {
          wa = mixKey(wa, KEY_MINUS);
          wb = mixKey(wb, KEY_MINUS);
        }
        // "Ãº" for "ú", "Ã¼" for "ü": a continuation byte that reads as a letter or a digit.
        if (c > 0x7f && i > 0 && isMisreadContinuation(c) && isMisreadLead(text[i - 1]!)) misread++;
        const k = FOLD_KEY[c]!;
        wa = mixKey(wa, k);
        wb = mixKey(wb, k);
        wlen++;
        if (cls === DIGIT) digit = true;
        else if (c >= 0x370) other = 1;
        i++;
        // The rest of a run of ASCII lower-case letters (most of most words): none of the checks
        // above applies to them, and FOLD_KEY is their whole class lookup.
        for (let d = 0; i < n && (d = text[i]!) >= 0x61 && d <= 0x7a; i++) {
          const kd = FOLD_KEY[d]!;
          wa = mixKey(wa, kd);
          wb = mixKey(wb, kd);
          wlen++;
        }
        continue;
      }
      // A number keeps its joiners: "1.5.11", "8.1.2", "1,234" and "v2.0" are one token each, and
      // so is "3.\u202a1" (an invisible character after the joiner renders as nothing).
      if (digit && i + 1 < n && isJoiner(c) && CLASS[text[skipInvisible(text, i + 1, n)]!] === DIGIT) {
        const k = FOLD_KEY[c]!;
        wa = mixKey(wa, k);
        wb = mixKey(wb, k);
        wlen++;
        i++;
        continue;
      }
      if (cls === APOS && wlen > 0 && i + 1 < n && CLASS[text[i + 1]!] === WORD) {
        wa = mixKey(wa, KEY_APOS);
        wb = mixKey(wb, KEY_APOS);
        wlen++;
        i++;
        continue;
      }
      if (cls === IGNORE || cls === CONTROL) {
        if (c >= 0x80 && c <= 0x9f && continuesMisreadUtf8(text, i)) misread++;
        else if (cls === CONTROL) {
          if (!runHasJunk(text, i)) junk++;
        } else if (c >= 0x80 && i > 0 && isMisreadLead(text[i - 1]!) && isMisreadContinuation(c)) misread++;
        i++;
        continue;
      }
      if (wlen > 0) {
        this.endWord(out, wa, wb, wlen, digit, other, text, i, n);
        wa = TOKEN_SEED_A;
        wb = TOKEN_SEED_B;
        wlen = 0;
        digit = false;
        other = 0;
      }
      if (cls === SPACE) {
        // A run of whitespace (text keeps the indentation between tags) in a loop of its own.
        for (let d = c; ; ) {
          // "Ã\u00a0" for "à": the no-break space is a continuation byte too.
          if (d === 0xa0 && i > 0 && isMisreadLead(text[i - 1]!)) misread++;
          spaces++;
          i++;
          if (i >= n || CLASS[(d = text[i]!)] !== SPACE) break;
        }
      } else if (cls === HAN || (cls === HIGH && isHanStart(text, i, n, c))) {
        const e = hanRunEnd(text, i, n);
        const s = skipDateSuffix(text, i, e);
        if (s < e) {
          if (segmenting) this.emitSegmented(out, text, s, e);
          else if (this.cjk === 'off') this.emitRun(out, text, s, e);
          else this.emitBigrams(out, text, s, e);
        }
        i = e;
      } else if (cls === KANA) {
        const e = kanaRunEnd(text, i, n);
        if (this.cjk === 'off') this.emitRun(out, text, i, e);
        else this.emitBigrams(out, text, i, e);
        i = e;
      } else if (cls === HIGH) {
        const d = i + 1 < n ? text[i + 1]! : 0;
        if (d >= 0xdc00 && d <= 0xdfff) i += 2;
        else {
          junk++;
          i++;
        }
      } else {
        if (cls === JUNK) junk++;
        else if (c === 0x5f) this.noteUnderscore(i);
        else if (c >= 0x80 && i > 0 && isMisreadLead(text[i - 1]!) && isMisreadContinuation(c)) misread++;
        i++;
      }
    }
    if (wlen > 0) this.endWord(out, wa, wb, wlen, digit, other, text, i, n);
    this.stats.junk = junk;
    this.stats.misread = misread;
    this.stats.nonSpace = n - spaces;
  }

  private noteUnderscore(i: number): void {
    if (this.underscores === this.underscoreAt.length) {
      const grown = new Int32Array(this.underscores * 2);
      grown.set(this.underscoreAt);
      this.underscoreAt = grown;
    }
    this.underscoreAt[this.underscores++] = i;
  }

  /**
   * Emits the word that ends at `end` (emitWord): a word of letters outside a counter's words, most
   * words, here (small enough for V8 to inline into tokenize's loop), the others by emitWord.
   */
  private endWord(out: TokenBuffer, wa: number, wb: number, wlen: number, digit: boolean, other: number, text: Uint16Array, end: number, n: number): void {
    if (!digit && end > this.counterWordsEnd) {
      const a = fmix(wa ^ wlen) | 0;
      const b = fmix(wb ^ wlen) | 0;
      const kind = this.wordKinds.get(a, b, 0);
      if (kind !== WORD_DATE) {
        out.push(a, b, kind === WORD_STOP ? TOKEN_STOP : TOKEN_WORD, other);
        this.last = LAST_WORD;
        return;
      }
    }
    this.emitWord(out, wa, wb, wlen, digit, other, text, end, n);
  }

  /** Emits the word text[end - wlen .. end): a word token, or NUM for a date word or a number in a date, time or counter. */
  private emitWord(out: TokenBuffer, wa: number, wb: number, wlen: number, digit: boolean, other: number, text: Uint16Array, end: number, n: number): void {
    const a = fmix(wa ^ wlen) | 0;
    const b = fmix(wb ^ wlen) | 0;
    if (!digit) {
      // A counter's words ("views", "minutes ago"): part of its NUM.
      if (end <= this.counterWordsEnd) {
        this.emitNum(out);
        return;
      }
      const kind = this.wordKinds.get(a, b, 0);
      if (kind !== WORD_DATE) {
        out.push(a, b, kind === WORD_STOP ? TOKEN_STOP : TOKEN_WORD, other);
        this.last = LAST_WORD;
        return;
      }
      // "6 May": a number just before a date word belongs to the date.
      if (this.last === LAST_NUMBER) {
        out.length--;
        this.last = this.beforeNumber;
      }
      this.emitNum(out);
      return;
    }
    // A number is content ("1.5.11" and "1.6.8" differ), except where it is a date, a time or a counter.
    const kind = dateTimeOrCounter(text, end - wlen, end, n);
    if (kind !== CONTENT || this.last === LAST_NUM) {
      if (kind > end) this.counterWordsEnd = kind;
      this.emitNum(out);
      return;
    }
    this.beforeNumber = this.last;
    out.push(a, b, TOKEN_NUMBER);
    this.last = LAST_NUMBER;
  }

  private emitNum(out: TokenBuffer): void {
    if (this.last !== LAST_NUM) {
      // "Last updated 2024-05-06", "Posted on May 6": the words that introduce it belong to the
      // NUM (at most four of them), and a NUM before them ("5 comments · Last updated ...") takes
      // this one in.
      const cues = this.dateCues;
      if (cues !== undefined) {
        let popped = 0;
        for (let t = out.length - 1; popped < 4 && t >= 0 && (out.num[t] === TOKEN_WORD || out.num[t] === TOKEN_STOP) && cues.get(out.a[t]!, out.b[t]!, 0) === 1; t--) popped++;
        out.length -= popped;
        if (popped > 0 && out.length > 0 && out.num[out.length - 1] === TOKEN_NUM) {
          this.last = LAST_NUM;
          return;
        }
      }
      out.push(NUM_A, NUM_B, TOKEN_NUM);
    }
    this.last = LAST_NUM;
  }

  /**
   * Cuts the Han run text[s..e) where it lies and emits its words. Invisible characters inside a
   * run render as nothing, so a run that holds any is cut from a copy without them. A word is
   * hashed from its units as hashUnits hashes its string, with no string built.
   */
  private emitSegmented(out: TokenBuffer, text: Uint16Array, s: number, e: number): void {
    let units = text;
    let from = s;
    let to = e;
    for (let k = s; k < e; k++) {
      if (CLASS[text[k]!] !== IGNORE) continue;
      const runs = this.runs;
      runs.clear();
      const copy = runs.reserve(e - s);
      for (let j = s; j < e; j++) if (CLASS[text[j]!] !== IGNORE) copy[runs.length++] = text[j]!;
      units = copy;
      from = 0;
      to = runs.length;
      break;
    }
    const segmenter = this.segmenter!;
    const count = segmenter.cut(units, from, to);
    const ends = segmenter.wordEnds;
    for (let w = 0; w < count; w++) {
      const end = ends[w]!;
      const len = end - from;
      let wa = TOKEN_SEED_A;
      let wb = TOKEN_SEED_B;
      for (let k = from; k < end; k++) {
        const kk = key(units[k]!);
        wa = mixKey(wa, kk);
        wb = mixKey(wb, kk);
      }
      from = end;
      const a = fmix(wa ^ len) | 0;
      const b = fmix(wb ^ len) | 0;
      const kind = this.wordKinds.get(a, b, 0);
      if (kind === WORD_DATE) {
        if (this.last === LAST_NUMBER) {
          out.length--;
          this.last = this.beforeNumber;
        }
        this.emitNum(out);
      } else {
        out.push(a, b, kind === WORD_STOP ? TOKEN_STOP : TOKEN_WORD, 1);
        this.last = LAST_WORD;
      }
    }
  }

  /** A Han or kana token that is not read for dates (a run, a bigram): a word, or a stop word. */
  private pushWord(out: TokenBuffer, a: number, b: number): void {
    out.push(a, b, this.wordKinds.get(a, b, 0) === WORD_STOP ? TOKEN_STOP : TOKEN_WORD, 1);
  }

  /** The run text[s..e) as one token (its invisible characters skipped). */
  private emitRun(out: TokenBuffer, text: Uint16Array, s: number, e: number): void {
    let a = TOKEN_SEED_A;
    let b = TOKEN_SEED_B;
    let len = 0;
    for (let k = s; k < e; k++) {
      const c = text[k]!;
      if (CLASS[c] === IGNORE) continue;
      a = mix(a, c);
      b = mix(b, c);
      len++;
    }
    this.pushWord(out, fmix(a ^ len) | 0, fmix(b ^ len) | 0);
    this.last = LAST_WORD;
  }

  /** The overlapping character bigrams of the run text[s..e) (its invisible characters skipped); one token for one character. */
  private emitBigrams(out: TokenBuffer, text: Uint16Array, s: number, e: number): void {
    let prev = -1;
    let pairs = 0;
    for (let k = s; k < e; k++) {
      const d = text[k]!;
      if (CLASS[d] === IGNORE) continue;
      if (prev >= 0) {
        const a = fmix(mix(mix(TOKEN_SEED_A, prev), d) ^ 2) | 0;
        const b = fmix(mix(mix(TOKEN_SEED_B, prev), d) ^ 2) | 0;
        this.pushWord(out, a, b);
        pairs++;
      }
      prev = d;
    }
    if (pairs === 0) {
      this.emitRun(out, text, s, e);
      return;
    }
    this.last = LAST_WORD;
  }
}
