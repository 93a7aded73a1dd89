/**
 * A feature sketch (src/fingerprint/feature-sketch.ts) in the JSON records
 * that carry one: the shard records and the changelog's JSON form. Base64,
 * 88 characters for 64 bytes.
 */
import { DedupError } from '../errors.js';

/** The sketch as base64, and back; undefined / null when there is none. */
export function sketchToWire(sketch: Uint8Array | null | undefined): string | undefined {
  return sketch == null ? undefined : Buffer.from(sketch.buffer, sketch.byteOffset, sketch.byteLength).toString('base64');
}

export function sketchFromWire(sketch: unknown): Uint8Array | null {
  if (sketch === undefined || sketch === null) return null;
  if (typeof sketch !== 'string') throw new DedupError('RECORD_UNDECODABLE', 'sketch is not a base64 string');
  return new Uint8Array(Buffer.from(sketch, 'base64'));
}
