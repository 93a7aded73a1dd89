/**
 * Restore after a crash in sharded mode: two instances decide the whole
 * pre-loaded input (so every shard holds its share of the index), then one of
 * them is SIGKILLed. The broker notices only when its session times out;
 * the survivor is then assigned the dead one's input partitions and shards,
 * restores each shard from its changelog partition, and is ready again.
 *
 * Polled every 50 ms on the survivor: /readyz, dedup_shards_held and its
 * dedup_shard_restore_seconds histogram. Reported: kill → survivor not ready
 * (the failure being noticed: the session timeout), not ready → ready again
 * (the rebalance plus the restores), kill → ready, and the restore histogram's
 * own figures, with the sizes of the shards that moved (read from the killed
 * instance's dedup_shard_fingerprints just before the kill).
 */
import type { Kafka } from 'kafkajs';
import { sleep, type Stack } from '../pipeline/common.js';
import { metricSum, scrape } from '../pipeline/throughput.js';
import { scrapeAll, startGroup, stopGroup, sumOver } from './group.js';

export interface ShardSize {
  shard: number;
  fingerprints: number;
}

export interface RestoreRun {
  pages: number;
  partitions: number;
  shards: number;
  /** Seconds from spawning the two instances to their having decided the whole input, before the kill. */
  drainSeconds: number;
  movedShards: ShardSize[];
  keptShards: ShardSize[];
  movedFingerprints: number;
  killedIndexBytes: number;
  /** Kill → the survivor's /readyz first fails (its consumer saw the rebalance begin); null when no poll saw it fail. */
  noticeSeconds: number | null;
  /** Survivor not ready → ready again, holding every shard; null when no poll saw it not ready. */
  notReadySeconds: number | null;
  killToReadySeconds: number;
  /** From the survivor's dedup_shard_restore_seconds: shards restored after the kill, their total and longest time. */
  restoredShards: number;
  restoreSecondsTotal: number;
  restoreSecondsLongestBucket: string | null;
  /** From the survivor's dedup_rebalance_seconds: the rebalance after the kill, begin to restored (s, mean if several). */
  rebalanceSeconds: number | null;
  survivorIndexBytesAfter: number;
}

function shardSizes(samples: Map<string, number>): ShardSize[] {
  const out: ShardSize[] = [];
  for (const [series, value] of samples) {
    const m = /^dedup_shard_fingerprints\{shard="(\d+)"\}$/.exec(series);
    if (m) out.push({ shard: Number(m[1]), fingerprints: value });
  }
  return out.sort((a, b) => a.shard - b.shard);
}

