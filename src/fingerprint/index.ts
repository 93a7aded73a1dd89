export {
  DEFAULT_FEATURE_OPTIONS,
  createFingerprinter,
  validateFeatureOptions,
  type FeatureOptions,
  type Fingerprinter,
  type FingerprintResult,
  type PageContent,
  type Weighting,
} from './fingerprinter.js';
export type { CjkMode } from './tokenizer.js';
export type { BoilerplateMode } from './html-text.js';
export {
  fingerprintFromBytes,
  fingerprintFromHex,
  fingerprintToBigInt,
  fingerprintToBytes,
  fingerprintToHex,
  hammingDistance,
  popcount32,
} from './fingerprint-hex.js';
export { createFingerprintPool, type FingerprintPool, type FingerprintPoolOptions, type PoolPage } from './fingerprint-pool.js';
export { decodePageBytes, isBinaryContent, pageText, readMisreadUtf16, toWellFormedText } from './page-bytes.js';
export { FINGERPRINT_DEFINITION, fingerprintVersion } from './fingerprint-version.js';
export { jiebaTables, useJiebaTables, type JiebaTables } from './cjk-segmenter.js';
export { SKETCH_BINS, sketchSimilarity } from './feature-sketch.js';
