/**
 * Chinese word segmentation, jieba's algorithm (jieba-rs, which @node-rs/jieba wraps, cutting with
 * HMM on) over UTF-16 code units, with no string built: the words come back as end offsets into
 * the caller's units.
 *
 * The steps are jieba's, to the tie-breaks, so the words are the ones `Jieba.cut(text, true)`
 * gives (the differential test holds them to it over real and generated text):
 *
 * 1. The text is split into blocks of jieba's "Han" characters (CJK ideographs, the extension
 *    blocks it names, ASCII letters, digits and `+#&._%-`). Between blocks, whitespace is a word of
 *    its own and every other character is one word.
 * 2. In a block, every dictionary word that starts at a character is an edge of the DAG; the route
 *    from the block's end backwards takes at each character the edge of largest
 *    log(freq) - log(total) + route(end), the longer edge on a tie, and a single character of
 *    frequency 1 where no word starts.
 * 3. Along the route, consecutive single characters are buffered. A buffer of two or more that is
 *    not itself a dictionary word goes to the HMM (4 states B/E/M/S, Viterbi over jieba's start,
 *    transition and emission log probabilities, ties to the larger state); one that is a word is
 *    emitted character by character.
 *
 * Why not the native module: it costs 1.1-1.2 ms for a page of 8,700 Han characters, most of it in
 * building one JS string per word and the N-API crossing, and the tokenizer then hashes every
 * string again. Here the dictionary is a trie over code units held in typed arrays (root children
 * in a table by unit, other edges in one open-addressing table keyed by parent and unit).
 */
import { HMM_EMIT, HMM_START, HMM_TRANS } from './jieba-hmm-model.js';

/** jieba's "impossible" log probability (hmm.rs MIN_FLOAT). */
const MIN_FLOAT = -3.14e100;

// HMM states, numbered as jieba-rs numbers them: its ties compare these numbers.
const B = 0;
const E = 1;
const M = 2;
const S = 3;
/** The HMM's Han characters (hmm.rs RE_HAN: U+4E00..U+9FD5), all in the BMP. */
const HMM_HAN_FIRST = 0x4e00;
const HMM_HAN_LAST = 0x9fd5;

/** jieba's block characters in the BMP (RE_HAN_DEFAULT): CJK ideographs, extension A, compatibility ideographs, ASCII letters, digits and + # & . _ % -. */
function isBlockUnit(c: number): boolean {
  return (
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0x3400 && c <= 0x4dbf) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2b ||
    c === 0x23 ||
    c === 0x26 ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x25 ||
    c === 0x2d
  );
}

/** jieba's block code points beyond the BMP (RE_HAN_DEFAULT: extensions B to F and the compatibility supplement). */
function isBlockAstral(cp: number): boolean {
  return (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2ebef) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}

/** Unicode White_Space (Rust's regex `\s`, jieba's RE_SKIP_DEFAULT). */
function isWhiteSpace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x20 ||
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function isAsciiAlnum(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
}

/** Unicode decimal digits (Rust's regex `\d`), as the HMM's skip pattern reads them. */
const UNICODE_DIGIT = /^\p{Nd}$/u;

/**
 * The dictionary read into a trie over UTF-16 code units: a hash table of edges keyed by parent
 * and unit, which takes words in any order. It is only the builder; lookups go to the
 * breadth-first CompactTrie it makes.
 */
class TrieBuilder {
  private edgeParent: Int32Array;
  private edgeUnit: Uint16Array;
  /** Child node of each edge slot; 0 = empty slot (the root, node 0, is nobody's child). */
  private edgeChild: Int32Array;
  private edgeMask: number;
  private edges = 0;
  /** Per node: the word's frequency, or -1 when no word ends at the node. */
  private freq: Float64Array;
  private nodes = 1;

  constructor(expectedNodes: number) {
    let slots = 1024;
    while (slots < expectedNodes * 2) slots *= 2;
    this.edgeParent = new Int32Array(slots);
    this.edgeUnit = new Uint16Array(slots);
    this.edgeChild = new Int32Array(slots);
    this.edgeMask = slots - 1;
    this.freq = new Float64Array(expectedNodes + 1).fill(-1);
  }

