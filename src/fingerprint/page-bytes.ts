/**
 * Bytes of a fetched page -> text, leniently, as a browser decodes it, and the
 * one rule for what is not a page at all.
 *
 * decodePageBytes follows the WHATWG Encoding Standard's "decode" (BOM sniff,
 * then UTF-8 with replacement): a UTF-8 BOM is dropped, a UTF-16 BOM selects
 * UTF-16, and every invalid byte sequence becomes one U+FFFD per maximal
 * subpart. It never throws: a real page with a few broken bytes (a truncated
 * multi-byte character, a Latin-1 byte in a UTF-8 page) is still a page.
 *
 * isBinaryContent says a body is not text at all: it starts with the
 * signature of a binary format (the WHATWG MIME Sniffing tables: images,
 * audio, video, archives, fonts, PDF, executables), or more than 1/8 of its
 * first 8 KiB are "binary data bytes" (mimesniff section 3: 0x00-0x08, 0x0B,
 * 0x0E-0x1A, 0x1C-0x1F), invalid UTF-8 sequences, or (for a string) U+FFFD
 * and lone surrogates. The ratio is the fingerprinter's own junk ratio
 * (fingerprinter.ts), so a damaged page with a few NULs, controls or broken
 * bytes is decided, and a JPEG sent as html is refused.
 *
 * Noise is not junk: a run of invisible characters (controls, NUL, bidi
 * marks, zero-width characters, soft hyphens; char-class.ts isNoise), with
 * any whitespace inside it, renders as nothing however long it is. A CMS or a
 * crawler that leaves 2,000 of them in front of a body has damaged one place
 * of the page, so the run counts as one unit of the sample, and as one junk
 * unit when it holds a binary data byte; the sample is the first 8 KiB after
 * leaving such runs aside. Binary has its control bytes scattered among
 * invalid sequences, so random bytes are still over 1/8 junk, with noise in
 * front of them or not.
 *
 * readMisreadUtf16 undoes one more crawler mistake: UTF-16 bytes read as
 * Latin-1 (windows-1252, as the WHATWG Encoding Standard reads "latin1").
 */
import { isNoise } from './char-class.js';

const SAMPLE = 8192;
/** More than 1 in JUNK_RATIO sampled units junk = binary. */
const JUNK_RATIO = 8;

const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
const utf16le = new TextDecoder('utf-16le', { fatal: false, ignoreBOM: false });
const utf16be = new TextDecoder('utf-16be', { fatal: false, ignoreBOM: false });

/** WHATWG "decode": BOM sniffing, then UTF-8 (or the BOM's UTF-16) with U+FFFD for invalid sequences. */
export function decodePageBytes(bytes: Uint8Array): string {
  if (bytes.length >= 2) {
    if (bytes[0] === 0xff && bytes[1] === 0xfe) return utf16le.decode(bytes);
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return utf16be.decode(bytes);
  }
  return utf8.decode(bytes);
}

/** Windows-1252's characters for the bytes 0x80..0x9F; its five holes read as the C1 controls. */
const CP1252_HIGH = [0x20ac, 0x81, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8d, 0x017d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x9d, 0x017e, 0x0178];
/** Per UTF-16 code unit: the byte Latin-1 or Windows-1252 reads as it, + 1; 0 for a unit neither reads any byte as. */
const LATIN1_BYTE = new Uint16Array(65536);
for (let b = 0; b < 256; b++) LATIN1_BYTE[b] = b + 1;
CP1252_HIGH.forEach((u, k) => (LATIN1_BYTE[u] = 0x80 + k + 1));

/**
 * A UTF-16 page that a crawler read as Latin-1 or Windows-1252: the text starts with the UTF-16
 * BOM as those read it ("ÿþ" for little-endian, "þÿ" for big-endian; an ASCII character then
 * shows as itself beside a NUL) and every code unit is a byte under that reading. Returns the
 * page decoded from those bytes as a browser decodes them (decodePageBytes: the BOM selects
 * UTF-16), or undefined for any other text. The BOM is the whole signal, as it is for a browser
 * given the bytes: no text starts with "ÿþ" or "þÿ" otherwise.
 */
export function readMisreadUtf16(text: string): string | undefined {
  const n = text.length;
  if (n < 2) return undefined;
  const a = text.charCodeAt(0);
  const b = text.charCodeAt(1);
  if (!((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff))) return undefined;
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const byte = LATIN1_BYTE[text.charCodeAt(i)]!;
    if (byte === 0) return undefined;
    bytes[i] = byte - 1;
  }
  return decodePageBytes(bytes);
}

