/**
 * Every metric the process exports, declared in one place on an injected
 * registry (prom-client). The dashboard, the alert rules and the operations
 * doc are checked against `METRIC_NAMES` by the test suite, so a metric is
 * added here or nowhere.
 *
 * Hot paths count in locals and add once per batch; state such as the index
 * size is read at scrape time through `collect()`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Read at scrape time; supplied by whoever owns the state. */
export interface MetricsState {
  indexFingerprints(): number;
  indexBytes(): number;
  indexMemoryLimitBytes(): number;
  indexTables(): number;
  planCandidatesPerProbe(): number;
  ready(): boolean;
  /** The schema registry answered its last call, or none is configured. */
  registryAvailable?(): boolean;
  /** Held shard → fingerprints (sharded mode only). */
  shardSizes?(): Iterable<[number, number]>;
  /** Routed mode: bytes (keys and values) and records read from and written to its coordination topics so far, by record kind. */
  routedTraffic?(): Iterable<RoutedTrafficCount>;
}

/** One line of routed mode's coordination traffic: what the owner and the holder counted for one record kind and direction. */
export interface RoutedTrafficCount {
  readonly direction: 'read' | 'written';
  readonly kind: string;
  readonly bytes: number;
  readonly records: number;
}

/** Sets a routed traffic counter to the owner's and holder's counts (they count as records pass; a scrape copies them). */
function copyRoutedTraffic(counter: Counter<'direction' | 'kind'>, state: MetricsState, field: 'bytes' | 'records'): void {
  if (!state.routedTraffic) return;
  counter.reset();
  for (const t of state.routedTraffic()) counter.inc({ direction: t.direction, kind: t.kind }, t[field]);
}