  private slotOf(parent: number, unit: number): number {
    return (Math.imul(parent ^ Math.imul(unit, 0x9e3779b1), 0x85ebca6b) >>> 7) & this.edgeMask;
  }

  private child(node: number, unit: number): number {
    const mask = this.edgeMask;
    for (let s = this.slotOf(node, unit); ; s = (s + 1) & mask) {
      const c = this.edgeChild[s]!;
      if (c === 0) return 0;
      if (this.edgeParent[s] === node && this.edgeUnit[s] === unit) return c;
    }
  }

  private addChild(node: number, unit: number): number {
    const id = this.nodes++;
    if (id >= this.freq.length) {
      const freq = new Float64Array(this.freq.length * 2).fill(-1);
      freq.set(this.freq);
      this.freq = freq;
    }
    if ((this.edges + 1) * 2 > this.edgeMask + 1) this.growEdges();
    const mask = this.edgeMask;
    let s = this.slotOf(node, unit);
    while (this.edgeChild[s] !== 0) s = (s + 1) & mask;
    this.edgeParent[s] = node;
    this.edgeUnit[s] = unit;
    this.edgeChild[s] = id;
    this.edges++;
    return id;
  }

  private growEdges(): void {
    const parents = this.edgeParent;
    const units = this.edgeUnit;
    const children = this.edgeChild;
    const slots = (this.edgeMask + 1) * 2;
    this.edgeParent = new Int32Array(slots);
    this.edgeUnit = new Uint16Array(slots);
    this.edgeChild = new Int32Array(slots);
    this.edgeMask = slots - 1;
    for (let s = 0; s < children.length; s++) {
      if (children[s] === 0) continue;
      let t = this.slotOf(parents[s]!, units[s]!);
      while (this.edgeChild[t] !== 0) t = (t + 1) & this.edgeMask;
      this.edgeParent[t] = parents[s]!;
      this.edgeUnit[t] = units[s]!;
      this.edgeChild[t] = children[s]!;
    }
  }

  /** Adds the word text[from..to); a word met again takes its last frequency, as in jieba. */
  add(text: string, from: number, to: number, freq: number): void {
    let node = 0;
    for (let i = from; i < to; i++) {
      const unit = text.charCodeAt(i);
      const next = this.child(node, unit);
      node = next !== 0 ? next : this.addChild(node, unit);
    }
    this.freq[node] = freq;
  }

  /**
   * The trie renumbered breadth first, children in ascending unit, so that a node's children are
   * the consecutive nodes first[v]..first[v + 1]: a lookup reads two offsets and a short run of
   * units, not three arrays at a hashed slot (half the time of a page's cut).
   */
  compact(): CompactTrie {
    const n = this.nodes;
    // Edges grouped by parent (a counting sort), each group in ascending unit.
    const count = new Int32Array(n + 1);
    for (let s = 0; s < this.edgeChild.length; s++) if (this.edgeChild[s] !== 0) count[this.edgeParent[s]! + 1]!++;
    for (let v = 0; v < n; v++) count[v + 1]! += count[v]!;
    const byParent = new Int32Array(this.edges);
    const fill = count.slice(0, n);
    for (let s = 0; s < this.edgeChild.length; s++) if (this.edgeChild[s] !== 0) byParent[fill[this.edgeParent[s]!]!++] = s;
    for (let v = 0; v < n; v++) {
      const group = byParent.subarray(count[v]!, count[v + 1]!);
      if (group.length > 1) group.sort((x, y) => this.edgeUnit[x]! - this.edgeUnit[y]!);
    }
    // Breadth first from the root: the queue is the new numbering.
    const oldOf = new Int32Array(n);
    const first = sharedArray(Int32Array, n + 1);
    const unit = sharedArray(Uint16Array, n);
    const freq = new Float64Array(n);
    let next = 1;
    for (let v = 0; v < n; v++) {
      const old = oldOf[v]!;
      first[v] = next;
      for (let k = count[old]!; k < count[old + 1]!; k++) {
        const s = byParent[k]!;
        oldOf[next] = this.edgeChild[s]!;
        unit[next] = this.edgeUnit[s]!;
        next++;
      }
      freq[v] = this.freq[old]!;
    }
    first[n] = next;
    return new CompactTrie(buildTables(first, unit, freq));
  }
}

