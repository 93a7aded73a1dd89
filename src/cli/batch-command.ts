/**
 * `dedup batch`: JSON Lines pages in (stream order), one verdict line out per
 * input line, in the same order. A bad line gets a line with an `error` field
 * ("CODE: message"), never a crash and never a silent drop; blank lines are
 * skipped (they are not records).
 *
 *   in:  {"id","url","html"|"text","fetchedAt"}
 *   out: {"id","verdict":"novel"|"duplicate","duplicateOf","distance","fingerprint"}
 *        (with "secondStage":"confirmed"|"rejected" when the second stage ran)
 *        {"id","line","error"}
 */
import { createReadStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { DedupError, errorCode } from '../errors.js';
import type { Fingerprinter } from '../fingerprint/index.js';
import { fingerprintToHex } from '../fingerprint/fingerprint-hex.js';
import type { Decider } from '../dedup/decider.js';
import { MAX_ID_BYTES, parseJsonRecord, toCrawledPage } from '../wire/crawled-page.js';
import { readLines } from './line-reader.js';

export interface BatchOptions {
  input: AsyncIterable<Buffer | string>;
  output: Writable;
  decider: Decider;
  fingerprinter: Fingerprinter;
  maxPageBytes: number;
  /** Called every ~2 s with the lines done so far. */
  progress?: (stats: BatchStats) => void;
}

export interface BatchStats {
  lines: number;
  novel: number;
  duplicate: number;
  errors: number;
  seconds: number;
}

function write(output: Writable, line: string): Promise<void> | null {
  return output.write(line) ? null : new Promise((resolve) => output.once('drain', () => resolve()));
}

export async function runBatch(options: BatchOptions): Promise<BatchStats> {
  const { output, decider, fingerprinter, maxPageBytes } = options;
  const stats: BatchStats = { lines: 0, novel: 0, duplicate: 0, errors: 0, seconds: 0 };
  const started = Date.now();
  let lastProgress = started;
  let lineNumber = 0;
  for await (const bytes of readLines(options.input)) {
    lineNumber++;
    if (bytes.length === 0 || (bytes.length < 64 && bytes.toString('latin1').trim() === '')) continue;
    let out: string;
    let id: string | null = null;
    try {
      if (bytes.length > maxPageBytes + 64 * 1024) {
        throw new DedupError('PAGE_TOO_LARGE', `line is ${bytes.length} bytes, over the ${maxPageBytes}-byte page limit`);
      }
      const record = parseJsonRecord(bytes, 'line');
      // An error line names its page, unless the id is itself what is wrong (over the limit).
      const recordId = record && typeof record === 'object' ? (record as { id?: unknown }).id : undefined;
      if (typeof recordId === 'string' && Buffer.byteLength(recordId) <= MAX_ID_BYTES) id = recordId;
      const page = toCrawledPage(record, { maxPageBytes, fallbackFetchedAt: 0 });
      const result = fingerprinter.fingerprint(page.html !== null ? { html: page.html } : { text: page.text ?? '' });
      if (result.empty) throw new DedupError('PAGE_EMPTY', 'page has no text content to fingerprint');
      const verdict = decider.decide({ id: page.id, hi: result.hi, lo: result.lo, short: result.short, fetchedAt: page.fetchedAt, sketch: result.sketch });
      if (verdict.verdict === 'novel') stats.novel++;
      else stats.duplicate++;
      out = JSON.stringify({
        id: verdict.id,
        verdict: verdict.verdict,
        duplicateOf: verdict.duplicateOf,
        distance: verdict.distance,
        fingerprint: fingerprintToHex(verdict.hi, verdict.lo),
        ...(verdict.secondStage === null ? {} : { secondStage: verdict.secondStage }),
      });
    } catch (error) {
      stats.errors++;
      id ??= idFromPrefix(bytes);
      out = JSON.stringify({ id, line: lineNumber, error: `${errorCode(error)}: ${(error as Error).message}` });
    }
    stats.lines++;
    const pending = write(output, `${out}\n`);
    if (pending) await pending;
    if (options.progress && Date.now() - lastProgress >= 2000) {
      lastProgress = Date.now();
      options.progress({ ...stats, seconds: (lastProgress - started) / 1000 });
    }
  }
  stats.seconds = (Date.now() - started) / 1000;
  return stats;
}

const ID_PREFIX = /"id"\s*:\s*"((?:[^"\\]|\\.){1,1024})"/;

/**
 * The page id of a line that was never parsed (too large, or not JSON), read
 * from its first 4 KiB when it is there, so error lines can be matched to
 * their pages by id and not only by line number.
 */
function idFromPrefix(bytes: Buffer): string | null {
  const match = ID_PREFIX.exec(bytes.subarray(0, 4096).toString('utf8'));
  if (!match) return null;
  try {
    return JSON.parse(`"${match[1]}"`) as string;
  } catch {
    return null;
  }
}

export function inputStream(path: string | undefined): AsyncIterable<Buffer> {
  return path && path !== '-' ? createReadStream(path) : (process.stdin as AsyncIterable<Buffer>);
}

