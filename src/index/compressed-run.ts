/**
 * Compressed sorted runs (Manku, Jain, Das Sarma, WWW 2007, section 3.2):
 *
 *   "the table is broken into blocks of B = 1024 bytes; the first fingerprint
 *   of a block is stored in full; each next one is stored as the Huffman code
 *   of h, the position of the most significant 1-bit of its XOR with the
 *   previous fingerprint, followed by the h bits to the right of that bit;
 *   the key of a block is its last fingerprint; a lookup searches the block
 *   keys, then decompresses one block (occasionally more)."
 *
 * What is compressed here is a table's sorted key32 column (the top 32 bits
 * of the permuted fingerprint), with each entry's ref alongside as a fixed
 * ceil(log2(span)) bit offset from the run's first ref. Symbol s = 32 -
 * clz32(key XOR previous): 0 for an equal key, else the MSB of the XOR is bit
 * s - 1 and the s - 1 bits below it follow. One Huffman code per run, length
 * limited to 12 bits so decoding is a single table lookup. Bits are packed
 * MSB-first in uint32 words; every block is 256 words.
 */
import { popcount32 } from '../fingerprint/fingerprint-hex.js';
import type { QueryResult } from './query-result.js';

export interface Verifier {
  verify(ref: number, hi: number, lo: number, k: number, t: number, out: QueryResult | null, tables: number): void;
}

const BLOCK_WORDS = 256;
const BLOCK_BITS = BLOCK_WORDS * 32;
const SYMBOLS = 33;
const MAX_CODE = 12;

export interface CompressedData {
  /** Blocks of BLOCK_WORDS words, plus one padding word. */
  readonly words: Uint32Array;
  /** Last key32 of each block. */
  readonly blockLast: Uint32Array;
  /** Index of each block's first entry; one extra for the end. */
  readonly blockStart: Uint32Array;
  /** (symbol << 4) | code length, indexed by the next MAX_CODE bits. */
  readonly decode: Uint16Array;
  readonly codes: Uint32Array;
  readonly lengths: Uint8Array;
  readonly refBase: number;
  readonly refBits: number;
  readonly byteLength: number;
}

function symbolOf(prev: number, key: number): number {
  return 32 - Math.clz32(prev ^ key);
}

/** Huffman code lengths, limited to MAX_CODE bits by flattening the counts. */
function codeLengths(freq: Float64Array): Uint8Array {
  const f = Float64Array.from(freq, (x) => x);
  for (;;) {
    const lengths = new Uint8Array(SYMBOLS);
    const nodes: { w: number; syms: number[] }[] = [];
    for (let s = 0; s < SYMBOLS; s++) if (f[s]! > 0) nodes.push({ w: f[s]!, syms: [s] });
    if (nodes.length === 1) lengths[nodes[0]!.syms[0]!] = 1;
    while (nodes.length > 1) {
      nodes.sort((a, b) => a.w - b.w);
      const a = nodes.shift()!;
      const b = nodes.shift()!;
      for (const s of a.syms) lengths[s]!++;
      for (const s of b.syms) lengths[s]!++;
      nodes.push({ w: a.w + b.w, syms: [...a.syms, ...b.syms] });
    }
    if (Math.max(...lengths) <= MAX_CODE) return lengths;
    for (let s = 0; s < SYMBOLS; s++) if (f[s]! > 0) f[s] = Math.ceil(f[s]! / 4);
  }
}

/** Canonical codes from lengths, and the MAX_CODE-bit decode table. */
function canonical(lengths: Uint8Array): { codes: Uint32Array; decode: Uint16Array } {
  const codes = new Uint32Array(SYMBOLS);
  const decode = new Uint16Array(1 << MAX_CODE);
  let code = 0;
  for (let len = 1; len <= MAX_CODE; len++) {
    for (let s = 0; s < SYMBOLS; s++) {
      if (lengths[s] !== len) continue;
      codes[s] = code;
      const from = code << (MAX_CODE - len);
      const to = (code + 1) << (MAX_CODE - len);
      for (let i = from; i < to; i++) decode[i] = (s << 4) | len;
      code++;
    }
    code <<= 1;
  }
  return { codes, decode };
}

class BitWriter {
  words: Uint32Array;
  pos = 0;
  constructor(words: number) {
    this.words = new Uint32Array(words);
  }
  /** Appends the low n bits of v (0 <= n <= 32). */
  write(v: number, n: number): void {
    if (n === 0) return;
    if (n < 32) v &= (1 << n) - 1;
    if ((this.pos >>> 5) + 2 > this.words.length) {
      const grown = new Uint32Array(this.words.length * 2);
      grown.set(this.words);
      this.words = grown;
    }
    const i = this.pos >>> 5;
    const off = this.pos & 31;
    const room = 32 - off;
    if (n <= room) {
      this.words[i]! |= (v << (room - n)) >>> 0;
    } else {
      this.words[i]! |= v >>> (n - room);
      this.words[i + 1]! |= (v << (32 - (n - room))) >>> 0;
    }
    this.pos += n;
  }
}

/** The 32 bits starting at bit pos. */
function peek32(words: Uint32Array, pos: number): number {
  const i = pos >>> 5;
  const off = pos & 31;
  return off === 0 ? words[i]! : ((words[i]! << off) | (words[i + 1]! >>> (32 - off))) >>> 0;
}

function take(words: Uint32Array, pos: number, n: number): number {
  return n === 0 ? 0 : peek32(words, pos) >>> (32 - n);
}

