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
  inFlight = new Set<number>();
  lag = new Map<number, number>();
  owned: Set<number> | null = null;
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
        this.inFlight.add(step.partition);
        break;
      case 'end':
        // Only a partition's own batch ends it.
        this.inFlight.delete(step.partition);
        if (step.lag > 0 && (this.owned === null || this.owned.has(step.partition))) this.lag.set(step.partition, step.lag);
        else this.lag.delete(step.partition);
        break;
      case 'commit':
        this.commits.push(t);
        break;
      case 'fetch':
        this.fetches.push(t);
        break;
      case 'assign':
        this.owned = new Set(step.partitions);
        for (const p of [...this.lag.keys()]) if (!this.owned.has(p)) this.lag.delete(p);
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
