/**
 * The library entry point (package.json `main`): the pure core without Kafka.
 *
 *   const fingerprinter = await createFingerprinter();
 *   const { hi, lo } = fingerprinter.fingerprint({ html });
 *   const decider = createDecider(loadConfig({}), planFromConfig(loadConfig({})));
 *   decider.decide({ id, hi, lo, short, fetchedAt });
 *
 * Importing it loads neither kafkajs nor prom-client: the pipeline is the
 * `dedup run` command, not part of the library.
 */
export * from './fingerprint/index.js';
export * from './index/index.js';
export { Decider, type DecisionInput, type DeciderOptions, type Verdict } from './dedup/decider.js';
export { PageStore } from './dedup/page-store.js';
export { createDecider, featureOptionsFromConfig, planFromConfig, type CreateDeciderOptions, type FeatureConfig, type PlanOptions, type SecondStageOptions } from './dedup/create-decider.js';
export { CONFIG_OPTIONS, loadConfig, type DedupConfig, type OptionSpec } from './config.js';
export { ConfigError, DedupError, ERROR_CODES, errorCode, type DedupErrorOptions, type ErrorCode } from './errors.js';
export { MAX_ID_BYTES, MAX_URL_BYTES, MIN_FETCHED_AT_MS, MAX_FETCHED_AT_AHEAD_MS, toCrawledPage, type CrawledPage } from './wire/crawled-page.js';
export { runBatch, type BatchOptions, type BatchStats } from './cli/batch-command.js';
