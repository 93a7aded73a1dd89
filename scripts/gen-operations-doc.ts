/**
 * Generates the derived parts of docs/operations.md from the code, so that the
 * doc cannot drift from it (test/unit/deploy/deploy-artifacts.test.ts fails when
 * it does):
 *
 *   <!-- config:begin --> ... <!-- config:end -->    every option of CONFIG_OPTIONS
 *   <!-- metrics:begin --> ... <!-- metrics:end -->  every metric createMetrics declares
 *   <!-- sizing:begin --> ... <!-- sizing:end -->    the memory formula, worked for a few sizes
 *   <!-- errors:begin --> ... <!-- errors:end -->    every error code (ERROR_CODES): dead-letter reasons, error labels
 *
 * It is also the one place of the sizing formula: the Kubernetes and compose
 * manifests are checked against `podSizing()` for the DEDUP_EXPECTED_FINGERPRINTS
 * they set.
 *
 *   node dist/scripts/gen-operations-doc.js           rewrite docs/operations.md
 *   node dist/scripts/gen-operations-doc.js --check   exit 1 if it is out of date
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { CONFIG_OPTIONS, loadConfig, type OptionSpec } from '../src/config.js';
import { planFromConfig, secondStageBytesPerPage } from '../src/dedup/create-decider.js';
import { BAND_DISK_BYTES_PER_PAGE } from '../src/dedup/sketch-bands.js';
import { ERROR_CODES } from '../src/errors.js';
import { bytesPerFingerprint } from '../src/index/planner.js';
import { pageStoreBytesPerPage, pageStoreTierBytesPerPage } from '../src/dedup/page-store.js';
import { SKETCH_BINS } from '../src/fingerprint/feature-sketch.js';
import { createMetrics, type MetricsState } from '../src/metrics/metrics.js';

// ---- sizing -------------------------------------------------------------------------------

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * Constants of the sizing formula. Index bytes per fingerprint come from the
 * index planner (`bytesPerFingerprint`, measured layout); the rest is ours.
 */
/** The defaults the manifests are sized for. */
const DEFAULTS = loadConfig({});

export const SIZING = Object.freeze({
  /** Page store RAM per page: id key, sequence, held bit, id-table slot (src/dedup/page-store.ts). */
  pageStoreBytesPerPage: pageStoreBytesPerPage(),
  /** Page store tier on the state volume per page: record, sketch and id bytes (ids of about 40 bytes). */
  tierBytesPerPage: pageStoreTierBytesPerPage(SKETCH_BINS, 40),
  /**
   * The sketch bands' sorted runs on the state volume per page, at the default config (src/dedup/sketch-bands.ts):
   * not in snapshots (a restart builds them from the sketches), but twice over while the largest runs merge.
   */
  bandDiskBytesPerPage: BAND_DISK_BYTES_PER_PAGE * DEFAULTS.secondStageBands,
  /**
   * The second stage at the default config: the feature sketch and its bands (src/dedup/create-decider.ts).
   * DEDUP_SECOND_STAGE_BANDS=0 turns it off and takes this out of the formula.
   */
  secondStageBytesPerPage: secondStageBytesPerPage(DEFAULTS),
  /** Node runtime, kafkajs buffers, a batch of pages in flight, worker heaps. */
  runtimeBytes: 256 * MiB,
  /**
   * On top of the arrays: fresh-insert buffers, run merges (the index's and the sketch bands'),
   * snapshot serialisation, the allocator's slack. bench/dedup/memory.ts at 10M pages: a peak RSS
   * 1.56 times the arrays (91 against 58.2 B a page); test/unit/deploy checks the pods hold the
   * measured peaks.
   */
  indexHeadroom: 0.6,
  /** Pod memory is rounded up to this step. */
  memoryStepBytes: 64 * MiB,
});

export interface PodSizing {
  readonly expectedFingerprints: number;
  readonly tables: number;
  /** Index bytes per fingerprint for this many tables at this size. */
  readonly indexBytesPerFingerprint: number;
  /** Index plus page store: the value for DEDUP_MEMORY_BUDGET_BYTES. */
  readonly memoryBudgetBytes: number;
  /** Container memory request and limit, in MiB. */
  readonly podMemoryMiB: number;
  /** Snapshot volume, in GiB: the old and the new snapshot during a write, plus 1 GiB. */
  readonly stateVolumeGiB: number;
}

/**
 *   budget  = N x (bytesPerFingerprint(t, N) + pageStoreBytesPerPage + secondStageBytesPerPage)
 *   memory  = ceil_64MiB(budget x (1 + indexHeadroom) + runtimeBytes)
 *   volume  = ceil_GiB(2 x budget + N x (3 x tierBytesPerPage + 2 x bandDiskBytesPerPage) + 1 GiB)
 * (the tier file, and its copy in the old and the new snapshot while one is written; the bands'
 * runs, twice while the largest merge).
 */
