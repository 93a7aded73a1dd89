import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { markdownTable, markerNames, pct, replaceBetweenMarkers } from '../../../eval/report/format.js';
import { renderChart } from '../../../eval/report/svg-chart.js';
import { chooseRecommended } from '../../../eval/sweep/choose.js';
import { dropChromeShapedBlocks, reweightBlocks, DEFAULT_DENSITY } from '../../../eval/sweep/density-filter.js';
import { summarizeDistances, featureBucket } from '../../../eval/sweep/analysis.js';
import { NO_MATCH } from '../../../eval/sweep/nearest.js';
import type { ConfigResult } from '../../../eval/sweep/types.js';
import type { GroupScore, Scores } from '../../../eval/score.js';

describe('format', () => {
  it('replaces only the text between markers and lists them', () => {
    const doc = 'intro 42\n<!-- eval:begin a -->\nold\n<!-- eval:end a -->\nmiddle\n<!-- eval:begin b -->\n<!-- eval:end b -->\n';
    const out = replaceBetweenMarkers(doc, 'a', 'new');
    assert.equal(out, 'intro 42\n<!-- eval:begin a -->\nnew\n<!-- eval:end a -->\nmiddle\n<!-- eval:begin b -->\n<!-- eval:end b -->\n');
    assert.deepEqual(markerNames(doc), ['a', 'b']);
    assert.throws(() => replaceBetweenMarkers(doc, 'c', 'x'));
  });

  it('writes Markdown tables with escaped pipes and null as a dash', () => {
    assert.equal(markdownTable(['a', 'b'], [['x|y', '1']]), '| a | b |\n| --- | ---: |\n| x\\|y | 1 |');
    assert.equal(pct(null), '—');
    assert.equal(pct(0.1234), '12.3%');
  });
});

describe('svg chart', () => {
  it('is deterministic, balanced and draws one polyline per series segment', () => {
    const panels = [
      { title: 'a < b', series: [{ name: 'p', color: '#000', points: [[0, 0.5], [1, null], [2, 0.7], [3, 0.8]] as const }] },
      { title: 'two', series: [{ name: 'r', color: '#f00', dash: '4 2', points: [[0, 1], [3, 0]] as const }] },
    ];
    const options = { title: 'T & U', xLabel: 'k', yLabel: 'share', xDomain: [0, 3] as const, yDomain: [0, 1] as const, xTicks: [0, 1, 2, 3], yTicks: [0, 0.5, 1], markX: 1, columns: 2, panelWidth: 200, panelHeight: 150 };
    const svg = renderChart(panels, options);
    assert.equal(svg, renderChart(panels, options));
    assert.ok(svg.startsWith('<svg ') && svg.trim().endsWith('</svg>'));
    assert.equal((svg.match(/<polyline /g) ?? []).length, 3);
    assert.equal((svg.match(/<g>/g) ?? []).length, (svg.match(/<\/g>/g) ?? []).length);
    assert.ok(svg.includes('T &amp; U') && svg.includes('a &lt; b'));
  });
});

describe('analysis helpers', () => {
  it('summarizes decisive distances', () => {
    const s = summarizeDistances([0, 0, 1, 3, 4, 9, NO_MATCH], 10);
    assert.equal(s.pages, 7);
    assert.equal(s.unreachable, 1);
    assert.equal(s.withinK[3], 4 / 7);
    assert.equal(s.median, 3);
    assert.equal(featureBucket(99), '<100');
    assert.equal(featureBucket(5000), '>=3000');
  });
});

function group(recall: number, positives: number): GroupScore {
  return { pages: positives, positives, negatives: 0, truePositives: Math.round(recall * positives), wrongMatches: 0, falsePositives: 0, falseNegatives: 0, originals: 0, originalsCalledDuplicate: 0, substantive: 0, substantiveCalledDuplicate: 0, errors: 0, missing: 0, precision: 1, recall, f1: 1, falsePositiveRateOriginals: 0, duplicateRateSubstantive: 0 };
}

function config(name: string, worst: number, options: { fpr?: boolean; prototype?: boolean } = {}): ConfigResult {
  const byKind = { 'word-edit': group(worst, 150) };
  const atDefaultK = { overall: group(0.9, 1000), byKind } as unknown as Scores;
  return {
    name,
    prototype: options.prototype ?? false,
    what: '',
    change: '',
    options: {} as ConfigResult['options'],
    fingerprintSeconds: 0,
    errors: 0,
    shortPages: 0,
    curve: [],
    atDefaultK,
    worstKindAtDefaultK: { kind: 'word-edit', recall: worst },
    meetsFprTarget: options.fpr ?? true,
    distancesByKind: {},
  };
}

describe('chooseRecommended', () => {
  it('keeps the defaults unless a product configuration is better by more than two standard errors', () => {
    assert.equal(chooseRecommended([config('default', 0.85), config('x', 0.87)]).choice.name, 'default');
    assert.equal(chooseRecommended([config('default', 0.7), config('x', 0.95)]).choice.name, 'x');
    assert.equal(chooseRecommended([config('default', 0.95, { fpr: false }), config('x', 0.8)]).choice.name, 'x');
    assert.equal(chooseRecommended([config('default', 0.7), config('proto', 0.99, { prototype: true })]).choice.name, 'default');
  });
});

describe('density prototype', () => {
  const html = '<body><ul><li><a href="/1">Recent post one</a></li><li><a href="/2">Recent post two</a></li></ul><div>12,345 views</div><p>This paragraph is the content a reader came for, long enough to count as prose.</p><p>Another paragraph of real content that the reader wants to see on this page.</p></body>';

  it('blanks link-dense and letter-poor blocks and keeps prose', () => {
    const out = dropChromeShapedBlocks(html);
    assert.ok(!out.includes('Recent post') && !out.includes('12,345'));
    assert.ok(out.includes('content a reader came for'));
    assert.equal(dropChromeShapedBlocks('<p><a href="/">only a link in a long enough block of text here</a></p>'), '<p><a href="/">only a link in a long enough block of text here</a></p>');
  });

  it('can count prose three times instead', () => {
    const out = reweightBlocks(html, DEFAULT_DENSITY, 3);
    assert.equal(out.split('content a reader came for').length - 1, 3);
    assert.equal(out.split('Recent post one').length - 1, 1);
  });
});

describe('docs/quality.md and eval/results (derived artifacts)', () => {
  const root = new URL('../../../../', import.meta.url);
  const results = new URL('eval/results/', root).pathname;

  it('the committed doc and figures are what eval/report generates from the committed results', async () => {
    const { readFileSync } = await import('node:fs');
    const { readResults, renderDoc, renderFigures } = await import('../../../eval/report/render-doc.js');
    const inputs = readResults(results);
    const doc = readFileSync(new URL('docs/quality.md', root), 'utf8');
    assert.equal(renderDoc(doc, inputs), doc, 'docs/quality.md is stale or edited by hand between markers: run bash eval/run.sh');
    for (const [name, svg] of Object.entries(renderFigures(inputs))) {
      assert.equal(readFileSync(`${results}${name}`, 'utf8'), svg, `${name} is stale: run bash eval/run.sh`);
    }
  });
});
