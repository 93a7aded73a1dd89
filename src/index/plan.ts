/**
 * Table plans for the permuted-table Hamming index.
 *
 * Bit order: the 64 bits are cut into blocks from the most significant end;
 * block 0 holds bits 63..(64 - w0), block 1 the next w1 bits, and so on.
 * A table moves its chosen blocks, in the order listed, to the top of the
 * permuted fingerprint; the remaining blocks follow in index order. The
 * table's prefix is the top `prefixBits` bits of that permuted value and must
 * lie inside the chosen blocks.
 *
 * A plan is correct for k when every set of at most k blocks misses the
 * chosen blocks of some table: two fingerprints differing in at most k bits
 * differ in at most k blocks, so some table sees them with identical chosen
 * blocks, hence an identical prefix (the pigeonhole argument of Manku, Jain,
 * Das Sarma, WWW 2007, section 3.1.1). Two-level designs (the paper's
 * "4 x 16 then 4 x 12") are plans over finer blocks: see planTwoLevel().
 */
import { DedupError } from '../errors.js';

export interface TableSpec {
  /** Indices of the blocks moved to the top, in order. */
  readonly blocks: readonly number[];
  /** Bits of the permuted value that a probe matches exactly (<= sum of the chosen widths). */
  readonly prefixBits: number;
}

export interface TablePlan {
  /** Largest Hamming distance the plan answers exactly. */
  readonly k: number;
  /** Block widths in bits, most significant block first; they sum to 64. */
  readonly blockWidths: readonly number[];
  readonly tables: readonly TableSpec[];
}

/** Work bound for the coverage check (hitting-set search). */
const VALIDATION_STEP_LIMIT = 5_000_000;

function invalid(message: string, details?: Record<string, unknown>): DedupError {
  return new DedupError('PLAN_INVALID', message, details === undefined ? {} : { details });
}

function isInt(x: unknown): x is number {
  return typeof x === 'number' && Number.isInteger(x);
}

/** All size-m subsets of 0..b-1, lexicographic. */
export function combinations(b: number, m: number): number[][] {
  const out: number[][] = [];
  const cur: number[] = [];
  const rec = (start: number): void => {
    if (cur.length === m) {
      out.push([...cur]);
      return;
    }
    for (let i = start; i <= b - (m - cur.length); i++) {
      cur.push(i);
      rec(i + 1);
      cur.pop();
    }
  };
  rec(0);
  return out;
}

export function binomial(n: number, m: number): number {
  if (m < 0 || m > n) return 0;
  let r = 1;
  for (let i = 1; i <= m; i++) r = (r * (n - m + i)) / i;
  return Math.round(r);
}

function freezePlan(k: number, blockWidths: readonly number[], tables: readonly TableSpec[]): TablePlan {
  return Object.freeze({
    k,
    blockWidths: Object.freeze([...blockWidths]),
    tables: Object.freeze(tables.map((t) => Object.freeze({ blocks: Object.freeze([...t.blocks]), prefixBits: t.prefixBits }))),
  });
}

/**
 * Explicit design: b blocks of the given widths, one table for each of the
 * C(b, b - k) choices of b - k blocks; the prefix is all chosen bits.
 */
export function planFromBlocks(k: number, blockWidths: number[]): TablePlan {
  if (!isInt(k) || k < 0) throw invalid(`k must be a non-negative integer, got ${String(k)}`);
  const b = blockWidths.length;
  if (b <= k) throw invalid(`need more blocks than k (blocks=${b}, k=${k})`, { blocks: b, k });
  checkWidths(blockWidths);
  const tables = combinations(b, b - k).map((blocks) => ({
    blocks,
    prefixBits: blocks.reduce((s, i) => s + blockWidths[i]!, 0),
  }));
  const plan = freezePlan(k, blockWidths, tables);
  validatePlan(plan);
  return plan;
}

/** `count` widths summing to `total`, as equal as possible, wider blocks first. */
export function evenWidths(total: number, count: number): number[] {
  const base = Math.floor(total / count);
  const extra = total - base * count;
  return Array.from({ length: count }, (_, i) => base + (i < extra ? 1 : 0));
}

/**
 * Two-level design (paper section 3.1.2, e.g. 4 x 16 then 4 x 12): split the
 * 64 bits into r1 blocks and choose r1 - k of them; split the bits left over
 * into r2 blocks and choose r2 - k of those. C(r1, k) * C(r2, k) tables. The
 * plan is expressed over the common refinement of all cut points ("atoms").
 */
