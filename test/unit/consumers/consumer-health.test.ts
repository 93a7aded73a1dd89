/**
 * The readiness rule (src/consumers/consumer-health.ts), as a property over
 * generated event sequences on a fake clock. The oracle states the rule the
 * other way round, over the whole history: at time t the consumer is stalled
 * iff records have waited since before t - stall with no verdict committed
 * since, or none have waited since before t - stale and no fetch was answered
 * since (times in whole ms).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createProgressWatch, FETCH_STALE_MS, STALL_MS } from '../../../src/consumers/consumer-health.js';

type Step =
  | { kind: 'advance'; ms: number }
  | { kind: 'begin'; partition: number }
  | { kind: 'end'; partition: number; lag: number }
  | { kind: 'commit' }
  | { kind: 'fetch' }
  | { kind: 'assign'; partitions: number[] };

const PARTITIONS = 4;
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 4000 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('begin' as const), partition: fc.integer({ min: 0, max: PARTITIONS - 1 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('end' as const), partition: fc.integer({ min: 0, max: PARTITIONS - 1 }), lag: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 })) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('commit' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fetch' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('assign' as const), partitions: fc.subarray([0, 1, 2, 3]) }) },
);

/** A plain model of what waits, and the history of (time, waiting, commit, fetch) the oracle reads. */
class Model {
  /** Per partition in flight: the assignment its batch was fetched in. */
  inFlight = new Map<number, number>();
  lag = new Map<number, number>();
  owned: Set<number> | null = null;
  generation = 0;
  /** Times at which the waiting state was sampled after each event (the state holds until the next sample). */
  history: { t: number; waiting: boolean }[] = [];
  commits: number[] = [];
  fetches: number[] = [];
  get waiting(): boolean {
    return this.inFlight.size > 0 || this.lag.size > 0;
  }
  apply(step: Step, t: number): void {
    const wasWaiting = this.waiting;
    switch (step.kind) {
      case 'begin':
        this.inFlight.set(step.partition, this.generation);
        break;
      case 'end':
      {
        // Only a partition's own batch ends it; a batch of an earlier assignment tells nothing of the lag now.
        const fetchedIn = this.inFlight.get(step.partition) ?? this.generation;
        this.inFlight.delete(step.partition);
        if (fetchedIn !== this.generation) break;
        if (step.lag > 0 && (this.owned === null || this.owned.has(step.partition))) this.lag.set(step.partition, step.lag);
        else this.lag.delete(step.partition);
        break;
      }
      case 'commit':
        this.commits.push(t);
        break;
      case 'fetch':
        this.fetches.push(t);
        break;
      case 'assign':
        this.owned = new Set(step.partitions);
        this.generation++;
        // Positions are read again from the committed offsets: no lag is known until a batch of this assignment ends.
        this.lag.clear();
        this.fetches.push(t); // joining the group is an answer from the broker
        break;
      default:
        break;
    }
    // A change from waiting to idle (or back) is a moment the idle rule and the stall rule count from.
    if (wasWaiting !== this.waiting || this.history.length === 0) this.history.push({ t, waiting: this.waiting });
  }
  /** Waiting (or idle, with `want`) over the whole of [from, to]. */
  throughout(want: boolean, from: number, to: number): boolean {
    // The state at `from` is the last sample at or before it; then every later sample up to `to` must agree.
    let state: boolean | null = null;
    for (const h of this.history) {
      if (h.t <= from) state = h.waiting;
      else if (h.t <= to && h.waiting !== want) return false;
    }
    // Before the first sample the watch was idle since its creation (t = 0).
    return (state ?? false) === want && from >= 0;
  }
  stalledAt(t: number): boolean {
    const stalledWaiting = this.waiting && this.throughout(true, t - STALL_MS - 1, t) && !this.commits.some((c) => c >= t - STALL_MS && c <= t);
    const staleIdle = !this.waiting && this.throughout(false, t - FETCH_STALE_MS - 1, t) && !this.fetches.some((f) => f >= t - FETCH_STALE_MS && f <= t);
    return stalledWaiting || staleIdle;
  }
  /** The rule's other half: definitely progressing. */
  progressingAt(t: number): boolean {
    if (this.waiting) {
      // Began waiting, or committed, within the window.
      const since = [...this.history].reverse().find((h) => h.waiting && h.t <= t)?.t ?? 0;
      const lastCommit = Math.max(-Infinity, ...this.commits.filter((c) => c <= t));
      return t - Math.max(since, lastCommit) <= STALL_MS;
    }
    const idleSince = [...this.history].reverse().find((h) => !h.waiting && h.t <= t)?.t ?? 0;
    const lastFetch = Math.max(0, ...this.fetches.filter((f) => f <= t));
    return t - Math.max(idleSince, lastFetch) <= FETCH_STALE_MS;
  }
}

