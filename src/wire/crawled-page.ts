/**
 * A crawled page as the core sees it, and the one validation every input path
 * (Kafka Avro, Kafka JSON, the batch CLI's JSON Lines) goes through.
 */
import { isUtf8 } from 'node:buffer';
import { DedupError } from '../errors.js';
import { decodePageBytes, pageText, startsWithMisreadUtf16Bom, toWellFormedText } from '../fingerprint/page-bytes.js';

export interface CrawledPage {
  readonly id: string;
  readonly url: string;
  /** Milliseconds since the epoch. */
  readonly fetchedAt: number;
  readonly html: string | null;
  readonly text: string | null;
}

/*
 * Every field is bounded here, at decode time, because every field travels
 * on: the verdict records carry id and url (pages.duplicate and the
 * changelog keep the broker's default 1 MiB max.message.bytes), the page
 * store keeps every id in memory, and fetchedAt is stored as uint32 seconds.
 * The body (html + text) is bounded by maxPageBytes.
 *
 * Lengths are UTF-8 bytes, which is what the topics and the store pay for.
 */

/** Page ids are keys (a hash, a UUID, a crawl-db key): 1 KiB is generous. */
export const MAX_ID_BYTES = 1024;

/**
 * 8 KiB: RFC 9110 section 4.1 recommends that senders and recipients support
 * URIs of at least 8000 octets, and Apache (LimitRequestLine 8190) and nginx
 * (large_client_header_buffers 8k) refuse longer request lines by default,
 * so a longer URL could not have been fetched from a default-configured
 * server. Browsers accept much more (Chrome 2 MiB), but crawlers stop well
 * below this (the sitemaps protocol allows 2,048 characters, Scrapy's
 * URLLENGTH_LIMIT is 2,083).
 */
export const MAX_URL_BYTES = 8192;

/**
 * fetchedAt must lie in [1990-01-01T00:00:00Z, decode time + 1 day].
 * - Below: no web page was fetched before 1990, and a small value is almost
 *   always a crawler bug: an unset 0, or epoch seconds sent where
 *   milliseconds are expected (1.7e9 ms is January 1970). It also keeps
 *   negative times out, which the page store's uint32 seconds would wrap to
 *   the 2090s.
 * - Above: a day covers clock skew between crawler and pipeline; a date
 *   further ahead (microseconds sent as milliseconds, a broken clock) would
 *   stop age eviction, which walks pages in decision order and stops at the
 *   first page that is not old enough.
 * Such a page is refused (PAGE_INVALID, a dead letter), not clamped: a clamped
 * date would hide the crawler bug and be a date nobody fetched the page at.
 */
export const MIN_FETCHED_AT_MS = Date.UTC(1990, 0, 1);
export const MAX_FETCHED_AT_AHEAD_MS = 24 * 60 * 60 * 1000;
/** The page store keeps seconds in a uint32: the last storable millisecond. */
const MAX_STORABLE_MS = 0xffffffff * 1000;

/**
 * The id is a key: it must be text exactly as sent. Replacing an invalid
 * byte with U+FFFD, as a page body gets, would make two different byte ids
 * one id. JavaScript strings can also hold lone surrogates (JSON "\ud800"),
 * which are not Unicode text either.
 */
