/**
 * Pages -> one buffer and back, for the fingerprint pool's workers: the
 * bytes of a chunk go by transfer (one copy of each page, on the calling
 * thread) instead of a structured clone of every string.
 *
 * A page is what fingerprint() reads (html if it is given, else text, else
 * ''). A string is written as ISO-8859-1 (one byte a character) when it has
 * no character above U+00FF, else as UTF-16LE code units. Both give back the
 * exact string, lone surrogates included, and the worker gets a one-byte
 * string where the caller had one, which V8 scans faster. UTF-8 would need
 * an encode here and a decode there, each slower than these copies. Bytes
 * (a record's body as it arrived) are copied as they are and decoded in the
 * worker by decodePageBytes, as the wire layer decodes them: the decode
 * moves off the calling thread with the fingerprinting.
 */
import type { PageContent } from './fingerprinter.js';
import { decodePageBytes } from './page-bytes.js';

/** A page for the pool: html or text as a string, or as the bytes of the page (decoded like decodePageBytes). */
export interface PoolPage {
  html?: string | Uint8Array;
  text?: string | Uint8Array;
}

/** flags: which field the page came from (fingerprint() reads html first), and how it is written. */
const FIELD_TEXT = 1;
const FIELD_HTML = 2;
const WIDE = 4;
const BYTES = 8;

/** A character above U+00FF: the page needs UTF-16. */
const ABOVE_LATIN1 = /[^\u0000-\u00ff]/;

function isContent(v: unknown): v is string | Uint8Array {
  return typeof v === 'string' || v instanceof Uint8Array;
}

function contentOf(page: PoolPage | undefined): string | Uint8Array {
  const html = page?.html;
  if (isContent(html)) return html;
  const text = page?.text;
  return isContent(text) ? text : '';
}

/** Characters (or bytes) of the page fingerprint() reads: what chunk sizes are measured in. */
export function pageLength(page: PoolPage | undefined): number {
  return contentOf(page).length;
}

export interface EncodedPages {
  /** The pages back to back, in a buffer of their own (transferable). */
  readonly bytes: Uint8Array;
  /** End offset in bytes of each page. */
  readonly ends: Uint32Array;
  /** FIELD_* | WIDE per page. */
  readonly flags: Uint8Array;
}

/** pages[from..to) into one buffer. */
export function encodePages(pages: readonly PoolPage[], from: number, to: number): EncodedPages {
  const count = to - from;
  const ends = new Uint32Array(count);
  const flags = new Uint8Array(count);
  let total = 0;
  for (let j = 0; j < count; j++) {
    const page = pages[from + j];
    const s = contentOf(page);
    const field = isContent(page?.html) ? FIELD_HTML : isContent(page?.text) ? FIELD_TEXT : 0;
    const wide = typeof s === 'string' && ABOVE_LATIN1.test(s);
    flags[j] = field | (wide ? WIDE : 0) | (typeof s === 'string' ? 0 : BYTES);
    total += wide ? 2 * s.length : s.length;
    ends[j] = total;
  }
  const bytes = Buffer.from(new ArrayBuffer(total));
  let at = 0;
  for (let j = 0; j < count; j++) {
    const s = contentOf(pages[from + j]);
    if (typeof s === 'string') at += bytes.write(s, at, (flags[j]! & WIDE) !== 0 ? 'utf16le' : 'latin1');
    else {
      bytes.set(s, at);
      at += s.length;
    }
  }
  return { bytes: new Uint8Array(bytes.buffer, 0, total), ends, flags };
}

/** Page j of an encoded chunk, as the PageContent fingerprint() is given. */
export function decodePage(bytes: Buffer, ends: Uint32Array, flags: Uint8Array, j: number): PageContent {
  const start = j === 0 ? 0 : ends[j - 1]!;
  const flag = flags[j]!;
  const s = (flag & BYTES) !== 0 ? decodePageBytes(bytes.subarray(start, ends[j]!)) : bytes.toString((flag & WIDE) !== 0 ? 'utf16le' : 'latin1', start, ends[j]!);
  return (flag & FIELD_HTML) !== 0 ? { html: s } : { text: s };
}