test('readiness: not progressing exactly when records wait with no verdict for the stall time, or no fetch answers while idle', () => {
  fc.assert(
    fc.property(fc.array(stepArb, { minLength: 1, maxLength: 120 }), (steps) => {
      let now = 0;
      const watch = createProgressWatch({ now: () => now });
      const model = new Model();
      model.history.push({ t: 0, waiting: false });
      for (const step of steps) {
        if (step.kind === 'advance') now += step.ms;
        else if (step.kind === 'begin') watch.begin(step.partition);
        else if (step.kind === 'end') watch.end(step.partition, step.lag);
        else if (step.kind === 'commit') watch.committed();
        else if (step.kind === 'fetch') watch.fetched();
        else watch.assigned(step.partitions);
        if (step.kind !== 'advance') model.apply(step, now);
        assert.equal(watch.waiting, model.waiting, 'what waits');
        // The interval oracle and the "since" oracle agree with each other, and with the watch.
        const stalled = model.stalledAt(now);
        assert.equal(!stalled, model.progressingAt(now), `oracles disagree at ${now}`);
        assert.equal(watch.progressing, !stalled, `at t=${now} after ${JSON.stringify(step)}`);
      }
    }),
    { numRuns: 500 },
  );
});

test('readiness: waiting records with no verdict turn it false within 10 s, and one verdict turns it true again', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 100, max: 1000 }), (idleFor, partition, tick) => {
      let now = 0;
      const watch = createProgressWatch({ now: () => now });
      watch.assigned([partition]);
      // Idle and healthy: fetches answered every 5 s (the long poll's maxWaitTime).
      for (let t = 0; t < idleFor; t += 5000) {
        now = t;
        watch.fetched();
        assert.ok(watch.progressing, 'idle with fresh fetches');
      }
      now = idleFor;
      watch.begin(partition);
      const since = now;
      while (watch.progressing) now += tick;
      assert.ok(now - since <= 10_000, `turned false ${now - since} ms after records began to wait`);
      assert.ok(now - since > STALL_MS, 'not before the stall time');
      watch.committed();
      assert.ok(watch.progressing, 'a committed verdict makes it ready again');
      watch.end(partition, 0);
      assert.ok(watch.progressing, 'and idle after it');
    }),
  );
});

test('readiness: a frozen broker turns an idle consumer false within 10 s of its last answer', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 5000 }), (lastAnswerAgo) => {
      let now = 0;
      const watch = createProgressWatch({ now: () => now });
      watch.assigned([0]);
      now = 30_000 - lastAnswerAgo;
      watch.fetched();
      now = 30_000; // the broker freezes here; the fetch in flight never returns
      let t = 0;
      while (watch.progressing) {
        t += 50;
        now += 50;
      }
      assert.ok(t + lastAnswerAgo <= 10_000 && t > 0, `false ${t} ms after the freeze`);
    }),
  );
});

test('readiness: records left behind before a rebalance are not waiting after it (another member may have decided them)', () => {
  // A member paused past its session is dropped from the group; the partition's
  // records are decided by another member meanwhile, and the paused one rejoins
  // with its old assignment. Its fetches then find nothing (the committed offset
  // is at the end), so no batch ever comes to say so: what it knew of the lag
  // from before the rebalance must not keep it unready. Whether its last batch
  // ended before the new assignment or after it.
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: PARTITIONS - 1 }),
      fc.integer({ min: 1, max: 5000 }),
      fc.subarray([0, 1, 2, 3]),
      fc.boolean(),
      fc.integer({ min: 0, max: 20_000 }),
      fc.integer({ min: 100, max: 5000 }),
      (partition, lag, others, endsAfterAssignment, pausedFor, fetchEvery) => {
        let now = 0;
        const watch = createProgressWatch({ now: () => now });
        const partitions = [...new Set([partition, ...others])];
        watch.assigned(partitions);
        watch.fetched();
        watch.begin(partition);
        now += pausedFor; // paused (SIGSTOP) mid-batch; dropped from the group meanwhile
        if (!endsAfterAssignment) watch.end(partition, lag); // the chunk given up at the rebalance
        watch.assigned(partitions); // rejoined with the same partitions
        if (endsAfterAssignment) watch.end(partition, lag);
        assert.equal(watch.waiting, false, 'nothing is known to wait in the new assignment');
        // Idle fetches are answered every fetchEvery ms (<= the 5 s long poll) for a minute: ready throughout.
        for (let t = 0; t < 60_000; t += fetchEvery) {
          now += fetchEvery;
          watch.fetched();
          assert.ok(watch.progressing, `unready ${t + fetchEvery} ms after rejoining, though every fetch is answered and none returns records`);
        }
        // And records that do wait in the new assignment count again: a fetched batch with no verdict turns it unready.
        watch.begin(partition);
        now += STALL_MS + 1;
        assert.equal(watch.progressing, false, 'a batch of the new assignment that commits nothing is a stall');
      },
    ),
  );
});