/** The UTF-8 bytes of "ÿþ" and "þÿ": a misread UTF-16 page that was sent on as UTF-8 (an Avro html field). */
export function startsWithMisreadUtf16Bom(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0xc3 && bytes[2] === 0xc3 && ((bytes[1] === 0xbf && bytes[3] === 0xbe) || (bytes[1] === 0xbe && bytes[3] === 0xbf));
}

/**
 * The text of a page body, bytes or string, as a browser would show it: bytes decoded by
 * decodePageBytes, lone surrogates of a string replaced, and a UTF-16 page read as Latin-1
 * (readMisreadUtf16) decoded as UTF-16. Returns undefined when it is binary (isBinaryContent), on
 * the bytes when there are bytes, else on the text.
 */
export function pageText(content: Uint8Array | string): string | undefined {
  let misread: string | undefined;
  if (typeof content === 'string') misread = readMisreadUtf16(content);
  else if (startsWithMisreadUtf16Bom(content)) misread = readMisreadUtf16(decodePageBytes(content));
  if (misread !== undefined) return isBinaryContent(misread) ? undefined : misread;
  if (isBinaryContent(content)) return undefined;
  return typeof content === 'string' ? toWellFormedText(content) : decodePageBytes(content);
}

/** Lone surrogates (a JSON "\ud800") -> U+FFFD, as UTF-8 encoding would have replaced them. */
export function toWellFormedText(text: string): string {
  const s = text as string & { isWellFormed(): boolean; toWellFormed(): string };
  return s.isWellFormed() ? text : s.toWellFormed();
}

/** Byte signatures of non-text formats (mimesniff 6.1-6.3, 7.1), as [offset, bytes]. */
const SIGNATURES: readonly (readonly [number, readonly number[]])[] = [
  [0, [0x25, 0x50, 0x44, 0x46, 0x2d]], // %PDF-
  [0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]], // PNG
  [0, [0x47, 0x49, 0x46, 0x38]], // GIF8
  [0, [0xff, 0xd8, 0xff]], // JPEG
  [0, [0x52, 0x49, 0x46, 0x46]], // RIFF (WebP, WAVE, AVI)
  [0, [0x00, 0x00, 0x01, 0x00]], // ICO
  [0, [0x00, 0x00, 0x02, 0x00]], // CUR
  [0, [0x4f, 0x67, 0x67, 0x53, 0x00]], // OggS
  [0, [0x49, 0x44, 0x33]], // ID3 (MP3)
  [0, [0x1a, 0x45, 0xdf, 0xa3]], // Matroska / WebM
  [4, [0x66, 0x74, 0x79, 0x70]], // ....ftyp (MP4)
  [0, [0x50, 0x4b, 0x03, 0x04]], // ZIP (and docx, jar, epub)
  [0, [0x1f, 0x8b, 0x08]], // gzip
  [0, [0x52, 0x61, 0x72, 0x20, 0x1a, 0x07, 0x00]], // RAR
  [0, [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]], // 7z
  [0, [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]], // xz
  [0, [0x7f, 0x45, 0x4c, 0x46]], // ELF
  [0, [0x00, 0x61, 0x73, 0x6d]], // WebAssembly
  [0, [0x77, 0x4f, 0x46, 0x46]], // wOFF
  [0, [0x77, 0x4f, 0x46, 0x32]], // wOF2
  [0, [0x00, 0x01, 0x00, 0x00, 0x00]], // TrueType
  [0, [0x4f, 0x54, 0x54, 0x4f]], // OpenType
];

function isBinaryDataByte(b: number): boolean {
  return b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f);
}

/** Length of the valid UTF-8 sequence at bytes[i] (WHATWG UTF-8 decoder bounds), or 0 if invalid. */
function utf8SequenceLength(bytes: Uint8Array, i: number, n: number): number {
  const b = bytes[i]!;
  let need: number;
  let lower = 0x80;
  let upper = 0xbf;
  if (b >= 0xc2 && b <= 0xdf) need = 1;
  else if (b >= 0xe0 && b <= 0xef) {
    need = 2;
    if (b === 0xe0) lower = 0xa0;
    if (b === 0xed) upper = 0x9f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    need = 3;
    if (b === 0xf0) lower = 0x90;
    if (b === 0xf4) upper = 0x8f;
  } else return 0;
  if (i + need >= n) return 0;
  for (let k = 1; k <= need; k++) {
    const c = bytes[i + k]!;
    if (c < lower || c > upper) return 0;
    lower = 0x80;
    upper = 0xbf;
  }
  return need + 1;
}

