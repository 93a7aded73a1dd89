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

export const MAX_ID_LENGTH = 1024;

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

function parseFetchedAt(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.floor(value);
  if (typeof value === 'bigint' && value >= 0n) return Number(value);
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return ms;
  }
  throw new DedupError('PAGE_INVALID', `fetchedAt must be epoch milliseconds or an ISO-8601 date, got ${JSON.stringify(String(value).slice(0, 60))}`);
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
export function toCrawledPage(record: unknown, options: { maxPageBytes: number; fallbackFetchedAt: number }): CrawledPage {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new DedupError('PAGE_INVALID', 'a page must be an object');
  }
  const r = record as Record<string, unknown>;
  if (typeof r.id !== 'string' || r.id.length === 0) throw new DedupError('PAGE_INVALID', 'id must be a non-empty string');
  if (r.id.length > MAX_ID_LENGTH) throw new DedupError('PAGE_INVALID', `id is longer than ${MAX_ID_LENGTH} characters`);
  assertWellFormed(r.id, 'id');
  const url = r.url === undefined || r.url === null ? '' : r.url;
  if (typeof url !== 'string') throw new DedupError('PAGE_INVALID', 'url must be a string');
  const htmlSize = r.html instanceof Uint8Array ? r.html.byteLength : typeof r.html === 'string' ? Buffer.byteLength(r.html) : 0;
  const textSize = typeof r.text === 'string' ? Buffer.byteLength(r.text) : 0;
  if (htmlSize + textSize > options.maxPageBytes) {
    throw new DedupError('PAGE_TOO_LARGE', `page body is ${htmlSize + textSize} bytes, over the ${options.maxPageBytes}-byte limit`);
  }
  const html = bodyField(r.html, 'html');
  const text = bodyField(r.text, 'text');
  if (html === null && text === null) throw new DedupError('PAGE_INVALID', 'a page needs html or text');
  return { id: r.id, url, fetchedAt: parseFetchedAt(r.fetchedAt, options.fallbackFetchedAt), html, text };
}
