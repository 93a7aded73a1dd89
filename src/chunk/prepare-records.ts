/**
 * What a prepare worker does to a chunk's record values (prepare-worker.ts
 * runs it on a worker thread; prepare-pool.ts sends the chunks). Per record:
 * decode (JSON, or Avro with the writer schema the calling thread resolved),
 * validate (toCrawledPage), fingerprint, and encode the novel verdict for the
 * fresh fingerprint, so the page body never crosses back to the consuming
 * thread. Pure of threads, so a bench can time it in one thread
 * (bench/pipeline/prepare-cost.ts).
 *
 * Decoding mirrors RecordCodec.decodePage (src/wire/record-codec.ts): same
 * checks in the same order, same codes, same messages. The records that need
 * the registry or are cheap errors (no value, too large, an Avro header we
 * cannot resolve here) never reach this file; test/unit/consumers holds the
 * two paths together over generated records.
 */
import avro from 'avsc';
import { DedupError } from '../errors.js';
import { createFingerprinter, fingerprintToBytes, fingerprintToHex, useJiebaTables, type FeatureOptions, type JiebaTables } from '../fingerprint/index.js';
import { WORDS_PER_RESULT, encodeResult } from '../fingerprint/result-codec.js';
import { assertAvroIdIsUtf8 } from '../wire/avro-page-id.js';
import { isBodyReadAsIs, parseJsonRecord, toCrawledPage, type CrawledPage } from '../wire/crawled-page.js';

export interface PrepareWorkerData {
  readonly features: Partial<FeatureOptions>;
  readonly format: 'avro' | 'json';
  readonly maxPageBytes: number;
  readonly novelSchemaId: number;
  /** novel-page.avsc, the schema the codec registered under novelSchemaId. */
  readonly novelSchema: string;
  /** The pool's jieba tables (shared memory), when the features segment Chinese with jieba; the worker reads none of its own. */
  readonly jieba?: JiebaTables | null;
}

export interface PrepareRequest {
  readonly id: number;
  /** The record values, back to back, in a buffer of their own (transferred). */
  readonly values: ArrayBuffer;
  /** End offset of each value in `values`. */
  readonly ends: Uint32Array;
  /** Per record, the timestamp that stands in for a missing fetchedAt. */
  readonly fallbackFetchedAt: Float64Array;
  /** Avro writer schemas this worker has not been sent before: [schema id, schema JSON]. */
  readonly schemas: [number, string][];
}

/** A page that decoded, with its fingerprint in `results` and its novel verdict in `novel`. */
export interface PreparedMeta {
  readonly id: string;
  readonly url: string;
  readonly fetchedAt: number;
}

/** Why a record cannot be decided. code null: an error of ours, not the record's. */
export interface PrepareFault {
  readonly code: string | null;
  readonly message: string;
}

export interface PrepareReply {
  readonly id: number;
  readonly outcomes: (PreparedMeta | PrepareFault)[];
  /** Fingerprints, WORDS_PER_RESULT words per record (src/fingerprint/result-codec.ts); zeros for faults. */
  readonly results: Uint32Array;
  /** Novel verdict values, back to back (transferred). */
  readonly novel: ArrayBuffer;
  /** Per record: start and length of its novel value in `novel`; length -1 when there is none. */
  readonly novelSpans: Int32Array;
}


const AVRO_MAGIC = 0;
const OPEN_BRACE = 0x7b;
const AVRO_HEADER = 5;

function firstNonSpace(buffer: Uint8Array): number {
  for (let i = 0; i < buffer.length && i < 64; i++) {
    const c = buffer[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0xef && c !== 0xbb && c !== 0xbf) return c;
  }
  return -1;
}