function pairSlot(key: number, mask: number): number {
  return (Math.imul(key, 0x9e3779b1) >>> 11) & mask;
}

/**
 * Bits of a packed trie entry (node << WEIGHT_BITS | weight index) that name the word's weight:
 * the shipped dictionary has 5,087 distinct frequencies and 498,113 nodes, so both fit 32 bits.
 */
const WEIGHT_BITS = 13;
/** Bits of the edge filter (CompactTrie.filter): 256 KiB, about 490,000 edges set in the shipped dictionary. */
const FILTER_BITS = 1 << 21;

function pairBit(key: number): number {
  return Math.imul(key, 0x9e3779b1) >>> 11;
}

function edgeBit(node: number, unit: number): number {
  return Math.imul(node ^ Math.imul(unit, 0x85ebca6b), 0xc2b2ae35) >>> 11;
}

function setBit(bits: Int32Array, at: number): void {
  bits[at >>> 5]! |= 1 << (at & 31);
}

function hasBit(bits: Int32Array, at: number): boolean {
  return (bits[at >>> 5]! & (1 << (at & 31))) !== 0;
}
const WEIGHT_MASK = (1 << WEIGHT_BITS) - 1;

/**
 * The segmenter's dictionary as plain typed arrays (CompactTrie's), each over a SharedArrayBuffer:
 * a worker thread given them in its workerData cuts with the same memory as the thread that read
 * the dictionary (JiebaSegmenter.fromTables), instead of reading its own.
 */
export interface JiebaTables {
  /** Node v's children are the nodes first[v]..first[v + 1]. */
  readonly first: Int32Array;
  /** Per node: the unit of the edge into it, ascending among siblings. */
  readonly unit: Uint16Array;
  /** Per node: the index of its word's weight in weights, 0 where no word ends. */
  readonly weightIndex: Uint16Array;
  /** log(freq) - log(total) per distinct frequency; weights[0] is unused. */
  readonly weights: Float64Array;
  /** The root's child by unit, packed (0 = no word starts with the unit). */
  readonly rootChild: Int32Array;
  /** The two-unit prefixes: [key, packed] pairs, open addressing (CompactTrie.pairChild). */
  readonly pairs: Int32Array;
  /** One bit per hashed edge below the root (CompactTrie.filter). */
  readonly filter: Int32Array;
  readonly logTotal: number;
}

function sharedArray<T extends Int32Array | Uint16Array | Float64Array>(Type: { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number }, length: number): T {
  return new Type(new SharedArrayBuffer(length * Type.BYTES_PER_ELEMENT));
}

/**
 * The trie's tables from the breadth-first nodes (TrieBuilder.compact): the weights per distinct
 * frequency, the root and pair tables and the edge filter, all shareable.
 */
