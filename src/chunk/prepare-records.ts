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
import { createFingerprinter, fingerprintToBytes, fingerprintToHex, type FeatureOptions } from '../fingerprint/index.js';
import { WORDS_PER_RESULT, encodeResult } from '../fingerprint/result-codec.js';
import { assertAvroIdIsUtf8 } from '../wire/avro-page-id.js';
import { parseJsonRecord, toCrawledPage, type CrawledPage } from '../wire/crawled-page.js';

export interface PrepareWorkerData {
  readonly features: Partial<FeatureOptions>;
  readonly format: 'avro' | 'json';
  readonly maxPageBytes: number;
  readonly novelSchemaId: number;
  /** novel-page.avsc, the schema the codec registered under novelSchemaId. */
  readonly novelSchema: string;
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

  /** The bytes RecordCodec.encodeNovel writes for this page and fingerprint; null if it would throw. */
  const encodeNovel = (page: CrawledPage, hi: number, lo: number): Uint8Array | null => {
    const hex = fingerprintToHex(hi, lo);
    if (data.format === 'json') {
      return Buffer.from(JSON.stringify({ id: page.id, url: page.url, fetchedAt: page.fetchedAt, fingerprint: hex, html: page.html, text: page.text }));
    }
    try {
      const body = novelType.toBuffer({
        id: page.id,
        url: page.url,
        fetchedAt: page.fetchedAt,
        fingerprint: Buffer.from(fingerprintToBytes(hi, lo)),
        fingerprintHex: hex,
        html: page.html === null ? null : Buffer.from(page.html),
        text: page.text,
      });
      return Buffer.concat([novelHeader, body]);
    } catch {
      // The codec reports this as a registry error; the consuming thread encodes it again to do exactly that.
      return null;
    }
  };

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
      try {
        page = toCrawledPage(decode(value), { maxPageBytes: data.maxPageBytes, fallbackFetchedAt: req.fallbackFetchedAt[i]! });
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
      const novel = r.empty ? null : encodeNovel(page, r.hi, r.lo);
      if (novel !== null) {
        novelSpans[2 * i] = novelBytes;
        novelSpans[2 * i + 1] = novel.length;
        novelParts.push(novel);
        novelBytes += novel.length;
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
