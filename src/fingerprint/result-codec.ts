/**
 * FingerprintResult[] <-> one Uint32Array (7 words and the 64-byte feature
 * sketch per page), so worker
 * threads hand results back as a single transferable buffer instead of
 * structured-cloning an object per page.
 */
import type { FingerprintResult } from './fingerprinter.js';
import { SKETCH_BINS } from './feature-sketch.js';

const FIELD_WORDS = 7;
export const WORDS_PER_RESULT = FIELD_WORDS + SKETCH_BINS / 4;
const SHORT = 1;
const EMPTY = 2;

export function encodeResult(r: FingerprintResult, out: Uint32Array, i: number): void {
  const o = i * WORDS_PER_RESULT;
  out[o] = r.hi;
  out[o + 1] = r.lo;
  out[o + 2] = r.exactHi;
  out[o + 3] = r.exactLo;
  out[o + 4] = r.features;
  out[o + 5] = r.textLength;
  out[o + 6] = (r.short ? SHORT : 0) | (r.empty ? EMPTY : 0);
  new Uint8Array(out.buffer, out.byteOffset + (o + FIELD_WORDS) * 4, SKETCH_BINS).set(r.sketch);
}

export function decodeResult(buf: Uint32Array, i: number): FingerprintResult {
  const o = i * WORDS_PER_RESULT;
  const flags = buf[o + 6]!;
  return {
    hi: buf[o]!,
    lo: buf[o + 1]!,
    exactHi: buf[o + 2]!,
    exactLo: buf[o + 3]!,
    features: buf[o + 4]!,
    textLength: buf[o + 5]!,
    short: (flags & SHORT) !== 0,
    empty: (flags & EMPTY) !== 0,
    // A view, not a copy: the buffer came by transfer and is this chunk's own.
    sketch: new Uint8Array(buf.buffer, buf.byteOffset + (o + FIELD_WORDS) * 4, SKETCH_BINS),
  };
}
