/**
 * Choosing a table design from k, the expected size N = 2^d and a memory
 * budget (Manku, Jain, Das Sarma, WWW 2007, section 3.1.2).
 *
 * The paper's recurrence X(f, k, d) = min over r > k of C(r, k) * X(f k / r,
 * k, d - (r - k) f / r) (X = 1 once d < tau) counts the tables of designs that
 * split the f bits into r blocks, keep r - k of them as prefix, and recurse on
 * the bits left. We enumerate the same family, one and two levels deep
 * (4 x 16 then 4 x 12 is r1 = 4, r2 = 4), and score each design with an
 * explicit cost model instead of the threshold tau:
 *
 *   query  ~ t * PROBE_NS + sum over tables of N / 2^p_i * candidate cost,
 *   insert ~ t * INSERT_NS (each table sorts and merges every fingerprint),
 *   memory ~ t * bytes per table entry + 8 bytes of fingerprint.
 *
 * The cheapest design within the memory budget, the table limit and the
 * minimum prefix wins (ties: fewer tables). The constants are measured on the
 * reference machine (bench/index); they steer, the oracle tests decide.
 */
import { DedupError } from '../errors.js';
import { binomial, evenWidths, planFromBlocks, planTwoLevel, type TablePlan } from './plan.js';
import { LARGE_MIN } from './sorted-run.js';

export interface PlanOptions {
  k: number;
  expectedSize: number;
  memoryBudgetBytes?: number;
  maxTables?: number;
  minPrefixBits?: number;
}

export interface PlanCost {
  tables: number;
  minPrefixBits: number;
  /** Entries expected to share the query's prefix, summed over all tables (one query). */
  expectedCandidatesPerProbe: number;
  /** Estimated index bytes per stored fingerprint (raw layout, one merged run per table). */
  bytesPerFingerprint: number;
}

// Measured on the reference machine (2 shared cores, Node 20; bench/index):
// a table probe is dominated by two or three cache misses (directory, run,
// refs), an insert by the merges that rewrite it O(log N) times per table.
const PROBE_NS = 250;
const SCAN_NS = 1.5;
const VERIFY_NS = 30;
const INSERT_NS = 800;
const SORT_NS = 25;
const PAIR_NS = 4;
const DEFAULT_MAX_TABLES = 64;

/** P(Binomial(bits, 1/2) <= k): the share of candidates surviving the early reject. */
function survive(bits: number, k: number): number {
  if (bits <= k) return 1;
  let s = 0;
  for (let i = 0; i <= k; i++) s += binomial(bits, i);
  return s / 2 ** bits;
}

/** Estimated bytes per stored fingerprint for t tables at size n. */
export function bytesPerFingerprint(tables: number, n: number, compressed = false): number {
  const store = 8 + 1 / 8;
  if (n < LARGE_MIN) return store + tables * 8;
  // Large runs keep 24-bit refs below 2^24 entries (sorted-run.ts): 5 bytes an entry, else 6.
  if (!compressed) return store + tables * ((n < 2 ** 24 ? 5 : 6) + (65537 * 4) / n);
  const d = Math.log2(n);
  const keyBits = Math.max(2, 32 - d + 2.2);
  return store + tables * ((keyBits + Math.ceil(d)) / 8);
}

function prefixes(plan: TablePlan): number[] {
  return plan.tables.map((t) => t.prefixBits);
}

export function describePlan(plan: TablePlan, n: number): PlanCost {
  const p = prefixes(plan);
  return {
    tables: p.length,
    minPrefixBits: Math.min(...p),
    expectedCandidatesPerProbe: p.reduce((s, pi) => s + n / 2 ** Math.min(pi, 32), 0),
    bytesPerFingerprint: bytesPerFingerprint(p.length, n),
  };
}

function queryCost(plan: TablePlan, n: number): number {
  let cost = plan.tables.length * PROBE_NS;
  for (const t of plan.tables) {
    const p32 = Math.min(t.prefixBits, 32);
    const visible = Math.min(32 - p32, p32 <= 16 ? 16 : 32 - p32);
    cost += (n / 2 ** p32) * (SCAN_NS + survive(visible, plan.k) * VERIFY_NS);
  }
  return cost + plan.tables.length * INSERT_NS;
}

