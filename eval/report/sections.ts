/**
 * The generated parts of docs/quality.md, one function per marker. Every
 * number in the doc comes from here (from eval/results/*.json), none is typed
 * by hand.
 */
import { ALL_KINDS, NATURAL_NEAR_DUPLICATE_KINDS, NEAR_DUPLICATE_KINDS, isNearDuplicateKind } from '../labels.js';
import type { Scores } from '../score.js';
import type { DistanceSummary } from '../sweep/analysis.js';
import type { SweepFile } from '../sweep/types.js';
import { frac, fracCI, markdownTable, num, pct } from './format.js';
import { evaluateTargets } from '../targets.js';
import { loadConfig } from '../../src/config.js';

/** How the product's defaults run the second stage, for the sentences that name the defaults. */
const DEFAULTS = loadConfig({});
const DEFAULTS_SECOND_STAGE =
  DEFAULTS.secondStageBands > 0 || DEFAULTS.secondStageRadius > 0
    ? `, and the second stage: ${DEFAULTS.secondStageBands} sketch bands${DEFAULTS.secondStageRadius > 0 ? `, radius ${DEFAULTS.secondStageRadius}` : ''}, similarity ${DEFAULTS.secondStageSimilarity}`
    : '';
import { chromeTable, groupTable, hostileTable, kindTable, substantiveTable, targetsTable } from './score-tables.js';

export interface CorpusManifest {
  readonly seed: string;
  readonly pages: number;
  readonly htmlChars: number;
  readonly packages: Record<string, string>;
  readonly sitePackages: Record<string, string[]>;
  readonly originalsPerDocSet: Record<string, number>;
  readonly rejectedOriginals: Record<string, number>;
  readonly perKind: Record<string, number>;
  readonly perSite: Record<string, number>;
  readonly perLanguage: Record<string, number>;
  readonly perSiteKind: Record<string, number>;
  readonly perDetail: Record<string, number>;
  /** Which stream (absent for the tuning stream, whose manifest keeps its first shape). */
  readonly stream?: string;
  /** Package of each doc set (held-out manifest). */
  readonly docSetPackages?: Record<string, string>;
}

export interface CliResults {
  readonly command: string;
  readonly seconds: number | null;
  /** How long building the corpus took (recorded by the held-out run). */
  readonly corpusSeconds?: number;
  readonly pages: number;
  readonly scores: Scores;
}

/** The held-out stream's results (eval/results/heldout-*.json), when it has been run. */
export interface HeldoutResults {
  readonly corpus: CorpusManifest;
  readonly cli: CliResults | null;
}

export interface ReportInputs {
  readonly corpus: CorpusManifest;
  readonly cli: CliResults | null;
  readonly sweep: SweepFile;
  readonly heldout: HeldoutResults | null;
}

/** The corpus's near-duplicate kinds (generated and natural) and how many pages they hold. */
function nearDuplicatesOf(corpus: CorpusManifest): { kinds: string[]; pages: number } {
  const kinds = Object.keys(corpus.perKind).filter(isNearDuplicateKind);
  return { kinds, pages: kinds.reduce((n, k) => n + (corpus.perKind[k] ?? 0), 0) };
}

function worstKind(s: Scores): { kind: string; recall: number } | null {
  let worst: { kind: string; recall: number } | null = null;
  for (const [kind, g] of Object.entries(s.byKind)) {
    if (!isNearDuplicateKind(kind) || g.recall === null) continue;
    if (worst === null || g.recall < worst.recall) worst = { kind, recall: g.recall };
  }
  return worst;
}