const LATENCY_BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const BATCH_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const CANDIDATE_BUCKETS = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384, 65536];
const END_TO_END_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export function createMetrics(registry: Registry, state: MetricsState, options: { defaultMetrics?: boolean } = {}) {
  if (options.defaultMetrics !== false) {
    // process_* and nodejs_* (memory, event-loop lag, restarts via process_start_time_seconds)
    collectDefaultMetrics({ register: registry });
  }
  const registers = [registry];

  const metrics = {
    pagesConsumed: new Counter({
      name: 'dedup_pages_consumed_total',
      help: 'Records read from the crawled-pages topic.',
      labelNames: ['topic'] as const,
      registers,
    }),
    pageBytes: new Counter({
      name: 'dedup_page_bytes_total',
      help: 'Bytes of crawled-page records read.',
      registers,
    }),
    verdicts: new Counter({
      name: 'dedup_verdicts_total',
      help: 'Verdicts written, by kind (novel, duplicate).',
      labelNames: ['verdict'] as const,
      registers,
    }),
    deadLetters: new Counter({
      name: 'dedup_dead_letters_total',
      help: 'Records sent to the dead-letter topic, by reason (an error code).',
      labelNames: ['reason'] as const,
      registers,
    }),
    errors: new Counter({
      name: 'dedup_errors_total',
      help: 'Errors by code (processing, Kafka, registry); dead letters are counted here too.',
      labelNames: ['code'] as const,
      registers,
    }),
    transactions: new Counter({
      name: 'dedup_transactions_total',
      help: 'Kafka transactions by outcome (committed, aborted).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    fingerprintDuration: new Histogram({
      name: 'dedup_fingerprint_duration_seconds',
      help: 'Time to fingerprint one page (HTML to simhash).',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    probeDuration: new Histogram({
      name: 'dedup_probe_duration_seconds',
      help: 'Time to probe the index for one page and insert it.',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    probeCandidates: new Histogram({
      name: 'dedup_probe_candidates',
      help: 'Table entries examined for one probe, summed over tables.',
      buckets: CANDIDATE_BUCKETS,
      registers,
    }),
    secondStage: new Counter({
      name: 'dedup_second_stage_total',
      help: 'Second-stage outcomes (DEDUP_SECOND_STAGE_BANDS, DEDUP_SECOND_STAGE_RADIUS): confirmed = a duplicate found beyond k and confirmed by the feature sketches; rejected = candidates all turned down, beyond k by their sketches, within k too by their content numbers and identifiers (the page stayed novel; single mode and the batch CLI only, as a shard\u2019s rejections never leave it).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    batchDuration: new Histogram({
      name: 'dedup_batch_duration_seconds',
      help: 'Time to decide and commit one consumed batch, transaction included.',
      buckets: BATCH_BUCKETS,
      registers,
    }),
    batchSize: new Histogram({
      name: 'dedup_batch_records',
      help: 'Records per consumed batch.',
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000],
      registers,
    }),
    verdictLatency: new Histogram({
      name: 'dedup_verdict_latency_seconds',
      help: 'From the crawled-page record timestamp to its verdict being committed.',
      buckets: END_TO_END_BUCKETS,
      registers,
    }),
    chunkStage: new Histogram({
      name: 'dedup_chunk_stage_seconds',
      help: 'Where a chunk\u2019s time goes, per stage, one observation per chunk: fetch (its oldest record\u2019s timestamp to its batch reaching the instance), prepare (to decoded and fingerprinted), decide (to queued for a transaction), commit_wait (to its transaction beginning: the transaction before it, the linger) and transaction (to committed). The five add up to dedup_verdict_latency_seconds of the chunk\u2019s oldest page. Sharded mode observes fetch and prepare only.',
      labelNames: ['stage'] as const,
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10],
      registers,
    }),
    consumerLag: new Gauge({
      name: 'dedup_consumer_lag_records',
      help: 'Records behind the high watermark, per input partition, as of the last batch.',
      labelNames: ['topic', 'partition'] as const,
      registers,
    }),
    groupMembers: new Gauge({
      name: 'dedup_consumer_group_members',
      help: 'Members of the consumer group seen at the last rebalance.',
      registers,
    }),
    recoveryDuration: new Gauge({
      name: 'dedup_index_recovery_seconds',
      help: 'Time the last start-up spent loading the snapshot and replaying the changelog.',
      registers,
    }),
    snapshotFailures: new Counter({
      name: 'dedup_snapshot_failures_total',
      help: 'Snapshots that failed to write (full disk, permissions); consumption goes on, the next start replays more.',
      registers,
    }),
    snapshotAge: new Gauge({
      name: 'dedup_snapshot_timestamp_seconds',
      help: 'Unix time of the last snapshot written (0 if none).',
      registers,
    }),
    indexFingerprints: new Gauge({
      name: 'dedup_index_fingerprints',
      help: 'Fingerprints live in the index.',
      registers,
      collect() {
        this.set(state.indexFingerprints());
      },
    }),
    indexBytes: new Gauge({
      name: 'dedup_index_bytes',
      help: 'Bytes held by the index and page store typed arrays.',
      registers,
      collect() {
        this.set(state.indexBytes());
      },
    }),
    indexMemoryLimit: new Gauge({
      name: 'dedup_index_memory_limit_bytes',
      help: 'The configured memory budget of the index (0 = none).',
      registers,
      collect() {
        this.set(state.indexMemoryLimitBytes());
      },
    }),
    indexTables: new Gauge({
      name: 'dedup_index_tables',
      help: 'Permuted tables in the index plan.',
      registers,
      collect() {
        this.set(state.indexTables());
      },
    }),
    planCandidates: new Gauge({
      name: 'dedup_plan_candidates_per_probe',
      help: 'Candidates per probe the table plan expects at the current size (uniform fingerprints).',
      registers,
      collect() {
        this.set(state.planCandidatesPerProbe());
      },
    }),
    shardsHeld: new Gauge({
      name: 'dedup_shards_held',
      help: 'Index shards this instance holds (sharded mode).',
      registers,
    }),
    standbyShardsHeld: new Gauge({
      name: 'dedup_standby_shards_held',
      help: 'Warm standby copies of shards held here (sharded mode, standbyReplicas > 0).',
      registers,
    }),
    shardPromotions: new Counter({
      name: 'dedup_shard_promotions_total',
      help: 'Shards taken over from a warm standby copy, without a restore (sharded mode).',
      registers,
    }),
    shardFingerprints: new Gauge({
      name: 'dedup_shard_fingerprints',
      help: 'Fingerprints in each held shard (sharded mode).',
      labelNames: ['shard'] as const,
      registers,
      collect() {
        this.reset();
        for (const [shard, size] of state.shardSizes?.() ?? []) this.set({ shard: String(shard) }, size);
      },
    }),
    shardRestoreDuration: new Histogram({
      name: 'dedup_shard_restore_seconds',
      help: 'Time to restore one shard from its changelog partition when it is assigned here (sharded mode), or one index partition from dedup.order and its dedup.index partition (routed mode).',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    rebalances: new Counter({
      name: 'dedup_rebalances_total',
      help: 'Consumer group assignments received (each rebalance this instance took part in).',
      registers,
    }),
    rebalanceDuration: new Histogram({
      name: 'dedup_rebalance_seconds',
      help: 'From a rebalance starting to this instance holding and having restored its new assignment.',
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
    sequenceApplied: new Counter({
      name: 'dedup_sequence_records_applied_total',
      help: 'Sequence records applied to the shards held here (sharded mode).',
      registers,
    }),
    sequenceLag: new Gauge({
      name: 'dedup_sequence_lag_records',
      help: 'Sequence records the slowest held shard is behind the end of the sequence log (sharded mode).',
      registers,
    }),
    answerWait: new Histogram({
      name: 'dedup_answer_wait_seconds',
      help: 'From appending a chunk\u2019s pages to the sequence to having every shard\u2019s answer (sharded mode).',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    // Counted in the owner and the holder as records pass, copied here at scrape time.
    routedBytes: new Counter({
      name: 'dedup_routed_bytes_total',
      help: 'Bytes (keys and values) read from and written to the routed coordination topics (index, order, replies, ids), by direction and record kind (routed mode).',
      labelNames: ['direction', 'kind'] as const,
      registers,
      collect() {
        copyRoutedTraffic(this, state, 'bytes');
      },
    }),
    routedRecords: new Counter({
      name: 'dedup_routed_records_total',
      help: 'Records read from and written to the routed coordination topics, by direction and record kind (routed mode).',
      labelNames: ['direction', 'kind'] as const,
      registers,
      collect() {
        copyRoutedTraffic(this, state, 'records');
      },
    }),
    registryAvailable: new Gauge({
      name: 'dedup_registry_available',
      help: '1 when the schema registry answered its last call (or none is configured); 0 while it does not, at start-up too, where the instance waits and retries unready.',
      registers,
      collect() {
        this.set(state.registryAvailable?.() === false ? 0 : 1);
      },
    }),
    ready: new Gauge({
      name: 'dedup_ready',
      help: '1 when /readyz answers 200: the index is loaded (or every assigned shard restored), the consumer is in its group, and verdicts commit while records wait.',
      registers,
      collect() {
        this.set(state.ready() ? 1 : 0);
      },
    }),
  };
  // Both outcomes exist from the start (at 0), so a dashboard shows 0, not "no data", where the stage is off or idle.
  for (const outcome of ['confirmed', 'rejected'] as const) metrics.secondStage.inc({ outcome }, 0);
  return metrics;
}

export type DedupMetrics = ReturnType<typeof createMetrics>;

/** Names of every metric this module declares (the dashboard and rules may use only these). */
export const METRIC_NAMES: readonly string[] = Object.freeze([
  'dedup_pages_consumed_total',
  'dedup_page_bytes_total',
  'dedup_verdicts_total',
  'dedup_dead_letters_total',
  'dedup_errors_total',
  'dedup_transactions_total',
  'dedup_fingerprint_duration_seconds',
  'dedup_probe_duration_seconds',
  'dedup_probe_candidates',
  'dedup_batch_duration_seconds',
  'dedup_batch_records',
  'dedup_chunk_stage_seconds',
  'dedup_verdict_latency_seconds',
  'dedup_consumer_lag_records',
  'dedup_consumer_group_members',
  'dedup_index_recovery_seconds',
  'dedup_snapshot_timestamp_seconds',
  'dedup_index_fingerprints',
  'dedup_index_bytes',
  'dedup_index_memory_limit_bytes',
  'dedup_index_tables',
  'dedup_plan_candidates_per_probe',
  'dedup_ready',
  'dedup_registry_available',
  'dedup_snapshot_failures_total',
  'dedup_shards_held',
  'dedup_standby_shards_held',
  'dedup_shard_promotions_total',
  'dedup_shard_fingerprints',
  'dedup_shard_restore_seconds',
  'dedup_rebalances_total',
  'dedup_second_stage_total',
  'dedup_rebalance_seconds',
  'dedup_sequence_records_applied_total',
  'dedup_sequence_lag_records',
  'dedup_answer_wait_seconds',
  'dedup_routed_bytes_total',
  'dedup_routed_records_total',
]);
