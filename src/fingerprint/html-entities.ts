/**
 * HTML character references in text: numeric ones, the XML five, nbsp, soft
 * hyphen and zero-width joiners, and the Latin-1 letters (so &eacute; makes
 * "é" inside a word). Any other named reference becomes a space: in text they
 * are almost always punctuation or symbols (&mdash; &hellip; &copy;), which
 * the tokenizer treats as separators anyway. Invalid numeric references give
 * U+FFFD. A '&' that starts no reference is kept as '&'.
 */
import type { TextBuffer } from './text-buffer.js';

const LATIN1_NAMES =
  'Agrave Aacute Acirc Atilde Auml Aring AElig Ccedil Egrave Eacute Ecirc Euml Igrave Iacute Icirc Iuml ETH Ntilde ' +
  'Ograve Oacute Ocirc Otilde Ouml times Oslash Ugrave Uacute Ucirc Uuml Yacute THORN szlig agrave aacute acirc atilde ' +
  'auml aring aelig ccedil egrave eacute ecirc euml igrave iacute icirc iuml eth ntilde ograve oacute ocirc otilde ouml ' +
  'divide oslash ugrave uacute ucirc uuml yacute thorn yuml';

/** Named reference -> replacement code unit; -1 = nothing (soft hyphen, joiners). */
const NAMED = new Map<string, number>([
  ['amp', 0x26],
  ['lt', 0x3c],
  ['gt', 0x3e],
  ['quot', 0x22],
  ['apos', 0x27],
  ['nbsp', 0x20],
  ['rsquo', 0x2019],
  ['shy', -1],
  ['zwj', -1],
  ['zwnj', -1],
]);
LATIN1_NAMES.split(' ').forEach((name, i) => NAMED.set(name, 0xc0 + i));

function isAlnum(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a);
}

function pushCodePoint(out: TextBuffer, cp: number): void {
  if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
  const units = out.reserve(2);
  if (cp >= 0x10000) {
    cp -= 0x10000;
    units[out.length++] = 0xd800 + (cp >> 10);
    units[out.length++] = 0xdc00 + (cp & 0x3ff);
  } else units[out.length++] = cp;
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
    while (j < end && j - start < 8) {
      const c = html.charCodeAt(j);
      let d: number;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (hex && (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66) d = (c | 0x20) - 0x57;
      else break;
      cp = cp * (hex ? 16 : 10) + d;
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
  while (j < end && j - start < 32 && isAlnum(html.charCodeAt(j))) j++;
  if (j === start || (html.charCodeAt(start) | 0x20) < 0x61 || (html.charCodeAt(start) | 0x20) > 0x7a) {
    out.reserve(1)[out.length++] = 0x26;
    return i + 1;
  }
  const value = NAMED.get(html.slice(start, j));
  if (j < end && html.charCodeAt(j) === 0x3b) j++;
  if (value === undefined) out.reserve(1)[out.length++] = 0x20;
  else if (value >= 0) out.reserve(1)[out.length++] = value;
  return j;
}
