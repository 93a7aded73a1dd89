/**
 * A crawled page as the core sees it, and the one validation every input path
 * (Kafka Avro, Kafka JSON, the batch CLI's JSON Lines) goes through.
 */
import { DedupError } from '../errors.js';

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

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Decodes UTF-8 strictly: invalid bytes are an error (PAGE_INVALID_UTF8), never replaced. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw new DedupError('PAGE_INVALID_UTF8', `${what} is not valid UTF-8`, { cause: error });
  }
}

/**
 * JavaScript strings can hold lone surrogates (JSON "\ud800"), which are not
 * Unicode text and cannot be encoded as UTF-8; treat them like invalid UTF-8.
 */
export function assertWellFormed(text: string, what: string): void {
  // String.prototype.isWellFormed is Node 20+.
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw new DedupError('PAGE_INVALID_UTF8', `${what} contains lone surrogates (not valid Unicode)`);
  }
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
  if (typeof value === 'string') {
    assertWellFormed(value, field);
    return value;
  }
  if (value instanceof Uint8Array) return decodeUtf8(value, field);
  throw new DedupError('PAGE_INVALID', `${field} must be a string`);
}

/**
 * Validates a decoded record into a CrawledPage. Throws DedupError with
 * PAGE_INVALID, PAGE_INVALID_UTF8 or PAGE_TOO_LARGE.
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
  assertWellFormed(r.id, 'id');
  const url = r.url === undefined || r.url === null ? '' : r.url;
  if (typeof url !== 'string') throw new DedupError('PAGE_INVALID', 'url must be a string');
  checkBytes(url, 'url', MAX_URL_BYTES);
  assertWellFormed(url, 'url');
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
