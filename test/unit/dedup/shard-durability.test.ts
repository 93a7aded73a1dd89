/**
 * No verdict becomes visible unless the page it records is durable in the
 * changelog that rebuilds the index: a property over generated streams and
 * kill points.
 *
 * The model runs the sharded protocol's pure parts (applyBatch, watermarks,
 * the answer join, restores from the changelog, the assignor's plan) over a
 * cluster of instances with warm standbys. Logs are durable per partition: an
 * append in flight when its instance is killed lands on some partitions and
 * not on others, as a produce request to several partitions does. A killed
 * instance loses its memory; its shards go where the assignor sends them (a
 * standby is promoted, or a shard is restored from the durable changelog);
 * it comes back later with no local state.
 *
 * Checked: whenever a verdict completes (every shard's watermark past the
 * page), the page is in its home shard's durable changelog; the verdicts are
 * those of one index over the sequence order; and after every local state is
 * deleted, an index rebuilt from the changelog calls an exact copy of every
 * decided page a duplicate.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Decider } from '../../../src/dedup/decider.js';
import { PageStore } from '../../../src/dedup/page-store.js';
import { ShardState, homeShard } from '../../../src/dedup/shard-state.js';
import { applyBatch, watermarkOf, type ChangeEntry, type Holding, type ShardOutput } from '../../../src/dedup/shard-outputs.js';
import { AnswerJoin, sourceKey } from '../../../src/dedup/answer-join.js';
import type { ProbeRecord } from '../../../src/dedup/shard-protocol.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { planShardAssignment } from '../../../src/kafka/shard-assigner.js';
import { mulberry32 } from '../../support/rng.js';

const PLAN = planFromBlocks(3, [16, 16, 16, 16]);
const K = 3;

const rng = mulberry32;

/** Originals, near-duplicates within and beyond k, and exact copies under new ids. */
function pages(r: () => number, n: number): ProbeRecord[] {
  const out: ProbeRecord[] = [];
  for (let i = 0; i < n; i++) {
    const base = out.length > 0 && r() < 0.5 ? out[Math.floor(r() * out.length)]! : null;
    let hi = base ? base.hi : (r() * 2 ** 32) >>> 0;
    let lo = base ? base.lo : (r() * 2 ** 32) >>> 0;
    const flips = base ? Math.floor(r() * 6) : 0;
    for (let f = 0; f < flips; f++) {
      const bit = Math.floor(r() * 64);
      if (bit < 32) hi = (hi ^ (1 << bit)) >>> 0;
      else lo = (lo ^ (1 << (bit - 32))) >>> 0;
    }
    out.push({ type: 'probe', id: `p${i}`, hi, lo, short: false, fetchedAt: 1_700_000_000_000 + i, partition: 0, offset: String(i) });
  }
  return out;
}

interface Instance {
  readonly name: string;
  alive: boolean;
  /** Steps until a dead instance starts again (with no local state). */
  downFor: number;
  holdings: Map<number, Holding>;
}

interface Cluster {
  readonly shardCount: number;
  readonly sequence: readonly ProbeRecord[];
  readonly instances: Instance[];
  /** Durable changelog, per shard. */
  readonly changelog: ChangeEntry[][];
  readonly join: AnswerJoin;
  /** Completed verdicts by sequence. */
  readonly decided: Map<number, { duplicateOf: string | null; distance: number | null }>;
  /** Verdicts that completed while their page was not in the durable changelog. */
  readonly notDurable: string[];
  kills: number;
}

function inChangelog(cluster: Cluster, id: string): boolean {
  return cluster.changelog[homeShard(id, cluster.shardCount)]!.some((c) => c.id === id);
}

/** Writes one partition's share of an append durably; completed verdicts are checked at once. */
function land(cluster: Cluster, outputs: readonly ShardOutput[]): void {
  for (const o of outputs) {
    if (o.kind === 'change') cluster.changelog[o.change.shard]!.push(o.change);
    else cluster.join.apply(o.record);
  }
  for (const done of cluster.join.drain()) {
    assert.ok(done.verdict, 'the model sends no id twice');
    const id = cluster.sequence[done.sequence]!.id;
    if (!inChangelog(cluster, id)) cluster.notDurable.push(id);
    cluster.decided.set(done.sequence, { duplicateOf: done.verdict.duplicateOf, distance: done.verdict.distance });
  }
}

/**
 * Sends an instance's appends in order. `killAt`: the append during which
 * the instance dies; of that one, each partition's records land or not
 * (drawn), and nothing after it is sent.
 */
function send(cluster: Cluster, appends: readonly (readonly ShardOutput[])[], r: () => number, killAt: number | null): void {
  for (let a = 0; a < appends.length; a++) {
    if (a !== killAt) {
      land(cluster, appends[a]!);
      continue;
    }
    const byPartition = new Map<string, ShardOutput[]>();
    for (const o of appends[a]!) {
      const at = o.kind === 'change' ? `c${o.change.shard}` : 'answers';
      byPartition.set(at, [...(byPartition.get(at) ?? []), o]);
    }
    for (const part of byPartition.values()) if (r() < 0.5) land(cluster, part);
    return;
  }
}

function restore(cluster: Cluster, shard: number): ShardState {
  const state = new ShardState(shard, PLAN, K);
  state.restoreBatch(cluster.changelog[shard]!);
  return state;
}

