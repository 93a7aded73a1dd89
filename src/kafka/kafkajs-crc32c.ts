/**
 * Makes kafkajs 2.2.4 checksum the record batches it produces with our
 * slicing-by-16 CRC-32C (crc32c.ts) instead of its own bytewise one.
 *
 * Every batch kafkajs produces goes through its v2 record batch encoder
 * (src/protocol/recordBatch/v0/index.js), which runs CRC-32C over the whole
 * batch body with `recordBatch/crc32C`: one table lookup per byte, each
 * waiting on the one before (about 2.2 ns a byte here, 450 MB/s). Every verdict,
 * changelog record and routed record pays it, on the main thread: in a CPU
 * profile of routed instances it was the largest part of kafkajs's per-byte
 * work. Ours gives the same values about 3.4 times as fast
 * (bench/kafka/crc32c.ts).
 *
 * The encoder takes the function once, when it loads (`const crc32C =
 * require('../crc32C')`), so nothing can be swapped on it afterwards. kafkajs
 * loads that encoder lazily, on a connection's first Produce request or first
 * fetched record batch, not when `kafkajs` itself is imported; so the
 * replacement goes into Node's module cache as the exports of
 * `recordBatch/crc32C/index.js` before then, and the encoder requires ours.
 * createKafka applies it before the product's first client exists. If the
 * encoder has already loaded (a client that produced or fetched before), the
 * replacement would do nothing, and this says so by returning false. Applied
 * once, to the kafkajs version it was written for only; another version is
 * left as it is.
 */
import { createRequire } from 'node:module';
import { crc32c } from './crc32c.js';
import { installedKafkajsVersion, PATCHED_KAFKAJS_VERSION } from './kafkajs-version.js';

/** kafkajs's CRC-32C module, the one its encoder requires (internal, so loaded by path). */
export const KAFKAJS_CRC32C_MODULE = 'kafkajs/src/protocol/recordBatch/crc32C/index.js';
/** kafkajs's v2 record batch encoder, which takes the CRC-32C function when it loads. */
export const KAFKAJS_RECORD_BATCH_MODULE = 'kafkajs/src/protocol/recordBatch/v0/index.js';

let inForce = false;

/** Puts our CRC-32C under kafkajs 2.2.4's record batch encoder (once per process); returns whether it is in force. */
export function useFastCrc32cInKafkajs(): boolean {
  if (inForce) return true;
  if (installedKafkajsVersion() !== PATCHED_KAFKAJS_VERSION) return false;
  const require = createRequire(import.meta.url);
  // Too late: the encoder already holds kafkajs's function.
  if (require.cache[require.resolve(KAFKAJS_RECORD_BATCH_MODULE)] !== undefined) return false;
  const crcPath = require.resolve(KAFKAJS_CRC32C_MODULE);
  // Loaded first, so the cache entry is kafkajs's own module record; only its exports change.
  if (typeof require(crcPath) !== 'function') return false;
  const entry = require.cache[crcPath];
  if (entry === undefined) return false;
  entry.exports = crc32c;
  inForce = true;
  return true;
}
