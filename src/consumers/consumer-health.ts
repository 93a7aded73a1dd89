/**
 * Whether a kafkajs group consumer is really consuming, from its own events:
 * in the group (joined, and no rebalance or crash since), and fetching (a
 * fetch answered within `fetchStaleMs`: a consumer cut off from its brokers
 * stops fetching long before it notices it has left the group). Readiness and
 * dedup_ready follow this, not the fact that the consumer joined once.
 */
import type { Consumer } from 'kafkajs';

export interface ConsumerHealth {
  /** In the group and fetching. */
  readonly consuming: boolean;
  readonly inGroup: boolean;
  /** When the last rebalance began (ms since the epoch), 0 if none is under way. */
  readonly rebalancingSince: number;
}

export function trackConsumerHealth(consumer: Consumer, fetchStaleMs = 30_000, now: () => number = Date.now): ConsumerHealth {
  let inGroup = false;
  let lastFetch = 0;
  let rebalancingSince = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    inGroup = true;
    rebalancingSince = 0;
    lastFetch = now();
  });
  consumer.on(consumer.events.REBALANCING, () => {
    inGroup = false;
    rebalancingSince = now();
  });
  consumer.on(consumer.events.CRASH, () => {
    inGroup = false;
  });
  consumer.on(consumer.events.STOP, () => {
    inGroup = false;
  });
  consumer.on(consumer.events.FETCH, () => {
    lastFetch = now();
  });
  return {
    get consuming() {
      return inGroup && now() - lastFetch <= fetchStaleMs;
    },
    get inGroup() {
      return inGroup;
    },
    get rebalancingSince() {
      return rebalancingSince;
    },
  };
}
