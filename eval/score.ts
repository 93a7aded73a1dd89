/**
 * Scores duplicate verdicts against the labels. Pure functions, no I/O.
 *
 * A page's verdict is correct when it is
 *   - a near-duplicate kind and the verdict is `duplicate` naming an EARLIER
 *     page of the SAME cluster (true positive), or
 *   - a negative kind (original, substantive edit, hostile) and the verdict is
 *     `novel` or an error (true negative).
 * A duplicate verdict that names the wrong page (another cluster, a later
 * page, itself, an unknown id) is a false positive even on a near-duplicate,
 * and that near-duplicate also counts as missed.
 *
 *   precision = correct duplicate verdicts / all duplicate verdicts
 *   recall    = correct duplicate verdicts / near-duplicate pages
 *   F1        = harmonic mean of the two
 *   FPR on originals = originals called duplicate / originals
 *
 * Errors and missing verdicts are counted apart; on a near-duplicate they are
 * misses, on a negative they are not false positives (the product
 * dead-letters empty and invalid pages, which is the right answer for them).
 */
import { ALL_KINDS, isNearDuplicateKind, type Label } from './labels.js';

export interface VerdictLine {
  readonly id: string | null;
  /** 1-based input line, which error lines carry (the id may be unknown for an unparseable line). */
  readonly line?: number;
  readonly verdict?: 'novel' | 'duplicate';
  readonly duplicateOf?: string | null;
  readonly distance?: number | null;
  readonly fingerprint?: string;
  /** The batch CLI's second-stage outcome, when the stage ran for this page. */
  readonly secondStage?: 'confirmed' | 'rejected';
  readonly error?: string;
}

export interface GroupScore {
  readonly pages: number;
  /** Near-duplicate pages (should be called duplicates). */
  readonly positives: number;
  readonly negatives: number;
  readonly truePositives: number;
  /** Duplicate verdicts on near-duplicates that name the wrong page. */
  readonly wrongMatches: number;
  /** Duplicate verdicts on negative pages. */
  readonly falsePositives: number;
  /** Near-duplicates not correctly detected (novel, wrong match, error, missing). */
  readonly falseNegatives: number;
  readonly originals: number;
  readonly originalsCalledDuplicate: number;
  readonly substantive: number;
  readonly substantiveCalledDuplicate: number;
  readonly errors: number;
  readonly missing: number;
  readonly precision: number | null;
  readonly recall: number | null;
  readonly f1: number | null;
  readonly falsePositiveRateOriginals: number | null;
  readonly duplicateRateSubstantive: number | null;
}

export type Outcome = 'correct' | 'wrong-match' | 'false-positive' | 'missed' | 'novel' | 'error' | 'missing';

export interface Scores {
  readonly overall: GroupScore;
  readonly byKind: Readonly<Record<string, GroupScore>>;
  readonly bySite: Readonly<Record<string, GroupScore>>;
  readonly byLanguage: Readonly<Record<string, GroupScore>>;
  /** Per kind and chrome markup ('ad-banner/opaque'): can the extractor see the chrome? */
  readonly byKindAndChrome: Readonly<Record<string, GroupScore>>;
  /** Substantive edits by share of text changed (10%-wide buckets). */
  readonly bySubstantiveChange: Readonly<Record<string, GroupScore>>;
  /** Hostile input: what the product answered, per kind of input. */
  readonly hostile: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** Error verdicts by code (the part of `error` before the first colon). */
  readonly errorCodes: Readonly<Record<string, number>>;
  /** Verdict lines for ids that are not in the labels, or repeated. */
  readonly unexpectedVerdicts: number;
}

