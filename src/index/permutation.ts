/**
 * A table's permutation compiled to a few shift-and-mask segments.
 *
 * key32 = the top 32 bits of the permuted fingerprint: the chosen blocks in
 * listed order, then the other blocks in index order. Each segment copies w
 * bits starting at bit s (LSB = 0 of the 64-bit value) to bit d of key32;
 * blocks adjacent both in the source and in the permuted order share one
 * segment, so an identity table is a single segment.
 */
import type { TablePlan } from './plan.js';

export interface CompiledTable {
  /** [s, w, d, mask] per segment. */
  readonly segments: Int32Array;
  /** Chosen blocks as a mask over the original bits. */
  readonly maskHi: number;
  readonly maskLo: number;
  /** Prefix bits, and how many of them lie in key32. */
  readonly prefixBits: number;
  readonly prefix32: number;
  /** key32 mask of the prefix, and of the bits below it. */
  readonly prefixMask: number;
  readonly rejectMask: number;
}

export interface CompiledPlan {
  readonly tables: readonly CompiledTable[];
  /** maskHi, maskLo interleaved, for the first-table rule. */
  readonly masks: Int32Array;
}

function topMask(bits: number): number {
  return bits >= 32 ? 0xffffffff : bits <= 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

export function compilePlan(plan: TablePlan): CompiledPlan {
  const widths = plan.blockWidths;
  const b = widths.length;
  // LSB shift of each block in the 64-bit value.
  const shift: number[] = [];
  let top = 64;
  for (let i = 0; i < b; i++) {
    top -= widths[i]!;
    shift.push(top);
  }
  const tables: CompiledTable[] = [];
  const masks = new Int32Array(plan.tables.length * 2);
  plan.tables.forEach((spec, t) => {
    const order = [...spec.blocks];
    for (let i = 0; i < b; i++) if (!spec.blocks.includes(i)) order.push(i);
    const segs: number[][] = [];
    let dst = 0; // bits of key32 filled, from the top
    for (const i of order) {
      if (dst >= 32) break;
      const w = Math.min(widths[i]!, 32 - dst);
      const s = shift[i]! + (widths[i]! - w);
      const d = 32 - dst - w;
      const last = segs[segs.length - 1];
      if (last !== undefined && last[0] === s + w && last[2] === d + w) {
        last[0] = s;
        last[1] += w;
        last[2] = d;
      } else {
        segs.push([s, w, d]);
      }
      dst += w;
    }
    const segments = new Int32Array(segs.length * 4);
    segs.forEach(([s, w, d], j) => {
      segments[j * 4] = s!;
      segments[j * 4 + 1] = w!;
      segments[j * 4 + 2] = d!;
      segments[j * 4 + 3] = w! >= 32 ? -1 : (1 << w!) - 1;
    });
    let maskHi = 0;
    let maskLo = 0;
    for (const i of spec.blocks) {
      for (let bit = shift[i]!; bit < shift[i]! + widths[i]!; bit++) {
        if (bit >= 32) maskHi |= 1 << (bit - 32);
        else maskLo |= 1 << bit;
      }
    }
    masks[t * 2] = maskHi;
    masks[t * 2 + 1] = maskLo;
    const prefix32 = Math.min(spec.prefixBits, 32);
    const prefixMask = topMask(prefix32);
    tables.push({
      segments,
      maskHi: maskHi >>> 0,
      maskLo: maskLo >>> 0,
      prefixBits: spec.prefixBits,
      prefix32,
      prefixMask,
      rejectMask: ~prefixMask >>> 0,
    });
  });
  return { tables, masks };
}

/** Top 32 bits of the permuted fingerprint, as an unsigned number. */
export function key32(segments: Int32Array, hi: number, lo: number): number {
  let key = 0;
  for (let j = 0; j < segments.length; j += 4) {
    const s = segments[j]!;
    const w = segments[j + 1]!;
    let v: number;
    if (s >= 32) v = hi >>> (s - 32);
    else if (s + w <= 32) v = lo >>> s;
    else v = (lo >>> s) | (hi << (32 - s));
    key |= (v & segments[j + 3]!) << segments[j + 2]!;
  }
  return key >>> 0;
}

/** Index of the first table whose chosen blocks are all equal under diff, or -1. */
export function firstCleanTable(masks: Int32Array, diffHi: number, diffLo: number): number {
  for (let j = 0; j < masks.length; j += 2) {
    if (((diffHi & masks[j]!) | (diffLo & masks[j + 1]!)) === 0) return j >> 1;
  }
  return -1;
}

/** Index of the first table of `tables` (a bit each) whose chosen blocks are all equal under diff, or -1. */
export function firstCleanTableOf(masks: Int32Array, diffHi: number, diffLo: number, tables: number): number {
  for (let j = 0; j < masks.length; j += 2) {
    if ((tables & (1 << (j >> 1))) !== 0 && ((diffHi & masks[j]!) | (diffLo & masks[j + 1]!)) === 0) return j >> 1;
  }
  return -1;
}

/** Bit counts of all 16-bit values: one load per candidate in the scan loops. */
export const POP16: Uint8Array = (() => {
  const t = new Uint8Array(65536);
  for (let i = 1; i < 65536; i++) t[i] = t[i >>> 1]! + (i & 1);
  return t;
})();