/** The group rebalances: every live instance holds what the assignor gives it. */
function rebalance(cluster: Cluster): void {
  const live = cluster.instances.filter((i) => i.alive);
  const plan = planShardAssignment(live.map((i) => ({ memberId: i.name, instance: i.name })), { pages: 'pages', pagePartitions: 0, shards: 'changelog', shardCount: cluster.shardCount, standby: 'standby' });
  for (const instance of live) {
    const assignment = plan.get(instance.name)!;
    const owned = new Set(assignment.changelog ?? []);
    const wanted = [...owned, ...(assignment.standby ?? [])];
    const next = new Map<number, Holding>();
    let restored = false;
    for (const shard of wanted) {
      const kept = instance.holdings.get(shard);
      if (!kept) restored = true;
      next.set(shard, { state: kept?.state ?? restore(cluster, shard), owner: owned.has(shard) });
    }
    instance.holdings = next;
    // As the holder does after restoring: say where the held shards stand.
    if (restored) land(cluster, [{ kind: 'answer', record: watermarkOf([...next.values()], instance.name) }]);
  }
}

function lowest(instance: Instance): number {
  let low = Infinity;
  for (const h of instance.holdings.values()) low = Math.min(low, h.state.position);
  return low;
}

/** Runs the stream with `kills` kill points; returns the cluster at the end. */
function run(seed: number, n: number, shardCount: number, kills: number): Cluster {
  const r = rng(seed);
  const cluster: Cluster = {
    shardCount,
    sequence: pages(r, n),
    instances: ['i0', 'i1', 'i2'].map((name) => ({ name, alive: true, downFor: 0, holdings: new Map() })),
    changelog: Array.from({ length: shardCount }, () => []),
    join: new AnswerJoin(shardCount),
    decided: new Map(),
    notDurable: [],
    kills: 0,
  };
  cluster.sequence.forEach((p, s) => {
    const key = sourceKey(0, p.offset);
    cluster.join.watch(key, { hi: p.hi, lo: p.lo });
    cluster.join.sequenced(key, s);
  });
  rebalance(cluster);
  // Kill points spread over the run: at each, one instance dies in the middle of one of its appends.
  const killSteps = new Set(Array.from({ length: kills }, () => Math.floor(r() * n * 0.8)));
  for (let step = 0; step < 100_000; step++) {
    for (const instance of cluster.instances) {
      if (!instance.alive && --instance.downFor <= 0) {
        instance.alive = true;
        instance.holdings = new Map();
        rebalance(cluster);
      }
    }
    const live = cluster.instances.filter((i) => i.alive && lowest(i) < n);
    if (live.length === 0) {
      if (cluster.instances.every((i) => i.alive)) break;
      continue;
    }
    const instance = live[Math.floor(r() * live.length)]!;
    const from = lowest(instance);
    const to = Math.min(n, from + 1 + Math.floor(r() * 8));
    const inputs = cluster.sequence.slice(from, to).map((record, i) => ({ sequence: from + i, record, sketch: null }));
    const { appends } = applyBatch([...instance.holdings.values()], shardCount, instance.name, inputs);
    const dies = killSteps.delete(step) && cluster.instances.filter((i) => i.alive).length > 1 && appends.length > 0;
    send(cluster, appends, r, dies ? Math.floor(r() * appends.length) : null);
    if (dies) {
      cluster.kills++;
      instance.alive = false;
      instance.holdings = new Map();
      instance.downFor = 2 + Math.floor(r() * 20);
      rebalance(cluster);
    }
  }
  return cluster;
}

function oracle(sequence: readonly ProbeRecord[]) {
  const decider = new Decider({ index: FingerprintIndex.create({ plan: PLAN }), store: new PageStore(1024, 0), k: K });
  return sequence.map((p) => decider.decide({ id: p.id, hi: p.hi, lo: p.lo, short: p.short, fetchedAt: p.fetchedAt }));
}

test('every verdict that becomes visible records a page durable in the changelog, over many streams and kill points', () => {
  let decided = 0;
  let copies = 0;
  let killed = 0;
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 2 ** 30 }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 12 }), (seed, shardCount, killPoints) => {
      const n = 160;
      const cluster = run(seed, n, shardCount, killPoints);
      assert.deepEqual(cluster.notDurable, [], 'verdicts visible before their page was durable');
      assert.equal(cluster.decided.size, n, 'every page is decided');
      const expected = oracle(cluster.sequence);
      for (const [sequence, got] of cluster.decided) {
        const e = expected[sequence]!;
        assert.deepEqual(got, { duplicateOf: e.duplicateOf, distance: e.distance }, `sequence ${sequence}`);
      }
      decided += cluster.decided.size;
      killed += cluster.kills;

      // Every local state is lost: an index rebuilt from the changelog alone
      // holds every decided page, and calls an exact copy of each a duplicate.
      const missing = cluster.sequence.filter((p) => !inChangelog(cluster, p.id)).map((p) => p.id);
      assert.deepEqual(missing, [], 'decided pages missing from the changelog');
      const rebuilt = Array.from({ length: shardCount }, (_, s) => restore(cluster, s));
      for (const p of cluster.sequence) {
        const found = rebuilt.map((s) => s.closestBefore(p.hi, p.lo, false, Infinity)).filter((c) => c !== null && c.distance === 0);
        assert.ok(found.length > 0, `an exact copy of ${p.id} is a duplicate after a full restore`);
        copies++;
      }
    }),
    { numRuns: 100, seed: 23, includeErrorInReport: true },
  );
  assert.ok(decided >= 100 * 160 && copies >= 100 * 160);
  // The runs kill what they claim to: several instances each, mid-append.
  assert.ok(killed > 100 * 3, `only ${killed} kills`);
});