/** Whether the valid UTF-8 sequence of `len` bytes at bytes[i] is a noise character (isNoise). */
function isNoiseSequence(bytes: Uint8Array, i: number, len: number): boolean {
  if (len === 4) return false;
  const b = bytes[i]!;
  const cp = len === 2 ? ((b & 0x1f) << 6) | (bytes[i + 1]! & 0x3f) : ((b & 0x0f) << 12) | ((bytes[i + 1]! & 0x3f) << 6) | (bytes[i + 2]! & 0x3f);
  return isNoise(cp);
}

/** Noise (isNoise), or a binary data byte char-class counts as whitespace (0x0B). */
function isNoiseUnit(c: number): boolean {
  return isNoise(c) || (c < 0x20 && isBinaryDataByte(c));
}

/**
 * What an ASCII byte is to the binary check: visible, whitespace (inside a run of noise it
 * belongs to the run), noise, or noise that is a binary data byte (junk, once per run).
 */
const ASCII_VISIBLE = 0;
const ASCII_SPACE = 1;
const ASCII_NOISE = 2;
const ASCII_NOISE_JUNK = 3;
const ASCII_KIND = new Uint8Array(128);
for (let b = 0; b < 128; b++) {
  if (isNoiseUnit(b)) ASCII_KIND[b] = isBinaryDataByte(b) ? ASCII_NOISE_JUNK : ASCII_NOISE;
  else if (isWhitespace(b)) ASCII_KIND[b] = ASCII_SPACE;
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

/**
 * The rule for "not a page": a binary format's signature, or more than 1/8 junk in the first
 * 8 KiB, where a run of noise (with the whitespace inside it) is one unit, and one junk unit at
 * most (see the header).
 */
export function isBinaryContent(content: Uint8Array | string): boolean {
  if (typeof content === 'string') {
    const n = content.length;
    let counted = 0;
    let junk = 0;
    /** Inside a run of noise; and whether the run has counted its junk unit. */
    let inRun = false;
    let runJunk = false;
    for (let i = 0; i < n && counted < SAMPLE; i++) {
      const c = content.charCodeAt(i);
      if (isNoiseUnit(c)) {
        if (!inRun) counted++;
        inRun = true;
        if (!runJunk && c < 0x20 && isBinaryDataByte(c)) {
          junk++;
          runJunk = true;
        }
        continue;
      }
      if (inRun && isWhitespace(c)) continue;
      inRun = false;
      runJunk = false;
      counted++;
      if (c === 0xfffd) junk++;
      else if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < n ? content.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) i++;
        else junk++;
      }
    }
    return junk * JUNK_RATIO > counted;
  }
  for (const [offset, sig] of SIGNATURES) {
    if (content.length >= offset + sig.length && sig.every((b, k) => content[offset + k] === b)) return true;
  }
  const start = content.length >= 3 && content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf ? 3 : 0;
  if (content.length >= 2 && ((content[0] === 0xff && content[1] === 0xfe) || (content[0] === 0xfe && content[1] === 0xff))) {
    return isBinaryContent(decodePageBytes(content.subarray(0, SAMPLE * 2)));
  }
  const n = content.length;
  let counted = 0;
  let junk = 0;
  let inRun = false;
  let runJunk = false;
  for (let i = start; i < n && counted < SAMPLE; ) {
    const b = content[i]!;
    if (b < 0x80) {
      // One table read per ASCII byte (ASCII_KIND): most of a page's sample is ASCII.
      const kind = ASCII_KIND[b]!;
      if (kind === ASCII_VISIBLE || (kind === ASCII_SPACE && !inRun)) {
        inRun = false;
        runJunk = false;
        counted++;
      } else if (kind >= ASCII_NOISE) {
        if (!inRun) counted++;
        inRun = true;
        if (!runJunk && kind === ASCII_NOISE_JUNK) {
          junk++;
          runJunk = true;
        }
      }
      i++;
      continue;
    }
    const len = utf8SequenceLength(content, i, n);
    if (len > 0 && isNoiseSequence(content, i, len)) {
      if (!inRun) counted++;
      inRun = true;
      i += len;
      continue;
    }
    inRun = false;
    runJunk = false;
    if (len === 0) {
      junk++;
      counted++;
      i++;
    } else {
      counted += len;
      i += len;
    }
  }
  return junk * JUNK_RATIO > counted;
}
