/**
 * HTML character references in text, as the WHATWG tokenizer decodes them in
 * the data and RCDATA states (HTML Living Standard 13.2.5.72-80):
 *
 * - Named: the whole table (named-references.ts). A name followed by ';' is
 *   looked up as written; otherwise the longest legacy name that prefixes the
 *   run matches without ';' ("&notit;" is "¬it;", "&copy2024" is "©2024").
 *   A '&' that starts no reference stays a literal '&'.
 * - Numeric: decimal or hex, any number of digits. 0, surrogates and values
 *   past U+10FFFF give U+FFFD; 0x80..0x9F are the Windows-1252 characters
 *   authors meant ("&#150;" is an en dash, not a C1 control).
 *
 * So "c&oelig;ur", "c\u0153ur" and "c&#339;ur" give the same text, and
 * "&#12501;" is the same as the character itself.
 */
import { LEGACY_REFERENCES, NAMED_REFERENCES } from './named-references.js';
import type { TextBuffer } from './text-buffer.js';

/** 13.2.5.80: numeric references to 0x80..0x9F -> the Windows-1252 character (0 = keep the number). */
const C1_REPLACEMENT = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0,
  0, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];
/** The longest legacy (semicolon-free) name. */
const MAX_LEGACY = 6;
/** The longest name in the table, without its semicolon. */
const MAX_NAME = 31;

function isAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
}

function pushCodePoint(out: TextBuffer, cp: number): void {
  if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
  else if (cp >= 0x80 && cp <= 0x9f && C1_REPLACEMENT[cp - 0x80] !== 0) cp = C1_REPLACEMENT[cp - 0x80]!;
  const units = out.reserve(2);
  if (cp >= 0x10000) {
    cp -= 0x10000;
    units[out.length++] = 0xd800 + (cp >> 10);
    units[out.length++] = 0xdc00 + (cp & 0x3ff);
  } else units[out.length++] = cp;
}

function pushString(out: TextBuffer, s: string): void {
  const units = out.reserve(s.length);
  for (let k = 0; k < s.length; k++) units[out.length++] = s.charCodeAt(k);
}

/** Decodes the reference at html[i] === '&' into out; returns the index after it. */
export function decodeEntity(html: string, i: number, end: number, out: TextBuffer): number {
  let j = i + 1;
  if (j < end && html.charCodeAt(j) === 0x23) {
    j++;
    let hex = false;
    if (j < end && (html.charCodeAt(j) | 0x20) === 0x78) {
      hex = true;
      j++;
    }
    const start = j;
    let cp = 0;
    while (j < end) {
      const c = html.charCodeAt(j);
      let d: number;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (hex && (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66) d = (c | 0x20) - 0x57;
      else break;
      // Saturate: any value past U+10FFFF is U+FFFD however many digits follow.
      cp = cp > 0x10ffff ? cp : cp * (hex ? 16 : 10) + d;
      j++;
    }
    if (j === start) {
      out.reserve(1)[out.length++] = 0x26;
      return i + 1;
    }
    if (j < end && html.charCodeAt(j) === 0x3b) j++;
    pushCodePoint(out, cp);
    return j;
  }
  const start = j;
  while (j < end && j - start <= MAX_NAME && isAlnum(html.charCodeAt(j))) j++;
  if (j > start && j < end && html.charCodeAt(j) === 0x3b) {
    const value = NAMED_REFERENCES.get(html.slice(start, j));
    if (value !== undefined) {
      pushString(out, value);
      return j + 1;
    }
  }
  for (let len = Math.min(j - start, MAX_LEGACY); len >= 2; len--) {
    const name = html.slice(start, start + len);
    if (LEGACY_REFERENCES.has(name)) {
      pushString(out, NAMED_REFERENCES.get(name)!);
      return start + len;
    }
  }
  out.reserve(1)[out.length++] = 0x26;
  return i + 1;
}
