/**
 * Kafka record values in and out: Avro through a Confluent-compatible schema
 * registry (magic byte 0, 4-byte schema id, Avro body), or JSON for people who
 * start without a registry. Input accepts both, whatever we write.
 *
 * Errors are classified here, once: a record that can never decode gets a
 * non-retriable DedupError (it goes to the dead-letter topic), a registry
 * that is down gets a retriable one (the batch is retried, nothing is
 * dead-lettered because of our own outage). Every registry call has a
 * deadline (see registry.ts), so an outage is an error, never a silent stall.
 *
 * Subjects: the pipeline registers only the subjects of the topics it writes
 * (novel, duplicate, changelog). The input subject belongs to the crawler: the
 * pipeline reads each record with the schema id the record names, and the
 * page schema is registered only by a producer of pages (the demo crawler),
 * on its first encodePage.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { DedupError } from '../errors.js';
import { fingerprintFromBytes, fingerprintFromHex, fingerprintToBytes, fingerprintToHex } from '../fingerprint/fingerprint-hex.js';
import avro from 'avsc';
import { assertAvroIdIsUtf8 } from './avro-page-id.js';
import { sketchFromWire, sketchToWire } from './sketch-wire.js';
import { parseJsonRecord, toCrawledPage, type CrawledPage } from './crawled-page.js';
import { createRegistryClient, DEFAULT_REGISTRY_TIMEOUT_MS, wrapRegistry, type RegistryClient, type RegistryHealth } from './registry.js';

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
  /** Feature sketch (SKETCH_BINS bytes) when the second stage is on, else null. */
  sketch?: Uint8Array | null;
}