export function buildCompressed(keys: Uint32Array, refs: Uint32Array, n: number): CompressedData {
  let refBase = 0xffffffff;
  let refMax = 0;
  for (let i = 0; i < n; i++) {
    const r = refs[i]!;
    if (r < refBase) refBase = r;
    if (r > refMax) refMax = r;
  }
  const span = refMax - refBase;
  const refBits = span === 0 ? 0 : 32 - Math.clz32(span);
  const freq = new Float64Array(SYMBOLS);
  for (let i = 1; i < n; i++) freq[symbolOf(keys[i - 1]!, keys[i]!)]!++;
  if (n < 2) freq[0] = 1;
  const lengths = codeLengths(freq);
  const { codes, decode } = canonical(lengths);

  const w = new BitWriter(Math.max(BLOCK_WORDS + 1, Math.ceil((n * (refBits + 20)) / 32) + BLOCK_WORDS));
  const blockLast: number[] = [];
  const blockStart: number[] = [];
  let blockEnd = 0;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    const ref = refs[i]! - refBase;
    let cost = 0;
    let s = 0;
    if (blockStart.length > 0) {
      s = symbolOf(prev, key);
      cost = lengths[s]! + (s > 0 ? s - 1 : 0) + refBits;
    }
    if (blockStart.length === 0 || w.pos + cost > blockEnd) {
      if (blockStart.length > 0) {
        blockLast.push(prev);
        w.pos = blockEnd;
      }
      blockStart.push(i);
      blockEnd = w.pos + BLOCK_BITS;
      w.write(key, 32);
      w.write(ref, refBits);
    } else {
      w.write(codes[s]!, lengths[s]!);
      if (s > 1) w.write(key, s - 1);
      w.write(ref, refBits);
    }
    prev = key;
  }
  if (n > 0) blockLast.push(prev);
  blockStart.push(n);
  const used = n === 0 ? 1 : blockEnd / 32 + 1;
  const words = new Uint32Array(used);
  words.set(w.words.subarray(0, Math.min(used, w.words.length)));
  const data = {
    words,
    blockLast: Uint32Array.from(blockLast),
    blockStart: Uint32Array.from(blockStart),
    decode,
    codes,
    lengths,
    refBase,
    refBits,
    byteLength: 0,
  };
  data.byteLength =
    words.byteLength + data.blockLast.byteLength + data.blockStart.byteLength + decode.byteLength + codes.byteLength + lengths.byteLength;
  return data;
}

/**
 * Probes one compressed run: entries with lowKey <= key32 <= highKey are
 * candidates; those passing the early reject go to the verifier. Returns the
 * number of candidates.
 */
export function probeCompressed(
  c: CompressedData,
  lowKey: number,
  highKey: number,
  qk: number,
  rej: number,
  k: number,
  v: Verifier,
  t: number,
  hi: number,
  lo: number,
  out: QueryResult | null,
  tables: number,
): number {
  const { words, decode, refBits, refBase, blockStart, blockLast } = c;
  const nBlocks = blockLast.length;
  let b = 0;
  let top = nBlocks;
  while (b < top) {
    const mid = (b + top) >>> 1;
    if (blockLast[mid]! < lowKey) b = mid + 1;
    else top = mid;
  }
  let candidates = 0;
  for (; b < nBlocks; b++) {
    let pos = b * BLOCK_BITS;
    let key = words[pos >>> 5]!;
    pos += 32;
    const end = blockStart[b + 1]!;
    for (let i = blockStart[b]!; i < end; i++) {
      if (i > blockStart[b]!) {
        const w = peek32(words, pos);
        const e = decode[w >>> (32 - MAX_CODE)]!;
        const len = e & 15;
        const s = e >>> 4;
        if (s > 0) {
          const m = s - 1;
          const low = m === 0 ? 0 : len + m <= 32 ? (w << len) >>> (32 - m) : take(words, pos + len, m);
          const high = s === 32 ? 0 : (key >>> s) << s;
          key = (high | (1 << m) | low) >>> 0;
          pos += len + m;
        } else {
          pos += len;
        }
      }
      if (key > highKey) return candidates;
      if (key >= lowKey) {
        candidates++;
        if (popcount32((key ^ qk) & rej) <= k) v.verify(take(words, pos, refBits) + refBase, hi, lo, k, t, out, tables);
      }
      pos += refBits;
    }
  }
  return candidates;
}

/** Sequential decoder over a whole compressed run (for merges). */
export class CompressedReader {
  key = 0;
  ref = 0;
  private block = -1;
  private i = 0;
  private pos = 0;
  constructor(private readonly c: CompressedData) {}

  /** Decodes the next entry into key/ref; the caller bounds the count. */
  next(): void {
    const c = this.c;
    const words = c.words;
    if (this.block < 0 || this.i === c.blockStart[this.block + 1]) {
      this.block++;
      this.i = c.blockStart[this.block]!;
      this.pos = this.block * BLOCK_BITS;
      this.key = words[this.pos >>> 5]!;
      this.pos += 32;
    } else {
      const e = c.decode[peek32(words, this.pos) >>> (32 - MAX_CODE)]!;
      this.pos += e & 15;
      const s = e >>> 4;
      if (s > 0) {
        const high = s === 32 ? 0 : (this.key >>> s) << s;
        this.key = (high | (1 << (s - 1)) | take(words, this.pos, s - 1)) >>> 0;
        this.pos += s - 1;
      }
    }
    this.ref = take(words, this.pos, c.refBits) + c.refBase;
    this.pos += c.refBits;
    this.i++;
  }
}