/** Parses one verdict line; a line that is not a verdict becomes an error verdict. */
export function parseVerdictLine(line: string): VerdictLine {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { id: null, error: 'UNPARSEABLE: verdict line is not JSON' };
  }
  if (value === null || typeof value !== 'object') return { id: null, error: 'UNPARSEABLE: verdict line is not an object' };
  const v = value as Record<string, unknown>;
  const id = typeof v.id === 'string' ? v.id : null;
  if (typeof v.error === 'string') return typeof v.line === 'number' ? { id, line: v.line, error: v.error } : { id, error: v.error };
  const extra = {
    ...(typeof v.fingerprint === 'string' ? { fingerprint: v.fingerprint } : {}),
    ...(v.secondStage === 'confirmed' || v.secondStage === 'rejected' ? { secondStage: v.secondStage as 'confirmed' | 'rejected' } : {}),
  };
  if (v.verdict === 'novel') return { id, verdict: 'novel', duplicateOf: null, distance: null, ...extra };
  if (v.verdict === 'duplicate' && typeof v.duplicateOf === 'string') {
    return { id, verdict: 'duplicate', duplicateOf: v.duplicateOf, distance: typeof v.distance === 'number' ? v.distance : null, ...extra };
  }
  return { id, error: 'MALFORMED: neither a verdict nor an error' };
}

/** The code of an error verdict: "PAGE_EMPTY: no text" -> "PAGE_EMPTY". */
export function errorCodeOf(error: string): string {
  const colon = error.indexOf(':');
  return (colon < 0 ? error : error.slice(0, colon)).trim() || 'UNKNOWN';
}

/** Classifies one page's verdict. `position` maps ids to stream positions. */
export function outcomeOf(label: Label, verdict: VerdictLine | undefined, position: ReadonlyMap<string, number>, clusterOf: ReadonlyMap<string, string>): Outcome {
  if (verdict === undefined) return 'missing';
  if (verdict.error !== undefined) return 'error';
  if (verdict.verdict !== 'duplicate') return 'novel';
  const positive = isNearDuplicateKind(label.kind);
  if (!positive) return 'false-positive';
  const of = verdict.duplicateOf ?? '';
  const at = position.get(of);
  const self = position.get(label.id)!;
  const right = at !== undefined && at < self && clusterOf.get(of) === label.cluster;
  return right ? 'correct' : 'wrong-match';
}

interface Tally {
  pages: number;
  positives: number;
  truePositives: number;
  wrongMatches: number;
  falsePositives: number;
  originals: number;
  originalsCalledDuplicate: number;
  substantive: number;
  substantiveCalledDuplicate: number;
  errors: number;
  missing: number;
}

function emptyTally(): Tally {
  return { pages: 0, positives: 0, truePositives: 0, wrongMatches: 0, falsePositives: 0, originals: 0, originalsCalledDuplicate: 0, substantive: 0, substantiveCalledDuplicate: 0, errors: 0, missing: 0 };
}

function add(t: Tally, label: Label, outcome: Outcome): void {
  t.pages++;
  if (isNearDuplicateKind(label.kind)) t.positives++;
  if (outcome === 'correct') t.truePositives++;
  if (outcome === 'wrong-match') t.wrongMatches++;
  if (outcome === 'false-positive') t.falsePositives++;
  if (outcome === 'error') t.errors++;
  if (outcome === 'missing') t.missing++;
  if (label.kind === 'original') {
    t.originals++;
    if (outcome === 'false-positive') t.originalsCalledDuplicate++;
  }
  if (label.kind === 'substantive-edit') {
    t.substantive++;
    if (outcome === 'false-positive') t.substantiveCalledDuplicate++;
  }
}

const ratio = (a: number, b: number): number | null => (b === 0 ? null : a / b);

export function finishTally(t: Tally): GroupScore {
  const called = t.truePositives + t.wrongMatches + t.falsePositives;
  const precision = ratio(t.truePositives, called);
  const recall = ratio(t.truePositives, t.positives);
  const f1 = precision === null || recall === null ? null : precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return {
    pages: t.pages,
    positives: t.positives,
    negatives: t.pages - t.positives,
    truePositives: t.truePositives,
    wrongMatches: t.wrongMatches,
    falsePositives: t.falsePositives,
    falseNegatives: t.positives - t.truePositives,
    originals: t.originals,
    originalsCalledDuplicate: t.originalsCalledDuplicate,
    substantive: t.substantive,
    substantiveCalledDuplicate: t.substantiveCalledDuplicate,
    errors: t.errors,
    missing: t.missing,
    precision,
    recall,
    f1,
    falsePositiveRateOriginals: ratio(t.originalsCalledDuplicate, t.originals),
    duplicateRateSubstantive: ratio(t.substantiveCalledDuplicate, t.substantive),
  };
}

