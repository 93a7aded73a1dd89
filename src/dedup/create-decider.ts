/**
 * Builds the table plan and an empty decider from config: the one place the
 * config's index options meet the index.
 */
import type { DedupConfig } from '../config.js';
import { DedupError } from '../errors.js';
import { FingerprintIndex, planFromBlocks, planTables, type TablePlan } from '../index/index.js';
import type { FeatureOptions } from '../fingerprint/index.js';
import { Decider } from './decider.js';
import { PageStore, pageStoreBytesPerPage } from './page-store.js';

/**
 * The memory budget covers the index AND the page store (that is what
 * dedup_index_bytes reports and the capacity alert watches), so the planner
 * gets the budget minus the page store's share.
 */
export function planFromConfig(config: Pick<DedupConfig, 'k' | 'tableBlocks' | 'expectedFingerprints' | 'memoryBudgetBytes'>): TablePlan {
  if (config.tableBlocks) return planFromBlocks(config.k, [...config.tableBlocks]);
  const indexBudget = config.memoryBudgetBytes - config.expectedFingerprints * pageStoreBytesPerPage();
  if (config.memoryBudgetBytes > 0 && indexBudget <= 0) {
    throw new DedupError('PLAN_INVALID', `memoryBudgetBytes=${config.memoryBudgetBytes} does not even hold the page store of ${config.expectedFingerprints} pages (${pageStoreBytesPerPage()} B each)`);
  }
  return planTables({
    k: config.k,
    expectedSize: config.expectedFingerprints,
    ...(config.memoryBudgetBytes > 0 ? { memoryBudgetBytes: indexBudget } : {}),
  });
}

export function createDecider(config: DedupConfig, plan: TablePlan, state?: { index: FingerprintIndex; store: PageStore }): Decider {
  return new Decider({
    index: state?.index ?? FingerprintIndex.create({ plan, initialCapacity: Math.min(config.expectedFingerprints, 1 << 20) }),
    // Grown by doubling, not pre-sized: a snapshot writes the hash table whole.
    store: state?.store ?? new PageStore(),
    k: config.k,
    maxFingerprints: config.maxFingerprints,
    maxAgeSeconds: config.maxAgeSeconds,
  });
}

/** Feature options from config; zero / 'default' keep the fingerprinter's defaults. */
export function featureOptionsFromConfig(config: Pick<DedupConfig, 'shingleSize' | 'boilerplate' | 'cjk' | 'weighting' | 'minFeatures'>): Partial<FeatureOptions> {
  const options: Partial<FeatureOptions> = { boilerplate: config.boilerplate, cjk: config.cjk };
  if (config.shingleSize > 0) options.shingleSize = config.shingleSize;
  if (config.weighting !== 'default') options.weighting = config.weighting;
  if (config.minFeatures > 0) options.minFeatures = config.minFeatures;
  return options;
}

export function samePlan(a: TablePlan, b: TablePlan): boolean {
  return JSON.stringify({ k: a.k, w: a.blockWidths, t: a.tables }) === JSON.stringify({ k: b.k, w: b.blockWidths, t: b.tables });
}
