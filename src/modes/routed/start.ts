/**
 * Routed mode's start-up (src/kafka/routed-owner.ts, src/kafka/routed-holder.ts):
 * topics → metrics server → codec + fingerprinting → log appender → index
 * holder (order and index tail) → replies tail → join the group, whose
 * assignment names the index partitions to replay.
 */
import type { Registry } from 'prom-client';
import type { DedupConfig } from '../../config.js';
import { describePlan } from '../../index/index.js';
import { planFromConfig, secondStageFromConfig } from '../../dedup/create-decider.js';
import { clusterId } from '../../kafka/admin.js';
import { createLogAppender } from '../../kafka/log-appender.js';
import { addTraffic, createRoutedHolder, routedTrafficCounts, type RoutedHolder } from '../../kafka/routed-holder.js';
import { createRoutedOwner, type RoutedOwner } from '../../kafka/routed-owner.js';
import type { Logger } from '../../logger.js';
import { join as joinPath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCommon, batchProcessor, pipelineHandle, type Closers, type Pipeline } from '../start-common.js';

export async function startRouted(config: DedupConfig, logger: Logger, registry: Registry, closers: Closers): Promise<Pipeline> {
  const plan = planFromConfig(config);
  let holder: RoutedHolder | null = null;
  let owner: RoutedOwner | null = null;
  const ready = (): boolean => owner?.ready ?? false;
  const held = () => holder?.held ?? [];
  const common = await startCommon(config, logger, closers, ready, registry, {
    indexFingerprints: () => held().reduce((n, s) => n + s.size, 0),
    indexBytes: () => held().reduce((n, s) => n + s.index.byteLength + s.store.byteLength + (s.bands?.byteLength ?? 0), 0),
    indexMemoryLimitBytes: () => config.memoryBudgetBytes,
    indexTables: () => plan.tables.length,
    planCandidatesPerProbe: () => describePlan(plan, Math.max(1, held().reduce((n, s) => n + s.size, 0))).expectedCandidatesPerProbe,
    shardSizes: () => held().map((s) => [s.partition, s.size] as [number, number]),
    routedTraffic: () => (owner && holder ? routedTrafficCounts(addTraffic(owner.traffic(), holder.traffic())) : []),
  });
  const { metrics, kafka, maxRecordBytes } = common;
  let fail!: (error: unknown) => void;
  const failed = new Promise<unknown>((resolve) => (fail = resolve));
  const appender = createLogAppender(kafka);
  await appender.connect();
  closers.push('log appender', () => appender.disconnect());
  const topics = { pages: config.pagesTopic, index: config.indexTopic, order: config.orderTopic, replies: config.repliesTopic, ids: config.idsTopic };
  const secondStage = secondStageFromConfig(config);
  const snapshots = { dir: joinPath(config.stateDir, 'routed-snapshots'), intervalSeconds: config.snapshotIntervalSeconds, clusterId: await clusterId(kafka), fingerprintVersion: common.fingerprintVersion };
  holder = createRoutedHolder({ kafka, topics, groupId: config.groupId, instanceId: config.instanceId, plan, indexPartitions: config.indexPartitions, k: config.k, secondStage, appender, tierDir: joinPath(config.stateDir, 'routed-tier'), snapshots, metrics, logger, onFatal: (error) => fail(error) });
  await holder.start();
  closers.push('index holder', () => holder!.stop());
  const processor = batchProcessor(config, common, null);
  owner = createRoutedOwner({
    kafka,
    topics,
    standbyTopic: config.standbyReplicas > 0 ? config.standbyTopic : null,
    groupId: config.groupId,
    instanceId: config.instanceId,
    maxBatchRecords: config.maxBatchRecords,
    indexPartitions: config.indexPartitions,
    plan,
    secondStage,
    processor,
    appender,
    holder,
    metrics,
    logger,
    maxRecordBytes,
    onFatal: (error) => fail(error),
  });
  await owner.start();
  closers.push('consumer', () => owner!.stop());
  logger.info('routed pipeline started', { indexPartitions: config.indexPartitions, plan: { k: plan.k, blocks: plan.blockWidths, tables: plan.tables.length } });
  // Main-thread time from here on (fingerprinting runs on the worker threads): the coordination bench reads it from the stop line.
  const loopBefore = performance.eventLoopUtilization();
  return pipelineHandle(common, failed, logger, async () => {
    const loop = performance.eventLoopUtilization(loopBefore);
    await closers.closeAll();
    const o = owner!.traffic();
    const h = holder!.traffic();
    logger.info('routed traffic', {
      assignments: o.takeovers,
      indexReplays: h.takeovers,
      committedRecords: o.committedRecords,
      chunks: o.chunks,
      roundTwoAsks: o.roundTwoAsks,
      roundTrips: o.roundTrips,
      readBytes: o.readBytes + h.readBytes,
      readRecords: o.readRecords + h.readRecords,
      writtenBytes: o.writtenBytes + h.writtenBytes,
      writtenRecords: o.writtenRecords + h.writtenRecords,
      byKind: addTraffic(o, h).byKind,
      mainThreadBusyMs: Math.round(loop.active),
    });
  });
}
