/**
 * Where a routed index partition restored from a snapshot reads its
 * dedup.index partition again (src/kafka/routed-holder.ts).
 *
 * A snapshot holds every page of the order records before its order offset.
 * The log records the restore still needs are:
 * - the entries read but not applied yet: their order record comes after the
 *   snapshot (or never, for a chunk that was never ordered);
 * - every record about a chunk whose verdicts are not committed: its owner
 *   may still wait for the partition's reply to it, or ask about it in round
 *   two, and a confirmation may refer to a sketch an earlier one of the chunk
 *   carried. So the restore reads from the first record of the oldest such
 *   chunk, answers its applied chunks again as of their sequences, and keeps
 *   what its requests refer to.
 * A chunk whose verdicts are committed is never asked about again, so its
 * records are not needed: they are forgotten once the group's committed
 * offset of their input partition passes them (prune).
 *
 * Per input partition, the chunks seen are two arrays (input offset, log
 * offset of the chunk's first record here), about 16 bytes a chunk between
 * prunes. Pure: no Kafka, no I/O.
 */
/** What the resume needs of a chunk's key (wire/routed-records.ts ChunkKey): its input partition and first input offset. */
export interface ChunkPlace {
  readonly inputPartition: number;
  readonly firstOffset: bigint;
}

interface SeenChunks {
  /** Each chunk's first input offset, in the order the chunks were first seen. */
  inputOffsets: bigint[];
  /** The log offset of each chunk's first record read here. */
  logOffsets: number[];
}

export class IndexLogResume {
  private readonly byInput = new Map<number, SeenChunks>();
  /** The next log offset not read yet. */
  next: number;

  constructor(from = 0) {
    this.next = from;
  }

  /** A record about `chunk` (entries, a confirmation or a request for more) read at `logOffset`. */
  seen(chunk: ChunkPlace, logOffset: number): void {
    let seen = this.byInput.get(chunk.inputPartition);
    if (!seen) this.byInput.set(chunk.inputPartition, (seen = { inputOffsets: [], logOffsets: [] }));
    // A chunk's records mostly come together: its first one is kept, the next ones add nothing.
    const last = seen.inputOffsets.length - 1;
    if (last < 0 || seen.inputOffsets[last] !== chunk.firstOffset) {
      seen.inputOffsets.push(chunk.firstOffset);
      seen.logOffsets.push(logOffset);
    }
    if (logOffset >= this.next) this.next = logOffset + 1;
  }

  /** A record read at `logOffset` that is about no chunk the restore needs. */
  read(logOffset: number): void {
    if (logOffset >= this.next) this.next = logOffset + 1;
  }

  /** Forgets the chunks whose verdicts are committed: input offset below `committed(p)`. */
  prune(committed: (inputPartition: number) => bigint): void {
    for (const [p, seen] of this.byInput) {
      const below = committed(p);
      let kept = 0;
      for (let i = 0; i < seen.inputOffsets.length; i++) {
        if (seen.inputOffsets[i]! < below) continue;
        seen.inputOffsets[kept] = seen.inputOffsets[i]!;
        seen.logOffsets[kept++] = seen.logOffsets[i]!;
      }
      seen.inputOffsets.length = kept;
      seen.logOffsets.length = kept;
      if (kept === 0) this.byInput.delete(p);
    }
  }

  /**
   * The log offset a restore from a snapshot taken now reads from: the least of the unapplied
   * entries' offsets and the first records of the chunks not committed, else the next offset.
   */
  resumeOffset(committed: (inputPartition: number) => bigint, unappliedEntries: Iterable<number>): number {
    this.prune(committed);
    let least = this.next;
    for (const offset of unappliedEntries) if (offset < least) least = offset;
    for (const seen of this.byInput.values()) for (const offset of seen.logOffsets) if (offset < least) least = offset;
    return least;
  }

  /** Chunks remembered (for the tests' bound). */
  get chunks(): number {
    let n = 0;
    for (const seen of this.byInput.values()) n += seen.inputOffsets.length;
    return n;
  }
}
