/**
 * Whether a kafkajs group consumer is really deciding pages, for readiness
 * and dedup_ready. Joining the group once proves nothing: a consumer cut off
 * from its broker, or waiting on shards that do not answer, stays "joined".
 *
 * The rule (createProgressWatch, pure, with an injected clock):
 *   - records wait when a fetched batch is being decided, or when the last
 *     batch of an owned partition, in the current assignment, left records
 *     behind it (lag > 0). A new assignment forgets every lag: the positions
 *     are read again from the committed offsets, which another member may have
 *     moved to the end meanwhile (a member paused past its session, whose
 *     partitions were decided by the others before it rejoined with them).
 *     The next fetch tells what waits: a partition with records returns a
 *     batch at once, and one without never does;
 *   - while records wait, a verdict must commit at least every `stallMs`
 *     (counted from the last commit, or from the moment they began to wait
 *     if that is later): otherwise not ready;
 *   - while none wait, a fetch must be answered at least every
 *     `fetchStaleMs` (an idle fetch returns after maxWaitTime, 5 s):
 *     otherwise not ready (a frozen broker answers nothing);
 *   - a committed verdict makes it ready again at once.
 * Both limits are under 10 s, so /readyz turns 503 within 10 s of the stall.
 */
import type { Consumer } from 'kafkajs';

/** Records wait and no verdict commits for longer than this: not ready. */
export const STALL_MS = 7000;
/** No record waits and no fetch is answered for longer than this: not ready. */
export const FETCH_STALE_MS = 8000;

export interface ProgressWatch {
  /** A fetched batch of `partition` is being decided. */
  begin(partition: number): void;
  /** A chunk's verdicts (or dead letters) committed. */
  committed(): void;
  /** The batch of `partition` is over (decided, given up or failed); `lag` records remain behind it (ignored for a batch of an earlier assignment). */
  end(partition: number, lag: number): void;
  /** A new assignment: the partitions owned now. What was known of lag is forgotten (positions are read again). */
  assigned(partitions: Iterable<number>): void;
  /** A fetch was answered. */
  fetched(): void;
  /** Records wait now. */
  readonly waiting: boolean;
  /** Neither rule above is broken. */
  readonly progressing: boolean;
}

export function createProgressWatch(options: { stallMs?: number; fetchStaleMs?: number; now?: () => number } = {}): ProgressWatch {
  const stallMs = options.stallMs ?? STALL_MS;
  const fetchStaleMs = options.fetchStaleMs ?? FETCH_STALE_MS;
  const now = options.now ?? Date.now;
  /** Per partition whose batch is being decided: the assignment it was fetched in. */
  const inFlight = new Map<number, number>();
  /** Records left behind by the last batch of a partition, in the current assignment. */
  const lag = new Map<number, number>();
  /** Counts assignments: a batch fetched in an earlier one knows nothing of what waits now. */
  let generation = 0;
  /** The partitions assigned (null until the first assignment). */
  let owned: Set<number> | null = null;
  let lastFetch = now();
  let lastCommit = 0;
  /** When records began to wait (0 while none wait). */
  let waitingSince = 0;
  /** When records stopped waiting: a long batch fetches nothing meanwhile, and that is no sign of a frozen broker. */
  let idleSince = now();
  const waiting = () => inFlight.size > 0 || lag.size > 0;
  /** Call after any change to what waits. */
  const update = (wasWaiting: boolean) => {
    const is = waiting();
    if (is && !wasWaiting) waitingSince = now();
    if (!is && wasWaiting) idleSince = now();
    if (!is) waitingSince = 0;
  };
  return {
    begin(partition) {
      const was = waiting();
      inFlight.set(partition, generation);
      update(was);
    },
    committed() {
      lastCommit = now();
    },
    end(partition, remaining) {
      const was = waiting();
      const fetchedIn = inFlight.get(partition) ?? generation;
      inFlight.delete(partition);
      // A batch given up at a rebalance may end after the new assignment: its
      // lag is of the old one (another member may have decided those records
      // since), and a partition gone is not waited on here at all.
      if (fetchedIn === generation) {
        if (remaining > 0 && (owned === null || owned.has(partition))) lag.set(partition, remaining);
        else lag.delete(partition);
      }
      update(was);
    },
    assigned(partitions) {
      const was = waiting();
      owned = new Set(partitions);
      generation++;
      // What waited is read again from the committed offsets; the next fetch tells.
      lag.clear();
      // A batch still in flight (of the last assignment) waits until it ends through end().
      lastFetch = now();
      update(was);
    },
    fetched() {
      lastFetch = now();
    },
    get waiting() {
      return waiting();
    },
    get progressing() {
      const t = now();
      if (waiting()) return t - Math.max(waitingSince, lastCommit) <= stallMs;
      return t - Math.max(lastFetch, idleSince) <= fetchStaleMs;
    },
  };
}

export interface ConsumerHealth {
  /** In the group and deciding (the rule above). */
  readonly consuming: boolean;
  readonly inGroup: boolean;
  /** When the last rebalance began (ms since the epoch), 0 if none is under way. */
  readonly rebalancingSince: number;
  /** Fed by the chunk loop: batches begun and ended, chunks committed. */
  readonly progress: ProgressWatch;
}

/**
 * @param topic the input topic: only its partitions in an assignment count
 *   (sharded mode also assigns the changelog's, which are held, not consumed).
 */
export function trackConsumerHealth(consumer: Consumer, topic: string, now: () => number = Date.now): ConsumerHealth {
  let inGroup = false;
  let rebalancingSince = 0;
  const progress = createProgressWatch({ now });
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    inGroup = true;
    rebalancingSince = 0;
    progress.assigned((payload.memberAssignment as Record<string, number[] | undefined>)[topic] ?? []);
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
  consumer.on(consumer.events.FETCH, () => progress.fetched());
  return {
    get consuming() {
      return inGroup && progress.progressing;
    },
    get inGroup() {
      return inGroup;
    },
    get rebalancingSince() {
      return rebalancingSince;
    },
    progress,
  };
}
