/**
 * The one error hierarchy of the product. Every error we throw on purpose is a
 * DedupError with a code from the closed set below; callers classify by
 * `code` (or `instanceof`), never by message text. Third-party errors are
 * wrapped with `cause` so the original stack survives.
 *
 * `retriable` follows kafkajs: true when the same operation may succeed if
 * tried again (a broker hiccup), false when retrying cannot help (bad input,
 * bad config).
 */

export const ERROR_CODES = {
  /** Configuration failed validation at start-up. */
  CONFIG_INVALID: 'configuration failed validation',
  /** A record could not be decoded (not Avro, not JSON, wrong shape). */
  RECORD_UNDECODABLE: 'record could not be decoded',
  /** A record named a schema id the registry does not know. */
  SCHEMA_UNKNOWN: 'record names an unknown schema id',
  /** A page failed validation (missing id, bad field types). */
  PAGE_INVALID: 'page failed validation',
  /**
   * A page id is not valid UTF-8 (or holds lone surrogates). Ids are keys and
   * are never repaired; a body with broken bytes is decoded leniently instead.
   */
  PAGE_INVALID_UTF8: 'page id is not valid UTF-8',
  /** A page body is a binary format or mostly junk bytes (isBinaryContent), not text. */
  PAGE_BINARY: 'page body is binary content, not text',
  /** A page has no content features (empty, only markup or script, binary junk). */
  PAGE_EMPTY: 'page has no content to fingerprint',
  /** A page is larger than the configured limit. */
  PAGE_TOO_LARGE: 'page exceeds the size limit',
  /** A table plan cannot answer the requested k, or is inconsistent. */
  PLAN_INVALID: 'table plan is invalid',
  /** The index refused an operation (capacity, unknown ref). */
  INDEX_LIMIT: 'index limit reached',
  /** A snapshot file is corrupt, truncated or of an unknown version. */
  SNAPSHOT_INVALID: 'snapshot is invalid',
  /** Kafka (broker, producer, consumer, transaction) failed. */
  KAFKA: 'Kafka operation failed',
  /** The schema registry failed or refused a schema. */
  REGISTRY: 'schema registry operation failed',
  /** Another instance holds partitions of an unsharded index. */
  GROUP_NOT_EXCLUSIVE: 'another instance is in the consumer group of an unsharded index',
  /** A worker thread (decode and fingerprint) died; the process must restart. */
  WORKER_FAILED: 'a worker thread (decode and fingerprint) failed',
  /** Command-line usage error. */
  USAGE: 'command-line usage error',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface DedupErrorOptions {
  cause?: unknown;
  retriable?: boolean;
  /** Structured context for logs (never page bodies). */
  details?: Record<string, unknown>;
}

export class DedupError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: DedupErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DedupError';
    this.code = code;
    this.retriable = options.retriable ?? false;
    this.details = options.details;
  }
}

/** Configuration errors carry every problem found, not just the first. */
export class ConfigError extends DedupError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super('CONFIG_INVALID', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = Object.freeze([...problems]);
  }
}

/** The code of any error: ours, or 'KAFKA'/'REGISTRY' style for wrapped ones, else 'UNKNOWN'. */
export function errorCode(error: unknown): ErrorCode | 'UNKNOWN' {
  return error instanceof DedupError ? error.code : 'UNKNOWN';
}