function buildTables(first: Int32Array, unit: Uint16Array, freq: Float64Array): JiebaTables {
  const nodes = freq.length;
  // jieba's total is the sum of the words' frequencies, and a weight is log(freq) - log(total).
  let total = 0;
  for (let v = 0; v < nodes; v++) if (freq[v]! >= 0) total += freq[v]!;
  const logTotal = Math.log(total);
  const indexOf = new Map<number, number>();
  const values: number[] = [NaN];
  const weightIndex = sharedArray(Uint16Array, nodes);
  for (let v = 0; v < nodes; v++) {
    const f = freq[v]!;
    if (f < 0) continue;
    let k = indexOf.get(f);
    if (k === undefined) {
      k = values.length;
      indexOf.set(f, k);
      values.push(Math.log(f) - logTotal);
    }
    weightIndex[v] = k;
  }
  if (values.length > WEIGHT_MASK + 1 || nodes > 2 ** (32 - WEIGHT_BITS)) {
    throw new Error(`jieba dictionary: ${nodes} trie nodes and ${values.length - 1} distinct frequencies do not fit the packed trie (at most ${2 ** (32 - WEIGHT_BITS)} and ${WEIGHT_MASK})`);
  }
  const weights = sharedArray(Float64Array, values.length);
  weights.set(values);
  const packed = (node: number): number => (node << WEIGHT_BITS) | weightIndex[node]!;
  const rootChild = sharedArray(Int32Array, 0x10000);
  for (let k = first[0]!; k < first[1]!; k++) rootChild[unit[k]!] = packed(k);
  const depthTwo = first[first[1]!]! - first[first[0]!]!;
  let slots = 1024;
  while (slots < depthTwo * 2) slots *= 2;
  const pairs = sharedArray(Int32Array, 2 * slots);
  const pairMask = slots - 1;
  const filter = sharedArray(Int32Array, FILTER_BITS >>> 5);
  for (let v = first[0]!; v < first[1]!; v++) {
    for (let w = first[v]!; w < first[v + 1]!; w++) {
      const key = (unit[v]! << 16) | unit[w]!;
      let at = pairSlot(key, pairMask);
      while (pairs[2 * at + 1] !== 0) at = (at + 1) & pairMask;
      pairs[2 * at] = key;
      pairs[2 * at + 1] = packed(w);
      setBit(filter, pairBit(key));
    }
  }
  for (let v = first[1]!; v < nodes; v++) {
    for (let w = first[v]!; w < first[v + 1]!; w++) setBit(filter, edgeBit(v, unit[w]!));
  }
  return { first, unit, weightIndex, weights, rootChild, pairs, filter, logTotal };
}

/**
 * The dictionary trie, breadth first (TrieBuilder.compact), over its tables (JiebaTables). What a
 * lookup yields is packed into one int32, the node and the index of its word's weight (0 where no
 * word ends there), and the weights, log(freq) - log(total) for each distinct frequency, are a
 * table small enough to stay in cache: a cut reads a node's weight at almost every character, and
 * a table of one float per node missed the cache on each.
 *
 * The root's children are a table by unit. The nodes two units deep are found by the two units in
 * a pair table: a first character has hundreds of seconds (中 more than a thousand), and this
 * lookup is made at nearly every character of a text, where halving through the siblings cost
 * more than the rest of the cut. A bit filter of the edges below the root answers first: almost
 * half the pairs a text asks for and three quarters of the deeper edges are in no word, and a
 * clear bit says so from a table that stays in cache, where the pair table and the child lists
 * would have missed it (a third of a cut's time).
 */
class CompactTrie {
  private readonly first: Int32Array;
  private readonly unit: Uint16Array;
  private readonly weightIndex: Uint16Array;
  private readonly rootChild: Int32Array;
  private readonly pairs: Int32Array;
  private readonly pairMask: number;
  private readonly filter: Int32Array;
  readonly weights: Float64Array;
  readonly logTotal: number;

  constructor(readonly tables: JiebaTables) {
    this.first = tables.first;
    this.unit = tables.unit;
    this.weightIndex = tables.weightIndex;
    this.rootChild = tables.rootChild;
    this.pairs = tables.pairs;
    this.pairMask = (tables.pairs.length >>> 1) - 1;
    this.filter = tables.filter;
    this.weights = tables.weights;
    this.logTotal = tables.logTotal;
  }

  private packed(node: number): number {
    return (node << WEIGHT_BITS) | this.weightIndex[node]!;
  }

  /** The packed entry of the one-unit prefix, 0 when no word starts so. */
  rootChildOf(unit: number): number {
    return this.rootChild[unit]!;
  }

  /** The packed entry of the two-unit prefix (first, second), 0 when no word starts so. */
  pairChild(first: number, second: number): number {
    const key = (first << 16) | second;
    if (!hasBit(this.filter, pairBit(key))) return 0;
    const pairs = this.pairs;
    const mask = this.pairMask;
    for (let at = pairSlot(key, mask); ; at = (at + 1) & mask) {
      const entry = pairs[2 * at + 1]!;
      if (entry === 0 || pairs[2 * at] === key) return entry;
    }
  }

