/**
 * Mojibake repair: text whose UTF-8 bytes were decoded as Latin-1 or
 * Windows-1252 by a server, proxy or CMS that guessed the charset wrong
 * ("é" shows as "Ã©", "中" as "ä¸\u00ad", "’" as "â€™"). The next fetch of the
 * same page usually comes right, and a reader recognises the page either way,
 * so the fingerprinter reads the bytes back as UTF-8 before it tokenizes:
 * otherwise every non-ASCII word of the damaged copy is another feature, and
 * a Chinese or Japanese page shares almost nothing with itself.
 *
 * The repair is ftfy's commonest fix done strictly: only a lead character
 * (U+00C2..U+00F4) followed by exactly the continuation characters a UTF-8
 * sequence needs, each a byte 0x80..0xBF as Latin-1 or Windows-1252 shows it,
 * forming a valid, shortest-form, non-surrogate sequence, can be replaced, and
 * only where it is likely mojibake and not real text that looks like it
 * (isMisread); any other character is left alone.
 */

/** Per UTF-16 code unit: the byte it shows under Latin-1 or Windows-1252 when that is a UTF-8 continuation byte (0x80..0xBF), else 0. */
const CONTINUATION = new Uint8Array(65536);
for (let b = 0x80; b <= 0xbf; b++) CONTINUATION[b] = b;
// Windows-1252's characters for 0x80..0x9F (its five undefined bytes decode to the C1 controls, above).
const CP1252 = [0x20ac, -1, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, -1, 0x017d, -1, -1, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, -1, 0x017e, 0x0178];
for (let k = 0; k < CP1252.length; k++) if (CP1252[k]! >= 0) CONTINUATION[CP1252[k]!] = 0x80 + k;

/** Whether u can start a misread multi-byte UTF-8 sequence (U+00C2..U+00F4). */
export function isMisreadLead(u: number): boolean {
  return u >= 0xc2 && u <= 0xf4;
}

/** Whether u can be a misread continuation byte. */
export function isMisreadContinuation(u: number): boolean {
  return CONTINUATION[u] !== 0;
}

/**
 * The length in code units of the misread UTF-8 sequence at units[i] (2 to 4), or 0 when there is
 * none there. Checks what a UTF-8 decoder checks: the count of continuation bytes, no overlong
 * form, no surrogate, nothing above U+10FFFF.
 */
function sequenceAt(units: Uint16Array, i: number, n: number): number {
  const lead = units[i]!;
  if (lead < 0xc2 || lead > 0xf4) return 0;
  const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : 1;
  if (i + need >= n) return 0;
  const second = CONTINUATION[units[i + 1]!]!;
  if (second === 0) return 0;
  if ((lead === 0xe0 && second < 0xa0) || (lead === 0xed && second > 0x9f) || (lead === 0xf0 && second < 0x90) || (lead === 0xf4 && second > 0x8f)) return 0;
  for (let k = 2; k <= need; k++) if (CONTINUATION[units[i + k]!] === 0) return 0;
  return need + 1;
}

/** The code point of the misread sequence of `len` units at units[i]. */
function decodeAt(units: Uint16Array, i: number, len: number): number {
  let cp = units[i]! & (len === 2 ? 0x1f : len === 3 ? 0x0f : 0x07);
  for (let k = 1; k < len; k++) cp = (cp << 6) | (CONTINUATION[units[i + k]!]! & 0x3f);
  return cp;
}

function isAsciiAlnum(u: number): boolean {
  return (u >= 0x30 && u <= 0x39) || ((u | 0x20) >= 0x61 && (u | 0x20) <= 0x7a);
}

/**
 * Whether the valid sequence of `len` units at units[i], decoding to cp, is mojibake rather than
 * real text that happens to look like it (French puts a no-break space between "é" and "»",
 * which reads as a three-byte sequence). Mojibake comes in runs, one sequence after another,
 * when a whole word is not ASCII ("ä¸­æ–‡" for "中文", "ÐŸÑ€Ð¸" for "При"); a lone sequence
 * is taken only where nothing else is likely: punctuation or currency from U+2000 ("â€™" for
 * "’"), a four-byte sequence (an emoji: no real text has "ð" before three such symbols), or a
 * Latin-1 or Latin Extended letter inside an ASCII word ("cafÃ©") or after "Â" ("Â©", "Â«"),
 * which real text does not write.
 */
function isMisread(units: Uint16Array, i: number, len: number, n: number, cp: number, afterSequence: boolean): boolean {
  if (afterSequence || (i + len < n && sequenceAt(units, i + len, n) > 0)) return true;
  if ((cp >= 0x2000 && cp <= 0x20cf) || cp >= 0x10000) return true;
  if (cp >= 0xa0 && cp <= 0x24f) return units[i] === 0xc2 || (i > 0 && isAsciiAlnum(units[i - 1]!)) || (i + len < n && isAsciiAlnum(units[i + len]!));
  return false;
}

/** Whether units[0..n) holds a sequence repairMojibake would read back. Reads, writes nothing. */
export function holdsMojibake(units: Uint16Array, n: number): boolean {
  let lastEnd = -1;
  for (let i = 0; i < n; i++) {
    const u = units[i]!;
    if (u < 0xc2 || u > 0xf4) continue;
    const len = sequenceAt(units, i, n);
    if (len === 0) continue;
    if (isMisread(units, i, len, n, decodeAt(units, i, len), lastEnd === i)) return true;
    lastEnd = i + len;
    i += len - 1;
  }
  return false;
}

/**
 * Repairs misread UTF-8 in units[0..n) in place (a repaired sequence is never longer than its
 * mojibake) and returns the new length; returns n, with nothing changed, when the text holds no
 * mojibake by the rule above.
 */
export function repairMojibake(units: Uint16Array, n: number): number {
  if (!holdsMojibake(units, n)) return n;
  let w = 0;
  let lastEnd = -1;
  for (let i = 0; i < n; ) {
    const len = sequenceAt(units, i, n);
    let cp = len === 0 ? -1 : decodeAt(units, i, len);
    if (len === 0 || !isMisread(units, i, len, n, cp, lastEnd === i)) {
      if (len > 0) lastEnd = i + len;
      units[w++] = units[i++]!;
      continue;
    }
    lastEnd = i + len;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      units[w++] = 0xd800 + (cp >>> 10);
      units[w++] = 0xdc00 + (cp & 0x3ff);
    } else units[w++] = cp;
    i += len;
  }
  return w;
}

const utf16 = new TextDecoder('utf-16le');

/**
 * repairMojibake over a whole string (a page's HTML, before extraction: the boilerplate rule
 * weighs a block by its letters, so it must see the repaired text). Returns the repaired string,
 * or undefined when there is nothing to repair. Allocates; it runs only for pages whose text the
 * tokenizer saw misread pairs in.
 */
export function repairMojibakeString(s: string): string | undefined {
  const n = s.length;
  const units = new Uint16Array(n);
  for (let i = 0; i < n; i++) units[i] = s.charCodeAt(i);
  const m = repairMojibake(units, n);
  return m === n ? undefined : utf16.decode(units.subarray(0, m));
}
