/**
 * Boundary codecs for 64-bit fingerprints. Inside the core a fingerprint is
 * two uint32 halves (hi = bits 63..32, lo = bits 31..0) so hot loops never
 * touch BigInt; BigInt and hex exist only here, at the edges (wire, CLI, logs).
 *
 * Wire forms: 16 lower-case hex digits for people, 8 bytes big-endian for Avro
 * `fixed` size 8.
 */
import { DedupError } from '../errors.js';

const HEX_RE = /^[0-9a-fA-F]{16}$/;

export function fingerprintToHex(hi: number, lo: number): string {
  return (hi >>> 0).toString(16).padStart(8, '0') + (lo >>> 0).toString(16).padStart(8, '0');
}

/** Parses 16 hex digits into [hi, lo]. Throws DedupError(PAGE_INVALID) otherwise. */
export function fingerprintFromHex(hex: string): [hi: number, lo: number] {
  if (!HEX_RE.test(hex)) {
    throw new DedupError('PAGE_INVALID', `fingerprint must be 16 hex digits, got ${JSON.stringify(hex.slice(0, 40))}`);
  }
  return [Number.parseInt(hex.slice(0, 8), 16) >>> 0, Number.parseInt(hex.slice(8), 16) >>> 0];
}

export function fingerprintToBytes(hi: number, lo: number, out: Uint8Array = new Uint8Array(8), offset = 0): Uint8Array {
  out[offset] = hi >>> 24;
  out[offset + 1] = (hi >>> 16) & 0xff;
  out[offset + 2] = (hi >>> 8) & 0xff;
  out[offset + 3] = hi & 0xff;
  out[offset + 4] = lo >>> 24;
  out[offset + 5] = (lo >>> 16) & 0xff;
  out[offset + 6] = (lo >>> 8) & 0xff;
  out[offset + 7] = lo & 0xff;
  return out;
}

export function fingerprintFromBytes(bytes: Uint8Array, offset = 0): [hi: number, lo: number] {
  if (bytes.length - offset < 8) {
    throw new DedupError('RECORD_UNDECODABLE', `fingerprint needs 8 bytes, got ${bytes.length - offset}`);
  }
  const hi = ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
  const lo = ((bytes[offset + 4]! << 24) | (bytes[offset + 5]! << 16) | (bytes[offset + 6]! << 8) | bytes[offset + 7]!) >>> 0;
  return [hi, lo];
}

export function fingerprintToBigInt(hi: number, lo: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

/** Population count of a uint32 (SWAR; no table, no allocation). */
export function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Hamming distance of two 64-bit fingerprints given as halves. */
export function hammingDistance(aHi: number, aLo: number, bHi: number, bLo: number): number {
  return popcount32((aHi ^ bHi) >>> 0) + popcount32((aLo ^ bLo) >>> 0);
}
