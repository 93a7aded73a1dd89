/**
 * Pages -> one buffer and back, for the fingerprint pool's workers: the
 * bytes of a chunk go by transfer (one copy of each page, on the calling
 * thread) instead of a structured clone of every string.
 *
 * A page is the string fingerprint() reads (html if it is a string, else
 * text, else ''), written as ISO-8859-1 (one byte a character) when it has
 * no character above U+00FF, else as UTF-16LE code units. Both give back the
 * exact string, lone surrogates included, and the worker gets a one-byte
 * string where the caller had one, which V8 scans faster. UTF-8 would need
 * an encode here and a decode there, each slower than these copies.
 */
import type { PageContent } from './fingerprinter.js';

/** flags: which field the page came from (fingerprint() reads html first), and its encoding. */
const FIELD_TEXT = 1;
const FIELD_HTML = 2;
const WIDE = 4;

/** A character above U+00FF: the page needs UTF-16. */
const ABOVE_LATIN1 = /[^\u0000-\u00ff]/;

function contentOf(page: PageContent | undefined): string {
  const html = page?.html;
  if (typeof html === 'string') return html;
  const text = page?.text;
  return typeof text === 'string' ? text : '';
}

/** Characters of the page fingerprint() reads: what chunk sizes are measured in. */
export function pageLength(page: PageContent | undefined): number {
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
export function encodePages(pages: readonly PageContent[], from: number, to: number): EncodedPages {
  const count = to - from;
  const ends = new Uint32Array(count);
  const flags = new Uint8Array(count);
  let total = 0;
  for (let j = 0; j < count; j++) {
    const page = pages[from + j];
    const s = contentOf(page);
    const field = typeof page?.html === 'string' ? FIELD_HTML : typeof page?.text === 'string' ? FIELD_TEXT : 0;
    const wide = ABOVE_LATIN1.test(s);
    flags[j] = field | (wide ? WIDE : 0);
    total += wide ? 2 * s.length : s.length;
    ends[j] = total;
  }
  const bytes = Buffer.from(new ArrayBuffer(total));
  let at = 0;
  for (let j = 0; j < count; j++) {
    const s = contentOf(pages[from + j]);
    at += bytes.write(s, at, (flags[j]! & WIDE) !== 0 ? 'utf16le' : 'latin1');
  }
  return { bytes: new Uint8Array(bytes.buffer, 0, total), ends, flags };
}

/** Page j of an encoded chunk, as the PageContent fingerprint() is given. */
export function decodePage(bytes: Buffer, ends: Uint32Array, flags: Uint8Array, j: number): PageContent {
  const start = j === 0 ? 0 : ends[j - 1]!;
  const flag = flags[j]!;
  const s = bytes.toString((flag & WIDE) !== 0 ? 'utf16le' : 'latin1', start, ends[j]!);
  return (flag & FIELD_HTML) !== 0 ? { html: s } : { text: s };
}
