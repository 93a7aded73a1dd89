/**
 * Seeded benchmark inputs, shared with the C baseline and the Python peer
 * through one binary file: u32 magic 'SHBD', u32 n, u32 q, u32 0, then n
 * stored and q query fingerprints as (hi, lo) uint32 pairs, little-endian.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { mulberry32Uint32 } from '../../src/mulberry32.js';

export const DATA_MAGIC = 0x44424853;

/** 32-bit words from the shared mulberry32 (src/mulberry32.ts). */
export const rng = mulberry32Uint32;

export interface Dataset {
  hi: Uint32Array;
  lo: Uint32Array;
  qhi: Uint32Array;
  qlo: Uint32Array;
}

function flip(hi: number, lo: number, bits: number, next: () => number): [number, number] {
  const seen = new Set<number>();
  while (seen.size < bits) seen.add(next() & 63);
  for (const b of seen) {
    if (b >= 32) hi ^= 1 << (b - 32);
    else lo ^= 1 << b;
  }
  return [hi >>> 0, lo >>> 0];
}

/**
 * n uniform random stored fingerprints, `planted` of them near copies (1..3
 * bits) of earlier ones; q queries, 10% planted at 1..3 bits of a stored one.
 */
export function makeDataset(n: number, q: number, seed: number, plantedShare = 0): Dataset {
  const next = rng(seed);
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    if (plantedShare > 0 && i > 0 && next() / 2 ** 32 < plantedShare) {
      const j = next() % i;
      [hi[i], lo[i]] = flip(hi[j]!, lo[j]!, 1 + (next() % 3), next);
    } else {
      hi[i] = next();
      lo[i] = next();
    }
  }
  const qhi = new Uint32Array(q);
  const qlo = new Uint32Array(q);
  for (let i = 0; i < q; i++) {
    if (i % 10 === 0 && n > 0) {
      const j = next() % n;
      [qhi[i], qlo[i]] = flip(hi[j]!, lo[j]!, 1 + (next() % 3), next);
    } else {
      qhi[i] = next();
      qlo[i] = next();
    }
  }
  return { hi, lo, qhi, qlo };
}

export function writeDataset(path: string, d: Dataset): void {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'w');
  writeSync(fd, new Uint8Array(new Uint32Array([DATA_MAGIC, d.hi.length, d.qhi.length, 0]).buffer));
  const chunk = 1 << 20;
  for (const [h, l] of [[d.hi, d.lo], [d.qhi, d.qlo]] as const) {
    for (let s = 0; s < h.length; s += chunk) {
      const e = Math.min(h.length, s + chunk);
      const buf = new Uint32Array((e - s) * 2);
      for (let i = s; i < e; i++) {
        buf[(i - s) * 2] = h[i]!;
        buf[(i - s) * 2 + 1] = l[i]!;
      }
      writeSync(fd, new Uint8Array(buf.buffer));
    }
  }
  closeSync(fd);
}

export function readDataset(path: string): Dataset {
  const bytes = readFileSync(path);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  if (words[0] !== DATA_MAGIC) throw new Error(`${path}: not a benchmark dataset`);
  const n = words[1]!;
  const q = words[2]!;
  const d: Dataset = { hi: new Uint32Array(n), lo: new Uint32Array(n), qhi: new Uint32Array(q), qlo: new Uint32Array(q) };
  for (let i = 0; i < n; i++) {
    d.hi[i] = words[4 + i * 2]!;
    d.lo[i] = words[5 + i * 2]!;
  }
  for (let i = 0; i < q; i++) {
    d.qhi[i] = words[4 + (n + i) * 2]!;
    d.qlo[i] = words[5 + (n + i) * 2]!;
  }
  return d;
}

export function ensureDataset(path: string, n: number, q: number, seed: number, plantedShare = 0): void {
  if (!existsSync(path)) writeDataset(path, makeDataset(n, q, seed, plantedShare));
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
