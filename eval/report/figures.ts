/** The SVG figures of the quality report, built from sweep.json (pure). */
import { NEAR_DUPLICATE_KINDS } from '../labels.js';
import type { SweepFile } from '../sweep/types.js';
import { renderChart, type Panel, type Series } from './svg-chart.js';

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

/** Figure 1 of the paper for each feature configuration: precision and recall against k. */
export function prVsKFigure(sweep: SweepFile): string {
  const panels: Panel[] = sweep.configs.map((c) => {
    const series: Series[] = [
      { name: 'precision', color: '#1f77b4', points: c.curve.map((p) => [p.k, p.precision] as const) },
      { name: 'recall', color: '#d62728', dash: '5 3', points: c.curve.map((p) => [p.k, p.recall] as const) },
      { name: 'substantive edits called duplicate', color: '#7f7f7f', dash: '1 3', points: c.curve.map((p) => [p.k, p.duplicateRateSubstantive] as const) },
    ];
    return { title: `${c.name}${c.name === sweep.recommended ? ' (recommended)' : ''}`, series };
  });
  return renderChart(panels, {
    title: 'Precision and recall of duplicate verdicts against k (64-bit simhash)',
    subtitle: `${sweep.corpus.pages} labelled pages from Debian-packaged documentation; one panel per feature configuration; dotted line at k = ${sweep.defaultK}`,
    xLabel: 'k (bits)',
    yLabel: 'share',
    xDomain: [0, 10],
    yDomain: [0, 1],
    xTicks: [0, 2, 4, 6, 8, 10],
    yTicks: [0, 0.25, 0.5, 0.75, 1],
    yFormat: (y) => y.toFixed(2),
    markX: sweep.defaultK,
    columns: 4,
    panelWidth: 260,
    panelHeight: 200,
  });
}

/** Recall per near-duplicate kind against k for one configuration, with the false-positive rates. */
export function recallByKindFigure(sweep: SweepFile, configName: string): string {
  const c = sweep.configs.find((x) => x.name === configName)!;
  const series: Series[] = NEAR_DUPLICATE_KINDS.map((kind, i) => ({ name: kind, color: PALETTE[i % PALETTE.length]!, points: c.curve.map((p) => [p.k, p.byKind[kind] ?? null] as const) }));
  const negatives: Series[] = [
    { name: 'originals called duplicate', color: '#000000', dash: '6 3', points: c.curve.map((p) => [p.k, p.falsePositiveRateOriginals] as const) },
    { name: 'substantive edits called duplicate', color: '#7f7f7f', dash: '1 3', points: c.curve.map((p) => [p.k, p.duplicateRateSubstantive] as const) },
  ];
  return renderChart(
    [
      { title: 'near-duplicates caught (recall), by kind', series },
      { title: 'negatives called duplicate', series: negatives },
    ],
    {
      title: `Where simhash runs out: configuration "${configName}"`,
      subtitle: 'left: recall of each near-duplicate kind; right: distinct originals and substantive edits called duplicate',
      xLabel: 'k (bits)',
      yLabel: 'share',
      xDomain: [0, 10],
      yDomain: [0, 1],
      xTicks: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      yTicks: [0, 0.2, 0.4, 0.6, 0.8, 1],
      yFormat: (y) => y.toFixed(1),
      markX: sweep.defaultK,
      columns: 2,
      panelWidth: 470,
      panelHeight: 330,
    },
  );
}
