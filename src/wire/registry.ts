/**
 * The schema registry client: one place for its URL, credentials, TLS,
 * timeouts and health.
 *
 * - Every call has a deadline (`timeoutMs`). A registry that stops answering
 *   (a stopped process, a full accept queue) would otherwise hang the HTTP
 *   request forever, and with it every decode that waits on the same schema
 *   id: consumption would stall with no error, no log line and no metric. A
 *   missed deadline is a retriable REGISTRY error, like any outage.
 * - Credentials come from the options or from the URL's userinfo
 *   (https://user:pass@host). Either way they are sent as HTTP basic auth and
 *   stripped from the URL the client sees, so no error or log line carries
 *   them; `redactUrl` is what anything that prints the URL must use.
 * - A CA file makes the client trust a private CA for an https registry.
 * - `health()` says when the registry last answered and how many calls in a
 *   row have failed since, for readiness and a gauge.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { DedupError } from '../errors.js';
import { redactUrl } from './redact-url.js';

export { redactUrl };

export interface RegistryClientOptions {
  url: string;
  clientId: string;
  /** Deadline of one registry call, retries included. */
  timeoutMs: number;
  username: string;
  password: string;
  /** PEM file of a CA to trust for an https registry; empty = the system store. */
  caFile: string;
}

export interface RegistryHealth {
  /** Epoch ms of the last call the registry answered; 0 = none yet. */
  lastSuccessAt: number;
  /** Calls that failed (timeout, connection error, 5xx, 401/403) since the last answer. */
  consecutiveFailures: number;
}

export interface RegistryClient {
  readonly registry: SchemaRegistry;
  /** The URL without credentials, safe to log. */
  readonly displayUrl: string;
  /**
   * Runs one registry operation under the deadline and records its outcome.
   * A missed deadline rejects with a retriable REGISTRY DedupError; any other
   * error is passed through unchanged for the caller to classify.
   */
  call<T>(what: string, operation: () => Promise<T>): Promise<T>;
  /**
   * Registers an Avro schema under a subject the caller owns and returns its
   * id. Unlike SchemaRegistry.register it neither demands nor sets a
   * compatibility level: the subject's own (or the registry's global) level
   * decides, and an incompatible schema is refused by the registry (409).
   */
  registerSchema(subject: string, schema: string): Promise<number>;
  health(): RegistryHealth;
}

/** Splits https://user:pass@host/path into the bare URL and the decoded credentials. */
export function splitUserinfo(url: string): { url: string; username: string; password: string } {
  const parsed = new URL(url);
  const username = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  parsed.username = '';
  parsed.password = '';
  // URL keeps a trailing slash on a bare origin; the client appends paths itself.
  const bare = parsed.toString().replace(/\/$/, '');
  return { url: bare, username, password };
}

function status(error: unknown): number | null {
  const s = typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  return typeof s === 'number' ? s : null;
}

/**
 * Whether an error means the registry did not answer properly. A 404 is an
 * answer (an unknown id or subject); an error with no HTTP status is ours
 * (a value that does not match its schema), not the registry's.
 */
function isRegistryFailure(error: unknown): boolean {
  if (error instanceof DedupError) return error.code === 'REGISTRY';
  const s = status(error);
  return s !== null && s !== 404 && s !== 409 && s !== 422;
}

/** The slice of the library's HTTP client we use; see registerSchema for why. */
interface SubjectApi {
  Subject: { register(params: { subject: string; body: { schema: string } }): Promise<{ data(): { id: number } }> };
}

/** Defaults for a SchemaRegistry built elsewhere (tests, benchmarks). */
export const DEFAULT_REGISTRY_TIMEOUT_MS = 5000;

export function createRegistryClient(options: RegistryClientOptions): RegistryClient {
  const fromUrl = splitUserinfo(options.url);
  const username = options.username || fromUrl.username;
  const password = options.username ? options.password : fromUrl.password;
  const auth = username || password ? { username, password } : undefined;
  const agent = fromUrl.url.startsWith('https:') && options.caFile ? new Agent({ ca: readFileSync(options.caFile), keepAlive: true }) : undefined;
  const timeoutMs = options.timeoutMs;
  // Each HTTP request also gets the deadline, so a request to a registry
  // that never answers is aborted rather than left open.
  const requestTimeout = () => ({
    prepareRequest: (next: () => Promise<{ enhance(extras: { timeout: number }): unknown }>) => next().then((request) => request.enhance({ timeout: timeoutMs })),
  });
  const registry = new SchemaRegistry({
    host: fromUrl.url,
    clientId: options.clientId,
    auth,
    agent,
    middlewares: [requestTimeout as never],
  });
  return wrapRegistry(registry, { timeoutMs, displayUrl: redactUrl(options.url) });
}

/** Deadlines, health and owned-subject registration around a SchemaRegistry. */
export function wrapRegistry(registry: SchemaRegistry, options: { timeoutMs: number; displayUrl: string }): RegistryClient {
  const { timeoutMs, displayUrl } = options;
  const health: RegistryHealth = { lastSuccessAt: 0, consecutiveFailures: 0 };

  async function call<T>(what: string, operation: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DedupError('REGISTRY', `${what}: the schema registry at ${displayUrl} did not answer within ${timeoutMs} ms`, { retriable: true })),
        timeoutMs,
      );
    });
    try {
      const result = await Promise.race([operation(), deadline]);
      health.lastSuccessAt = Date.now();
      health.consecutiveFailures = 0;
      return result;
    } catch (error) {
      if (isRegistryFailure(error)) health.consecutiveFailures++;
      else if (status(error) !== null) {
        health.lastSuccessAt = Date.now();
        health.consecutiveFailures = 0;
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  // SchemaRegistry.register insists that the subject's compatibility level
  // equals the one it is given (BACKWARD by default) and sets that level on a
  // subject's first registration: a registry run at FULL, or a subject its
  // owner keeps at another level, would stop start-up. The library's own
  // HTTP client (with our auth, TLS and deadline) registers without either.
  const api = (registry as unknown as { api?: SubjectApi }).api;
  if (!api?.Subject?.register) throw new DedupError('REGISTRY', 'the schema registry client has no register endpoint (library version changed?)');

  return {
    registry,
    displayUrl,
    call,
    registerSchema(subject, schema) {
      return call(`registering a schema under ${subject}`, async () => (await api.Subject.register({ subject, body: { schema } })).data().id);
    },
    health: () => ({ ...health }),
  };
}
