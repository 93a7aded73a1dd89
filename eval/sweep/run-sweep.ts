/**
 * The paper's Figure 1 for our features: precision and recall against
 * k = 0..10 for each feature configuration, by brute force over the
 * fingerprints (nearest.ts), plus where simhash runs out and what a second
 * stage buys (analysis.ts). Writes eval/results/sweep.json.
 *
 *   node dist/eval/sweep/run-sweep.js [--pages P] [--labels L] [--out F]
 *        [--threads N] [--configs a,b,c]
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ALL_KINDS, isNearDuplicateKind } from '../labels.js';
import { CONFIG_OPTIONS } from '../../src/config.js';
import { parseVerdictLine, scoreVerdicts, type Scores } from '../score.js';
import { FEATURE_BUCKETS, distancesBy, featureBucket, twoStageGrid, worstKindRecall, type TwoStageResult } from './analysis.js';
import { chooseRecommended, compareVerdicts, planCosts } from './choose.js';
import { confirmedVerdicts, contentSketches, featureSketchSimilarity, featureSketches, sameContentNumbers, sketchConfirmedVerdicts } from './content-sketch.js';
import { SWEEP_CONFIGS, describeChange } from './configs.js';
import { fingerprintAll } from './fingerprint-all.js';
import { loadCorpus } from './load-corpus.js';
import { decisiveDistances, nearestEarlier, verdictsAtK, type FingerprintTable } from './nearest.js';
import { DEFAULT_K, K_VALUES, MAX_FPR_ORIGINALS, type ConfigResult, type PointAtK } from './types.js';

function point(k: number, s: Scores): PointAtK {
  const o = s.overall;
  const byKind: Record<string, number | null> = {};
  for (const [kind, g] of Object.entries(s.byKind)) byKind[kind] = isNearDuplicateKind(kind) ? g.recall : g.pages === 0 ? null : (g.falsePositives + g.wrongMatches) / g.pages;
  const byLanguage: PointAtK['byLanguage'] = {};
  for (const [lang, g] of Object.entries(s.byLanguage)) byLanguage[lang] = { precision: g.precision, recall: g.recall, falsePositiveRateOriginals: g.falsePositiveRateOriginals };
  return {
    k,
    precision: o.precision,
    recall: o.recall,
    f1: o.f1,
    falsePositiveRateOriginals: o.falsePositiveRateOriginals,
    duplicateRateSubstantive: o.duplicateRateSubstantive,
    truePositives: o.truePositives,
    falsePositives: o.falsePositives,
    wrongMatches: o.wrongMatches,
    byKind,
    byLanguage,
  };
}

function compactScores(s: Scores, full: boolean): Partial<Scores> {
  return full ? s : { overall: s.overall, byKind: s.byKind, byLanguage: s.byLanguage };
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export async function main(argv: readonly string[]): Promise<void> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      pages: { type: 'string', default: 'eval/.cache/pages.jsonl' },
      labels: { type: 'string', default: 'eval/.cache/labels.jsonl' },
      out: { type: 'string', default: 'eval/results/sweep.json' },
      threads: { type: 'string', default: '2' },
      configs: { type: 'string', default: '' },
      compare: { type: 'string', default: '' },
    },
  });
  const log = (line: string): void => void process.stderr.write(`sweep: ${line}\n`);
  const wanted = values.configs === '' ? SWEEP_CONFIGS : SWEEP_CONFIGS.filter((c) => values.configs.split(',').includes(c.name));
  const corpus = await loadCorpus(values.pages, values.labels);
  const { labels } = corpus;
  const clusters = labels.map((l) => l.cluster);
  const positive = labels.map((l) => isNearDuplicateKind(l.kind));
  const tables = new Map<string, FingerprintTable>();
  const results: ConfigResult[] = [];
  for (const config of wanted) {
    const started = process.hrtime.bigint();
    const table = await fingerprintAll(corpus.ids, corpus.contents, corpus.errors, config.options, Number(values.threads), config.prepare);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    tables.set(config.name, table);
    const nearest = nearestEarlier(table);
    const curve: PointAtK[] = [];
    let atDefaultK: Scores | undefined;
    for (const k of K_VALUES) {
      const s = scoreVerdicts(labels, verdictsAtK(table, nearest, k));
      curve.push(point(k, s));
      if (k === DEFAULT_K) atDefaultK = s;
    }
    const decisive = decisiveDistances(table, clusters, positive);
    const fpr = atDefaultK!.overall.falsePositiveRateOriginals;
    const result: ConfigResult = {
      name: config.name,
      prototype: config.prepare !== undefined,
      what: config.what,
      change: describeChange(config.options),
      options: config.options,
      fingerprintSeconds: Math.round(seconds * 100) / 100,
      errors: table.errors.filter((e) => e !== null).length,
      shortPages: table.short.reduce((n, s) => n + s, 0),
      curve,
      atDefaultK: atDefaultK!,
      worstKindAtDefaultK: worstKindRecall(atDefaultK!.byKind),
      meetsFprTarget: fpr !== null && fpr <= MAX_FPR_ORIGINALS,
      distancesByKind: distancesBy(labels, decisive, (l) => (l.kind === 'hostile' ? null : l.kind), ALL_KINDS),
    };
    results.push(result);
    const p3 = curve[DEFAULT_K]!;
    log(`${config.name.padEnd(17)} ${seconds.toFixed(1)} s  k=3: P=${p3.precision?.toFixed(3)} R=${p3.recall?.toFixed(3)} FPR(originals)=${p3.falsePositiveRateOriginals?.toFixed(4)} worst=${result.worstKindAtDefaultK?.kind}:${result.worstKindAtDefaultK?.recall.toFixed(3)}`);
  }

  const chosen = chooseRecommended(results);
  const recommended = chosen.choice;
  log(`recommended: ${recommended.name} (${chosen.why})`);
  const table = tables.get(recommended.name)!;
  const decisive = decisiveDistances(table, clusters, positive);
  const runsOut = {
    config: recommended.name,
    /** Word edits: needed distance by page size (distinct features). */
    wordEditBySize: distancesBy(labels, decisive, (l, i) => (l.kind === 'word-edit' ? featureBucket(table.features[i]!) : null), FEATURE_BUCKETS.map((b) => b[0])),
    /** Substantive edits: distance to the page they came from, by share of text changed. */
    substantiveByChange: distancesBy(labels, decisive, (l) => (l.kind === 'substantive-edit' && l.changedFraction !== null ? `${Math.min(9, Math.floor(l.changedFraction * 10)) * 10}-${Math.min(9, Math.floor(l.changedFraction * 10)) * 10 + 10}%` : null)),
    /** Chrome kinds by how the theme marks the chrome up. */
    chromeByMarkup: distancesBy(labels, decisive, (l) => (['ad-banner', 'widget', 'counter-timestamp', 'mixed'].includes(l.kind) && l.chromeMarkup !== null ? `${l.kind}/${l.chromeMarkup}` : null)),
    /** Near-duplicates by language. */
    nearDuplicatesByLanguage: distancesBy(labels, decisive, (l) => (isNearDuplicateKind(l.kind) ? l.language : null)),
  };

  const secondStage = [];
  for (const partner of ['shingles-3', 'words']) {
    const second = tables.get(partner);
    if (second === undefined || partner === recommended.name) continue;
    const grid = twoStageGrid(labels, table, second, [3, 4, 5, 6, 7, 8, 10], [2, 3, 4, 5, 6, 8]).map((g: TwoStageResult) => ({
      k1: g.k1,
      k2: g.k2,
      precision: g.overall.precision,
      recall: g.overall.recall,
      f1: g.overall.f1,
      falsePositiveRateOriginals: g.overall.falsePositiveRateOriginals,
      duplicateRateSubstantive: g.overall.duplicateRateSubstantive,
      worstKind: worstKindRecall(g.byKind),
      recallByKind: Object.fromEntries(Object.entries(g.byKind).filter(([k]) => isNearDuplicateKind(k)).map(([k, v]) => [k, v.recall])),
    }));
    secondStage.push({ first: recommended.name, second: partner, grid });
  }

  const sketches = contentSketches(corpus.contents);
  const sketchGrid = [];
  for (const k1 of [3, 4, 6, 8, 10]) {
    for (const threshold of [0.8, 0.85, 0.9, 0.95]) {
      const sc = scoreVerdicts(labels, sketchConfirmedVerdicts(table, sketches, k1, threshold));
      sketchGrid.push({
        k1,
        k2: threshold,
        precision: sc.overall.precision,
        recall: sc.overall.recall,
        f1: sc.overall.f1,
        falsePositiveRateOriginals: sc.overall.falsePositiveRateOriginals,
        duplicateRateSubstantive: sc.overall.duplicateRateSubstantive,
        worstKind: worstKindRecall(sc.byKind),
        recallByKind: Object.fromEntries(Object.entries(sc.byKind).filter(([k]) => isNearDuplicateKind(k)).map(([k, v]) => [k, v.recall])),
      });
    }
  }
  secondStage.push({ first: recommended.name, second: 'content-sketch', grid: sketchGrid });

  // The product's own second sketch: b-bit one-permutation MinHash of the default features (64 bytes
  // per page), computed once for the grid below and the CLI cross-check.
  let defaultSketches: Promise<Uint8Array> | undefined;
  const sketchesOfDefault = (): Promise<Uint8Array> => (defaultSketches ??= featureSketches(corpus.contents));
  if (recommended.name === 'default') {
    const fs = await sketchesOfDefault();
    const grid = [];
    for (const k1 of [3, 4, 6, 8, 10]) {
      for (const threshold of [0.5, 0.6, 0.7, 0.8, 0.9]) {
        const sc = scoreVerdicts(labels, confirmedVerdicts(table, (i, j) => featureSketchSimilarity(fs, i, j), k1, threshold));
        grid.push({
          k1,
          k2: threshold,
          precision: sc.overall.precision,
          recall: sc.overall.recall,
          f1: sc.overall.f1,
          falsePositiveRateOriginals: sc.overall.falsePositiveRateOriginals,
          duplicateRateSubstantive: sc.overall.duplicateRateSubstantive,
          worstKind: worstKindRecall(sc.byKind),
          recallByKind: Object.fromEntries(Object.entries(sc.byKind).filter(([k]) => isNearDuplicateKind(k)).map(([k, v]) => [k, v.recall])),
          hardNegativesCalledDuplicate: sc.byKind['hard-negative'] === undefined ? null : sc.byKind['hard-negative'].falsePositives / sc.byKind['hard-negative'].pages,
        });
      }
    }
    secondStage.push({ first: recommended.name, second: 'feature-sketch', grid });
    log(`second stage (feature sketch): ${grid.map((g) => `k1=${g.k1} J>=${g.k2}: R=${g.recall?.toFixed(3)} FPR=${g.falsePositiveRateOriginals?.toFixed(4)} hard=${g.hardNegativesCalledDuplicate?.toFixed(3)}`).join('; ')}`);
  }

  let cliAgreement = null;
  if (values.compare !== '') {
    // The sweep is the first stage, with the second stage's check of content numbers (which holds
    // within k too): a page the CLI's second stage confirmed (beyond k, or a short page above
    // distance 0, which simhash matches only exactly) is one the first stage called novel, so it is
    // compared as that (and counted).
    const base = tables.get('default');
    const row = new Map(base?.ids.map((id, i) => [id, i]) ?? []);
    const isShort = (id: string | null | undefined): boolean => id != null && base?.short[row.get(id) ?? -1] === 1;
    let secondStageConfirmed = 0;
    const cli = readFileSync(values.compare, 'utf8').split('\n').filter((l) => l.trim() !== '').map((line) => {
      const v = parseVerdictLine(line);
      const shortPair = v.verdict === 'duplicate' && (v.distance ?? 0) > 0 && (isShort(v.id) || isShort(v.duplicateOf));
      if (v.secondStage !== 'confirmed' && !shortPair) return v;
      secondStageConfirmed++;
      return { id: v.id, verdict: 'novel' as const, duplicateOf: null, distance: null };
    });
    if (base !== undefined) {
      const sketches = await sketchesOfDefault();
      const nearest = nearestEarlier(base, (i, j) => sameContentNumbers(sketches, i, j));
      cliAgreement = { config: 'default', k: DEFAULT_K, secondStageConfirmed, ...compareVerdicts(verdictsAtK(base, nearest, DEFAULT_K), cli) };
      log(`batch CLI vs sweep (default, k=${DEFAULT_K}): ${cliAgreement.same}/${cliAgreement.compared} verdicts identical`);
    }
  }
  const expected = Number(CONFIG_OPTIONS.find((o) => o.key === 'expectedFingerprints')?.default ?? 1e7);

  const out = {
    generatedBy: 'eval/sweep/run-sweep.ts',
    node: process.version,
    corpus: { pages: labels.length, sha256: { 'pages.jsonl': sha256(values.pages), 'labels.jsonl': sha256(values.labels) } },
    kValues: K_VALUES,
    defaultK: DEFAULT_K,
    maxFprOriginals: MAX_FPR_ORIGINALS,
    recommended: recommended.name,
    recommendationReason: chosen.why,
    bestRanked: chosen.best.name,
    configs: results.map((r) => ({ ...r, atDefaultK: compactScores(r.atDefaultK, r === recommended || r.name === 'default') })),
    runsOut,
    secondStage,
    cliAgreement,
    planCosts: planCosts([3, 4, 5, 6, 7, 8], [expected, 2 ** 34]),
  };
  writeFileSync(values.out, `${JSON.stringify(out, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1e5) / 1e5 : v), 1)}\n`);
  log(`wrote ${values.out}`);
}


main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`sweep: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