export function changeBucket(fraction: number): string {
  const lo = Math.min(9, Math.floor(fraction * 10)) * 10;
  return `${lo}-${lo + 10}%`;
}

function sortedRecord<T>(map: Map<string, T>, order?: readonly string[]): Record<string, T> {
  const keys = [...map.keys()].sort((a, b) => {
    const ia = order?.indexOf(a) ?? -1;
    const ib = order?.indexOf(b) ?? -1;
    if (ia !== ib) return (ia < 0 ? 1e9 : ia) - (ib < 0 ? 1e9 : ib);
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return Object.fromEntries(keys.map((k) => [k, map.get(k)!]));
}

/**
 * Scores verdicts (any order) against labels (stream order, one page per
 * input line). An error line without an id is matched by its line number.
 */
export function scoreVerdicts(labels: readonly Label[], verdicts: Iterable<VerdictLine>): Scores {
  const position = new Map<string, number>();
  const clusterOf = new Map<string, string>();
  labels.forEach((l, i) => {
    position.set(l.id, i);
    clusterOf.set(l.id, l.cluster);
  });
  const byId = new Map<string, VerdictLine>();
  let unexpected = 0;
  const errorCodes = new Map<string, number>();
  for (const given of verdicts) {
    const byLine = given.id === null && given.line !== undefined ? labels[given.line - 1]?.id : undefined;
    const v = byLine === undefined ? given : { ...given, id: byLine };
    if (v.error !== undefined) errorCodes.set(errorCodeOf(v.error), (errorCodes.get(errorCodeOf(v.error)) ?? 0) + 1);
    if (v.id === null || !position.has(v.id) || byId.has(v.id)) {
      unexpected++;
      continue;
    }
    byId.set(v.id, v);
  }
  const overall = emptyTally();
  const groups = { kind: new Map<string, Tally>(), kindChrome: new Map<string, Tally>(), site: new Map<string, Tally>(), language: new Map<string, Tally>(), change: new Map<string, Tally>() };
  const hostile = new Map<string, Record<string, number>>();
  const into = (map: Map<string, Tally>, key: string, label: Label, outcome: Outcome): void => {
    let t = map.get(key);
    if (t === undefined) map.set(key, (t = emptyTally()));
    add(t, label, outcome);
  };
  for (const label of labels) {
    const verdict = byId.get(label.id);
    const outcome = outcomeOf(label, verdict, position, clusterOf);
    add(overall, label, outcome);
    into(groups.kind, label.kind, label, outcome);
    if (label.chromeMarkup !== null && label.chromeMarkup !== undefined) into(groups.kindChrome, `${label.kind}/${label.chromeMarkup}`, label, outcome);
    if (label.kind !== 'hostile') {
      into(groups.site, label.site, label, outcome);
      into(groups.language, label.language, label, outcome);
    }
    if (label.kind === 'substantive-edit' && label.changedFraction !== null) into(groups.change, changeBucket(label.changedFraction), label, outcome);
    if (label.kind === 'hostile') {
      const key = label.detail ?? 'hostile';
      const answers = hostile.get(key) ?? {};
      const answer = verdict?.error !== undefined ? `error:${errorCodeOf(verdict.error)}` : outcome === 'false-positive' ? 'duplicate' : outcome;
      answers[answer] = (answers[answer] ?? 0) + 1;
      hostile.set(key, answers);
    }
  }
  const finish = (map: Map<string, Tally>, order?: readonly string[]): Record<string, GroupScore> => {
    const out = new Map<string, GroupScore>();
    for (const [k, t] of map) out.set(k, finishTally(t));
    return sortedRecord(out, order);
  };
  return {
    overall: finishTally(overall),
    byKind: finish(groups.kind, ALL_KINDS),
    byKindAndChrome: finish(groups.kindChrome, ALL_KINDS.flatMap((k) => [`${k}/semantic`, `${k}/opaque`])),
    bySite: finish(groups.site),
    byLanguage: finish(groups.language, ['en', 'zh-cn', 'zh-tw', 'ja', 'de', 'fr']),
    bySubstantiveChange: finish(groups.change),
    hostile: sortedRecord(hostile),
    errorCodes: sortedRecord(errorCodes),
    unexpectedVerdicts: unexpected,
  };
}
