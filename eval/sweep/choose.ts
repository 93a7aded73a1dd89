/** Decisions the sweep makes from its numbers (pure, unit-tested). */
import { describePlan, planTables } from '../../src/index/index.js';
import type { VerdictLine } from '../score.js';
import type { ConfigResult, PlanCostRow } from './types.js';

/**
 * The recommended configuration: among the product's own configurations
 * (prototypes excluded) meeting the FPR target at k = 3,
 * the best worst-kind recall (then F1). The current defaults stay unless the
 * winner beats their worst-kind recall by more than two standard errors: a
 * difference of a page or two is noise, not a reason to change the product.
 */
export function chooseRecommended(results: readonly ConfigResult[]): { choice: ConfigResult; best: ConfigResult; why: string } {
  const rank = (r: ConfigResult): [number, number, number] => [r.meetsFprTarget ? 1 : 0, r.worstKindAtDefaultK?.recall ?? 0, r.atDefaultK.overall.f1 ?? 0];
  const best = [...results].filter((r) => !r.prototype).sort((a, b) => {
    const x = rank(a);
    const y = rank(b);
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return y[i]! - x[i]!;
    return 0;
  })[0]!;
  const base = results.find((r) => r.name === 'default');
  if (base === undefined || best === base || !base.meetsFprTarget || base.worstKindAtDefaultK === null || best.worstKindAtDefaultK === null) {
    return { choice: best, best, why: best === base ? 'the defaults rank first' : 'the defaults miss the target' };
  }
  const se = (w: { kind: string; recall: number }, r: ConfigResult): number => {
    const n = r.atDefaultK.byKind[w.kind]?.positives ?? 1;
    return (w.recall * (1 - w.recall)) / Math.max(1, n);
  };
  const gap = best.worstKindAtDefaultK.recall - base.worstKindAtDefaultK.recall;
  const twoSe = 2 * Math.sqrt(se(best.worstKindAtDefaultK, best) + se(base.worstKindAtDefaultK, base));
  return gap > twoSe
    ? { choice: best, best, why: `${best.name} beats the defaults' worst-kind recall by ${gap.toFixed(3)} (> 2 SE = ${twoSe.toFixed(3)})` }
    : { choice: base, best, why: `${best.name} ranks first by ${gap.toFixed(3)} worst-kind recall, within 2 SE (${twoSe.toFixed(3)}): keep the defaults` };
}

/** Compares the sweep's verdicts with the batch CLI's, line by line. */
export function compareVerdicts(ours: readonly VerdictLine[], theirs: readonly VerdictLine[]): { compared: number; same: number; firstDifferences: string[] } {
  const byId = new Map<string, VerdictLine>();
  theirs.forEach((v, i) => byId.set(v.id ?? ours[(v.line ?? i + 1) - 1]?.id ?? '', v));
  let same = 0;
  const firstDifferences: string[] = [];
  for (const v of ours) {
    const t = byId.get(v.id ?? '');
    const key = (x: VerdictLine | undefined): string => (x === undefined ? 'missing' : x.error !== undefined ? `error ${x.error.split(':')[0]}` : `${x.verdict} ${x.duplicateOf ?? ''} ${x.distance ?? ''}`);
    if (key(v) === key(t)) same++;
    else if (firstDifferences.length < 5) firstDifferences.push(`${v.id}: sweep "${key(v)}" vs CLI "${key(t)}"`);
  }
  return { compared: ours.length, same, firstDifferences };
}

/** What larger k costs in the index: the planner's plan for k at N fingerprints. */
export function planCosts(ks: readonly number[], sizes: readonly number[]): PlanCostRow[] {
  const out: PlanCostRow[] = [];
  for (const n of sizes) {
    for (const k of ks) {
      const plan = planTables({ k, expectedSize: n });
      const cost = describePlan(plan, n);
      out.push({ k, n, blocks: plan.blockWidths.join(','), tables: cost.tables, minPrefixBits: cost.minPrefixBits, candidatesPerProbe: Math.round(cost.expectedCandidatesPerProbe * 10) / 10, bytesPerFingerprint: Math.round(cost.bytesPerFingerprint * 10) / 10 });
    }
  }
  return out;
}