  /** child() for a parent two or more units deep, through the filter first. */
  deepChild(parent: number, unit: number): number {
    return hasBit(this.filter, edgeBit(parent >>> WEIGHT_BITS, unit)) ? this.child(parent, unit) : 0;
  }

  /** Whether units[from..to) (one unit or more) is a dictionary word: the cut's lookups, in order. */
  isWord(units: Uint16Array, from: number, to: number): boolean {
    let entry = this.rootChildOf(units[from]!);
    for (let i = from + 1; i < to && entry !== 0; i++) entry = i === from + 1 ? this.pairChild(units[from]!, units[i]!) : this.deepChild(entry, units[i]!);
    return (entry & WEIGHT_MASK) !== 0;
  }

  /** The packed entry of the child of the packed entry `parent` (two or more units deep) by `unit`, 0 when there is none. */
  child(parent: number, unit: number): number {
    const node = parent >>> WEIGHT_BITS;
    const units = this.unit;
    let lo = this.first[node]!;
    let hi = this.first[node + 1]!;
    // Below two units deep most nodes have a few children: a scan; many: halving.
    while (hi - lo > 8) {
      const mid = (lo + hi) >>> 1;
      const u = units[mid]!;
      if (u === unit) return this.packed(mid);
      if (u < unit) lo = mid + 1;
      else hi = mid;
    }
    for (; lo < hi; lo++) if (units[lo] === unit) return this.packed(lo);
    return 0;
  }
}

/** The HMM's tables: start and transition log probabilities, emissions by character and state. */
class HmmModel {
  readonly start = new Float64Array(4);
  /** trans[4 * from + to]. */
  readonly trans = new Float64Array(16);
  /** emit[4 * (c - U+4E00) + state]; MIN_FLOAT where the model has no entry. */
  readonly emit = new Float64Array(4 * (HMM_HAN_LAST - HMM_HAN_FIRST + 1)).fill(MIN_FLOAT);

  constructor() {
    for (let s = 0; s < 4; s++) {
      this.start[s] = HMM_START[s]!;
      for (let t = 0; t < 4; t++) this.trans[4 * s + t] = HMM_TRANS[s]![t]!;
      const [chars, values] = HMM_EMIT[s]!;
      const probs = values.split(',');
      for (let k = 0; k < chars.length; k++) {
        const c = chars.charCodeAt(k);
        if (c >= HMM_HAN_FIRST && c <= HMM_HAN_LAST) this.emit[4 * (c - HMM_HAN_FIRST) + s] = Number(probs[k]);
      }
    }
  }
}

/** For each state, the states that may precede it, in jieba-rs's order (ALLOWED_PREV_STATUS). */
const PREV_FIRST = Int32Array.of(E, B, M, S);
const PREV_SECOND = Int32Array.of(S, M, B, E);

/** Scratch entries a segmenter starts with, and the most it keeps from one cut to the next. */
const SCRATCH_INITIAL = 1024;
const SCRATCH_KEPT = 1 << 16;

export class JiebaSegmenter {
  /** End offsets (exclusive) of the words of the last cut, in order; wordCount of them. */
  wordEnds = new Int32Array(SCRATCH_INITIAL);
  wordCount = 0;
  /** Per unit of the block being cut, from its start: the best route's log probability and end. */
  private route = new Float64Array(SCRATCH_INITIAL);
  private routeEnd = new Int32Array(SCRATCH_INITIAL);
  /** Viterbi scores and back-pointers, 4 per character. */
  private v = new Float64Array(4 * SCRATCH_INITIAL);
  private prev = new Int8Array(4 * SCRATCH_INITIAL);
  private path = new Int8Array(SCRATCH_INITIAL);

  private constructor(
    private readonly trie: CompactTrie,
    private readonly hmm: HmmModel,
  ) {}

