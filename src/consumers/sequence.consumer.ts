/**
 * The shards this instance holds, kept up to date by tailing the sequence log.
 *
 * Every instance reads the whole sequence (one partition of small probe
 * records) and applies each record, in offset order, to the shards it holds
 * (src/dedup/shard-state.ts): the hits and repeats go to the answers log,
 * followed by a watermark naming each held shard's position; a page recorded
 * in its home shard goes to that shard's changelog partition.
 *
 * Shards come and go with the consumer group's assignment
 * (sharded-pages.consumer.ts). A new shard is restored from its changelog
 * partition, and its position is one past the last sequence it recorded: the
 * tail seeks back there and re-applies, which re-sends identical hits and
 * changelog entries (harmless: they are deterministic), never skips one.
 *
 * Warm standbys write what owners write (src/dedup/shard-outputs.ts says why
 * and in which order): a verdict is visible only once the page it records is
 * in the changelog, whichever holder dies when.
 */
import type { Consumer, Kafka } from 'kafkajs';
import { DedupError, errorCode } from '../errors.js';
import type { SnapshotHeader } from '../storage/state-snapshot.js';
import type { Logger } from '../logger.js';
import type { FingerprintIndex, TablePlan } from '../index/index.js';
import type { PageStore } from '../dedup/page-store.js';
import { ShardState } from '../dedup/shard-state.js';
import { applyBatch, watermarkOf, type Holding, type SequencedInput, type ShardOutput } from '../dedup/shard-outputs.js';
import type { AnswerRecord } from '../dedup/shard-protocol.js';
import type { DedupMetrics } from '../metrics/metrics.js';
import type { LogAppender, LogRecord } from '../kafka/log-appender.js';
import type { RecordCodec } from '../wire/record-codec.js';
import { decodeSequenceRecord, encodeShardRecord } from '../wire/shard-records.js';
import { sketchFromWire } from '../wire/sketch-wire.js';
import { replayChangelog } from '../kafka/changelog-replay.js';
import { endOffsets, startOffsets } from '../kafka/admin.js';
import { FINGERPRINT_VERSION_HEADER } from '../wire/output-record.js';
import { join } from 'node:path';
import type { PageTier } from '../dedup/blob-store.js';
import { samePlan, secondStageFromConfig, type SecondStageOptions } from '../dedup/create-decider.js';

export interface ShardHolderOptions {
  kafka: Kafka;
  /** The Kafka cluster's id: a shard snapshot is only good against the cluster it was made on. */
  clusterId: string;
  /** Snapshot files (src/storage/state-snapshot.ts), one directory per shard. */
  snapshots: ShardSnapshots;
  /** The fingerprint definition this build computes (changelog header, snapshot header). */
  fingerprintVersion: string;
  config: ShardHolderSettings;
  plan: TablePlan;
  codec: RecordCodec;
  appender: LogAppender;
  metrics: DedupMetrics;
  logger: Logger;
  onFatal: (error: unknown) => void;
}

/** The logs a shard holder reads and writes, its state directory, and the decision options of its shards. */
export interface ShardHolderSettings extends SecondStageOptions {
  readonly sequenceTopic: string;
  readonly answersTopic: string;
  readonly fingerprintsTopic: string;
  readonly shards: number;
  readonly groupId: string;
  readonly instanceId: string;
  readonly maxFingerprints: number;
  readonly stateDir: string;
  readonly snapshotIntervalSeconds: number;
}

/** A shard snapshot's header as the holder writes it: the file's own, less the part lengths the writer fills in. */
export type ShardSnapshotHeader = Omit<SnapshotHeader, 'indexBytes' | 'storeBytes'>;

export interface ShardSnapshots {
  /** Reads a shard's snapshot; its page store loads into `tier` (made empty; in memory if absent). */
  read(dir: string, tier?: () => PageTier): Promise<{ header: ShardSnapshotHeader; index: FingerprintIndex; store: PageStore } | null>;
  write(dir: string, header: ShardSnapshotHeader, index: FingerprintIndex, store: PageStore): Promise<number>;
  /** The page store tier of a shard whose snapshots live in `dir` (in memory if absent). */
  tier?(dir: string): PageTier;
}

export interface ShardHolder {
  start(): Promise<void>;
  /**
   * Holds exactly these shards from now on: restores new ones, drops the
   * others. Every held shard answers and writes its changelog; owned ones are
   * also snapshotted. A standby copy makes a failover need no restore.
   */
  hold(owned: readonly number[], standby?: readonly number[]): Promise<void>;
  /** True when every shard assigned to this instance is restored and applying. */
  readonly caughtUp: boolean;
  readonly held: readonly ShardState[];
  stop(): Promise<void>;
}

