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
 */

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

/** The rule for "not a page": a binary format's signature, or more than 1/8 junk in the first 8 KiB. */
export function isBinaryContent(content: Uint8Array | string): boolean {
  if (typeof content === 'string') {
    const n = Math.min(content.length, SAMPLE);
    let junk = 0;
    for (let i = 0; i < n; i++) {
      const c = content.charCodeAt(i);
      if (c < 0x20 ? isBinaryDataByte(c) : c === 0xfffd) junk++;
      else if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < content.length ? content.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) i++;
        else junk++;
      }
    }
    return junk * JUNK_RATIO > n;
  }
  for (const [offset, sig] of SIGNATURES) {
    if (content.length >= offset + sig.length && sig.every((b, k) => content[offset + k] === b)) return true;
  }
  const start = content.length >= 3 && content[0] === 0xef && content[1] === 0xbb && content[2] === 0xbf ? 3 : 0;
  if (content.length >= 2 && ((content[0] === 0xff && content[1] === 0xfe) || (content[0] === 0xfe && content[1] === 0xff))) {
    return isBinaryContent(decodePageBytes(content.subarray(0, SAMPLE * 2)));
  }
  const n = Math.min(content.length, start + SAMPLE);
  let junk = 0;
  for (let i = start; i < n; ) {
    const b = content[i]!;
    if (b < 0x80) {
      if (isBinaryDataByte(b)) junk++;
      i++;
      continue;
    }
    const len = utf8SequenceLength(content, i, content.length);
    if (len === 0) {
      // A sequence cut off by the sample's end is not junk.
      if (i + 4 > n && n < content.length) break;
      junk++;
      i++;
    } else i += len;
  }
  return junk * JUNK_RATIO > n - start;
}
