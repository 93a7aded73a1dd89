/**
 * A small structured logger: one JSON object per line on stderr, pino-style
 * field names. A disabled level costs one comparison. Nothing on the per-page
 * hot path logs; batches and lifecycle events do.
 */
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

/** Routes kafkajs's log creator into ours (kafkajs levels: 1 error, 2 warn, 4 info, 5 debug). */
export function kafkaLogCreator(logger: Logger) {
  return () =>
    ({ level, log }: { namespace: string; level: number; label: string; log: { message: string; [key: string]: unknown } }) => {
      const { message, timestamp: _t, logger: _l, ...rest } = log;
      // kafkajs logs every retried request at ERROR (a transaction begun
      // right after a commit meets CONCURRENT_TRANSACTIONS for a few ms):
      // a retry that is still under way is a warning; the final failure
      // reaches us as a thrown error and is logged there.
      // The coordinator answers CONCURRENT_TRANSACTIONS to the first requests
      // of a transaction begun right after a commit; kafkajs retries them
      // and logs each response at ERROR. That is normal operation: debug.
      if (level === 1 && isConcurrentTransactionsResponse(rest)) logger.debug(`kafka: ${message}`, rest);
      else if (level === 1 && rest.retryCount !== undefined) logger.warn(`kafka: ${message}`, rest);
      else if (level === 1) logger.error(`kafka: ${message}`, rest);
      else if (level === 2) logger.warn(`kafka: ${message}`, rest);
      else if (level === 4) logger.debug(`kafka: ${message}`, rest);
      else logger.debug(`kafka: ${message}`, rest);
    };
}

/** kafkajs's error-level log of a CONCURRENT_TRANSACTIONS response (it is retried). */
function isConcurrentTransactionsResponse(fields: Record<string, unknown>): boolean {
  const error = fields.error;
  return typeof error === 'string' && /concurrent operation on the same transaction|CONCURRENT_TRANSACTIONS/i.test(error);
}