export function createShardHolder(options: ShardHolderOptions): ShardHolder {
  const { kafka, config, plan, codec, appender, metrics, logger, onFatal } = options;
  const secondStage = secondStageFromConfig(config);
  /** Per owned shard: the changelog offset after the last entry its state includes. */
  const changelogNext = new Map<number, bigint>();
  let lastSnapshot = Date.now();
  const shardDir = (shard: number) => join(config.stateDir, `shard-${shard}`);
  const shardCount = config.shards;
  const held = new Map<number, ShardState>();
  /** The held shards this instance answers for (the others are warm standbys). */
  const owned = new Set<number>();
  let wanted: readonly number[] = [];
  let restoring = 0;
  let sequenceEnd = 0;
  let started = false;
  /**
   * Set when an append failed: memory is then ahead of what is durable, and
   * a watermark written after that (at a rebalance, before the process
   * stops) could make a verdict visible whose page is not in the changelog.
   */
  let broken = false;
  /** Serialises batch application and changes to the held set. */
  let lock: Promise<void> = Promise.resolve();
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const run = lock.then(work);
    lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  };

  const consumer: Consumer = kafka.consumer({
    // Never committed: the position lives in the shards.
    // A group of its own per start: nothing is committed in it, and a group
    // of the same name would make a restarted instance wait for its dead
    // member's session to expire before it could read.
    groupId: `${config.groupId}-sequence-${config.instanceId}-${process.pid}-${Date.now().toString(36)}`,
    readUncommitted: false,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxWaitTimeInMs: 100,
    allowAutoTopicCreation: false,
  });

  /** The lowest position of the held shards: where the tail must be to move them all. */
  function lowestPosition(): number {
    let lowest = Infinity;
    for (const s of held.values()) if (s.position < lowest) lowest = s.position;
    return lowest;
  }

  function seekTo(offset: number): void {
    consumer.seek({ topic: config.sequenceTopic, partition: 0, offset: String(offset) });
  }

  /** The shard's local snapshot, if there is one that fits this cluster, changelog and plan. */
  async function loadSnapshot(shard: number): Promise<{ state: ShardState; from: string } | null> {
    let loaded;
    try {
      const tier = options.snapshots.tier;
      loaded = await options.snapshots.read(shardDir(shard), tier ? () => tier(shardDir(shard)) : undefined);
    } catch (error) {
      metrics.errors.inc({ code: errorCode(error) });
      logger.error('shard snapshot unreadable; restoring the shard from its changelog', { shard, error });
      return null;
    }
    if (!loaded) return null;
    const end = BigInt((await endOffsets(kafka, config.fingerprintsTopic))[String(shard)] ?? '0');
    const from = loaded.header.offsets[String(shard)];
    const reason =
      loaded.header.fingerprintVersion !== options.fingerprintVersion ? `another fingerprint definition (${loaded.header.fingerprintVersion ?? 'unnamed'})`
      : loaded.header.k !== config.k || !samePlan(loaded.header.plan, plan) ? 'another k or table plan'
      : loaded.header.changelogTopic !== config.fingerprintsTopic ? 'another changelog topic'
      : loaded.header.clusterId !== options.clusterId ? 'another Kafka cluster'
      : from === undefined || !/^\d+$/.test(from) || BigInt(from) > end ? 'a changelog that has since been recreated'
      : null;
    if (reason) {
      logger.warn(`shard snapshot was made with ${reason}; restoring the shard from its changelog`, { shard });
      return null;
    }
    return { state: new ShardState(shard, plan, config.k, { index: loaded.index, store: loaded.store }, secondStage), from: from! };
  }

  async function restore(shard: number, role: 'owner' | 'standby'): Promise<ShardState> {
    const started = Date.now();
    const snapshot = await loadSnapshot(shard);
    const state = snapshot?.state ?? new ShardState(shard, plan, config.k, undefined, secondStage, options.snapshots.tier?.(shardDir(shard)));
    state.window = config.maxFingerprints;
    // Changelog entries are applied in bulk (radix-sorted runs), not one insert at a time.
    const pending: Parameters<ShardState['restoreBatch']>[0][number][] = [];
    // Entries that added a page: the rest are copies of pages already held
    // (a standby writes what the owner writes, often after the owner's snapshot).
    let replayedPages = 0;
    const flush = () => {
      replayedPages += state.restoreBatch(pending);
      pending.length = 0;
    };
    const replay = await replayChangelog({
      kafka,
      topic: config.fingerprintsTopic,
      from: snapshot ? { [String(shard)]: snapshot.from } : {},
      partitions: [shard],
      codec,
      logger,
      groupIdPrefix: `${config.groupId}-restore-${shard}`,
      fingerprintVersion: options.fingerprintVersion,
      apply: (change) => {
        pending.push({ id: change.id, hi: change.hi, lo: change.lo, short: change.short, fetchedAt: change.fetchedAt, sequence: change.sequence, sketch: change.sketch ?? null });
        if (pending.length >= 65_536) flush();
      },
    });
    flush();
    // Past a long stop, retention may have deleted the sequence records after
    // the shard's last recorded page. None of them changed this shard (its
    // changelog holds every page it recorded), so it moves to where the log
    // starts; otherwise it would wait forever for a record that is gone.
    const logStart = Number((await startOffsets(kafka, config.sequenceTopic))['0'] ?? '0');
    if (state.position < logStart) {
      logger.warn('the sequence log no longer holds this shard\u2019s position; moving it to the log start', { shard, position: state.position, logStart });
      state.position = logStart;
    }
    changelogNext.set(shard, BigInt(replay.offsets[String(shard)] ?? snapshot?.from ?? '0'));
    const seconds = (Date.now() - started) / 1000;
    metrics.shardRestoreDuration.observe(seconds);
    logger.info('shard restored', { shard, role, fromSnapshot: snapshot !== null, fingerprints: state.size, replayedRecords: replay.records, replayedPages, position: state.position, seconds });
    return state;
  }

  /**
   * Writes a snapshot of every owned shard: its state, and the changelog
   * offset after the last entry that state includes (what this instance
   * wrote or replayed, never the end offset, which another holder may have
   * moved). Standby copies are not written: a restore of one replays.
   */
  async function snapshotOwned(reason: string): Promise<void> {
    const started = Date.now();
    let pages = 0;
    for (const [shard, state] of held) {
      const next = changelogNext.get(shard);
      if (!owned.has(shard) || next === undefined) continue;
      await options.snapshots.write(
        shardDir(shard),
        { createdAt: new Date().toISOString(), clusterId: options.clusterId, changelogTopic: config.fingerprintsTopic, offsets: { [String(shard)]: next.toString() }, k: config.k, plan, pages: state.store.size, fingerprintVersion: options.fingerprintVersion },
        state.index,
        state.store,
      );
      pages += state.store.size;
    }
    lastSnapshot = Date.now();
    metrics.snapshotAge.set(lastSnapshot / 1000);
    logger.info('shard snapshots written', { reason, shards: owned.size, pages, seconds: (Date.now() - started) / 1000 });
  }

  /** The held shards with their roles, in the order the outputs name them. */
  function holdings(): Holding[] {
    return [...held.values()].map((state) => ({ state, owner: owned.has(state.shard) }));
  }

  function watermark(): LogRecord {
    return answer(watermarkOf(holdings(), config.instanceId));
  }

  async function toLogRecord(output: ShardOutput): Promise<LogRecord> {
    if (output.kind === 'answer') return answer(output.record);
    const { shard, ...change } = output.change;
    return {
      topic: config.fingerprintsTopic,
      partition: shard,
      key: change.id,
      headers: { [FINGERPRINT_VERSION_HEADER]: options.fingerprintVersion },
      value: await codec.encodeChange({ ...change, duplicateOf: null, distance: 0 }),
    };
  }

  async function apply(messages: { offset: string; value: Buffer | null }[]): Promise<number> {
    const inputs: SequencedInput[] = [];
    for (const message of messages) {
      const sequence = Number(message.offset);
      try {
        const record = decodeSequenceRecord(message.value);
        inputs.push({ sequence, record, sketch: sketchFromWire(record.sketch) });
      } catch (error) {
        // Not ours (the topic is internal): skip it, loudly. Every shard moves past it alike.
        metrics.errors.inc({ code: errorCode(error) });
        logger.error('skipping an undecodable sequence record', { offset: message.offset, error });
        inputs.push({ sequence, record: null, sketch: null });
      }
    }
    const { applied, appends } = applyBatch(holdings(), shardCount, config.instanceId, inputs, config.maxFingerprints);
    for (const outputs of appends) {
      const out = await Promise.all(outputs.map(toLogRecord));
      let offsets: number[];
      try {
        offsets = await appender.append(out);
      } catch (error) {
        broken = true;
        throw error;
      }
      for (let i = 0; i < out.length; i++) {
        if (out[i]!.topic === config.fingerprintsTopic) changelogNext.set(out[i]!.partition, BigInt(offsets[i]!) + 1n);
      }
    }
    return applied;
  }

  function answer(record: AnswerRecord): LogRecord {
    return { topic: config.answersTopic, partition: 0, key: null, value: encodeShardRecord(record) };
  }

  return {
    get caughtUp() {
      return started && restoring === 0 && wanted.every((s) => held.has(s));
    },
    get held() {
      return [...held.values()].filter((s) => owned.has(s.shard));
    },
    async start() {
      // After a rejoin of this tail's group (a coordinator that restarted),
      // kafkajs starts from the committed offset, and there is none: back to
      // where the held shards stand, not to the start of the log.
      consumer.on(consumer.events.GROUP_JOIN, () => {
        const lowest = lowestPosition();
        if (Number.isFinite(lowest)) seekTo(lowest);
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [config.sequenceTopic], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
          if (!isRunning() || isStale()) return;
          sequenceEnd = Number(batch.highWatermark);
          await exclusive(async () => {
            try {
              const applied = await apply(batch.messages);
              if (applied > 0) metrics.sequenceApplied.inc(applied);
              if (config.snapshotIntervalSeconds > 0 && Date.now() - lastSnapshot >= config.snapshotIntervalSeconds * 1000) {
                // A failed snapshot costs a longer restore later, never consumption now.
                await snapshotOwned('interval').catch((error: unknown) => {
                  lastSnapshot = Date.now();
                  metrics.snapshotFailures.inc();
                  logger.error('shard snapshots failed; applying goes on', { error });
                });
              }
              // A shard behind what this batch covered (restored meanwhile) needs the tail back.
              const lowest = lowestPosition();
              const last = batch.messages[batch.messages.length - 1];
              if (last && lowest < Number(last.offset)) seekTo(lowest);
            } catch (error) {
              metrics.errors.inc({ code: errorCode(error) });
              onFatal(error instanceof DedupError ? error : new DedupError('KAFKA', `applying the sequence failed: ${(error as Error).message}`, { cause: error }));
              throw error;
            }
          });
          const last = batch.messages[batch.messages.length - 1];
          if (last) resolveOffset(last.offset);
          const lowest = lowestPosition();
          metrics.sequenceLag.set(Number.isFinite(lowest) ? Math.max(0, sequenceEnd - lowest) : 0);
          await heartbeat();
        },
      });
      started = true;
    },
    hold(ownedShards, standbyShards = []) {
      const shards = [...new Set([...ownedShards, ...standbyShards])];
      wanted = shards;
      const roles = exclusive(async () => {
        const keep = new Set(shards);
        for (const s of [...held.keys()]) {
          if (!keep.has(s)) {
            held.delete(s);
            logger.info('shard released', { shard: s });
          }
        }
        for (const s of ownedShards) {
          if (held.has(s) && !owned.has(s)) {
            metrics.shardPromotions.inc();
            logger.info('shard taken over from its warm standby, no restore', { shard: s, position: held.get(s)!.position });
          }
        }
        owned.clear();
        for (const s of ownedShards) owned.add(s);
        metrics.shardsHeld.set(owned.size);
        metrics.standbyShardsHeld.set(held.size - [...held.keys()].filter((s) => owned.has(s)).length);
        return shards.filter((s) => !held.has(s));
      });
      return roles.then(async (fresh) => {
        if (fresh.length === 0) return;
        restoring++;
        try {
          // Restored outside the lock: the shards held already go on applying
          // and answering meanwhile, so pages do not wait for a restore. In
          // parallel: most of a small shard's restore is the replay consumer
          // joining its group, not reading.
          const restored = await Promise.all(fresh.map((s) => restore(s, owned.has(s) ? 'owner' : 'standby')));
          await exclusive(async () => {
            let lowest = Infinity;
            for (const state of restored) {
              // A later assignment may have taken it away, or restored it already.
              if (!wanted.includes(state.shard) || held.has(state.shard)) continue;
              held.set(state.shard, state);
              if (state.position < lowest) lowest = state.position;
            }
            if (lowest === Infinity) return;
            // Re-apply from the lowest restored position; held shards that are
            // ahead skip what they have applied.
            seekTo(lowest);
            metrics.standbyShardsHeld.set(held.size - [...held.keys()].filter((s) => owned.has(s)).length);
            // Say where the held shards stand now, even if no record follows.
            if (!broken) await appender.append([watermark()]);
          });
        } finally {
          restoring--;
        }
      });
    },
    async stop() {
      await consumer.stop().catch(() => undefined);
      await consumer.disconnect().catch(() => undefined);
      await exclusive(() => snapshotOwned('shutdown')).catch((error: unknown) => {
        metrics.snapshotFailures.inc();
        logger.error('shard snapshots at shutdown failed; the next start replays more of the changelog', { error });
      });
    },
  };
}
