/**
 * A routed holder's global order state, and where a restore reads
 * dedup.order again from (src/kafka/routed-holder.ts; docs/architecture.md,
 * "Sharded mode, routed by table prefix").
 *
 * The state is a function of the order log's prefix:
 * - `pagesBefore`: the pages of the applied order records, the global
 *   sequence of the next chunk's first page;
 * - `spanEnd`, per input partition: the end (first input offset + span) of
 *   its last applied chunk. An order record that starts before it is skipped
 *   (a writer fenced too late, or a chunk ordered again after a rebalance):
 *   it adds no pages and moves no end.
 *
 * A restore from a snapshot needs the order records from the first one of a
 * chunk whose verdicts are not committed (first input offset at or past the
 * group's committed offset of its input partition): its owner may still wait
 * for a reply, which a partition holding the chunk answers again as of its
 * sequences. When every chunk is committed, it needs them from the snapshot's
 * own offset. With the state as of that record it does not read the log
 * from its start.
 *
 * Kept: the state at the oldest record retained (the base), the records
 * since (typed columns, 32 bytes a record) and the current state.
 * Prune moves the base over the records before the first uncommitted chunk;
 * a skipped record is no chunk anybody waits for. Chunks commit out of order
 * across input partitions, so one slow partition holds the records after its
 * first uncommitted chunk, however many the others commit meanwhile. Pure:
 * no Kafka, no I/O.
 */
import type { ChunkPlace } from './index-log-resume.js';

/** The state as of an order offset: what the records before it left. */
export interface OrderPoint {
  readonly offset: number;
  readonly pagesBefore: number;
  /** Per input partition with an applied chunk, the end of the last one. */
  readonly spanEnd: ReadonlyMap<number, bigint>;
}

export const ORDER_START: OrderPoint = { offset: 0, pagesBefore: 0, spanEnd: new Map() };

/** A skipped record's end: it moves no partition's end. */
const SKIPPED = -1n;
const INITIAL_ROWS = 64;

export class OrderResume {
  private baseOffset: number;
  private basePages: number;
  private readonly baseSpanEnd: Map<number, bigint>;
  /** The records since the base: rows head .. tail - 1 of the columns. */
  private offsets = new Float64Array(INITIAL_ROWS);
  private partitions = new Int32Array(INITIAL_ROWS);
  private firstOffsets = new BigInt64Array(INITIAL_ROWS);
  /** The chunk's end, or SKIPPED. */
  private ends = new BigInt64Array(INITIAL_ROWS);
  private pages = new Uint32Array(INITIAL_ROWS);
  private head = 0;
  private tail = 0;
  /** The current state: the next order offset, the pages before it, and the ends. */
  next: number;
  pagesBefore: number;
  private readonly current: Map<number, bigint>;

  constructor(from: OrderPoint = ORDER_START) {
    this.baseOffset = this.next = from.offset;
    this.basePages = this.pagesBefore = from.pagesBefore;
    this.baseSpanEnd = new Map(from.spanEnd);
    this.current = new Map(from.spanEnd);
  }

  /** The end of input partition p's last applied chunk; -1n before its first. */
  spanEnd(p: number): bigint {
    return this.current.get(p) ?? -1n;
  }

  /** Whether an order record of `chunk` taken now is skipped: it starts inside a chunk applied for its input partition. */
  skips(chunk: ChunkPlace): boolean {
    return chunk.firstOffset < this.spanEnd(chunk.inputPartition);
  }

  /** Takes the order record at `offset` (at or past `next`); returns whether it is skipped. */
  take(offset: number, chunk: ChunkPlace, span: number, pages: number): boolean {
    if (!(Number.isSafeInteger(offset) && offset >= this.next)) throw new RangeError(`order offset ${offset} is behind ${this.next}`);
    const skipped = this.skips(chunk);
    const end = skipped ? SKIPPED : chunk.firstOffset + BigInt(span);
    if (this.tail === this.offsets.length) this.makeRoom();
    const row = this.tail++;
    this.offsets[row] = offset;
    this.partitions[row] = chunk.inputPartition;
    this.firstOffsets[row] = chunk.firstOffset;
    this.ends[row] = end;
    this.pages[row] = skipped ? 0 : pages;
    if (!skipped) {
      this.pagesBefore += pages;
      this.current.set(chunk.inputPartition, end);
    }
    this.next = offset + 1;
    return skipped;
  }

  /** Forgets the records before the first one of a chunk not committed (first input offset at or past `committed(p)`). */
  prune(committed: (inputPartition: number) => bigint): void {
    const n = this.tail;
    let i = this.head;
    for (; i < n; i++) {
      const end = this.ends[i]!;
      if (end !== SKIPPED && this.firstOffsets[i]! >= committed(this.partitions[i]!)) break;
      if (end !== SKIPPED) {
        this.basePages += this.pages[i]!;
        this.baseSpanEnd.set(this.partitions[i]!, end);
      }
    }
    this.baseOffset = i < n ? this.offsets[i]! : this.next;
    this.head = i;
    if (this.head === this.tail) this.head = this.tail = 0;
  }

  /** Room for one more row: the rows kept moved to the front when half the columns is forgotten, else columns twice as long. */
  private makeRoom(): void {
    const rows = this.tail - this.head;
    const length = this.head * 2 >= this.offsets.length ? this.offsets.length : this.offsets.length * 2;
    const move = <T extends Float64Array | Int32Array | BigInt64Array | Uint32Array>(column: T, make: (n: number) => T): T => {
      const to = length === column.length ? column : make(length);
      to.set(column.subarray(this.head, this.tail) as never, 0);
      return to;
    };
    this.offsets = move(this.offsets, (n) => new Float64Array(n));
    this.partitions = move(this.partitions, (n) => new Int32Array(n));
    this.firstOffsets = move(this.firstOffsets, (n) => new BigInt64Array(n));
    this.ends = move(this.ends, (n) => new BigInt64Array(n));
    this.pages = move(this.pages, (n) => new Uint32Array(n));
    this.head = 0;
    this.tail = rows;
  }

  /**
   * Where a restore from a snapshot taken now reads the order log from, and the state there: the
   * first record of a chunk not committed, else `next`.
   */
  resumePoint(committed: (inputPartition: number) => bigint): OrderPoint {
    this.prune(committed);
    return { offset: this.baseOffset, pagesBefore: this.basePages, spanEnd: new Map(this.baseSpanEnd) };
  }

  /** Records remembered since the base (for the tests' bound and the holder's prune). */
  get retained(): number {
    return this.tail - this.head;
  }
}

/** Where a takeover reads the order log from (the holder's log line names it). */
export type OrderSource = 'start' | 'snapshots' | 'held partitions';

/**
 * Where a takeover reads the order log from, given the resume points of the partitions taken on
 * (null: one starts empty, or its snapshot has none) and, if the holder keeps partitions, the
 * next order offset it stands at (they need nothing before it: they skip what they applied).
 * From the start when one has no point; else the least point (every partition taken on needs
 * the records from its own), or where the holder stands if that is not later: then `point` is
 * null and the holder keeps its state.
 */
export function takeoverFrom(keptAt: number | null, points: readonly (OrderPoint | null)[]): { source: OrderSource; point: OrderPoint | null } {
  let least: OrderPoint | null = null;
  for (const point of points) {
    if (point === null) return { source: 'start', point: ORDER_START };
    if (least === null || point.offset < least.offset) least = point;
  }
  if (least === null || (keptAt !== null && keptAt <= least.offset)) return keptAt === null ? { source: 'start', point: ORDER_START } : { source: 'held partitions', point: null };
  return { source: 'snapshots', point: least };
}