  /** Builds the segmenter from a jieba dictionary (`word freq [tag]` per line, UTF-8). */
  static fromDictionary(dict: Uint8Array | string): JiebaSegmenter {
    const text = typeof dict === 'string' ? dict : new TextDecoder('utf-8').decode(dict);
    const builder = new TrieBuilder(Math.max(1024, Math.ceil(text.length / 3)));
    let at = 0;
    const n = text.length;
    while (at < n) {
      let end = text.indexOf('\n', at);
      if (end < 0) end = n;
      // jieba splits a line at whitespace: the word, its frequency (0 when absent), its tag.
      let s = at;
      while (s < end && isWhiteSpace(text.charCodeAt(s))) s++;
      let w = s;
      while (w < end && !isWhiteSpace(text.charCodeAt(w))) w++;
      if (w > s) {
        let f = w;
        while (f < end && isWhiteSpace(text.charCodeAt(f))) f++;
        let fe = f;
        while (fe < end && !isWhiteSpace(text.charCodeAt(fe))) fe++;
        const freq = fe > f ? Number(text.slice(f, fe)) : 0;
        if (!Number.isInteger(freq) || freq < 0) throw new Error(`jieba dictionary: line "${text.slice(at, end)}" has no whole frequency`);
        builder.add(text, s, w, freq);
      }
      at = end + 1;
    }
    return new JiebaSegmenter(builder.compact(), new HmmModel());
  }

  /** A segmenter over tables another segmenter read (`tables`), shared, not copied, across threads. */
  static fromTables(tables: JiebaTables): JiebaSegmenter {
    return new JiebaSegmenter(new CompactTrie(tables), new HmmModel());
  }

  /** The dictionary's tables, each over a SharedArrayBuffer: what fromTables takes in another thread. */
  get tables(): JiebaTables {
    return this.trie.tables;
  }

  /** Cuts units[from..to) into words; their end offsets are wordEnds[0..wordCount). Returns wordCount. */
  cut(units: Uint16Array, from: number, to: number): number {
    // The last cut's words are read by now: a result grown for a huge run is not kept.
    if (this.wordEnds.length > SCRATCH_KEPT) this.wordEnds = new Int32Array(SCRATCH_INITIAL);
    this.wordCount = 0;
    let i = from;
    while (i < to) {
      const w = this.charWidth(units, i, to);
      if (this.isBlockChar(units, i, w)) {
        let e = i + w;
        for (let x; e < to && this.isBlockChar(units, e, (x = this.charWidth(units, e, to))); ) e += x;
        this.cutBlock(units, i, e);
        i = e;
      } else {
        // Outside the blocks every character is a word: whitespace as jieba's skip pattern finds
        // it ("\r\n" as one), anything else one character at a time.
        if (units[i] === 0x0d && i + 1 < to && units[i + 1] === 0x0a) i += 2;
        else i += w;
        this.push(i);
      }
    }
    this.releaseLargeScratch();
    return this.wordCount;
  }

  /**
   * A thread keeps its scratch arrays from page to page; one huge run (a page of megabytes of
   * Chinese is one run) would otherwise leave them at its size for good: 12 bytes a unit of route,
   * 17 of Viterbi.
   */
  private releaseLargeScratch(): void {
    if (this.route.length > SCRATCH_KEPT) {
      this.route = new Float64Array(SCRATCH_INITIAL);
      this.routeEnd = new Int32Array(SCRATCH_INITIAL);
    }
    if (this.path.length > SCRATCH_KEPT) {
      this.v = new Float64Array(4 * SCRATCH_INITIAL);
      this.prev = new Int8Array(4 * SCRATCH_INITIAL);
      this.path = new Int8Array(SCRATCH_INITIAL);
    }
  }

  /** The scratch arrays' lengths (units of route, Viterbi characters, words): what a thread keeps between cuts. */
  get scratchLengths(): { route: number; viterbi: number; wordEnds: number } {
    return { route: this.route.length, viterbi: this.path.length, wordEnds: this.wordEnds.length };
  }

  /** The words of a string, as jieba's `cut(text, true)` returns them: for tests and tools. */
  cutString(text: string): string[] {
    const units = new Uint16Array(text.length);
    for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
    const count = this.cut(units, 0, units.length);
    const words: string[] = [];
    let from = 0;
    for (let k = 0; k < count; k++) {
      const to = this.wordEnds[k]!;
      words.push(text.slice(from, to));
      from = to;
    }
    return words;
  }

