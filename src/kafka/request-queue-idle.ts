/**
 * Stops kafkajs 2.2.4's idle timer loop on every broker connection.
 *
 * Each connection's request queue calls `checkPendingRequests` after every
 * response, and that always ends in `scheduleCheckPendingRequests`, which arms
 * a timer for `throttledUntil - Date.now()` ms even when nothing is pending and
 * no throttle is in force. `throttledUntil` is -1 then, so the delay is
 * negative, Node runs it after 1 ms, and the callback checks the empty queue
 * and arms the timer again: from its first response until it disconnects,
 * every connection wakes the event loop about 1,000 times a second
 * (tulios/kafkajs issues 1556, 1604 and 1704; the fixes proposed in pull
 * requests 1667 and 1768 were never released, and 2.2.4 is the last version).
 * A routed instance keeps a dozen connections or more (the group, the holder,
 * the replies tail, the log appender, a transactional producer per input
 * partition): idle, its main thread spent about 30 ms of CPU a second,
 * almost all of it in these timers (`perf` with --perf-basic-prof), and every
 * instance added pays it again.
 *
 * The fix is the one proposed upstream: with nothing pending and no throttle in
 * force, arm nothing. A pending request is still checked when a response or a
 * timeout frees a slot (`fulfillRequest`, a request's timeout) and, as before,
 * every 10 ms or at the throttle's end while requests are pending; a throttle
 * with nothing pending still arms one check at its end. Applied once, to the
 * kafkajs version it was written for only; another version is left as it is.
 */
import { createRequire } from 'node:module';
import { installedKafkajsVersion, PATCHED_KAFKAJS_VERSION } from './kafkajs-version.js';

/** The part of kafkajs's internal RequestQueue the correction touches. */
export interface KafkajsRequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** kafkajs's RequestQueue class (internal, so loaded by path) and the installed version. */
export function loadRequestQueue(): { version: string; RequestQueue: { prototype: KafkajsRequestQueue } & (new (options: Record<string, unknown>) => KafkajsRequestQueue) } {
  const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as ReturnType<typeof loadRequestQueue>['RequestQueue'];
  return { version: installedKafkajsVersion(), RequestQueue };
}

/** kafkajs's own delay between checks while requests are pending (CHECK_PENDING_REQUESTS_INTERVAL). */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

let applied = false;

/** Corrects the request queue of kafkajs 2.2.4 (once per process); returns whether the correction is in force. */
export function stopIdleRequestQueueLoop(): boolean {
  if (applied) return true;
  const { version, RequestQueue } = loadRequestQueue();
  if (version !== PATCHED_KAFKAJS_VERSION || typeof RequestQueue.prototype.scheduleCheckPendingRequests !== 'function') return false;
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: KafkajsRequestQueue): void {
    if (this.throttleCheckTimeoutId) return;
    const throttledFor = this.throttledUntil - Date.now();
    // Nothing to send and nothing to wait for: a slot freed by a response checks the queue again.
    if (this.pending.length === 0 && throttledFor <= 0) return;
    const delay = throttledFor > 0 ? throttledFor : CHECK_PENDING_REQUESTS_INTERVAL_MS;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, delay);
  };
  applied = true;
  return true;
}
