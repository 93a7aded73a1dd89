/**
 * kafkajs 2.2.4's request queue, as corrected by stopIdleRequestQueueLoop
 * (src/kafka/request-queue-idle.ts): an idle connection arms no timer, and no
 * request is ever left waiting. Runs kafkajs's own RequestQueue with a fake
 * send: over generated sequences of requests pushed, responses, throttles and
 * clock steps, every request pushed is sent once the in-flight limit and the
 * throttle allow it, and once the queue is empty and unthrottled no timer is
 * armed. Without the correction the idle check fails (a 1 ms timer re-arms
 * itself forever).
 */
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadRequestQueue, stopIdleRequestQueueLoop, type KafkajsRequestQueue } from '../../../src/kafka/request-queue-idle.js';
import { PATCHED_KAFKAJS_VERSION } from '../../../src/kafka/kafkajs-version.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

interface Harness {
  queue: KafkajsRequestQueue & { push(request: unknown): void; fulfillRequest(response: unknown): void; maybeThrottle(ms: number): void; destroy(): void; inflight: Map<number, unknown> };
  sent: number[];
}

function harness(maxInFlightRequests: number): Harness {
  const { RequestQueue } = loadRequestQueue();
  const queue = new RequestQueue({ maxInFlightRequests, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 'test', broker: 'b:1', logger: silent }) as Harness['queue'];
  return { queue, sent: [] };
}

function push(h: Harness, correlationId: number): void {
  h.queue.push({ entry: { correlationId, apiKey: 0, apiName: 'Produce', apiVersion: 0, resolve: () => undefined, reject: () => undefined }, expectResponse: true, sendRequest: () => h.sent.push(correlationId) });
}

function respond(h: Harness, correlationId: number): void {
  h.queue.fulfillRequest({ correlationId, payload: Buffer.alloc(0), size: 0 });
}

beforeEach(() => {
  test.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
});
afterEach(() => {
  test.mock.timers.reset();
});

test(`the installed kafkajs is ${PATCHED_KAFKAJS_VERSION}, the version the correction is for, and it applies`, () => {
  assert.equal(loadRequestQueue().version, PATCHED_KAFKAJS_VERSION);
  assert.equal(stopIdleRequestQueueLoop(), true);
});

test('a connection that answered its requests arms no timer', () => {
  stopIdleRequestQueueLoop();
  const h = harness(1);
  push(h, 1);
  respond(h, 1);
  assert.equal(h.queue.throttleCheckTimeoutId, null, 'an idle queue armed a timer');
  // A while later, still nothing armed, nothing sent twice.
  test.mock.timers.tick(50);
  assert.equal(h.queue.throttleCheckTimeoutId, null);
  assert.deepEqual(h.sent, [1]);
  h.queue.destroy();
});

test('every request pushed is sent, in order, once the in-flight limit and the throttle allow; an idle, unthrottled queue arms nothing', () => {
  stopIdleRequestQueueLoop();
  // Uncorrected, an idle queue re-arms a timer of negative delay, which mocked timers would run
  // forever within one tick: fail here instead.
  const probe = harness(1);
  push(probe, 1);
  respond(probe, 1);
  assert.equal(probe.queue.throttleCheckTimeoutId, null, 'an idle queue armed a timer');
  type Op = { kind: 'push' } | { kind: 'respond' } | { kind: 'throttle'; ms: number } | { kind: 'tick'; ms: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.constant<Op>({ kind: 'push' }),
    fc.constant<Op>({ kind: 'respond' }),
    fc.integer({ min: 1, max: 40 }).map<Op>((ms) => ({ kind: 'throttle', ms })),
    fc.integer({ min: 0, max: 30 }).map<Op>((ms) => ({ kind: 'tick', ms })),
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 3 }), fc.array(op, { maxLength: 40 }), (limit, ops) => {
      const h = harness(limit);
      let next = 1;
      const answered = new Set<number>();
      for (const o of ops) {
        if (o.kind === 'push') push(h, next++);
        else if (o.kind === 'respond') {
          const oldest = h.sent.find((id) => !answered.has(id));
          if (oldest !== undefined) {
            answered.add(oldest);
            respond(h, oldest);
          }
        } else if (o.kind === 'throttle') h.queue.maybeThrottle(o.ms);
        else test.mock.timers.tick(o.ms);
        assert.ok(h.queue.inflight.size <= limit);
      }
      // Answer everything sent, letting time pass, until every request pushed has been sent.
      for (let round = 0; round < 200 && answered.size < next - 1; round++) {
        for (const id of h.sent) {
          if (answered.has(id)) continue;
          answered.add(id);
          respond(h, id);
        }
        test.mock.timers.tick(10);
      }
      assert.deepEqual(h.sent, Array.from({ length: next - 1 }, (_, i) => i + 1), 'a request was left unsent or sent out of order');
      // Past any throttle, with nothing pending: no timer left armed.
      test.mock.timers.tick(100);
      assert.equal(h.queue.pending.length, 0);
      assert.equal(h.queue.throttleCheckTimeoutId, null, 'an idle queue still has a timer armed');
      h.queue.destroy();
    }),
    { numRuns: 300 },
  );
});
