/**
 * The seam between the pure state encoders and whatever holds the bytes (a
 * buffer in tests, a file handle in the snapshot writer): encoders yield
 * bounded chunks, decoders pull exact byte counts. No part of a snapshot ever
 * has to sit in one buffer, so state past Node's 2-4 GiB buffer limit streams.
 */
import { DedupError } from '../errors.js';

/** Default upper bound of one chunk an encoder yields or a decoder pulls. */
export const STREAM_CHUNK_BYTES = 4 << 20;

export interface ByteSource {
  /** Bytes left in this part; decoders check sizes against it before allocating. */
  readonly remaining: number;
  /** Fills `target` completely with the next bytes; throws SNAPSHOT_INVALID when fewer remain. */
  readInto(target: Uint8Array): void;
}

export function bytesOf(a: Uint32Array | Uint16Array | Float64Array | Uint8Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Yields a typed array as byte views of at most `chunkBytes` (a multiple of 8). */
export function* slicesOf(a: Uint32Array | Float64Array | Uint8Array, chunkBytes: number): Generator<Uint8Array> {
  const bytes = bytesOf(a);
  const step = Math.max(8, chunkBytes - (chunkBytes % 8));
  for (let at = 0; at < bytes.byteLength; at += step) yield bytes.subarray(at, Math.min(bytes.byteLength, at + step));
}

/** Reads `target` through `source` in slices of at most `chunkBytes`. */
export function readSliced(source: ByteSource, target: Uint8Array, chunkBytes = STREAM_CHUNK_BYTES): void {
  if (target.byteLength > source.remaining) throw new DedupError('SNAPSHOT_INVALID', 'snapshot part is truncated');
  for (let at = 0; at < target.byteLength; at += chunkBytes) {
    source.readInto(target.subarray(at, Math.min(target.byteLength, at + chunkBytes)));
  }
}

/** A source over one in-memory buffer (any alignment). */
export function bufferSource(buffer: Uint8Array, what = 'snapshot'): ByteSource & { readonly offset: number } {
  let at = 0;
  return {
    get remaining() {
      return buffer.byteLength - at;
    },
    get offset() {
      return at;
    },
    readInto(target: Uint8Array): void {
      if (at + target.byteLength > buffer.byteLength) throw new DedupError('SNAPSHOT_INVALID', `${what} is truncated`);
      target.set(buffer.subarray(at, at + target.byteLength));
      at += target.byteLength;
    },
  };
}

/** Joins chunks into one buffer (small states and tests only). */
export function concatChunks(chunks: Iterable<Uint8Array>): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  for (const c of chunks) {
    parts.push(Uint8Array.prototype.slice.call(c));
    total += c.byteLength;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
