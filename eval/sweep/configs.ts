/**
 * Feature configurations the sweep compares: the fingerprinter's defaults and
 * one change at a time from them, plus a naive baseline (single words, no
 * boilerplate removal, no CJK segmentation, no stop words).
 */
import { DEFAULT_FEATURE_OPTIONS, type FeatureOptions } from '../../src/fingerprint/index.js';
import { DEFAULT_DENSITY, dropChromeShapedBlocks, reweightBlocks } from './density-filter.js';

export interface SweepConfig {
  readonly name: string;
  readonly what: string;
  readonly options: Readonly<FeatureOptions>;
  /** An eval-side prototype applied to the HTML before fingerprinting (not in the product). */
  readonly prepare?: (html: string) => string;
}

const d = DEFAULT_FEATURE_OPTIONS;
const variant = (name: string, what: string, change: Partial<FeatureOptions>): SweepConfig => ({ name, what, options: Object.freeze({ ...d, ...change }) });

export const SWEEP_CONFIGS: readonly SweepConfig[] = [
  variant('default', 'the fingerprinter defaults', {}),
  variant('words', 'single words instead of shingles', { shingleSize: 1 }),
  variant('shingles-3', 'word 3-shingles', { shingleSize: 3 }),
  variant('log-tf', 'weights 1 + ln(tf)', { weighting: 'log-tf' }),
  variant('tfidf', 'weights tf x idf (jieba idf table)', { weighting: 'tfidf' }),
  variant('binary', 'every feature weight 1', { weighting: 'binary' }),
  variant('boilerplate-keep', 'no boilerplate removal', { boilerplate: 'keep' }),
  variant('cjk-bigram', 'CJK character bigrams instead of jieba', { cjk: 'bigram' }),
  variant('cjk-off', 'no CJK segmentation', { cjk: 'off' }),
  variant('no-stop-words', 'stop words kept', { stopWords: false }),
  { ...variant('density-drop', 'defaults after an eval-side prototype (eval/sweep/density-filter.ts), on top of the product\'s own shape rule: every link-dense or letter-poor block blanked unless that removes over half the letters', {}), prepare: dropChromeShapedBlocks },
  { ...variant('density-weight', 'defaults after an eval-side prototype (eval/sweep/density-filter.ts), on top of the product\'s own shape rule: text of prose-shaped blocks counted three times', {}), prepare: (html) => reweightBlocks(html, DEFAULT_DENSITY, 3) },
  variant('naive', 'single words, boilerplate kept, no CJK segmentation, stop words kept', { shingleSize: 1, boilerplate: 'keep', cjk: 'off', stopWords: false }),
];

/** Options that differ from the defaults, for tables ("shingleSize=1, cjk=off"). */
export function describeChange(options: Readonly<FeatureOptions>): string {
  const diff = (Object.keys(d) as (keyof FeatureOptions)[]).filter((k) => options[k] !== d[k]).map((k) => `${k}=${String(options[k])}`);
  return diff.length === 0 ? '(defaults)' : diff.join(', ');
}
