/**
 * CRC-32C (Castagnoli), the checksum of Kafka's v2 record batch: "The CRC
 * covers the data from the attributes to the end of the batch (i.e. all the
 * bytes that follow the CRC). [...] The CRC-32C (Castagnoli) polynomial is
 * used for the computation." (Kafka protocol guide, Record Batch). Reflected
 * polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF; the check
 * value of the nine bytes "123456789" is 0xE3069283 (RFC 3720, B.4).
 *
 * Slicing-by-16 (Kounavis and Berry, "A Systematic Approach to Building High
 * Performance Software-based CRC Generators", 2005): table k maps a byte to
 * its CRC contribution k bytes ahead of the register, so 16 bytes fold in with
 * 16 independent lookups instead of a chain of 16 dependent ones. kafkajs's own
 * implementation is the bytewise loop (one lookup per byte, each waiting on
 * the last); this one is about 3.4 times as fast on the same buffers
 * (bench/kafka/crc32c.ts). Bytes are read one at a time, so any Uint8Array
 * (a Buffer slice at any byteOffset) works and the host's endianness does not
 * matter (reading 32-bit words instead would need aligned views and a
 * little-endian host).
 */

/** CRC-32C's reflected polynomial. */
const CASTAGNOLI_REFLECTED = 0x82f63b78;
/** Bytes folded in per step of the main loop. */
const SLICES = 16;

/** SLICES tables of 256 entries, one after another: entry [k * 256 + b] is byte b's contribution k bytes ahead. */
const TABLES = buildTables();

function buildTables(): Int32Array {
  const tables = new Int32Array(SLICES * 256);
  for (let b = 0; b < 256; b++) {
    let crc = b;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ CASTAGNOLI_REFLECTED : crc >>> 1;
    tables[b] = crc;
  }
  for (let b = 0; b < 256; b++) {
    let crc = tables[b]!;
    for (let k = 1; k < SLICES; k++) {
      crc = (crc >>> 8) ^ tables[crc & 0xff]!;
      tables[k * 256 + b] = crc;
    }
  }
  return tables;
}

/** The CRC-32C of the bytes, as an unsigned 32-bit integer. */
export function crc32c(bytes: Uint8Array): number {
  const t = TABLES;
  const length = bytes.length;
  const blocksEnd = length - (length % SLICES);
  let crc = -1;
  let i = 0;
  for (; i < blocksEnd; i += SLICES) {
    const first = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    crc =
      t[3840 + (first & 0xff)]! ^
      t[3584 + ((first >>> 8) & 0xff)]! ^
      t[3328 + ((first >>> 16) & 0xff)]! ^
      t[3072 + (first >>> 24)]! ^
      t[2816 + bytes[i + 4]!]! ^
      t[2560 + bytes[i + 5]!]! ^
      t[2304 + bytes[i + 6]!]! ^
      t[2048 + bytes[i + 7]!]! ^
      t[1792 + bytes[i + 8]!]! ^
      t[1536 + bytes[i + 9]!]! ^
      t[1280 + bytes[i + 10]!]! ^
      t[1024 + bytes[i + 11]!]! ^
      t[768 + bytes[i + 12]!]! ^
      t[512 + bytes[i + 13]!]! ^
      t[256 + bytes[i + 14]!]! ^
      t[bytes[i + 15]!]!;
  }
  for (; i < length; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}