/** The smallest histogram bucket bound that holds every new observation (a bound on the longest restore). */
function longestBucket(before: Map<string, number>, after: Map<string, number>, name: string): string | null {
  const total = metricSum(after, `${name}_count`) - metricSum(before, `${name}_count`);
  if (total <= 0) return null;
  const bounds: { le: string; n: number }[] = [];
  for (const [series, value] of after) {
    const m = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\}$`).exec(series);
    if (m) bounds.push({ le: m[1]!, n: value - (before.get(series) ?? 0) });
  }
  bounds.sort((a, b) => (a.le === '+Inf' ? 1 : b.le === '+Inf' ? -1 : Number(a.le) - Number(b.le)));
  return bounds.find((b) => b.n >= total)?.le ?? null;
}

export async function restoreRun(kafka: Kafka, stack: Stack, options: { pagesTopic: string; partitions: number; shards: number; pages: number; timeoutMs: number }): Promise<RestoreRun> {
  const drainStarted = performance.now();
  const group = await startGroup(stack, { name: 'restore', mode: 'sharded', instances: 2 }, options.pagesTopic, options.partitions, options.shards);
  try {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const dead = group.instances.find((i) => i.child.hasExited());
      if (dead) throw new Error(`restore: ${dead.id} exited while deciding the input:\n${dead.child.logs().slice(-3000)}`);
      const count = sumOver(await scrapeAll(group), 'dedup_pages_consumed_total');
      if (count >= options.pages) break;
      if (Date.now() > deadline) throw new Error(`restore: only ${count} of ${options.pages} pages decided`);
      await sleep(100);
    }
    const drainSeconds = (performance.now() - drainStarted) / 1000;
    // Let the last watermarks and changelog entries land.
    await sleep(1000);
    const [survivor, victim] = group.instances as [(typeof group.instances)[0], (typeof group.instances)[0]];
    const victimSamples = await scrape(victim.metricsPort);
    const survivorBefore = await scrape(survivor.metricsPort);
    const moved = shardSizes(victimSamples);
    const kept = shardSizes(survivorBefore);
    if (moved.length === 0 || kept.length === 0) throw new Error(`restore: the shards are not spread over the two instances (${kept.length} / ${moved.length})`);

    const killedAt = performance.now();
    victim.child.child.kill('SIGKILL');
    await victim.child.exited;
    // Ready again = /readyz 200, every shard held, after an assignment that
    // came later than the kill. The not-ready spell can be shorter than a poll:
    // then it is not seen, and only the total is reported.
    const rebalancesBefore = metricSum(survivorBefore, 'dedup_rebalances_total');
    let notReadyAt: number | null = null;
    let readyAt: number | null = null;
    const restoreDeadline = Date.now() + options.timeoutMs;
    for (;;) {
      if (survivor.child.hasExited()) throw new Error(`restore: the survivor exited:\n${survivor.child.logs().slice(-3000)}`);
      const response = await fetch(`http://127.0.0.1:${survivor.metricsPort}/readyz`).catch(() => null);
      const now = performance.now();
      if (response?.status !== 200) notReadyAt ??= now;
      else {
        const samples = await scrape(survivor.metricsPort);
        if (metricSum(samples, 'dedup_shards_held') === options.shards && metricSum(samples, 'dedup_rebalances_total') > rebalancesBefore) {
          readyAt = now;
          break;
        }
      }
      if (Date.now() > restoreDeadline) throw new Error(`restore: the survivor was not ready again with every shard within ${options.timeoutMs} ms`);
      await sleep(50);
    }
    const after = await scrape(survivor.metricsPort);
    const restoredShards = metricSum(after, 'dedup_shard_restore_seconds_count') - metricSum(survivorBefore, 'dedup_shard_restore_seconds_count');
    const rebalances = metricSum(after, 'dedup_rebalance_seconds_count') - metricSum(survivorBefore, 'dedup_rebalance_seconds_count');
    return {
      pages: options.pages,
      partitions: options.partitions,
      shards: options.shards,
      drainSeconds,
      movedShards: moved,
      keptShards: kept,
      movedFingerprints: moved.reduce((a, s) => a + s.fingerprints, 0),
      killedIndexBytes: metricSum(victimSamples, 'dedup_index_bytes'),
      noticeSeconds: notReadyAt === null ? null : (notReadyAt - killedAt) / 1000,
      notReadySeconds: notReadyAt === null ? null : (readyAt - notReadyAt) / 1000,
      killToReadySeconds: (readyAt - killedAt) / 1000,
      restoredShards,
      restoreSecondsTotal: metricSum(after, 'dedup_shard_restore_seconds_sum') - metricSum(survivorBefore, 'dedup_shard_restore_seconds_sum'),
      restoreSecondsLongestBucket: longestBucket(survivorBefore, after, 'dedup_shard_restore_seconds'),
      rebalanceSeconds: rebalances > 0 ? (metricSum(after, 'dedup_rebalance_seconds_sum') - metricSum(survivorBefore, 'dedup_rebalance_seconds_sum')) / rebalances : null,
      survivorIndexBytesAfter: metricSum(after, 'dedup_index_bytes'),
    };
  } finally {
    await stopGroup(kafka, group);
  }
}
