/**
 * A small structured logger: one JSON object per line on stderr, pino-style
 * field names. A disabled level costs one comparison. Nothing on the per-page
 * hot path logs; batches and lifecycle events do.
 */
import { createRequire } from 'node:module';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

const RANK: Record<LogLevel, number> = { error: 50, warn: 40, info: 30, debug: 20 };

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

export function createLogger(level: LogLevel = 'info', bindings: Record<string, unknown> = {}, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const threshold = RANK[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[lvl] < threshold) return;
    const record: Record<string, unknown> = { level: lvl, time: new Date().toISOString(), ...bindings, msg };
    if (fields) {
      for (const [key, value] of Object.entries(fields)) {
        record[key] = value instanceof Error ? serializeError(value) : value;
      }
    }
    write(`${JSON.stringify(record)}\n`);
  };
  return {
    error: (msg, fields) => emit('error', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    debug: (msg, fields) => emit('debug', msg, fields),
    child: (more) => createLogger(level, { ...bindings, ...more }, write),
  };
}

function serializeError(error: Error): Record<string, unknown> {
  const out: Record<string, unknown> = { type: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) out.code = code;
  if (error.stack) out.stack = error.stack;
  if (error.cause instanceof Error) out.cause = serializeError(error.cause);
  return out;
}

/**
 * kafkajs's protocol error types by their message: its log lines carry the
 * message only, so this is how a line is classified by code, not by wording.
 */
const PROTOCOL_ERROR_TYPES: ReadonlyMap<string, string> = (() => {
  try {
    const { errorCodes } = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as { errorCodes: { type: string; message: string }[] };
    return new Map(errorCodes.map((e) => [e.message, e.type]));
  } catch {
    return new Map();
  }
})();

/**
 * Answers kafkajs gets and handles itself in normal operation, which it still
 * logs at ERROR or WARN:
 * - CONCURRENT_TRANSACTIONS: a transaction begun right after a commit meets it
 *   until the coordinator has finished the previous one (tens of ms); kafkajs
 *   retries the send.
 * - REBALANCE_IN_PROGRESS: a heartbeat or commit while the group rebalances
 *   (a member joined or left); kafkajs rejoins.
 */
export const ROUTINE_KAFKA_ANSWERS: ReadonlySet<string> = new Set(['CONCURRENT_TRANSACTIONS', 'REBALANCE_IN_PROGRESS']);

/** The protocol error type a kafkajs log line reports, from its `error` field or its message ("Failed to send messages: <error>"). */
export function kafkaLogErrorType(message: string, fields: Record<string, unknown>): string | null {
  const candidates = [typeof fields.error === 'string' ? fields.error : '', message, message.slice(message.indexOf(': ') + 2)];
  for (const text of candidates) {
    const type = PROTOCOL_ERROR_TYPES.get(text);
    if (type) return type;
  }
  return null;
}

/** Routes kafkajs's log creator into ours (kafkajs levels: 1 error, 2 warn, 4 info, 5 debug). */
export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: { namespace: string; level: number; label: string; log: { message: string; [key: string]: unknown } }) => {
      const { message, timestamp: _t, logger: _l, ...rest } = log;
      const type = level <= 2 ? kafkaLogErrorType(message, rest) : null;
      // A routine answer (see above) is normal operation: a protocol response
      // or a retry is debug; kafkajs's own note that the group rebalances is info.
      if (type !== null && ROUTINE_KAFKA_ANSWERS.has(type)) {
        if (level === 2 && rest.retryCount === undefined) logger.info(`kafka: ${message}`, rest);
        else logger.debug(`kafka: ${message}`, rest);
      }
      // A retry still under way is a warning; the final failure reaches us as
      // a thrown error and is logged there.
      else if (level === 1 && rest.retryCount !== undefined) logger.warn(`kafka: ${message}`, rest);
      else if (level === 1) logger.error(`kafka: ${message}`, rest);
      else if (level === 2) logger.warn(`kafka: ${message}`, rest);
      else logger.debug(`kafka: ${message}`, rest);
    };
}