export function summarySection({ corpus, cli, sweep }: ReportInputs): string {
  const nearDuplicates = nearDuplicatesOf(corpus);
  if (cli === null) return '_The batch CLI was not run (see eval/run.sh); only the library sweep below is current._';
  const o = cli.scores.overall;
  const w = worstKind(cli.scores);
  const hard = cli.scores.byKind['hard-negative'];
  const hardFp = hard?.falsePositives ?? 0;
  const errorKinds = Object.entries(cli.scores.byKind)
    .filter(([, g]) => g.errors + g.missing > 0)
    .map(([k, g]) => `${k} ${g.errors + g.missing}`)
    .join(', ');
  return [
    `On **${corpus.pages} pages** (${corpus.perKind.original ?? 0} originals from ${Object.keys(corpus.originalsPerDocSet).length} Debian-packaged documentation sets in ${Object.keys(corpus.perLanguage).filter((l) => l !== 'und').length} languages, ${nearDuplicates.pages} near-duplicates of ${nearDuplicates.kinds.length} kinds, ${corpus.perKind['partly-untranslated'] ?? 0} of them partly untranslated pages; ${corpus.perKind['substantive-edit'] ?? 0} substantive edits, ${corpus.perKind['hard-negative'] ?? 0} hard negatives, ${corpus.perKind.hostile ?? 0} hostile inputs), the batch CLI at its defaults (k = ${sweep.defaultK}${DEFAULTS_SECOND_STAGE}) scores:`,
    '',
    `- **precision ${num(o.precision)}, recall ${num(o.recall)}, F1 ${num(o.f1)}** (the paper reports both near 0.75 at k = 3 on its own hand-labelled web sample; see "Limits" before comparing);`,
    `- with Wilson 95% intervals, which say how far a stream this harness has never seen may be from these figures: precision ${fracCI(o.truePositives, o.truePositives + o.wrongMatches + o.falsePositives)}, recall ${fracCI(o.truePositives, o.positives)};`,
    `- **distinct pages called duplicate: ${fracCI(o.originalsCalledDuplicate, o.originals, 2)}** (target at most ${pct(sweep.maxFprOriginals, 1)});`,
    `- hard negatives (a sibling of a page with other version numbers and identifiers, same template and prose) called duplicate: ${hard === undefined ? '—' : fracCI(hardFp, hard.pages)};`,
    `- weakest near-duplicate kind: ${w === null ? '—' : `**${w.kind}, ${pct(w.recall)}** caught`};`,
    `- substantive edits (a reader gets something else) called duplicate: ${fracCI(o.substantiveCalledDuplicate, o.substantive)};`,
    `- the ${o.falsePositives + o.wrongMatches} wrong duplicate verdicts: ${o.originalsCalledDuplicate} distinct originals, ${o.substantiveCalledDuplicate} substantive edits, ${hardFp} hard negatives, ${o.falsePositives - o.originalsCalledDuplicate - o.substantiveCalledDuplicate - hardFp} hostile inputs, ${o.wrongMatches} near-duplicates matched to the wrong page;`,
    `- errors: ${o.errors} (${Object.entries(cli.scores.errorCodes).map(([c, n]) => `${c} ×${n}`).join(', ') || 'none'}; by kind: ${errorKinds || 'none'}), missing verdicts: ${o.missing}${cli.seconds === null ? '' : `; the run took ${cli.seconds.toFixed(1)} s`}.`,
    '',
    sweep.cliAgreement === null
      ? ''
      : `The library sweep (brute force over the same fingerprints, configuration "${sweep.cliAgreement.config}", k = ${sweep.cliAgreement.k}, with the second stage's check of content numbers) reproduces ${sweep.cliAgreement.same} of the CLI's ${sweep.cliAgreement.compared} verdicts exactly${sweep.cliAgreement.secondStageConfirmed ? ` (the ${sweep.cliAgreement.secondStageConfirmed} duplicates the second stage confirmed compared as the first stage's novel)` : ''}${sweep.cliAgreement.same === sweep.cliAgreement.compared ? '' : ` (differences: ${sweep.cliAgreement.firstDifferences.join('; ')})`}.`,
  ].join('\n');
}

export function corpusSection({ corpus }: ReportInputs): string {
  const kinds = markdownTable(
    ['kind', 'label', 'pages'],
    ALL_KINDS.filter((k) => corpus.perKind[k] !== undefined).map((k) => [k, isNearDuplicateKind(k) ? 'near-duplicate' : 'negative', String(corpus.perKind[k])]),
  );
  const sites = [...new Set(Object.keys(corpus.perSiteKind).map((k) => k.split('/')[0]!))].filter((site) => site !== 'hostile');
  const siteTable = markdownTable(
    ['site (template)', 'originals', 'near-duplicates', 'substantive edits', 'package'],
    sites.map((s) => [
      s,
      String(corpus.perSiteKind[`${s}/original`] ?? 0),
      String(corpus.perSiteKind[`${s}/near-duplicate`] ?? 0),
      String(corpus.perSiteKind[`${s}/substantive-edit`] ?? 0),
      (corpus.sitePackages[s] ?? []).map((p) => `${p} ${corpus.packages[p] ?? '?'}`).join(', ') || '—',
    ]),
  );
  const langs = markdownTable(['language', 'pages'], Object.entries(corpus.perLanguage).map(([l, n]) => [l, String(n)]));
  const docSets = markdownTable(['doc set', 'originals'], Object.entries(corpus.originalsPerDocSet).map(([k, n]) => [k, String(n)]));
  const rejected = Object.entries(corpus.rejectedOriginals)
    .map(([r, n]) => `${r} ${n}`)
    .join(', ');
  return [
    `Seed \`${corpus.seed}\`; ${corpus.pages} pages, ${(corpus.htmlChars / 1e6).toFixed(1)} M characters of HTML. Candidate originals turned away: ${rejected || 'none'}.`,
    '',
    kinds,
    '',
    siteTable,
    '',
    langs,
    '',
    '<details><summary>Originals per doc set</summary>',
    '',
    docSets,
    '',
    '</details>',
  ].join('\n');
}

/** The recall-by-kind table under its heading, then the language and site tables: the same in every stream's section. */
function breakdownTables(s: Scores, kindHeading: string): string[] {
  return [kindHeading, '', kindTable(s.byKind), '', '**By language**', '', groupTable('language', s.byLanguage), '', '**By site**', '', groupTable('site', s.bySite)];
}

export function cliSection({ cli }: ReportInputs): string {
  if (cli === null) return '_Not run._';
  const s = cli.scores;
  return [
    `Command: \`${cli.command}\``,
    '',
    ...breakdownTables(s, '**By kind**'),
    '',
    '**By how the theme marks up its chrome** (semantic: class names and elements say "ad", "widget", "footer"; opaque: generated class names on plain `<div>`s)',
    '',
    chromeTable(s),
    '',
    '**Substantive edits by share of the text changed**',
    '',
    substantiveTable(s),
    '',
    '**Hostile input**',
    '',
    hostileTable(s),
  ].join('\n');
}

export function sweepSection({ sweep }: ReportInputs): string {
  const k = sweep.defaultK;
  const atK = markdownTable(
    ['configuration', 'change from defaults', 'precision', 'recall', 'F1', 'originals called duplicate', 'substantive edits called duplicate', 'weakest kind (recall)', `FPR ≤ ${pct(sweep.maxFprOriginals, 1)}`],
    sweep.configs.map((c) => {
      const p = c.curve.find((x) => x.k === k)!;
      return [
        c.name === sweep.recommended ? `**${c.name}**` : c.prototype ? `${c.name} (prototype)` : c.name,
        c.prototype ? `${c.change}, HTML prepared by eval` : c.change,
        num(p.precision),
        num(p.recall),
        num(p.f1),
        pct(p.falsePositiveRateOriginals, 2),
        pct(p.duplicateRateSubstantive),
        c.worstKindAtDefaultK === null ? '—' : `${c.worstKindAtDefaultK.kind} ${pct(c.worstKindAtDefaultK.recall)}`,
        c.meetsFprTarget ? 'yes' : 'no',
      ];
    }),
  );
  const curve = markdownTable(
    ['configuration', ...sweep.kValues.map((x) => `k=${x}`)],
    sweep.configs.map((c) => [c.name, ...c.curve.map((p) => `${num(p.precision, 2)} / ${num(p.recall, 2)}`)]),
  );
  const fpr = markdownTable(
    ['configuration', ...sweep.kValues.map((x) => `k=${x}`)],
    sweep.configs.map((c) => [c.name, ...c.curve.map((p) => pct(p.falsePositiveRateOriginals, 2))]),
  );
  return [
    `**At k = ${k}** (each configuration fingerprints every page once; verdicts for every k by brute force over the fingerprints, with the product's rule):`,
    '',
    atK,
    '',
    '**Precision / recall against k** (the paper\u2019s Figure 1 for our features):',
    '',
    curve,
    '',
    '**Distinct originals called duplicate against k:**',
    '',
    fpr,
    '',
    `Timing: ${sweep.configs.map((c) => `${c.name} ${c.fingerprintSeconds.toFixed(1)} s`).join(', ')} to fingerprint the corpus (2 worker threads). Configurations: ${sweep.configs.map((c) => `${c.name} = ${c.what}`).join('; ')}.`,
  ].join('\n');
}

export function recommendationSection({ sweep, cli }: ReportInputs): string {
  const c = sweep.configs.find((x) => x.name === sweep.recommended)!;
  const s = c.atDefaultK as Scores;
  const k = sweep.defaultK;
  const p = c.curve.find((x) => x.k === k)!;
  const kinds = markdownTable(
    ['kind', 'pages', 'caught (recall) / called duplicate'],
    Object.entries(s.byKind ?? {}).map(([kind, g]) => [kind, String(g.pages), isNearDuplicateKind(kind) ? frac(g.truePositives, g.positives) : frac(g.falsePositives, g.pages, 2)]),
  );
  const langs = markdownTable(
    ['language', 'precision', 'recall', 'originals called duplicate'],
    Object.entries(s.byLanguage ?? {}).map(([lang, g]) => [lang, num(g.precision), num(g.recall), frac(g.originalsCalledDuplicate, g.originals, 2)]),
  );
  return [
    `**Keep k = ${k} and the feature configuration "${c.name}"** (${c.change}: ${Object.entries(c.options).map(([key, v]) => `${key} ${String(v)}`).join(', ')}).`,
    '',
    `Rule: among configurations whose false-positive rate on distinct originals at k = ${k} is at most ${pct(sweep.maxFprOriginals, 1)}, take the best recall on the weakest near-duplicate kind; change the defaults only when the winner beats them by more than two standard errors. Outcome: ${sweep.recommendationReason}.`,
    '',
    `At k = ${k}: precision ${num(p.precision)}, recall ${num(p.recall)}, F1 ${num(p.f1)}, distinct originals called duplicate ${pct(p.falsePositiveRateOriginals, 2)}, substantive edits called duplicate ${pct(p.duplicateRateSubstantive)}.${cli === null ? '' : DEFAULTS_SECOND_STAGE === '' ? ' The batch CLI numbers above are the same run through the product.' : ' The batch CLI numbers above are this first stage run through the product, with the second stage on top ("The second stage in the product").'}`,
    '',
    kinds,
    '',
    langs,
  ].join('\n');
}

function distanceTable(first: string, rows: Record<string, DistanceSummary>, k: number): string {
  return markdownTable(
    [first, 'pages', `within ${k} bits`, 'within 6 bits', 'within 10 bits', 'median distance', '90th percentile', 'never matchable'],
    Object.entries(rows).map(([name, d]) => [name, String(d.pages), pct(d.withinK[k]), pct(d.withinK[6]), pct(d.withinK[10]), d.median === null ? '—' : String(d.median), d.p90 === null ? '—' : String(d.p90), String(d.unreachable)]),
  );
}

export function runsOutSection({ sweep }: ReportInputs): string {
  const k = sweep.defaultK;
  const c = sweep.configs.find((x) => x.name === sweep.recommended)!;
  const byKind: Record<string, DistanceSummary> = Object.fromEntries(Object.entries(c.distancesByKind).filter(([kind]) => isNearDuplicateKind(kind)));
  const negatives: Record<string, DistanceSummary> = Object.fromEntries(Object.entries(c.distancesByKind).filter(([kind]) => !isNearDuplicateKind(kind)));
  const beyond = Object.entries(byKind)
    .filter(([, d]) => d.withinK[k]! < 0.995)
    .map(([kind, d]) => `${kind} (${pct(1 - d.withinK[k]!)} need more than ${k} bits)`);
  return [
    `Configuration "${sweep.runsOut.config}". For a near-duplicate the decisive distance is to the closest earlier page of its own cluster (the k it needs); for a negative it is to the closest earlier page of any cluster (the k at which it becomes a false positive).`,
    '',
    `Near-duplicate kinds that do not all fit in ${k} bits: ${beyond.length === 0 ? 'none' : beyond.join('; ')}.`,
    '',
    '**Near-duplicates: distance needed, by kind**',
    '',
    distanceTable('kind', byKind, k),
    '',
    '**Negatives: distance to the closest earlier page** (within k = called duplicate)',
    '',
    distanceTable('kind', negatives, k),
    '',
    '**Word edits (1–3 words) by page size in distinct features**: the same edit moves a short page further',
    '',
    distanceTable('features', sweep.runsOut.wordEditBySize, k),
    '',
    '**Chrome changes by how the theme marks its chrome up**: semantic chrome is removed by its names, opaque chrome only where its shape gives it away',
    '',
    distanceTable('kind / markup', sweep.runsOut.chromeByMarkup, k),
    '',
    '**Substantive edits by share of text changed** (here small distances are the problem)',
    '',
    distanceTable('text changed', sweep.runsOut.substantiveByChange, k),
    '',
    '**Near-duplicates by language**',
    '',
    distanceTable('language', sweep.runsOut.nearDuplicatesByLanguage, k),
  ].join('\n');
}

export function helpsSection({ sweep }: ReportInputs): string {
  const k = sweep.defaultK;
  const c = sweep.configs.find((x) => x.name === sweep.recommended)!;
  const largerK = markdownTable(
    ['k', 'precision', 'recall', 'weakest kind', 'originals called duplicate', 'substantive edits called duplicate', `index plan at N = ${sweep.planCosts[0]?.n.toExponential(0) ?? '?'} (tables, block widths)`, 'candidates per probe', 'bytes per fingerprint'],
    c.curve
      .filter((p) => p.k >= k && p.k <= 8)
      .map((p) => {
        const plan = sweep.planCosts.find((x) => x.k === p.k && x.n === sweep.planCosts[0]!.n);
        let worst: [string, number] | null = null;
        for (const [kind, r] of Object.entries(p.byKind)) if (isNearDuplicateKind(kind) && r !== null && (worst === null || r < worst[1])) worst = [kind, r];
        return [
          String(p.k),
          num(p.precision),
          num(p.recall),
          worst === null ? '—' : `${worst[0]} ${pct(worst[1])}`,
          pct(p.falsePositiveRateOriginals, 2),
          pct(p.duplicateRateSubstantive),
          plan === undefined ? '—' : `${plan.tables} (${plan.blocks})`,
          plan === undefined ? '—' : String(plan.candidatesPerProbe),
          plan === undefined ? '—' : String(plan.bytesPerFingerprint),
        ];
      }),
  );
  const sketch = sweep.secondStage.find((st) => st.second === 'content-sketch');
  const thresholds = sketch === undefined ? [] : [...new Set(sketch.grid.map((g) => g.k2))].sort((a, b) => a - b);
  const sketchTable =
    sketch === undefined
      ? ''
      : markdownTable(
          ['k1', ...thresholds.map((t) => `Jaccard ≥ ${t}`)],
          [...new Set(sketch.grid.map((g) => g.k1))].map((k1) => [
            String(k1),
            ...thresholds.map((t) => {
              const g = sketch.grid.find((x) => x.k1 === k1 && x.k2 === t)!;
              return `R ${num(g.recall)}, ${g.worstKind === null ? '—' : `${g.worstKind.kind} ${pct(g.worstKind.recall)}`}, subst. ${pct(g.duplicateRateSubstantive)}, FPR ${pct(g.falsePositiveRateOriginals, 2)}`;
            }),
          ]),
        );
  const stages = sweep.secondStage.map((st) => {
    const ok = st.grid.filter((g) => g.falsePositiveRateOriginals !== null && g.falsePositiveRateOriginals <= sweep.maxFprOriginals);
    const best = [...ok].sort((a, b) => (b.worstKind?.recall ?? 0) - (a.worstKind?.recall ?? 0) || (a.duplicateRateSubstantive ?? 1) - (b.duplicateRateSubstantive ?? 1)).slice(0, 3);
    const atK = ok.filter((g) => g.k1 === k).sort((a, b) => (a.duplicateRateSubstantive ?? 1) - (b.duplicateRateSubstantive ?? 1) || (b.recall ?? 0) - (a.recall ?? 0)).slice(0, 1);
    const check = (g: (typeof st.grid)[number]): string =>
      st.second === 'content-sketch'
        ? `${st.first} ≤ ${g.k1}, then content Jaccard ≥ ${g.k2}`
        : st.second === 'feature-sketch'
          ? `${st.first} ≤ ${g.k1}, then feature-sketch Jaccard ≥ ${g.k2} (64 B/page)`
          : `${st.first} ≤ ${g.k1}, then ${st.second} ≤ ${g.k2}`;
    return [...atK, ...best.filter((g) => !atK.includes(g))].map((g) => [
      check(g),
      num(g.precision),
      num(g.recall),
      g.worstKind === null ? '—' : `${g.worstKind.kind} ${pct(g.worstKind.recall)}`,
      pct(g.falsePositiveRateOriginals, 2),
      pct(g.duplicateRateSubstantive),
    ]);
  });
  const base = c.curve.find((p) => p.k === k)!;
  let baseWorst: [string, number] | null = null;
  for (const [kind, r] of Object.entries(base.byKind)) if (isNearDuplicateKind(kind) && r !== null && (baseWorst === null || r < baseWorst[1])) baseWorst = [kind, r];
  const stageTable = markdownTable(
    ['check', 'precision', 'recall', 'weakest kind', 'originals called duplicate', 'substantive edits called duplicate'],
    [[`${c.name} ≤ ${k} alone`, num(base.precision), num(base.recall), baseWorst === null ? '—' : `${baseWorst[0]} ${pct(baseWorst[1])}`, pct(base.falsePositiveRateOriginals, 2), pct(base.duplicateRateSubstantive)], ...stages.flat()],
  );
  const contentConfigs = sweep.configs.filter((x) => x.name === c.name || x.name === 'boilerplate-keep' || x.prototype);
  const shownKinds = [...NEAR_DUPLICATE_KINDS, ...NATURAL_NEAR_DUPLICATE_KINDS].filter((kind) => kind !== 'exact-copy' && kind !== 'url-alias' && contentConfigs.some((x) => x.curve.some((q) => q.byKind[kind] != null)));
  const contentTable = markdownTable(
    ['configuration', ...shownKinds, 'recall', 'originals called duplicate', 'substantive edits called duplicate', 'short pages'],
    contentConfigs.map((x) => {
      const p = x.curve.find((q) => q.k === k)!;
      return [
        x.prototype ? `${x.name} (prototype)` : x.name,
        ...shownKinds.map((kind) => pct(p.byKind[kind])),
        num(p.recall),
        pct(p.falsePositiveRateOriginals, 2),
        pct(p.duplicateRateSubstantive),
        String(x.shortPages),
      ];
    }),
  );
  return [
    '**1. Larger k, with the table plan it needs** (plans from the product\u2019s planner, `src/index/planner.ts`):',
    '',
    largerK,
    '',
    `**2. Main-content weighting.** Boilerplate removal is what makes template changes free: compare "${c.name}" with "boilerplate-keep". By element and class names it only sees chrome that names itself; the product's extractor also judges blocks by their shape (\`src/fingerprint/block-shape.ts\`: link-dense blocks, and runs of letter-poor blocks that lead into no prose), which is what recovers the opaque rows above. The prototypes run on top of it (\`eval/sweep/density-filter.ts\`, applied to the HTML before the product's extractor): "density-drop" blanks every link-dense or letter-poor block (the prototype the product's rule was built from), "density-weight" counts prose-shaped blocks three times. Recall at k = ${k}:`,
    '',
    contentTable,
    '',
    '**3. A second-stage check** on the candidates a wider k1 finds: either a second fingerprint of the page under another feature configuration within k2 bits (8 more bytes per page), the feature sketch of the fingerprinter itself (`featureSketch` in `src/fingerprint/feature-sketch.ts`: b-bit one-permutation MinHash of the features the simhash uses, 64 bytes per page) with estimated Jaccard at least k2, or a prototype content sketch (`eval/sweep/content-sketch.ts`: MinHash of 64 × 32 bits over 5-token shingles of the density-filtered text, 256 bytes per page) with estimated Jaccard at least a threshold. Per check: the setting at k1 = k with the fewest substantive edits called duplicate, then the settings with the best weakest-kind recall, all keeping originals called duplicate within the target:',
    '',
    stageTable,
    '',
    'The content-sketch check over its whole grid (R = recall, then the weakest kind, substantive edits called duplicate, distinct originals called duplicate):',
    '',
    sketchTable,
  ].join('\n');
}

function weakestKind(s: Scores): string {
  const w = worstKind(s);
  return w === null ? '—' : `${w.kind} ${pct(w.recall)}`;
}

/** The held-out stream: its corpus, the batch CLI's scores at its defaults, and the targets (never a sweep). */
export function heldoutSection({ heldout, cli }: ReportInputs): string {
  if (heldout === null) return '_The held-out stream has not been run (`bash eval/heldout.sh`)._';
  const { corpus } = heldout;
  if (heldout.cli === null) return '_The held-out corpus was built but the batch CLI was not run over it (`bash eval/heldout.sh`)._';
  const s = heldout.cli.scores;
  const o = s.overall;
  const called = o.truePositives + o.wrongMatches + o.falsePositives;
  const targets = evaluateTargets(s);
  const f1 = targets.find((t) => t.target === 'F1');
  const hard = s.byKind['hard-negative'];
  const languages = Object.keys(corpus.perLanguage).filter((l) => l !== 'und');
  const { kinds: nearDuplicateKinds, pages: nearDuplicates } = nearDuplicatesOf(corpus);
  const errorKinds = Object.entries(s.byKind)
    .filter(([, g]) => g.errors + g.missing > 0)
    .map(([k, g]) => `${k} ${g.errors + g.missing}`)
    .join(', ');
  const timing = [
    heldout.cli.corpusSeconds === undefined ? null : `building the corpus took ${heldout.cli.corpusSeconds.toFixed(1)} s`,
    heldout.cli.seconds === null ? null : `the batch CLI ${heldout.cli.seconds.toFixed(1)} s`,
  ].filter((x) => x !== null);
  const comparison =
    cli === null
      ? ''
      : markdownTable(
          ['measure', 'tuning stream', 'held-out stream'],
          (
            [
              ['precision', (x: Scores) => fracCI(x.overall.truePositives, x.overall.truePositives + x.overall.wrongMatches + x.overall.falsePositives)],
              ['recall', (x: Scores) => fracCI(x.overall.truePositives, x.overall.positives)],
              ['F1', (x: Scores) => num(x.overall.f1)],
              ['distinct pages called duplicate', (x: Scores) => fracCI(x.overall.originalsCalledDuplicate, x.overall.originals, 2)],
              ['hard negatives called duplicate', (x: Scores) => (x.byKind['hard-negative'] === undefined ? '—' : fracCI(x.byKind['hard-negative'].falsePositives, x.byKind['hard-negative'].pages))],
              ['substantive edits called duplicate', (x: Scores) => fracCI(x.overall.substantiveCalledDuplicate, x.overall.substantive)],
              ['weakest near-duplicate kind', weakestKind],
            ] as const
          ).map(([name, f]) => [name, f(cli.scores), f(s)]),
        );
  const errorCodes = markdownTable(
    ['error code', 'verdicts'],
    Object.entries(s.errorCodes).map(([c, n]) => [c, String(n)]),
  );
  const docSets = markdownTable(
    ['doc set', 'originals', 'package'],
    Object.entries(corpus.originalsPerDocSet).map(([k, n]) => {
      const pkg = corpus.docSetPackages?.[k];
      return [k, String(n), pkg === undefined ? '—' : `${pkg} ${corpus.packages[pkg] ?? '?'}`];
    }),
  );
  return [
    `On **${corpus.pages} pages** (${corpus.perKind.original ?? 0} originals from ${Object.keys(corpus.originalsPerDocSet).length} doc sets of ${Object.keys(corpus.packages).length} Debian packages the tuning corpus does not read, in ${languages.length} languages: ${languages.join(', ')}; ${nearDuplicates} near-duplicates of ${nearDuplicateKinds.length} kinds, ${corpus.perKind['partly-untranslated'] ?? 0} of them partly untranslated pages; ${corpus.perKind['substantive-edit'] ?? 0} substantive edits, ${corpus.perKind['hard-negative'] ?? 0} hard negatives, ${corpus.perKind.hostile ?? 0} hostile inputs; seed \`${corpus.seed}\`), the batch CLI at its defaults (k = ${DEFAULTS.k}${DEFAULTS_SECOND_STAGE}) scores:`,
    '',
    `- **precision ${num(o.precision)}, recall ${num(o.recall)}, F1 ${num(o.f1)}**; with Wilson 95% intervals: precision ${fracCI(o.truePositives, called)}, recall ${fracCI(o.truePositives, o.positives)}, F1 ${f1 === undefined || f1.interval === null ? '—' : `${num(f1.interval[0])}–${num(f1.interval[1])}`};`,
    `- **distinct pages called duplicate: ${fracCI(o.originalsCalledDuplicate, o.originals, 2)}**;`,
    `- hard negatives called duplicate: ${hard === undefined ? '—' : fracCI(hard.falsePositives, hard.pages)}; substantive edits called duplicate: ${fracCI(o.substantiveCalledDuplicate, o.substantive)};`,
    `- weakest near-duplicate kind: **${weakestKind(s)}** caught;`,
    `- errors: ${o.errors} (${Object.entries(s.errorCodes).map(([c, n]) => `${c} ×${n}`).join(', ') || 'none'}; by kind: ${errorKinds || 'none'}), missing verdicts: ${o.missing}${timing.length === 0 ? '' : `; ${timing.join(', ')}`}.`,
    '',
    `**Targets: ${targets.filter((t) => t.met).length} of ${targets.length} met.** "Met" means the observed value meets the target on this stream; the last column says whether its whole 95% interval does, that is, whether a stream this size shows the target holds on the next one.`,
    '',
    targetsTable(targets),
    '',
    ...(comparison === '' ? [] : ['**Against the tuning stream** (the same generators on the pages the defaults were chosen on):', '', comparison, '']),
    ...breakdownTables(s, '**Recall by kind**'),
    '',
    '**Errors by code** (errors are right on hostile input, a miss on a near-duplicate)',
    '',
    errorCodes,
    '',
    '**Hostile input**',
    '',
    hostileTable(s),
    '',
    `Candidate originals turned away: ${Object.entries(corpus.rejectedOriginals).map(([r, n]) => `${r} ${n}`).join(', ') || 'none'}.`,
    '',
    '<details><summary>Originals per doc set</summary>',
    '',
    docSets,
    '',
    '</details>',
  ].join('\n');
}

export const SECTIONS: Record<string, (inputs: ReportInputs) => string> = {
  summary: summarySection,
  corpus: corpusSection,
  cli: cliSection,
  sweep: sweepSection,
  recommendation: recommendationSection,
  'runs-out': runsOutSection,
  helps: helpsSection,
  heldout: heldoutSection,
};