function assertIdWellFormed(id: string): void {
  // String.prototype.isWellFormed is Node 20+.
  if (!(id as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw new DedupError('PAGE_INVALID_UTF8', 'id contains lone surrogates (not valid Unicode); ids are kept exactly, never repaired');
  }
}

/**
 * A page body (html or text) as the text a browser would show: bytes are
 * decoded as the WHATWG Encoding Standard decodes them (BOM sniff, then UTF-8
 * with U+FFFD for every invalid sequence), a string's lone surrogates become
 * U+FFFD, and a UTF-16 page a crawler read as Latin-1 is decoded as UTF-16
 * (pageText in src/fingerprint/page-bytes.ts). A real page with a few broken
 * bytes, NULs, controls, a run of noise in front or a stray BOM is still a
 * page and gets a verdict. What is not a page at all, a binary format or
 * mostly junk (isBinaryContent, on the bytes when there are bytes), is
 * refused as PAGE_BINARY.
 */
export function decodePageText(value: Uint8Array | string, what: string): string {
  const text = pageText(value);
  if (text === undefined) {
    throw new DedupError('PAGE_BINARY', `${what} is binary content, not text (a binary format, or over 1/8 control bytes and invalid UTF-8 in its first 8 KiB)`);
  }
  return text;
}

const UTF8_BOM_LENGTH = 3;
const REPLACEMENT_CHARACTER_UTF8 = Buffer.from([0xef, 0xbf, 0xbd]);
/** UTF-8 with replacement that keeps a BOM: it decodes pieces from the middle of a record. */
const utf8KeepingBom = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

function hasUtf8Bom(bytes: Uint8Array): boolean {
  return bytes.length >= UTF8_BOM_LENGTH && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * Whether a body's bytes are exactly the UTF-8 of the text decodePageText reads from them: valid
 * UTF-8, with no byte order mark and no UTF-16 signature read as Latin-1. A novel verdict then
 * carries the bytes as they came, instead of encoding the text back into the same bytes.
 */
export function isBodyReadAsIs(bytes: Uint8Array): boolean {
  return !hasUtf8Bom(bytes) && !startsWithMisreadUtf16Bom(bytes) && isUtf8(bytes);
}

function idOf(record: unknown): unknown {
  return typeof record === 'object' && record !== null && !Array.isArray(record) ? (record as { id?: unknown }).id : undefined;
}

/**
 * The record decoded like decodePageBytes, except that each invalid sequence
 * becomes `mark` instead of U+FFFD; a U+FFFD the record really holds stays.
 * The bytes EF BF BD always decode to that U+FFFD, whatever comes before
 * (EF is never a continuation byte, so it ends any broken sequence before
 * it and starts its own), so decoding the pieces between them one by one
 * gives decodePageBytes' text with only the replacements it made marked.
 */
function decodeMarkingReplacements(bytes: Uint8Array, mark: string): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: string[] = [];
  let start = hasUtf8Bom(buffer) ? UTF8_BOM_LENGTH : 0;
  for (;;) {
    const at = buffer.indexOf(REPLACEMENT_CHARACTER_UTF8, start);
    parts.push(utf8KeepingBom.decode(buffer.subarray(start, at < 0 ? buffer.length : at)).replaceAll('\ufffd', mark));
    if (at < 0) return parts.join('');
    parts.push('\ufffd');
    start = at + REPLACEMENT_CHARACTER_UTF8.length;
  }
}

/**
 * A JSON record (a Kafka record value, a batch line) into its value, one
 * function for every entry point. JSON is UTF-8 (RFC 8259 section 8.1): the
 * bytes are decoded with decodePageBytes, so a page body with broken bytes
 * (a truncated character, a Latin-1 byte) is read with U+FFFD in their place
 * and decided, not refused. The page id is the exception: an id that held an
 * invalid byte is refused (PAGE_INVALID_UTF8), because two ids that differ
 * only in their broken bytes would otherwise become one id. Throws
 * RECORD_UNDECODABLE when the text is not JSON.
 */
export function parseJsonRecord(bytes: Uint8Array, what: string): unknown {
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    throw new DedupError('RECORD_UNDECODABLE', `${what} starts with a UTF-16 byte order mark; JSON records are UTF-8`);
  }
  const text = decodePageBytes(bytes);
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (error) {
    throw new DedupError('RECORD_UNDECODABLE', `not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const id = idOf(record);
  // Only an id with a U+FFFD in a record that was not valid UTF-8 can hold a
  // replacement: parse again with replacements marked, and see whether the
  // id changes. (The mark is a plain character, so the JSON parses the same.)
  if (typeof id === 'string' && id.includes('\ufffd') && !isUtf8(bytes)) {
    if (idOf(JSON.parse(decodeMarkingReplacements(bytes, '?'))) !== id) {
      throw new DedupError('PAGE_INVALID_UTF8', 'id is not valid UTF-8; ids are kept exactly, never repaired');
    }
  }
  return record;
}

/** An ISO-8601 date or date-time; Date.parse alone also takes "1" or "May 5". */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

function isoDate(ms: number): string {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms);
}

/**
 * The page's fetch time in epoch milliseconds. A page without one gets the
 * fallback (the Kafka record timestamp; 0 in the batch CLI, whose lines have
 * none), which must be a storable time but may be older than 1990: 0 is how
 * a caller says "no time known".
 */
function parseFetchedAt(value: unknown, fallback: number, now: number): number {
  const latest = Math.min(now + MAX_FETCHED_AT_AHEAD_MS, MAX_STORABLE_MS);
  if (value === undefined || value === null) {
    if (Number.isFinite(fallback) && fallback >= 0 && fallback <= latest) return Math.floor(fallback);
    throw new DedupError('PAGE_INVALID', `page has no fetchedAt and its record timestamp ${isoDate(fallback)} is not a time between 1970 and ${isoDate(latest)}`);
  }
  let ms: number;
  if (typeof value === 'number') ms = Math.floor(value);
  else if (typeof value === 'bigint') ms = Number(value);
  else if (typeof value === 'string' && ISO_DATE.test(value.trim())) ms = Date.parse(value.trim());
  else ms = Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new DedupError('PAGE_INVALID', `fetchedAt must be epoch milliseconds or an ISO-8601 date, got ${JSON.stringify(String(value).slice(0, 60))}`);
  }
  if (ms < MIN_FETCHED_AT_MS || ms > latest) {
    throw new DedupError(
      'PAGE_INVALID',
      `fetchedAt ${isoDate(ms)} is outside ${isoDate(MIN_FETCHED_AT_MS)} .. ${isoDate(latest)} (epoch milliseconds expected; seconds or microseconds?)`,
    );
  }
  return ms;
}

function checkBytes(value: string, field: string, max: number): void {
  // One UTF-16 unit is at most 3 UTF-8 bytes, so a short string cannot be over.
  if (value.length * 3 <= max) return;
  const bytes = Buffer.byteLength(value);
  if (bytes > max) throw new DedupError('PAGE_INVALID', `${field} is ${bytes} bytes, over the ${max}-byte limit`);
}

function bodyField(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || value instanceof Uint8Array) return decodePageText(value, field);
  throw new DedupError('PAGE_INVALID', `${field} must be a string`);
}

/**
 * Validates a decoded record into a CrawledPage. Throws DedupError with
 * PAGE_INVALID, PAGE_INVALID_UTF8 (the id only), PAGE_TOO_LARGE or
 * PAGE_BINARY. The url is read like a body (lone surrogates become U+FFFD):
 * it is carried on, never used as a key.
 */
export function toCrawledPage(
  record: unknown,
  options: {
    maxPageBytes: number;
    /** Used when the page has no fetchedAt: the record timestamp, in epoch milliseconds. */
    fallbackFetchedAt: number;
    /** Decode time in epoch milliseconds (default Date.now()); fetchedAt may be at most a day after it. */
    now?: number;
  },
): CrawledPage {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new DedupError('PAGE_INVALID', 'a page must be an object');
  }
  const r = record as Record<string, unknown>;
  if (typeof r.id !== 'string' || r.id.length === 0) throw new DedupError('PAGE_INVALID', 'id must be a non-empty string');
  checkBytes(r.id, 'id', MAX_ID_BYTES);
  assertIdWellFormed(r.id);
  if (r.url !== undefined && r.url !== null && typeof r.url !== 'string') throw new DedupError('PAGE_INVALID', 'url must be a string');
  const url = typeof r.url === 'string' ? toWellFormedText(r.url) : '';
  checkBytes(url, 'url', MAX_URL_BYTES);
  const htmlSize = r.html instanceof Uint8Array ? r.html.byteLength : typeof r.html === 'string' ? Buffer.byteLength(r.html) : 0;
  const textSize = typeof r.text === 'string' ? Buffer.byteLength(r.text) : 0;
  if (htmlSize + textSize > options.maxPageBytes) {
    throw new DedupError('PAGE_TOO_LARGE', `page body is ${htmlSize + textSize} bytes, over the ${options.maxPageBytes}-byte limit`);
  }
  const html = bodyField(r.html, 'html');
  const text = bodyField(r.text, 'text');
  if (html === null && text === null) throw new DedupError('PAGE_INVALID', 'a page needs html or text');
  const fetchedAt = parseFetchedAt(r.fetchedAt, options.fallbackFetchedAt, options.now ?? Date.now());
  return { id: r.id, url, fetchedAt, html, text };
}