  private charWidth(units: Uint16Array, i: number, n: number): number {
    return isHighSurrogate(units[i]!) && i + 1 < n && isLowSurrogate(units[i + 1]!) ? 2 : 1;
  }

  private isBlockChar(units: Uint16Array, i: number, width: number): boolean {
    if (width === 1) return isBlockUnit(units[i]!);
    return isBlockAstral(((units[i]! - 0xd800) << 10) + (units[i + 1]! - 0xdc00) + 0x10000);
  }

  private push(end: number): void {
    if (this.wordCount === this.wordEnds.length) {
      const grown = new Int32Array(this.wordEnds.length * 2);
      grown.set(this.wordEnds);
      this.wordEnds = grown;
    }
    this.wordEnds[this.wordCount++] = end;
  }

  /** The DAG, route and walk of jieba's cut_dag_hmm over the block units[from..to). */
  private cutBlock(units: Uint16Array, from: number, to: number): void {
    // The route is indexed from the block's start: its arrays are as long as the longest block.
    const size = to - from + 1;
    if (this.route.length < size) {
      let grown = this.route.length;
      while (grown < size) grown *= 2;
      this.route = new Float64Array(grown);
      this.routeEnd = new Int32Array(grown);
    }
    const route = this.route;
    const routeEnd = this.routeEnd;
    const trie = this.trie;
    const single = -trie.logTotal;
    const weights = trie.weights;
    route[to - from] = 0;
    // Backwards over the characters (a low surrogate is no start), each taking its best edge.
    let next = to;
    for (let x = to - 1; x >= from; x--) {
      if (x > from && isLowSurrogate(units[x]!) && isHighSurrogate(units[x - 1]!)) continue;
      let best = 0;
      let bestEnd = -1;
      // The prefixes units[x..y] that are words, y ascending: the first unit by table, the second
      // by pair, the rest through the children.
      let entry = trie.rootChildOf(units[x]!);
      let y = x;
      while (entry !== 0) {
        const w = entry & WEIGHT_MASK;
        if (w !== 0) {
          // Edges come in ascending end: >= keeps the longer of two equal routes, as jieba's max_by.
          const p = weights[w]! + route[y + 1 - from]!;
          if (bestEnd < 0 || p >= best) {
            best = p;
            bestEnd = y + 1;
          }
        }
        if (++y === to) break;
        entry = y === x + 1 ? trie.pairChild(units[x]!, units[y]!) : trie.deepChild(entry, units[y]!);
      }
      if (bestEnd < 0) {
        best = single + route[next - from]!;
        bestEnd = next;
      }
      route[x - from] = best;
      routeEnd[x - from] = bestEnd;
      next = x;
    }
    // The walk: words of two or more characters go out; single characters are buffered.
    let x = from;
    let left = -1;
    while (x < to) {
      const y = routeEnd[x - from]!;
      if (y - x === 1 || (y - x === 2 && isHighSurrogate(units[x]!) && isLowSurrogate(units[x + 1]!))) {
        if (left < 0) left = x;
      } else {
        if (left >= 0) {
          this.flushSingles(units, left, x);
          left = -1;
        }
        this.push(y);
      }
      x = y;
    }
    if (left >= 0) this.flushSingles(units, left, to);
  }

  /** A run of single-character route steps units[from..to): one word, the HMM's words, or its characters. */
  private flushSingles(units: Uint16Array, from: number, to: number): void {
    const chars = this.countChars(units, from, to);
    if (chars === 1) {
      this.push(to);
      return;
    }
    if (!this.trie.isWord(units, from, to)) {
      this.hmmCut(units, from, to);
      return;
    }
    for (let i = from; i < to; ) {
      i += this.charWidth(units, i, to);
      this.push(i);
    }
  }

  private countChars(units: Uint16Array, from: number, to: number): number {
    let chars = 0;
    for (let i = from; i < to; chars++) i += this.charWidth(units, i, to);
    return chars;
  }




