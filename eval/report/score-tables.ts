/** Markdown tables of a Scores object (pure; used by the console and the doc). */
import { isNearDuplicateKind } from '../labels.js';
import type { GroupScore, Scores } from '../score.js';
import type { TargetRow } from '../targets.js';
import { frac, fracCI, markdownTable, num, pct } from './format.js';

export function overallLine(s: Scores): string {
  const o = s.overall;
  return [
    `precision ${num(o.precision)}, recall ${num(o.recall)}, F1 ${num(o.f1)}`,
    `precision ${fracCI(o.truePositives, o.truePositives + o.wrongMatches + o.falsePositives)}, recall ${fracCI(o.truePositives, o.positives)} (Wilson 95%)`,
    `false-positive rate on originals ${fracCI(o.originalsCalledDuplicate, o.originals, 2)}`,
    `substantive edits called duplicate ${frac(o.substantiveCalledDuplicate, o.substantive)}`,
    `wrong matches ${o.wrongMatches}, errors ${o.errors}, missing ${o.missing}, unexpected verdict lines ${s.unexpectedVerdicts}`,
  ].join('; ');
}

/** One row per group: P/R/F1 and what went wrong. */
export function groupTable(first: string, groups: Readonly<Record<string, GroupScore>>): string {
  const rows = Object.entries(groups).map(([name, g]) => [
    name,
    String(g.pages),
    g.positives === 0 ? '—' : fracCI(g.truePositives, g.positives),
    num(g.precision),
    num(g.f1),
    g.originals === 0 ? '—' : fracCI(g.originalsCalledDuplicate, g.originals, 2),
    g.substantive === 0 ? '—' : frac(g.substantiveCalledDuplicate, g.substantive),
    String(g.errors + g.missing),
  ]);
  return markdownTable([first, 'pages', 'near-duplicates caught (recall)', 'precision', 'F1', 'originals called duplicate (FPR)', 'substantive edits called duplicate', 'errors + missing'], rows);
}

/** Per kind: recall for near-duplicate kinds, "called duplicate" for the rest. */
export function kindTable(groups: Readonly<Record<string, GroupScore>>): string {
  const rows = Object.entries(groups).map(([kind, g]) => {
    const positive = isNearDuplicateKind(kind);
    return [
      kind,
      positive ? 'near-duplicate' : 'negative',
      String(g.pages),
      positive ? fracCI(g.truePositives, g.positives) : '—',
      positive ? String(g.wrongMatches) : '—',
      positive ? '—' : fracCI(g.falsePositives, g.pages, 2),
      String(g.errors + g.missing),
    ];
  });
  return markdownTable(['kind', 'label', 'pages', 'caught (recall; Wilson 95%)', 'wrong page named', 'called duplicate (Wilson 95%)', 'errors + missing'], rows);
}

export function hostileTable(s: Scores): string {
  const rows = Object.entries(s.hostile).map(([detail, answers]) => [
    detail,
    Object.entries(answers)
      .map(([a, n]) => `${a}${n > 1 ? ` ×${n}` : ''}`)
      .join(', '),
  ]);
  return markdownTable(['hostile input', 'answer'], rows);
}

export function substantiveTable(s: Scores): string {
  const rows = Object.entries(s.bySubstantiveChange).map(([bucket, g]) => [bucket, String(g.substantive), frac(g.substantiveCalledDuplicate, g.substantive)]);
  return markdownTable(['text changed', 'substantive edits', 'called duplicate'], rows);
}

export function chromeTable(s: Scores): string {
  const rows = Object.entries(s.byKindAndChrome)
    .filter(([k]) => isNearDuplicateKind(k.split('/')[0]!) || k.startsWith('original/'))
    .map(([k, g]) => [k, String(g.pages), isNearDuplicateKind(k.split('/')[0]!) ? frac(g.truePositives, g.positives) : frac(g.originalsCalledDuplicate, g.originals, 2)]);
  return markdownTable(['kind / chrome markup', 'pages', 'caught (near-duplicates) or called duplicate (originals)'], rows);
}

/** One row per target: the target, the observed value with its 95% interval, met or missed, and whether the interval clears it. */
export function targetsTable(rows: readonly TargetRow[]): string {
  return markdownTable(
    ['target', 'required', 'observed (95% interval)', 'verdict', 'interval clears the target'],
    rows.map((r) => {
      const digits = r.threshold > 0 && r.threshold < 0.01 ? 2 : 1;
      const required = r.target === 'F1' ? `≥ ${r.threshold.toFixed(2)}` : r.direction === 'at-most' && r.threshold === 0 ? 'none' : `${r.direction === 'at-least' ? '≥' : '≤'} ${pct(r.threshold, digits)}`;
      const observed =
        r.value === null || r.interval === null
          ? '—'
          : r.target === 'F1'
            ? `${num(r.value)} (${num(r.interval[0])}–${num(r.interval[1])})`
            : fracCI(r.count, r.of, digits);
      return [r.target, required, observed, r.met ? '**met**' : '**missed**', r.clears ? 'yes' : 'no'];
    }),
  );
}

export function consoleReport(title: string, s: Scores): string {
  return [
    `## ${title}`,
    '',
    overallLine(s),
    '',
    kindTable(s.byKind),
    '',
    groupTable('language', s.byLanguage),
    '',
    groupTable('site', s.bySite),
    '',
    hostileTable(s),
    '',
    `error codes: ${Object.entries(s.errorCodes).map(([c, n]) => `${c} ${n}`).join(', ') || 'none'}`,
    '',
  ].join('\n');
}

export { pct };
