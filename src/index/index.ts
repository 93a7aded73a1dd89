export {
  planFromBlocks,
  planTwoLevel,
  validatePlan,
  evenWidths,
  type TablePlan,
  type TableSpec,
} from './plan.js';
export { planTables, describePlan, type PlanOptions, type PlanCost } from './planner.js';
export { FingerprintIndex, type IndexOptions } from './fingerprint-index.js';
export { createQueryResult, pushResult, type QueryResult } from './query-result.js';
export { batchQuery, findAllPairs, type BatchMatcher, type BatchResults, type PairList } from './batch.js';
export { SNAPSHOT_MAGIC, SNAPSHOT_VERSION } from './snapshot.js';
export { bufferSource, concatChunks, readSliced, STREAM_CHUNK_BYTES, type ByteSource } from './byte-stream.js';
