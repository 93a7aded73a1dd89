/**
 * The product's detection targets, evaluated on a scored stream (pure).
 *
 *   - F1 at least 0.98;
 *   - distinct pages (originals) called duplicate at most 0.1%;
 *   - every near-duplicate kind recalled at least 0.95;
 *   - every damaged real page decided: no error (or missing) verdict on a
 *     page of kind 'damaged'.
 *
 * Each target is "met" when the observed value meets it, and the Wilson 95%
 * interval says whether the stream is large enough to show it: `clears` is
 * true when the whole interval is on the target's side. A target met by the
 * point estimate whose interval straddles the threshold is met on this
 * stream, not demonstrated for the next one.
 *
 * F1 is not a binomial proportion; its interval is the F1 of the interval
 * ends of precision and recall, each a Wilson interval at 97.5%, so that both
 * cover (and with them F1, which grows with both) with probability at least
 * 95% (Bonferroni).
 */
import { NATURAL_NEAR_DUPLICATE_KINDS, NEAR_DUPLICATE_KINDS } from './labels.js';
import type { Scores } from './score.js';
import { wilsonInterval } from './stats.js';

export const TARGETS = {
  f1: 0.98,
  distinctCalledDuplicate: 0.001,
  kindRecall: 0.95,
  damagedUndecided: 0,
} as const;

/** Two-sided 97.5% normal quantile (1 - 0.025/2), for the Bonferroni F1 interval. */
export const Z975 = 2.241402727604947;

export interface TargetRow {
  /** What is measured, as the report says it. */
  readonly target: string;
  readonly direction: 'at-least' | 'at-most';
  readonly threshold: number;
  /** Observed value (null when nothing was measured). */
  readonly value: number | null;
  /** Counts behind the value: successes of trials (for F1, true positives and the pages it rests on). */
  readonly count: number;
  readonly of: number;
  /** 95% interval of the value. */
  readonly interval: readonly [number, number] | null;
  /** The observed value meets the target. */
  readonly met: boolean;
  /** The whole interval meets it. */
  readonly clears: boolean;
}

function f1Of(p: number, r: number): number {
  return p + r === 0 ? 0 : (2 * p * r) / (p + r);
}

/** F1 with its interval from precision and recall's Wilson intervals at 97.5% each; null when either is undefined. */
export function f1WithInterval(truePositives: number, duplicateVerdicts: number, positives: number): { f1: number; interval: [number, number] } | null {
  const p = wilsonInterval(truePositives, duplicateVerdicts, Z975);
  const r = wilsonInterval(truePositives, positives, Z975);
  if (p === null || r === null) return null;
  return { f1: f1Of(truePositives / duplicateVerdicts, truePositives / positives), interval: [f1Of(p[0], r[0]), f1Of(p[1], r[1])] };
}

function row(target: string, direction: 'at-least' | 'at-most', threshold: number, value: number | null, count: number, of: number, interval: readonly [number, number] | null): TargetRow {
  const ok = (x: number): boolean => (direction === 'at-least' ? x >= threshold : x <= threshold);
  return { target, direction, threshold, value, count, of, interval, met: value !== null && ok(value), clears: interval !== null && ok(direction === 'at-least' ? interval[0] : interval[1]) };
}

/** The targets table for one scored stream: F1, distinct pages, one row per near-duplicate kind present, damaged pages decided. */
export function evaluateTargets(scores: Scores): TargetRow[] {
  const o = scores.overall;
  const called = o.truePositives + o.wrongMatches + o.falsePositives;
  const f1 = f1WithInterval(o.truePositives, called, o.positives);
  const rows: TargetRow[] = [row('F1', 'at-least', TARGETS.f1, f1?.f1 ?? null, o.truePositives, o.positives, f1?.interval ?? null)];
  rows.push(row('distinct pages (originals) called duplicate', 'at-most', TARGETS.distinctCalledDuplicate, o.originals === 0 ? null : o.originalsCalledDuplicate / o.originals, o.originalsCalledDuplicate, o.originals, wilsonInterval(o.originalsCalledDuplicate, o.originals)));
  for (const kind of [...NEAR_DUPLICATE_KINDS, ...NATURAL_NEAR_DUPLICATE_KINDS]) {
    const g = scores.byKind[kind];
    if (g === undefined || g.positives === 0) continue;
    rows.push(row(`recall: ${kind}`, 'at-least', TARGETS.kindRecall, g.truePositives / g.positives, g.truePositives, g.positives, wilsonInterval(g.truePositives, g.positives)));
  }
  const damaged = scores.byKind.damaged;
  if (damaged !== undefined && damaged.pages > 0) {
    const undecided = damaged.errors + damaged.missing;
    rows.push(row('damaged pages left undecided (error or missing verdict)', 'at-most', TARGETS.damagedUndecided, undecided / damaged.pages, undecided, damaged.pages, wilsonInterval(undecided, damaged.pages)));
  }
  return rows;
}