  /** jieba's hmm::cut: runs of U+4E00..U+9FD5 through Viterbi, the rest by its skip pattern. */
  private hmmCut(units: Uint16Array, from: number, to: number): void {
    let i = from;
    while (i < to) {
      const c = units[i]!;
      if (c >= HMM_HAN_FIRST && c <= HMM_HAN_LAST) {
        let e = i + 1;
        while (e < to && units[e]! >= HMM_HAN_FIRST && units[e]! <= HMM_HAN_LAST) e++;
        if (e - i > 1) this.viterbiCut(units, i, e);
        else this.push(e);
        i = e;
        continue;
      }
      let e = i;
      while (e < to && !(units[e]! >= HMM_HAN_FIRST && units[e]! <= HMM_HAN_LAST)) e++;
      this.skipCut(units, i, e);
      i = e;
    }
  }

  /**
   * jieba's HMM skip pattern `[a-zA-Z0-9]+(?:.\d+)?%?` over units[from..to): each match is a word
   * and so is each stretch between matches, whole.
   */
  private skipCut(units: Uint16Array, from: number, to: number): void {
    let i = from;
    let gap = from;
    while (i < to) {
      if (!isAsciiAlnum(units[i]!)) {
        i += this.charWidth(units, i, to);
        continue;
      }
      if (gap < i) this.push(i);
      let e = i;
      while (e < to && isAsciiAlnum(units[e]!)) e++;
      // (?:.\d+)? : any character but '\n', then one or more decimal digits.
      if (e < to && units[e] !== 0x0a) {
        const w = this.charWidth(units, e, to);
        let d = e + w;
        let digits = 0;
        while (d < to) {
          const dw = this.charWidth(units, d, to);
          const ch = String.fromCharCode(...units.subarray(d, d + dw));
          if (!UNICODE_DIGIT.test(ch)) break;
          d += dw;
          digits++;
        }
        if (digits > 0) e = d;
      }
      if (e < to && units[e] === 0x25) e++;
      this.push(e);
      i = e;
      gap = e;
    }
    if (gap < to) this.push(to);
  }

  /** Viterbi over units[from..to) (all U+4E00..U+9FD5, two or more), then jieba's cut of the best path. */
  private viterbiCut(units: Uint16Array, from: number, to: number): void {
    const n = to - from;
    if (this.v.length < 4 * n) {
      let size = this.v.length;
      while (size < 4 * n) size *= 2;
      this.v = new Float64Array(size);
      this.prev = new Int8Array(size);
      this.path = new Int8Array(size / 4);
    }
    const { start, trans, emit } = this.hmm;
    const v = this.v;
    const prev = this.prev;
    let base = 4 * (units[from]! - HMM_HAN_FIRST);
    for (let y = 0; y < 4; y++) v[y] = start[y]! + emit[base + y]!;
    for (let t = 1; t < n; t++) {
      base = 4 * (units[from + t]! - HMM_HAN_FIRST);
      const row = 4 * t;
      const last = row - 4;
      for (let y = 0; y < 4; y++) {
        const em = emit[base + y]!;
        const a = PREV_FIRST[y]!;
        const b = PREV_SECOND[y]!;
        const pa = v[last + a]! + trans[4 * a + y]! + em;
        const pb = v[last + b]! + trans[4 * b + y]! + em;
        // max_by over (probability, state): the larger probability, on a tie the larger state.
        const takeB = pb > pa || (pb === pa && b > a);
        v[row + y] = takeB ? pb : pa;
        prev[row + y] = takeB ? b : a;
      }
    }
    const lastRow = 4 * (n - 1);
    const pe = v[lastRow + E]!;
    const ps = v[lastRow + S]!;
    let state = ps > pe || ps === pe ? S : E;
    const path = this.path;
    path[n - 1] = state;
    for (let t = n - 1; t > 0; t--) {
      state = prev[4 * t + state]!;
      path[t - 1] = state;
    }
    // jieba-rs cut_internal: E and S close a word here. B opens one and may only follow E or S, so
    // the words are contiguous and their ends say all; a word left open goes out whole.
    let end = from;
    for (let t = 0; t < n; t++) {
      const s = path[t]!;
      if (s === E || s === S) {
        end = from + t + 1;
        this.push(end);
      }
    }
    if (end < to) this.push(to);
  }
}
