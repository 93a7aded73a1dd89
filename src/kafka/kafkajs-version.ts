/**
 * The kafkajs version this project's corrections of kafkajs internals were written for
 * (request-queue-idle.ts, kafkajs-crc32c.ts), and the version installed: each correction applies
 * only when they are the same, and leaves another version as it is.
 */
import { createRequire } from 'node:module';

/** The kafkajs version whose internals the corrections touch. */
export const PATCHED_KAFKAJS_VERSION = '2.2.4';

/** The installed kafkajs's version, from its package.json. */
export function installedKafkajsVersion(): string {
  return (createRequire(import.meta.url)('kafkajs/package.json') as { version: string }).version;
}