export function planTwoLevel(k: number, r1: number, r2: number): TablePlan {
  if (!isInt(k) || k < 0) throw invalid(`k must be a non-negative integer, got ${String(k)}`);
  if (!isInt(r1) || !isInt(r2) || r1 <= k || r2 <= k) throw invalid(`two-level design needs r1, r2 > k (r1=${r1}, r2=${r2}, k=${k})`);
  const w1 = evenWidths(64, r1);
  const start1 = prefixSums(w1);
  const cuts = new Set<number>(start1);
  const designs: { first: number[]; second: [number, number][][] }[] = [];
  for (const first of combinations(r1, r1 - k)) {
    // Remaining bit positions (MSB-first offsets), in order.
    const rest: number[] = [];
    for (let i = 0; i < r1; i++) {
      if (first.includes(i)) continue;
      for (let o = start1[i]!; o < start1[i]! + w1[i]!; o++) rest.push(o);
    }
    if (rest.length < r2) throw invalid(`cannot split ${rest.length} remaining bits into ${r2} blocks`);
    const w2 = evenWidths(rest.length, r2);
    const s2 = prefixSums(w2);
    const groups: [number, number][][] = [];
    for (let g = 0; g < r2; g++) {
      const bits = rest.slice(s2[g]!, s2[g]! + w2[g]!);
      const ranges: [number, number][] = [];
      for (const bit of bits) {
        const last = ranges[ranges.length - 1];
        if (last !== undefined && last[1] === bit) last[1] = bit + 1;
        else ranges.push([bit, bit + 1]);
      }
      for (const [a, z] of ranges) {
        cuts.add(a);
        cuts.add(z);
      }
      groups.push(ranges);
    }
    designs.push({ first, second: groups });
  }
  cuts.add(64);
  const sorted = [...cuts].sort((a, b) => a - b).filter((c) => c >= 0 && c <= 64);
  const atomStart = sorted.slice(0, -1);
  const widths = atomStart.map((s, i) => sorted[i + 1]! - s);
  const atomsIn = (a: number, z: number): number[] => {
    const out: number[] = [];
    for (let i = 0; i < atomStart.length; i++) if (atomStart[i]! >= a && atomStart[i]! < z) out.push(i);
    return out;
  };
  const tables: TableSpec[] = [];
  for (const d of designs) {
    const top: number[] = [];
    for (const i of d.first) top.push(...atomsIn(start1[i]!, start1[i]! + w1[i]!));
    for (const choice of combinations(r2, r2 - k)) {
      const blocks = [...top];
      for (const g of choice) for (const [a, z] of d.second[g]!) blocks.push(...atomsIn(a, z));
      tables.push({ blocks, prefixBits: blocks.reduce((s, i) => s + widths[i]!, 0) });
    }
  }
  const plan = freezePlan(k, widths, tables);
  validatePlan(plan);
  return plan;
}

function prefixSums(widths: readonly number[]): number[] {
  const out: number[] = [];
  let s = 0;
  for (const w of widths) {
    out.push(s);
    s += w;
  }
  return out;
}

function checkWidths(blockWidths: readonly number[]): void {
  if (!Array.isArray(blockWidths) || blockWidths.length === 0) throw invalid('blockWidths must be a non-empty array');
  let sum = 0;
  for (const w of blockWidths) {
    if (!isInt(w) || w < 1 || w > 64) throw invalid(`block widths must be integers in 1..64, got ${String(w)}`);
    sum += w;
  }
  if (sum !== 64) throw invalid(`block widths must sum to 64, got ${sum}`, { blockWidths: [...blockWidths] });
}

/**
 * Throws PLAN_INVALID unless the plan is well formed and answers every
 * distance up to plan.k exactly (no set of <= k blocks touches every table).
 */
export function validatePlan(plan: TablePlan): void {
  if (plan === null || typeof plan !== 'object') throw invalid('plan must be an object');
  const { k, blockWidths, tables } = plan;
  if (!isInt(k) || k < 0 || k > 63) throw invalid(`plan.k must be an integer in 0..63, got ${String(k)}`);
  checkWidths(blockWidths);
  const b = blockWidths.length;
  if (b <= k) throw invalid(`need more blocks than k (blocks=${b}, k=${k})`);
  if (!Array.isArray(tables) || tables.length === 0) throw invalid('plan needs at least one table');
  if (tables.length > 4096) throw invalid(`too many tables (${tables.length})`);
  const sets: number[][] = [];
  for (let t = 0; t < tables.length; t++) {
    const spec = tables[t]!;
    const blocks = spec?.blocks;
    if (!Array.isArray(blocks) || blocks.length === 0) throw invalid(`table ${t}: blocks must be a non-empty array`);
    const seen = new Set<number>();
    let width = 0;
    for (const i of blocks) {
      if (!isInt(i) || i < 0 || i >= b) throw invalid(`table ${t}: block index ${String(i)} out of range 0..${b - 1}`);
      if (seen.has(i)) throw invalid(`table ${t}: block ${i} listed twice`);
      seen.add(i);
      width += blockWidths[i]!;
    }
    if (!isInt(spec.prefixBits) || spec.prefixBits < 1 || spec.prefixBits > width) {
      throw invalid(`table ${t}: prefixBits must be an integer in 1..${width}, got ${String(spec.prefixBits)}`);
    }
    sets.push([...blocks]);
  }
  // Search for a set of <= k blocks meeting every table (a counterexample).
  const chosen = new Uint8Array(b);
  let steps = 0;
  let witness: number[] = [];
  const hits = (depth: number): boolean => {
    if (++steps > VALIDATION_STEP_LIMIT) throw invalid('plan too large to verify', { tables: tables.length, blocks: b, k });
    let open: number[] | undefined;
    for (const s of sets) {
      if (!s.some((i) => chosen[i] === 1)) {
        open = s;
        break;
      }
    }
    if (open === undefined) {
      witness = [...chosen.keys()].filter((i) => chosen[i] === 1);
      return true;
    }
    if (depth === k) return false;
    for (const i of open) {
      chosen[i] = 1;
      const found = hits(depth + 1);
      chosen[i] = 0;
      if (found) return true;
    }
    return false;
  };
  if (hits(0)) {
    throw invalid(`plan misses pairs differing in ${k} bits or fewer (blocks ${witness.join(',')} meet every table)`, { k });
  }
}