function allPairsCost(plan: TablePlan, n: number): number {
  let cost = plan.tables.length * n * SORT_NS;
  for (const t of plan.tables) cost += ((n * n) / 2 ** (Math.min(t.prefixBits, 32) + 1)) * PAIR_NS;
  return cost;
}

/** Designs of the paper's family for k, up to maxTables tables. */
export function candidateDesigns(k: number, maxTables: number): TablePlan[] {
  const out: TablePlan[] = [];
  for (let b = k + 1; b <= 64; b++) {
    if (binomial(b, k) > maxTables) break;
    out.push(planFromBlocks(k, evenWidths(64, b)));
    if (k === 0) break;
  }
  if (k >= 1 && k <= 4) {
    for (let r1 = k + 1; r1 <= k + 3; r1++) {
      for (let r2 = k + 1; r2 <= k + 3; r2++) {
        if (binomial(r1, k) * binomial(r2, k) > maxTables) continue;
        out.push(planTwoLevel(k, r1, r2));
      }
    }
  }
  return out;
}

function checkOptions(options: PlanOptions): { k: number; n: number; maxTables: number; minPrefix: number; budget: number } {
  const { k, expectedSize } = options;
  const problems: string[] = [];
  if (!Number.isInteger(k) || k < 0 || k > 16) problems.push(`k must be an integer in 0..16, got ${String(k)}`);
  if (!(typeof expectedSize === 'number' && expectedSize >= 1 && Number.isFinite(expectedSize))) {
    problems.push(`expectedSize must be a positive number, got ${String(expectedSize)}`);
  }
  const maxTables = options.maxTables ?? DEFAULT_MAX_TABLES;
  if (!Number.isInteger(maxTables) || maxTables < 1) problems.push(`maxTables must be a positive integer, got ${String(maxTables)}`);
  const minPrefix = options.minPrefixBits ?? 1;
  if (!Number.isInteger(minPrefix) || minPrefix < 1 || minPrefix > 64) problems.push(`minPrefixBits must be an integer in 1..64`);
  const budget = options.memoryBudgetBytes ?? Number.POSITIVE_INFINITY;
  if (!(budget > 0)) problems.push(`memoryBudgetBytes must be positive, got ${String(budget)}`);
  if (problems.length > 0) throw new DedupError('PLAN_INVALID', problems.join('; '), { details: { problems } });
  return { k, n: expectedSize, maxTables, minPrefix, budget };
}

function choose(options: PlanOptions, cost: (plan: TablePlan, n: number) => number): TablePlan {
  const { k, n, maxTables, minPrefix, budget } = checkOptions(options);
  let best: TablePlan | undefined;
  let bestCost = Number.POSITIVE_INFINITY;
  for (const plan of candidateDesigns(k, maxTables)) {
    const p = Math.min(...prefixes(plan));
    if (p < minPrefix) continue;
    if (bytesPerFingerprint(plan.tables.length, n) * n > budget) continue;
    const c = cost(plan, n);
    if (c < bestCost || (c === bestCost && best !== undefined && plan.tables.length < best.tables.length)) {
      best = plan;
      bestCost = c;
    }
  }
  if (best === undefined) {
    throw new DedupError('PLAN_INVALID', `no table design answers k=${k} for ${n} fingerprints within the limits`, {
      details: { k, expectedSize: n, maxTables, minPrefixBits: minPrefix, memoryBudgetBytes: options.memoryBudgetBytes },
    });
  }
  return best;
}

/** Online design: cheapest insert + query within the limits. */
export function planTables(options: PlanOptions): TablePlan {
  return choose(options, queryCost);
}

/** Design for findAllPairs over n fingerprints: t sorts plus the pairs inside prefix groups. */
export function planAllPairs(k: number, n: number, maxTables = DEFAULT_MAX_TABLES): TablePlan {
  return choose({ k, expectedSize: Math.max(1, n), maxTables }, allPairsCost);
}