/** Prepares chunks as a worker does; the returned function is the worker's whole work per request. */
export async function createRecordPreparer(data: PrepareWorkerData): Promise<(req: PrepareRequest) => PrepareReply> {
  if (data.jieba != null) useJiebaTables(data.jieba);
  const fingerprinter = await createFingerprinter(data.features);
  const novelType = avro.Type.forSchema(JSON.parse(data.novelSchema));
  const writerTypes = new Map<number, avro.Type>();
  const novelHeader = Buffer.alloc(AVRO_HEADER);
  novelHeader.writeInt32BE(data.novelSchemaId, 1);

  const decode = (value: Buffer): unknown => {
    if (value.length > data.maxPageBytes + 64 * 1024) {
      throw new DedupError('PAGE_TOO_LARGE', `record is ${value.length} bytes, over the ${data.maxPageBytes}-byte page limit`);
    }
    if (value.length === 0) throw new DedupError('RECORD_UNDECODABLE', 'record has no value');
    if (value[0] === AVRO_MAGIC) {
      const schemaId = value.readInt32BE(1);
      const type = writerTypes.get(schemaId);
      // The calling thread resolves every id before it sends a record: a miss is ours.
      if (type === undefined) throw new Error(`no writer schema was sent for schema id ${schemaId}`);
      let decoded: unknown;
      try {
        decoded = type.fromBuffer(value.subarray(AVRO_HEADER));
      } catch (error) {
        throw new DedupError('RECORD_UNDECODABLE', `Avro body does not match schema id ${schemaId}: ${(error as Error).message}`, { cause: error });
      }
      assertAvroIdIsUtf8(type, value.subarray(AVRO_HEADER), decoded);
      return decoded;
    }
    if (firstNonSpace(value) !== OPEN_BRACE) throw new DedupError('RECORD_UNDECODABLE', 'record is neither Avro (magic byte 0) nor a JSON object');
    return parseJsonRecord(value, 'record value');
  };

  /**
   * The bytes RecordCodec.encodeNovel writes for this page and fingerprint, after the Avro header
   * (novelHeader) when the format is Avro; null if it would throw. htmlBytes are the record's html
   * bytes when they are exactly the UTF-8 of page.html (isBodyReadAsIs): carried as they came,
   * they save encoding the text back into them.
   */
  const encodeNovelBody = (page: CrawledPage, hi: number, lo: number, htmlBytes: Buffer | null): Uint8Array | null => {
    const hex = fingerprintToHex(hi, lo);
    if (data.format === 'json') {
      return Buffer.from(JSON.stringify({ id: page.id, url: page.url, fetchedAt: page.fetchedAt, fingerprint: hex, html: page.html, text: page.text }));
    }
    try {
      return novelType.toBuffer({
        id: page.id,
        url: page.url,
        fetchedAt: page.fetchedAt,
        fingerprint: Buffer.from(fingerprintToBytes(hi, lo)),
        fingerprintHex: hex,
        html: page.html === null ? null : (htmlBytes ?? Buffer.from(page.html)),
        text: page.text,
      });
    } catch {
      // The codec reports this as a registry error; the consuming thread encodes it again to do exactly that.
      return null;
    }
  };
  const novelPrefix = data.format === 'json' ? new Uint8Array(0) : novelHeader;

  return (req: PrepareRequest): PrepareReply => {
    for (const [schemaId, schema] of req.schemas) writerTypes.set(schemaId, avro.Type.forSchema(JSON.parse(schema)));
    const count = req.ends.length;
    const outcomes: (PreparedMeta | PrepareFault)[] = new Array(count);
    const results = new Uint32Array(count * WORDS_PER_RESULT);
    const novelSpans = new Int32Array(count * 2).fill(-1);
    const novelParts: Uint8Array[] = [];
    let novelBytes = 0;
    let start = 0;
    for (let i = 0; i < count; i++) {
      const end = req.ends[i]!;
      const value = Buffer.from(req.values, start, end - start);
      start = end;
      let page: CrawledPage;
      let htmlBytes: Buffer | null = null;
      try {
        const record = decode(value);
        page = toCrawledPage(record, { maxPageBytes: data.maxPageBytes, fallbackFetchedAt: req.fallbackFetchedAt[i]! });
        const html = (record as { html?: unknown }).html;
        if (Buffer.isBuffer(html) && isBodyReadAsIs(html)) htmlBytes = html;
      } catch (error) {
        outcomes[i] = { code: error instanceof DedupError ? error.code : null, message: error instanceof Error ? error.message : String(error) };
        continue;
      }
      let r;
      try {
        r = fingerprinter.fingerprint(page.html !== null ? { html: page.html } : { text: page.text ?? '' });
      } catch (error) {
        outcomes[i] = { code: null, message: `fingerprinting failed: ${error instanceof Error ? error.message : String(error)}` };
        continue;
      }
      encodeResult(r, results, i);
      outcomes[i] = { id: page.id, url: page.url, fetchedAt: page.fetchedAt };
      // An empty page is dead-lettered (PAGE_EMPTY): it never gets a verdict.
      const body = r.empty ? null : encodeNovelBody(page, r.hi, r.lo, htmlBytes);
      if (body !== null) {
        // Header and body go into the reply buffer apart: no concatenated copy of every value.
        novelSpans[2 * i] = novelBytes;
        novelSpans[2 * i + 1] = novelPrefix.length + body.length;
        if (novelPrefix.length > 0) novelParts.push(novelPrefix);
        novelParts.push(body);
        novelBytes += novelPrefix.length + body.length;
      }
    }
    // A fresh buffer of our own: small Buffers share a pooled ArrayBuffer, which must not be transferred.
    const novel = new Uint8Array(novelBytes);
    let at = 0;
    for (const part of novelParts) {
      novel.set(part, at);
      at += part.length;
    }
    return { id: req.id, outcomes, results, novel: novel.buffer, novelSpans };
  };
}
