/**
 * Kafka record values in and out: Avro through a Confluent-compatible schema
 * registry (magic byte 0, 4-byte schema id, Avro body), or JSON for people who
 * start without a registry. Input accepts both, whatever we write.
 *
 * Errors are classified here, once: a record that can never decode gets a
 * non-retriable DedupError (it goes to the dead-letter topic), a registry
 * that is down gets a retriable one (the batch is retried, nothing is
 * dead-lettered because of our own outage).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { DedupError } from '../errors.js';
import { fingerprintFromBytes, fingerprintFromHex, fingerprintToBytes, fingerprintToHex } from '../fingerprint/fingerprint-hex.js';
import { decodeUtf8, toCrawledPage, type CrawledPage } from './crawled-page.js';

export const SCHEMA_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'schemas');

export function readSchema(name: 'crawled-page' | 'novel-page' | 'duplicate-page' | 'fingerprint-changelog'): string {
  return readFileSync(join(SCHEMA_DIR, `${name}.avsc`), 'utf8');
}

export interface NovelRecord {
  page: CrawledPage;
  hi: number;
  lo: number;
}

export interface DuplicateRecord {
  page: Pick<CrawledPage, 'id' | 'url' | 'fetchedAt'>;
  hi: number;
  lo: number;
  duplicateOf: string;
  distance: number;
  duplicateOfHi: number | null;
  duplicateOfLo: number | null;
}

/** One changelog entry: enough to rebuild the index and the verdict without deciding again. */
export interface FingerprintChange {
  id: string;
  hi: number;
  lo: number;
  short: boolean;
  duplicateOf: string | null;
  distance: number;
  fetchedAt: number;
  sequence: number;
}

export interface RecordCodec {
  readonly format: 'avro' | 'json';
  decodePage(value: Buffer | null, fallbackFetchedAt: number): Promise<CrawledPage>;
  encodePage(page: CrawledPage): Promise<Buffer>;
  encodeNovel(record: NovelRecord): Promise<Buffer>;
  encodeDuplicate(record: DuplicateRecord): Promise<Buffer>;
  encodeChange(change: FingerprintChange): Promise<Buffer>;
  decodeChange(value: Buffer): Promise<FingerprintChange>;
  /** What a decoder on another thread needs to decode pages and encode novel verdicts exactly like this codec. */
  readonly offload?: CodecOffload;
}

export interface CodecOffload {
  readonly maxPageBytes: number;
  /** Schema id the novel verdicts are written with (novel-page.avsc); 0 in JSON format. */
  readonly novelSchemaId: number;
  /**
   * The writer schema of an Avro record's schema id, as Avro JSON; null when
   * the id names a schema that is not Avro. Throws as decodePage does:
   * SCHEMA_UNKNOWN (no registry, unknown id) or REGISTRY (retriable).
   */
  avroWriterSchema(schemaId: number): Promise<string | null>;
}

export interface CodecTopics {
  pagesTopic: string;
  novelTopic: string;
  duplicateTopic: string;
  fingerprintsTopic: string;
}

export interface CodecOptions {
  /** Null: JSON only (Avro input then fails as SCHEMA_UNKNOWN). */
  registry: SchemaRegistry | null;
  format: 'avro' | 'json';
  topics: CodecTopics;
  maxPageBytes: number;
}

const AVRO_MAGIC = 0;
const OPEN_BRACE = 0x7b;

function isHttpStatus(error: unknown, status: number): boolean {
  return typeof error === 'object' && error !== null && (error as { status?: unknown }).status === status;
}

function firstNonSpace(buffer: Buffer): number {
  for (let i = 0; i < buffer.length && i < 64; i++) {
    const c = buffer[i]!;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0xef && c !== 0xbb && c !== 0xbf) return c;
  }
  return -1;
}

/**
 * The codec the config asks for: Avro through the registry when one is set
 * (outputFormat auto or avro), JSON otherwise. Used by the pipeline and the
 * demo crawler alike, so both always speak the same format.
 */