/** The tables the defaults plan for N fingerprints (src/dedup/create-decider.ts planFromConfig: 4 from 1M to 100M). */
export function plannedTables(expectedFingerprints: number): number {
  return planFromConfig(loadConfig({ DEDUP_EXPECTED_FINGERPRINTS: String(expectedFingerprints) })).tables.length;
}

export function podSizing(expectedFingerprints: number, tables: number = plannedTables(expectedFingerprints)): PodSizing {
  const perFingerprint = bytesPerFingerprint(tables, expectedFingerprints);
  const budget = Math.ceil(expectedFingerprints * (perFingerprint + SIZING.pageStoreBytesPerPage + SIZING.secondStageBytesPerPage));
  const memory = budget * (1 + SIZING.indexHeadroom) + SIZING.runtimeBytes;
  const memoryMiB = (Math.ceil(memory / SIZING.memoryStepBytes) * SIZING.memoryStepBytes) / MiB;
  return Object.freeze({
    expectedFingerprints,
    tables,
    indexBytesPerFingerprint: perFingerprint,
    memoryBudgetBytes: budget,
    podMemoryMiB: memoryMiB,
    stateVolumeGiB: Math.ceil((2 * budget + expectedFingerprints * (3 * SIZING.tierBytesPerPage + 2 * SIZING.bandDiskBytesPerPage) + GiB) / GiB),
  });
}

// ---- rendering ----------------------------------------------------------------------------

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\n/g, ' ');
}

function constraints(spec: OptionSpec): string {
  const parts: string[] = [];
  if (spec.values) parts.push(`one of ${spec.values.map((v) => `\`${v}\``).join(', ')}`);
  if (spec.min !== undefined && spec.max !== undefined) parts.push(`${spec.min}..${spec.max}`);
  else if (spec.min !== undefined) parts.push(`>= ${spec.min}`);
  else if (spec.max !== undefined) parts.push(`<= ${spec.max}`);
  if (spec.secret) parts.push('secret: masked in logs, keep it in a Secret');
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

export function renderConfigTable(options: readonly OptionSpec[] = CONFIG_OPTIONS): string {
  const lines = ['| Environment variable | Flag | Type | Default | Description |', '|---|---|---|---|---|'];
  for (const o of options) {
    const def = o.default === '' ? '(empty)' : `\`${o.default}\``;
    lines.push(`| \`${o.env}\` | \`${o.flag}\` | ${o.kind} | ${def} | ${cell(o.description)}${cell(constraints(o))} |`);
  }
  return lines.join('\n');
}

const STUB_STATE: MetricsState = {
  indexFingerprints: () => 0,
  indexBytes: () => 0,
  indexMemoryLimitBytes: () => 0,
  indexTables: () => 0,
  planCandidatesPerProbe: () => 0,
  ready: () => false,
};

function metricType(m: Metric): string {
  if (m instanceof Counter) return 'counter';
  if (m instanceof Gauge) return 'gauge';
  if (m instanceof Histogram) return 'histogram';
  return 'summary';
}

/** Every metric createMetrics declares (not prom-client's defaults), in declaration order. */
export function declaredMetrics(): { name: string; type: string; labels: readonly string[]; help: string }[] {
  const registry = new Registry();
  createMetrics(registry, STUB_STATE, { defaultMetrics: false });
  return registry.getMetricsAsArray().map((m) => {
    const meta = m as unknown as { name: string; help: string; labelNames?: readonly string[] };
    return { name: meta.name, type: metricType(m as unknown as Metric), labels: meta.labelNames ?? [], help: meta.help };
  });
}

export function renderMetricsTable(): string {
  const lines = ['| Metric | Type | Labels | Meaning |', '|---|---|---|---|'];
  for (const m of declaredMetrics()) {
    const labels = m.labels.length > 0 ? m.labels.map((l) => `\`${l}\``).join(', ') : '';
    lines.push(`| \`${m.name}\` | ${m.type} | ${labels} | ${cell(m.help)} |`);
  }
  return lines.join('\n');
}

function thousands(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

interface MemoryRun {
  pagesHeld: number;
  tier: string;
  plan: string;
  /** DEDUP_MEMORY_BUDGET_BYTES the plan was made within (absent or 0: none). */
  memoryBudgetBytes?: number;
  fill?: string;
  ramBytesPerPage: number;
  peakRamBytesPerPage: number;
  cpuMicrosPerDecision?: number;
  diskBytesPerPage: number;
  microsPerDecision: number;
  breakdownBytesPerPage: { tables: number; fingerprints: number; pageStore: number; bands: number };
  loadAverage?: number[];
}

/** The file-tier runs of bench/results/memory.json, if it is there. */
function measuredMemory(): MemoryRun[] {
  const path = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results', 'memory.json');
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { runs: MemoryRun[] }).runs.filter((r) => r.tier === 'file');
  } catch {
    return [];
  }
}

