/**
 * What the sweep reports beyond P/R per k: where simhash runs out (the
 * distance each near-duplicate needs, by kind and by page size) and what a
 * second-stage check buys. Pure functions over fingerprint tables.
 */
import { popcount32 } from '../../src/fingerprint/fingerprint-hex.js';
import { isNearDuplicateKind, type Label } from '../labels.js';
import { scoreVerdicts, type GroupScore, type VerdictLine } from '../score.js';
import { NO_MATCH, type FingerprintTable } from './nearest.js';

export interface DistanceSummary {
  readonly pages: number;
  /** Share of pages whose decisive distance is <= k, for k = 0..10. */
  readonly withinK: number[];
  readonly median: number | null;
  readonly p90: number | null;
  /** Pages that cannot be matched at any k (error, or short without an exact twin). */
  readonly unreachable: number;
}

function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

export function summarizeDistances(distances: readonly number[], maxK = 10): DistanceSummary {
  const reachable = distances.filter((d) => d !== NO_MATCH).sort((a, b) => a - b);
  const withinK: number[] = [];
  for (let k = 0; k <= maxK; k++) withinK.push(distances.length === 0 ? 0 : reachable.filter((d) => d <= k).length / distances.length);
  return { pages: distances.length, withinK, median: percentile(reachable, 0.5), p90: percentile(reachable, 0.9), unreachable: distances.length - reachable.length };
}

/** Page size buckets by number of distinct features. */
export const FEATURE_BUCKETS: readonly (readonly [string, number, number])[] = [
  ['<100', 0, 100],
  ['100-299', 100, 300],
  ['300-999', 300, 1000],
  ['1000-2999', 1000, 3000],
  ['>=3000', 3000, Number.POSITIVE_INFINITY],
];

export function featureBucket(features: number): string {
  for (const [name, lo, hi] of FEATURE_BUCKETS) if (features >= lo && features < hi) return name;
  return FEATURE_BUCKETS[FEATURE_BUCKETS.length - 1]![0];
}

/** Decisive distances grouped by `key` (skipping pages where key returns null). */
export function distancesBy(labels: readonly Label[], decisive: Uint8Array, key: (label: Label, i: number) => string | null, order?: readonly string[]): Record<string, DistanceSummary> {
  const groups = new Map<string, number[]>();
  labels.forEach((l, i) => {
    const k = key(l, i);
    if (k === null) return;
    const list = groups.get(k) ?? [];
    list.push(decisive[i]!);
    groups.set(k, list);
  });
  const rank = (k: string): number => (order === undefined || !order.includes(k) ? Number.POSITIVE_INFINITY : order.indexOf(k));
  return Object.fromEntries(
    [...groups].sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, summarizeDistances(v)]),
  );
}

export interface TwoStageResult {
  readonly k1: number;
  readonly k2: number;
  readonly overall: GroupScore;
  readonly byKind: Readonly<Record<string, GroupScore>>;
}

/**
 * A second-stage check: a candidate within k1 bits of the first fingerprint
 * is confirmed only if it is also within k2 bits of a second, independently
 * computed fingerprint (another feature configuration: 8 more bytes per page
 * in the product). The closest confirmed candidate by the first distance
 * wins, ties to the earliest.
 */
export function twoStageVerdicts(first: FingerprintTable, second: FingerprintTable, k1: number, k2: number): VerdictLine[] {
  const n = first.ids.length;
  const out: VerdictLine[] = [];
  for (let i = 0; i < n; i++) {
    const id = first.ids[i]!;
    const error = first.errors[i] ?? second.errors[i];
    if (error !== null && error !== undefined) {
      out.push({ id, error });
      continue;
    }
    let best = -1;
    let bestD = NO_MATCH;
    for (let j = 0; j < i; j++) {
      if (first.errors[j] !== null || second.errors[j] !== null) continue;
      const d1 = popcount32((first.hi[i]! ^ first.hi[j]!) >>> 0) + popcount32((first.lo[i]! ^ first.lo[j]!) >>> 0);
      if (d1 > k1 || d1 >= bestD) continue;
      const shortPair = first.short[i] !== 0 || first.short[j] !== 0;
      if (shortPair && d1 > 0) continue;
      const d2 = popcount32((second.hi[i]! ^ second.hi[j]!) >>> 0) + popcount32((second.lo[i]! ^ second.lo[j]!) >>> 0);
      if (d2 > k2 && !(shortPair && d1 === 0)) continue;
      best = j;
      bestD = d1;
    }
    out.push(best < 0 ? { id, verdict: 'novel', duplicateOf: null, distance: null } : { id, verdict: 'duplicate', duplicateOf: first.ids[best]!, distance: bestD });
  }
  return out;
}

export function twoStageGrid(labels: readonly Label[], first: FingerprintTable, second: FingerprintTable, k1s: readonly number[], k2s: readonly number[]): TwoStageResult[] {
  const out: TwoStageResult[] = [];
  for (const k1 of k1s) {
    for (const k2 of k2s) {
      const s = scoreVerdicts(labels, twoStageVerdicts(first, second, k1, k2));
      out.push({ k1, k2, overall: s.overall, byKind: s.byKind });
    }
  }
  return out;
}

/** The smallest recall over near-duplicate kinds (null if a kind has none). */
export function worstKindRecall(byKind: Readonly<Record<string, GroupScore>>): { kind: string; recall: number } | null {
  let worst: { kind: string; recall: number } | null = null;
  for (const [kind, g] of Object.entries(byKind)) {
    if (!isNearDuplicateKind(kind) || g.recall === null) continue;
    if (worst === null || g.recall < worst.recall) worst = { kind, recall: g.recall };
  }
  return worst;
}
