/**
 * Sharded mode's start-up (src/consumers/sharded-pages.consumer.ts): topics →
 * metrics server → codec + fingerprinting → internal log appender → answers
 * tail → shard holder (sequence tail) → join the group, whose assignment
 * names the shards to restore.
 */
import type { Registry } from 'prom-client';
import type { DedupConfig } from '../../config.js';
import { describePlan } from '../../index/index.js';
import { keepsSketches, planFromConfig } from '../../dedup/create-decider.js';
import { clusterId } from '../../kafka/admin.js';
import { createLogAppender } from '../../kafka/log-appender.js';
import { createAnswerTail } from '../../consumers/answers.consumer.js';
import { createShardHolder, type ShardHolder } from '../../consumers/sequence.consumer.js';
import { createShardedPagesConsumer, type ShardedPagesConsumer } from '../../consumers/sharded-pages.consumer.js';
import type { ShardState } from '../../dedup/shard-state.js';
import type { Logger } from '../../logger.js';
import { readSnapshot, writeSnapshot } from '../../storage/state-snapshot.js';
import { pick, pageTierIn, startCommon, batchProcessor, pipelineHandle, type Closers, type Pipeline } from '../start-common.js';

export async function startSharded(config: DedupConfig, logger: Logger, registry: Registry, closers: Closers): Promise<Pipeline> {
  const plan = planFromConfig(config);
  let holder: ShardHolder | null = null;
  let consumer: ShardedPagesConsumer | null = null;
  const ready = (): boolean => consumer?.ready ?? false;
  const held = () => holder?.held ?? [];
  const sum = (f: (s: ShardState) => number) => held().reduce((total, s) => total + f(s), 0);
  const common = await startCommon(config, logger, closers, ready, registry, {
    indexFingerprints: () => sum((s) => s.size),
    indexBytes: () => sum((s) => s.byteLength),
    indexMemoryLimitBytes: () => config.memoryBudgetBytes,
    indexTables: () => plan.tables.length,
    planCandidatesPerProbe: () => describePlan(plan, Math.max(1, sum((s) => s.size))).expectedCandidatesPerProbe,
    shardSizes: () => held().map((s) => [s.shard, s.size] as [number, number]),
  });
  const { metrics, kafka, codec, maxRecordBytes, fingerprintVersion: version } = common;

  let fail!: (error: unknown) => void;
  const failed = new Promise<unknown>((resolve) => (fail = resolve));
  const appender = createLogAppender(kafka);
  const answers = createAnswerTail({ kafka, config: pick(config, ['answersTopic', 'shards', 'groupId', 'instanceId']), metrics, logger });
  // Independent round trips, at once: a restarted instance is ready sooner.
  const [appenderUp, answersUp, clusterUp] = await Promise.allSettled([appender.connect(), answers.start(), clusterId(kafka)]);
  if (appenderUp.status === 'fulfilled') closers.push('log appender', () => appender.disconnect());
  if (answersUp.status === 'fulfilled') closers.push('answers tail', () => answers.stop());
  for (const outcome of [appenderUp, answersUp, clusterUp]) if (outcome.status === 'rejected') throw outcome.reason;
  const cluster = (clusterUp as PromiseFulfilledResult<string>).value;
  holder = createShardHolder({
    kafka,
    clusterId: cluster,
    fingerprintVersion: version,
    snapshots: { read: (dir, tier) => readSnapshot(dir, tier ? { pageTier: tier } : {}), write: writeSnapshot, tier: pageTierIn },
    config: pick(config, ['sequenceTopic', 'answersTopic', 'fingerprintsTopic', 'shards', 'groupId', 'instanceId', 'maxFingerprints', 'stateDir', 'snapshotIntervalSeconds', 'k', 'secondStageRadius', 'secondStageSimilarity', 'secondStageBands']),
    plan,
    codec,
    appender,
    metrics,
    logger,
    onFatal: (error) => fail(error),
  });
  await holder.start();
  closers.push('shard holder', () => holder!.stop());
  const processor = batchProcessor(config, common, null);
  const consumerConfig = {
    ...pick(config, ['groupId', 'pagesTopic', 'maxBatchRecords', 'instanceId', 'fingerprintsTopic', 'sequenceTopic', 'k', 'topicPartitions']),
    standbyTopic: config.standbyReplicas > 0 ? config.standbyTopic : null,
    secondStage: keepsSketches(config),
  };
  consumer = createShardedPagesConsumer({ kafka, config: consumerConfig, processor, appender, answers, holder, metrics, logger, maxRecordBytes, onFatal: (error) => fail(error) });
  await consumer.start();
  closers.push('consumer', () => consumer!.stop());
  logger.info('sharded pipeline started', { shards: config.shards, plan: { k: plan.k, blocks: plan.blockWidths, tables: plan.tables.length } });

  return pipelineHandle(common, failed, logger, () => closers.closeAll());
}