export function renderSizingTable(): string {
  const lines = [
    `Budget per fingerprint = index bytes (the tables the defaults plan for N, from \`bytesPerFingerprint\` in src/index/planner.ts) + ${SIZING.pageStoreBytesPerPage} B of page store + ` +
      `${SIZING.secondStageBytesPerPage} B for the second stage (its ${DEFAULTS.secondStageBands} sketch bands; 0 with DEDUP_SECOND_STAGE_BANDS=0; the 64-byte sketch and the bands' sorted runs are on disk); ` +
      `pod memory = budget x ${1 + SIZING.indexHeadroom} + ${SIZING.runtimeBytes / MiB} MiB, rounded up to ${SIZING.memoryStepBytes / MiB} MiB; ` +
      `state volume = 2 x budget + 3 x ${SIZING.tierBytesPerPage} B per page of page-store tier (the tier file and its copy in two snapshots) + 2 x ${SIZING.bandDiskBytesPerPage} B per page of sketch-band runs (twice while the largest merge) + 1 GiB, rounded up to GiB.`,
    '',
    '| DEDUP_EXPECTED_FINGERPRINTS | Tables | Index B/fingerprint | DEDUP_MEMORY_BUDGET_BYTES | Pod memory (request = limit) | State volume |',
    '|---:|---:|---:|---:|---:|---:|',
  ];
  for (const n of [1_000_000, 10_000_000, 50_000_000, 100_000_000]) {
    const s = podSizing(n);
    lines.push(`| ${thousands(n)} | ${s.tables} | ${s.indexBytesPerFingerprint.toFixed(1)} | ${thousands(s.memoryBudgetBytes)} | ${s.podMemoryMiB} Mi | ${s.stateVolumeGiB} Gi |`);
  }
  const measured = measuredMemory();
  if (measured.length > 0) {
    lines.push(
      '',
      'Measured (`MALLOC_MMAP_THRESHOLD_=32768 NODE_OPTIONS=--max-semi-space-size=2 node --expose-gc dist/bench/dedup/memory.js N file decide|restore`, bench/results/memory.json: one process holds N generated pages, the planner\'s plan, the second stage on at its defaults, the tier in a file; RAM = RSS growth over the empty process after a full collection; "restore" fills through the changelog replay path; times on a 2-core machine shared with other work):',
      '',
      '| Pages held | Filled by | Plan | RAM B/page (RSS) | peak RSS B/page | arrays: tables + fingerprints | page store | sketch bands (RAM) | Disk B/page (tier and band runs) | µs/decision (wall) | CPU µs/decision | load average (1 min) |',
      '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of measured) {
      const b = r.breakdownBytesPerPage;
      const plan = r.memoryBudgetBytes ? `${r.plan} (within DEDUP_MEMORY_BUDGET_BYTES=${thousands(r.memoryBudgetBytes)})` : r.plan;
      lines.push(`| ${thousands(r.pagesHeld)} | ${r.fill ?? 'decide'} | ${plan} | ${r.ramBytesPerPage} | ${r.peakRamBytesPerPage} | ${(b.tables + b.fingerprints).toFixed(1)} | ${b.pageStore} | ${b.bands} | ${r.diskBytesPerPage} | ${r.microsPerDecision} | ${r.cpuMicrosPerDecision ?? '-'} | ${r.loadAverage?.[0] ?? '-'} |`);
    }
  }
  return lines.join('\n');
}

export function renderErrorCodesTable(): string {
  const lines = ['| Code | Meaning |', '|---|---|'];
  for (const [code, meaning] of Object.entries(ERROR_CODES)) lines.push(`| \`${code}\` | ${cell(meaning)} |`);
  return lines.join('\n');
}

const SECTIONS: readonly { name: string; render: () => string }[] = [
  { name: 'config', render: renderConfigTable },
  { name: 'metrics', render: renderMetricsTable },
  { name: 'errors', render: renderErrorCodesTable },
  { name: 'sizing', render: renderSizingTable },
];

/** The doc with every generated section replaced; throws if a marker pair is missing. */
export function renderOperationsDoc(doc: string): string {
  let out = doc;
  for (const { name, render } of SECTIONS) {
    const begin = `<!-- ${name}:begin -->`;
    const end = `<!-- ${name}:end -->`;
    const i = out.indexOf(begin);
    const j = out.indexOf(end);
    if (i < 0 || j < i) throw new Error(`docs/operations.md: missing ${begin} ... ${end}`);
    out = `${out.slice(0, i + begin.length)}\n${render()}\n${out.slice(j)}`;
  }
  return out;
}

export const OPERATIONS_DOC = resolve(dirname(fileURLToPath(import.meta.url)), '../../docs/operations.md');

function main(argv: readonly string[]): number {
  const current = readFileSync(OPERATIONS_DOC, 'utf8');
  const next = renderOperationsDoc(current);
  if (argv.includes('--check')) {
    if (next === current) return 0;
    process.stderr.write('docs/operations.md is out of date: run `node dist/scripts/gen-operations-doc.js`\n');
    return 1;
  }
  if (next !== current) writeFileSync(OPERATIONS_DOC, next);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
