/**
 * Per-UTF-16-code-unit lookup tables for the tokenizer, built once per
 * process from the engine's Unicode data (about 15 ms), so the hot loop does
 * one typed-array load per character instead of a regex test.
 *
 * Classes:
 *  - SEP    separator (space, punctuation, symbols, emoji halves we do not pair)
 *  - WORD   letter or combining mark (\p{L}, \p{M}) outside Han and kana
 *  - DIGIT  any \p{N}; a token containing one becomes the NUM token
 *  - HAN    \p{Script=Han} (ideographs; segmented by the CJK mode)
 *  - KANA   hiragana, katakana and the prolonged sound mark (character bigrams)
 *  - APOS   ' and U+2019, kept inside a word ("don't") and a separator elsewhere
 *  - HIGH   high surrogate: the tokenizer pairs it (astral Han is HAN, other
 *           astral code points are SEP)
 *  - JUNK   U+FFFD, U+FFFE/U+FFFF, lone low surrogates: counted to detect
 *           binary garbage, and a word boundary
 *  - CONTROL C0/C1 controls (except whitespace and NUL), DEL: invisible and
 *           no word boundary (a stray control inside a word renders as
 *           nothing); counted as junk too, except a C1 control continuing a
 *           Latin-1 reading of UTF-8 (mojibake; see tokenizer.ts)
 *  - SPACE  whitespace (separator that does not count towards "non-space")
 *  - IGNORE invisible when rendered, and not a word boundary: NUL (the HTML
 *           tree builder drops it from text), \p{Default_Ignorable_Code_Point}
 *           that is not a letter (soft hyphen, ZWJ/ZWNJ, word joiner, BOM,
 *           bidi marks, embeddings and isolates, variation selectors), except
 *           U+200B ZERO WIDTH SPACE, which Thai, Khmer and Lao text uses
 *           between words
 *
 * FOLD maps a code unit to its case-folded form: `toLowerCase()` when that is
 * a single code unit, full-width ASCII (U+FF01..U+FF5E) to ASCII, U+2019 to '.
 */
import { key } from './feature-hash.js';

export const SEP = 0;
export const WORD = 1;
export const DIGIT = 2;
export const HAN = 3;
export const KANA = 4;
export const APOS = 5;
export const HIGH = 6;
export const JUNK = 7;
export const SPACE = 8;
export const IGNORE = 9;
export const CONTROL = 10;

export const CLASS = new Uint8Array(65536);

/** Invisible when rendered and no word boundary: IGNORE (bidi marks, soft hyphens, ZWJ, BOM, NUL) and CONTROL. */
export function isInvisible(c: number): boolean {
  const cls = CLASS[c];
  return cls === IGNORE || cls === CONTROL;
}

/**
 * Noise: what renders as nothing (isInvisible), and U+200B ZERO WIDTH SPACE, which renders as
 * nothing but a possible line break. A run of it is one place of damage, however long
 * (page-bytes.ts, the tokenizer's junk count); block-shape.ts does not count it as visible.
 */
export function isNoise(c: number): boolean {
  const cls = CLASS[c];
  return cls === IGNORE || cls === CONTROL || c === 0x200b;
}
export const FOLD = new Uint16Array(65536);
/** key(FOLD[c]) (feature-hash.ts): the value half of the hash round of each code unit, folded, computed once. */
export const FOLD_KEY = new Int32Array(65536);

function build(): void {
  const letter = /[\p{L}\p{M}]/u;
  const digit = /\p{N}/u;
  const han = /\p{Script=Han}/u;
  const kana = /[\p{Script=Hiragana}\p{Script=Katakana}\u30fc]/u;
  const space = /\s/u;
  const ignorable = /\p{Default_Ignorable_Code_Point}/u;
  for (let c = 0; c < 65536; c++) {
    let fold = c;
    let cls = SEP;
    if (c >= 0xd800 && c <= 0xdbff) cls = HIGH;
    else if (c >= 0xdc00 && c <= 0xdfff) cls = JUNK;
    else if (c === 0) cls = IGNORE;
    else if (c < 0x80) {
      if ((c >= 0x61 && c <= 0x7a)) cls = WORD;
      else if (c >= 0x41 && c <= 0x5a) { cls = WORD; fold = c + 32; }
      else if (c >= 0x30 && c <= 0x39) cls = DIGIT;
      else if (c === 0x27) cls = APOS;
      else if (c === 9 || c === 10 || c === 11 || c === 12 || c === 13 || c === 32) cls = SPACE;
      else if (c < 0x20 || c === 0x7f) cls = CONTROL;
    } else {
      const s = String.fromCharCode(c);
      if (c <= 0x9f) cls = CONTROL;
      else if (c === 0xfffd || c === 0xfffe || c === 0xffff) cls = JUNK;
      else if (c !== 0x200b && ignorable.test(s) && !letter.test(s)) cls = IGNORE;
      else if (c === 0x2019) { cls = APOS; fold = 0x27; }
      else if (space.test(s)) cls = SPACE;
      else if (han.test(s)) cls = HAN;
      else if (kana.test(s)) cls = KANA;
      else if (digit.test(s)) cls = DIGIT;
      else if (letter.test(s)) cls = WORD;
      if (c >= 0xff01 && c <= 0xff5e) {
        fold = c - 0xfee0;
        if (fold >= 0x41 && fold <= 0x5a) fold += 32;
        cls = CLASS[fold]!;
      } else if (cls === WORD) {
        const lower = s.toLowerCase();
        if (lower.length === 1) fold = lower.charCodeAt(0);
      }
    }
    CLASS[c] = cls;
    FOLD[c] = fold;
  }
}
build();
for (let c = 0; c < 65536; c++) FOLD_KEY[c] = key(FOLD[c]!);

/** Astral code points that count as Han: CJK Unified Ideographs Extensions B..H and compatibility supplement. */
export function isAstralHan(cp: number): boolean {
  return cp >= 0x20000 && cp <= 0x323af;
}
