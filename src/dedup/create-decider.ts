/**
 * Builds the table plan and an empty decider from the index options: the one
 * place those options meet the index. The options are narrow shapes, not the
 * config: config is read and validated once at start-up (src/config.ts),
 * whose object has every field below, so the caller passes it or a part.
 */
import { DedupError } from '../errors.js';
import { FingerprintIndex, planFromBlocks, planTables, type TablePlan } from '../index/index.js';
import { fingerprintVersion, validateFeatureOptions, type FeatureOptions } from '../fingerprint/index.js';
import { Decider, type SecondStage } from './decider.js';
import { SKETCH_BINS } from '../fingerprint/feature-sketch.js';
import { PageStore, pageStoreBytesPerPage } from './page-store.js';
import { BAND_BYTES_PER_PAGE } from './sketch-bands.js';
import type { PageTier } from './blob-store.js';

/** What the table plan depends on. `tableBlocks`: explicit block widths, or null to let the planner choose. */
export interface PlanOptions {
  readonly k: number;
  readonly secondStageRadius: number;
  readonly tableBlocks: readonly number[] | null;
  readonly expectedFingerprints: number;
  readonly memoryBudgetBytes: number;
  readonly secondStageBands?: number;
}

/** The second stage's options: off when the radius is 0 and there are no bands. */
export interface SecondStageOptions {
  readonly k: number;
  readonly secondStageRadius: number;
  readonly secondStageSimilarity: number;
  readonly secondStageBands: number;
}

/** Everything createDecider reads: the plan, the second stage and the eviction limits. */
export interface CreateDeciderOptions extends Omit<PlanOptions, 'secondStageBands'>, SecondStageOptions {
  readonly maxFingerprints: number;
  readonly maxAgeSeconds: number;
}

/** Fingerprint feature options as configured: zero and 'default' mean the fingerprinter's own default. */
export interface FeatureConfig {
  readonly shingleSize: number;
  readonly boilerplate: FeatureOptions['boilerplate'];
  readonly cjk: FeatureOptions['cjk'];
  readonly weighting: FeatureOptions['weighting'] | 'default';
  readonly minFeatures: number;
}

/**
 * The memory budget covers the index AND the page store (that is what
 * dedup_index_bytes reports and the capacity alert watches), so the planner
 * gets the budget minus the page store's share.
 */
export function planFromConfig(config: PlanOptions): TablePlan {
  // The tables must answer the widest probe: the second stage's radius when it has one.
  const k = Math.max(config.k, config.secondStageRadius);
  if (config.tableBlocks) return planFromBlocks(k, [...config.tableBlocks]);
  const perPage = pageStoreBytesPerPage() + secondStageBytesPerPage({ secondStageRadius: config.secondStageRadius, secondStageBands: config.secondStageBands ?? 0 });
  const indexBudget = config.memoryBudgetBytes - config.expectedFingerprints * perPage;
  if (config.memoryBudgetBytes > 0 && indexBudget <= 0) {
    throw new DedupError('PLAN_INVALID', `memoryBudgetBytes=${config.memoryBudgetBytes} does not even hold the page store of ${config.expectedFingerprints} pages (${perPage} B each)`);
  }
  return planTables({
    k,
    expectedSize: config.expectedFingerprints,
    ...(config.memoryBudgetBytes > 0 ? { memoryBudgetBytes: indexBudget } : {}),
  });
}

/** `tier`: where a new page store keeps its records, ids and sketches (in memory if absent; the service gives a file). */
export function createDecider(config: CreateDeciderOptions, plan: TablePlan, state?: { index: FingerprintIndex; store: PageStore }, tier?: PageTier): Decider {
  return new Decider({
    index: state?.index ?? FingerprintIndex.create({ plan, initialCapacity: Math.min(config.expectedFingerprints, 1 << 20) }),
    // Grown by doubling, not pre-sized: a snapshot writes the hash table whole.
    store: state?.store ?? new PageStore(1024, keepsSketches(config) ? SKETCH_BINS : 0, tier),
    k: config.k,
    maxFingerprints: config.maxFingerprints,
    maxAgeSeconds: config.maxAgeSeconds,
    secondStage: secondStageFromConfig(config),
  });
}

/** The second stage is on when it probes wider than k or has sketch bands; then every page keeps its sketch. */
export function keepsSketches(config: Pick<SecondStageOptions, 'secondStageRadius' | 'secondStageBands'>): boolean {
  return config.secondStageRadius > 0 || config.secondStageBands > 0;
}

/**
 * RAM bytes per page the second stage adds, for the planner's budget and the sizing formula
 * (docs/operations.md#sizing): BAND_BYTES_PER_PAGE per band (sketch-bands.ts). The 64-byte
 * sketch is in the page store's tier (on disk in the service), not in RAM. The wider radius's
 * extra tables are the planner's to count.
 */
export function secondStageBytesPerPage(config: Pick<SecondStageOptions, 'secondStageRadius' | 'secondStageBands'>): number {
  return keepsSketches(config) ? BAND_BYTES_PER_PAGE * config.secondStageBands : 0;
}

/**
 * The second stage's settings, or null when it is off. Without a wider radius it probes at k
 * and the bands alone bring the candidates beyond k.
 */
export function secondStageFromConfig(config: SecondStageOptions): SecondStage | null {
  if (!keepsSketches(config)) return null;
  return { radius: Math.max(config.k, config.secondStageRadius), minSimilarity: config.secondStageSimilarity, bands: config.secondStageBands };
}

/**
 * The fingerprint version of state this config writes (fingerprint-version.ts): the feature
 * options, and the sketches when the second stage keeps them. Snapshots and changelog records
 * carry it; state of another version is never mixed in.
 */
export function fingerprintVersionOf(config: FeatureConfig & Pick<SecondStageOptions, 'secondStageRadius' | 'secondStageBands'>): string {
  return fingerprintVersion(validateFeatureOptions(featureOptionsFromConfig(config)), keepsSketches(config));
}

/** Feature options from config; zero / 'default' keep the fingerprinter's defaults. */
export function featureOptionsFromConfig(config: FeatureConfig): Partial<FeatureOptions> {
  const options: Partial<FeatureOptions> = { boilerplate: config.boilerplate, cjk: config.cjk };
  if (config.shingleSize > 0) options.shingleSize = config.shingleSize;
  if (config.weighting !== 'default') options.weighting = config.weighting;
  if (config.minFeatures > 0) options.minFeatures = config.minFeatures;
  return options;
}

export function samePlan(a: TablePlan, b: TablePlan): boolean {
  return JSON.stringify({ k: a.k, w: a.blockWidths, t: a.tables }) === JSON.stringify({ k: b.k, w: b.blockWidths, t: b.tables });
}
