/**
 * Requests an index partition holds until it has applied the sequence each
 * one needs (round two's confirmations and requests for more,
 * src/kafka/routed-holder.ts), handed out in the order they came once it has.
 *
 * The partition asks after every order record it applies. A restore reads a
 * log's requests far ahead of the order records it applies, so looking at
 * every waiting request at every ask made a replay cost requests times order
 * records. The least need among the waiting is kept instead: nothing is
 * looked at until the partition is past it, so each look hands out at least
 * one request, or follows a new one.
 *
 * Pure: no Kafka, no I/O.
 */
export class WaitingRequests<T> {
  private waiting: T[] = [];
  /** The least need among `waiting`; -1 when a request came since it was worked out. */
  private until = -1;
  /** How many times a request's need was read: what a test bounds. */
  needsRead = 0;

  /** `needs`: the sequence the partition must have applied before a request can be answered. */
  constructor(private readonly needs: (request: T) => number) {}

  get size(): number {
    return this.waiting.length;
  }

  push(request: T): void {
    this.waiting.push(request);
    this.until = -1;
  }

  /** The requests whose need is below `position` (the next sequence not applied), in the order they came; the others wait on. */
  takeReady(position: number): T[] {
    if (this.waiting.length === 0 || position <= this.until) return [];
    const ready: T[] = [];
    const kept: T[] = [];
    let least = Infinity;
    for (const request of this.waiting) {
      const need = this.needs(request);
      this.needsRead++;
      if (need < position) ready.push(request);
      else {
        kept.push(request);
        if (need < least) least = need;
      }
    }
    this.waiting = kept;
    this.until = least === Infinity ? -1 : least;
    return ready;
  }
}