export function createRecordCodecFromConfig(
  config: CodecTopics & { schemaRegistryUrl: string; outputFormat: 'auto' | 'avro' | 'json'; clientId: string; maxPageBytes: number },
): Promise<RecordCodec> {
  const registry = config.schemaRegistryUrl ? new SchemaRegistry({ host: config.schemaRegistryUrl, clientId: config.clientId }) : null;
  const format = config.outputFormat === 'auto' ? (registry ? 'avro' : 'json') : config.outputFormat;
  return createRecordCodec({ registry, format, topics: config, maxPageBytes: config.maxPageBytes });
}

/** Registers the product's schemas (subject = <topic>-value) and returns the codec. */
export async function createRecordCodec(options: CodecOptions): Promise<RecordCodec> {
  const { registry, format, topics, maxPageBytes } = options;
  if (format === 'avro' && registry === null) throw new DedupError('CONFIG_INVALID', 'avro output needs a schema registry');

  const ids = { page: 0, novel: 0, duplicate: 0, change: 0 };
  if (registry !== null) {
    const register = async (name: Parameters<typeof readSchema>[0], topic: string): Promise<number> => {
      try {
        const { id } = await registry.register({ type: SchemaType.AVRO, schema: readSchema(name) }, { subject: `${topic}-value` });
        return id;
      } catch (error) {
        throw new DedupError('REGISTRY', `registering ${name} under ${topic}-value failed: ${(error as Error).message}`, { cause: error, retriable: true });
      }
    };
    ids.page = await register('crawled-page', topics.pagesTopic);
    ids.novel = await register('novel-page', topics.novelTopic);
    ids.duplicate = await register('duplicate-page', topics.duplicateTopic);
    ids.change = await register('fingerprint-changelog', topics.fingerprintsTopic);
  }

  async function decodeAvro(value: Buffer): Promise<unknown> {
    if (registry === null) throw new DedupError('SCHEMA_UNKNOWN', 'Avro record but no schema registry is configured');
    if (value.length < 5) throw new DedupError('RECORD_UNDECODABLE', `Avro record of ${value.length} bytes is shorter than its 5-byte header`);
    const schemaId = value.readInt32BE(1);
    try {
      await registry.getSchema(schemaId);
    } catch (error) {
      if (isHttpStatus(error, 404)) throw new DedupError('SCHEMA_UNKNOWN', `schema id ${schemaId} is not in the registry`, { cause: error });
      throw new DedupError('REGISTRY', `fetching schema id ${schemaId} failed: ${(error as Error).message}`, { cause: error, retriable: true });
    }
    try {
      return await registry.decode(value);
    } catch (error) {
      throw new DedupError('RECORD_UNDECODABLE', `Avro body does not match schema id ${schemaId}: ${(error as Error).message}`, { cause: error });
    }
  }

  function decodeJson(value: Buffer): unknown {
    const text = decodeUtf8(value, 'record value');
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new DedupError('RECORD_UNDECODABLE', `not valid JSON: ${(error as Error).message}`, { cause: error });
    }
  }

  async function decodeAny(value: Buffer | null): Promise<unknown> {
    if (value === null || value.length === 0) throw new DedupError('RECORD_UNDECODABLE', 'record has no value');
    if (value[0] === AVRO_MAGIC) return decodeAvro(value);
    if (firstNonSpace(value) === OPEN_BRACE) return decodeJson(value);
    throw new DedupError('RECORD_UNDECODABLE', 'record is neither Avro (magic byte 0) nor a JSON object');
  }

  async function encode(id: number, avro: Record<string, unknown>, json: Record<string, unknown>): Promise<Buffer> {
    if (format === 'json') return Buffer.from(JSON.stringify(json));
    try {
      return await registry!.encode(id, avro);
    } catch (error) {
      throw new DedupError('REGISTRY', `encoding with schema id ${id} failed: ${(error as Error).message}`, { cause: error, retriable: true });
    }
  }

  const fp = (hi: number, lo: number): Buffer => Buffer.from(fingerprintToBytes(hi, lo));

  return {
    format,
    offload: {
      maxPageBytes,
      novelSchemaId: ids.novel,
      async avroWriterSchema(schemaId) {
        if (registry === null) throw new DedupError('SCHEMA_UNKNOWN', 'Avro record but no schema registry is configured');
        let schema: unknown;
        try {
          schema = await registry.getSchema(schemaId);
        } catch (error) {
          if (isHttpStatus(error, 404)) throw new DedupError('SCHEMA_UNKNOWN', `schema id ${schemaId} is not in the registry`, { cause: error });
          throw new DedupError('REGISTRY', `fetching schema id ${schemaId} failed: ${(error as Error).message}`, { cause: error, retriable: true });
        }
        const avro = schema as { fromBuffer?: unknown; schema?: (opts: object) => unknown };
        return typeof avro.fromBuffer === 'function' && typeof avro.schema === 'function' ? JSON.stringify(avro.schema({ exportAttrs: true })) : null;
      },
    },
    async decodePage(value, fallbackFetchedAt) {
      if (value !== null && value.length > maxPageBytes + 64 * 1024) {
        throw new DedupError('PAGE_TOO_LARGE', `record is ${value.length} bytes, over the ${maxPageBytes}-byte page limit`);
      }
      return toCrawledPage(await decodeAny(value), { maxPageBytes, fallbackFetchedAt });
    },
    encodePage(page) {
      return encode(
        ids.page,
        { id: page.id, url: page.url, fetchedAt: page.fetchedAt, html: page.html === null ? null : Buffer.from(page.html), text: page.text },
        { id: page.id, url: page.url, fetchedAt: page.fetchedAt, html: page.html, text: page.text },
      );
    },
    encodeNovel({ page, hi, lo }) {
      const hex = fingerprintToHex(hi, lo);
      return encode(
        ids.novel,
        { id: page.id, url: page.url, fetchedAt: page.fetchedAt, fingerprint: fp(hi, lo), fingerprintHex: hex, html: page.html === null ? null : Buffer.from(page.html), text: page.text },
        { id: page.id, url: page.url, fetchedAt: page.fetchedAt, fingerprint: hex, html: page.html, text: page.text },
      );
    },
    encodeDuplicate(r) {
      const hex = fingerprintToHex(r.hi, r.lo);
      const dup = r.duplicateOfHi === null || r.duplicateOfLo === null ? null : { hi: r.duplicateOfHi, lo: r.duplicateOfLo };
      return encode(
        ids.duplicate,
        {
          id: r.page.id, url: r.page.url, fetchedAt: r.page.fetchedAt, duplicateOf: r.duplicateOf, distance: r.distance,
          fingerprint: fp(r.hi, r.lo), fingerprintHex: hex, duplicateOfFingerprint: dup === null ? null : fp(dup.hi, dup.lo),
        },
        {
          id: r.page.id, url: r.page.url, fetchedAt: r.page.fetchedAt, duplicateOf: r.duplicateOf, distance: r.distance,
          fingerprint: hex, duplicateOfFingerprint: dup === null ? null : fingerprintToHex(dup.hi, dup.lo),
        },
      );
    },
    encodeChange(c) {
      return encode(
        ids.change,
        { id: c.id, fingerprint: fp(c.hi, c.lo), short: c.short, duplicateOf: c.duplicateOf, distance: c.distance, fetchedAt: c.fetchedAt, sequence: c.sequence },
        { id: c.id, fingerprint: fingerprintToHex(c.hi, c.lo), short: c.short, duplicateOf: c.duplicateOf, distance: c.distance, fetchedAt: c.fetchedAt, sequence: c.sequence },
      );
    },
    async decodeChange(value) {
      const r = (await decodeAny(value)) as Record<string, unknown>;
      let hi: number;
      let lo: number;
      if (r.fingerprint instanceof Uint8Array) [hi, lo] = fingerprintFromBytes(r.fingerprint);
      else if (typeof r.fingerprint === 'string') [hi, lo] = fingerprintFromHex(r.fingerprint);
      else throw new DedupError('RECORD_UNDECODABLE', 'changelog record has no fingerprint');
      if (typeof r.id !== 'string') throw new DedupError('RECORD_UNDECODABLE', 'changelog record has no id');
      return {
        id: r.id,
        hi,
        lo,
        short: r.short === true,
        duplicateOf: typeof r.duplicateOf === 'string' ? r.duplicateOf : null,
        distance: typeof r.distance === 'number' ? r.distance : 0,
        fetchedAt: typeof r.fetchedAt === 'number' ? r.fetchedAt : 0,
        sequence: typeof r.sequence === 'number' ? r.sequence : -1,
      };
    },
  };
}