export interface RecordCodec {
  readonly format: 'avro' | 'json';
  decodePage(value: Buffer | null, fallbackFetchedAt: number): Promise<CrawledPage>;
  encodePage(page: CrawledPage): Promise<Buffer>;
  encodeNovel(record: NovelRecord): Promise<Buffer>;
  encodeDuplicate(record: DuplicateRecord): Promise<Buffer>;
  encodeChange(change: FingerprintChange): Promise<Buffer>;
  decodeChange(value: Buffer): Promise<FingerprintChange>;
  /** When the registry last answered and how many calls failed since; zeros without a registry. */
  registryHealth(): RegistryHealth;
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
  /**
   * Null: JSON only (Avro input then fails as SCHEMA_UNKNOWN). A bare
   * SchemaRegistry gets deadlines of registryTimeoutMs.
   */
  registry: RegistryClient | SchemaRegistry | null;
  registryTimeoutMs?: number;
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
/** The registry settings and output format as configured ('auto': Avro when a registry is set). */
export interface RegistryCodecOptions extends CodecTopics {
  schemaRegistryUrl: string;
  schemaRegistryTimeoutMs: number;
  schemaRegistryUsername: string;
  schemaRegistryPassword: string;
  schemaRegistryCaFile: string;
  outputFormat: 'auto' | 'avro' | 'json';
  clientId: string;
  maxPageBytes: number;
}

export function createRecordCodecFromConfig(config: RegistryCodecOptions): Promise<RecordCodec> {
  const registry = config.schemaRegistryUrl
    ? createRegistryClient({
        url: config.schemaRegistryUrl,
        clientId: config.clientId,
        timeoutMs: config.schemaRegistryTimeoutMs,
        username: config.schemaRegistryUsername,
        password: config.schemaRegistryPassword,
        caFile: config.schemaRegistryCaFile,
      })
    : null;
  const format = config.outputFormat === 'auto' ? (registry ? 'avro' : 'json') : config.outputFormat;
  return createRecordCodec({ registry, format, topics: config, maxPageBytes: config.maxPageBytes });
}

function registrationFailed(error: unknown, name: string, subject: string): DedupError {
  if (error instanceof DedupError) return error;
  const status = (error as { status?: unknown }).status;
  // 409: the subject's compatibility rule refuses our schema; 422: the
  // registry finds it invalid. Neither gets better by retrying.
  const refused = status === 409 || status === 422;
  return new DedupError('REGISTRY', `registering ${name} under ${subject} failed: ${(error as Error).message}`, { cause: error, retriable: !refused });
}

/** Registers the schemas of the subjects the product writes (subject = <topic>-value) and returns the codec. */
export async function createRecordCodec(options: CodecOptions): Promise<RecordCodec> {
  const { format, topics, maxPageBytes } = options;
  if (format === 'avro' && options.registry === null) throw new DedupError('CONFIG_INVALID', 'avro output needs a schema registry');
  const client: RegistryClient | null =
    options.registry instanceof SchemaRegistry
      ? wrapRegistry(options.registry, { timeoutMs: options.registryTimeoutMs ?? DEFAULT_REGISTRY_TIMEOUT_MS, displayUrl: 'the schema registry' })
      : options.registry;
  const registry = client?.registry ?? null;

  const register = async (name: Parameters<typeof readSchema>[0], topic: string): Promise<number> => {
    const subject = `${topic}-value`;
    try {
      return await client!.registerSchema(subject, readSchema(name));
    } catch (error) {
      throw registrationFailed(error, name, subject);
    }
  };
  const ids = { novel: 0, duplicate: 0, change: 0 };
  if (format === 'avro') {
    ids.novel = await register('novel-page', topics.novelTopic);
    ids.duplicate = await register('duplicate-page', topics.duplicateTopic);
    ids.change = await register('fingerprint-changelog', topics.fingerprintsTopic);
  }
  // The crawler's subject: registered on the first page written, never by a reader.
  let pageId: Promise<number> | null = null;
  const pageSchemaId = (): Promise<number> => {
    pageId ??= register('crawled-page', topics.pagesTopic).catch((error: unknown) => {
      pageId = null;
      throw error;
    });
    return pageId;
  };

  async function decodeAvro(value: Buffer): Promise<unknown> {
    if (registry === null) throw new DedupError('SCHEMA_UNKNOWN', 'Avro record but no schema registry is configured');
    if (value.length < 5) throw new DedupError('RECORD_UNDECODABLE', `Avro record of ${value.length} bytes is shorter than its 5-byte header`);
    const schemaId = value.readInt32BE(1);
    let writer: unknown;
    try {
      writer = await client!.call(`fetching schema id ${schemaId}`, () => registry.getSchema(schemaId));
    } catch (error) {
      if (error instanceof DedupError) throw error;
      if (isHttpStatus(error, 404)) throw new DedupError('SCHEMA_UNKNOWN', `schema id ${schemaId} is not in the registry`, { cause: error });
      throw new DedupError('REGISTRY', `fetching schema id ${schemaId} failed: ${(error as Error).message}`, { cause: error, retriable: true });
    }
    let decoded: unknown;
    try {
      decoded = await registry.decode(value);
    } catch (error) {
      throw new DedupError('RECORD_UNDECODABLE', `Avro body does not match schema id ${schemaId}: ${(error as Error).message}`, { cause: error });
    }
    if (writer instanceof avro.Type) assertAvroIdIsUtf8(writer, value.subarray(5), decoded);
    return decoded;
  }

  async function decodeAny(value: Buffer | null): Promise<unknown> {
    if (value === null || value.length === 0) throw new DedupError('RECORD_UNDECODABLE', 'record has no value');
    if (value[0] === AVRO_MAGIC) return decodeAvro(value);
    if (firstNonSpace(value) === OPEN_BRACE) return parseJsonRecord(value, 'record value');
    throw new DedupError('RECORD_UNDECODABLE', 'record is neither Avro (magic byte 0) nor a JSON object');
  }

  async function encode(id: number | (() => Promise<number>), avro: Record<string, unknown>, json: Record<string, unknown>): Promise<Buffer> {
    if (format === 'json') return Buffer.from(JSON.stringify(json));
    const schemaId = typeof id === 'number' ? id : await id();
    try {
      return await client!.call(`encoding with schema id ${schemaId}`, () => registry!.encode(schemaId, avro));
    } catch (error) {
      if (error instanceof DedupError) throw error;
      throw new DedupError('REGISTRY', `encoding with schema id ${schemaId} failed: ${(error as Error).message}`, { cause: error, retriable: true });
    }
  }

  const fp = (hi: number, lo: number): Buffer => Buffer.from(fingerprintToBytes(hi, lo));

  return {
    format,
    registryHealth: () => client?.health() ?? { lastSuccessAt: 0, consecutiveFailures: 0 },
    offload: {
      maxPageBytes,
      novelSchemaId: ids.novel,
      async avroWriterSchema(schemaId) {
        if (registry === null) throw new DedupError('SCHEMA_UNKNOWN', 'Avro record but no schema registry is configured');
        let schema: unknown;
        try {
          schema = await client!.call(`fetching schema id ${schemaId}`, () => registry.getSchema(schemaId));
        } catch (error) {
          if (error instanceof DedupError) throw error;
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
        pageSchemaId,
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
        {
          id: c.id, fingerprint: fp(c.hi, c.lo), short: c.short, duplicateOf: c.duplicateOf, distance: c.distance, fetchedAt: c.fetchedAt, sequence: c.sequence,
          sketch: c.sketch == null ? null : Buffer.from(c.sketch.buffer, c.sketch.byteOffset, c.sketch.byteLength),
        },
        {
          id: c.id, fingerprint: fingerprintToHex(c.hi, c.lo), short: c.short, duplicateOf: c.duplicateOf, distance: c.distance, fetchedAt: c.fetchedAt, sequence: c.sequence,
          ...(c.sketch == null ? {} : { sketch: sketchToWire(c.sketch) }),
        },
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
        // Present only when the second stage wrote one.
        ...(r.sketch instanceof Uint8Array ? { sketch: new Uint8Array(r.sketch) } : typeof r.sketch === 'string' ? { sketch: sketchFromWire(r.sketch)! } : {}),
      };
    },
  };
}
