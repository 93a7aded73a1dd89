/**
 * Sharded mode: a partition's owner fences the previous one before it reads
 * where to start, in every assignment, and commits only through the producer
 * that fenced.
 *
 * The transactional id is per input partition, so opening the partition's
 * producer (InitProducerId) fences every older producer of that id and settles
 * its open transaction; only then is the group's committed offset final.
 * kafkajs reads committed offsets when the group is joined, before that: the
 * owner losing the partition could still be committing a chunk then.
 *
 * A producer opened in an earlier assignment proves nothing: another member
 * may have owned the partition in between (this one was paused past its
 * session, dropped, and rejoined with its old assignment) and opened a newer
 * epoch. So the first batch of a partition in each assignment opens a fresh
 * producer, and so does the first batch after a commit was fenced.
 */

export interface PartitionFencesOptions<P> {
  /** Opens the partition's transactional producer (InitProducerId: fences older ones, settles their transaction). */
  open(partition: number): Promise<P>;
  /** The group's committed offset of the partition (the next record to decide). */
  committed(partition: number): Promise<bigint>;
  close(producer: P): Promise<void>;
}

/** A partition's fence in one assignment: where its records start, and the producer that fenced. */
export interface Lease<P> {
  readonly partition: number;
  /** Records below this offset are committed already (by this member or another). */
  readonly from: bigint;
  readonly producer: P;
  /** False once a new assignment began or the producer was fenced: nothing may commit through it. */
  readonly current: boolean;
}

export interface PartitionFences<P> {
  /** A new assignment: each partition fences again at its first batch; producers of partitions gone are closed. */
  assigned(partitions: Iterable<number>): void;
  /** The partition's lease in this assignment; at its first batch, opens a fresh producer and then reads the committed offset. */
  start(partition: number): Promise<Lease<P>>;
  /** A commit through `lease` was fenced: another member opened a newer producer. The next batch fences again. */
  fenced(lease: Lease<P>): void;
  /** Closes every producer. */
  close(): Promise<void>;
}

export function createPartitionFences<P>(options: PartitionFencesOptions<P>): PartitionFences<P> {
  /** Counts assignments: a lease of an earlier one is not current. */
  let generation = 0;
  interface Entry {
    readonly generation: number;
    readonly opened: Promise<P>;
    lease: Promise<Lease<P>>;
    /** The lease, once opened and read. */
    resolved: Lease<P> | null;
    revoked: boolean;
  }
  /** Per partition: the lease of this assignment (being opened, or open). */
  const leases = new Map<number, Entry>();
  /** Per partition: the producer last opened, whatever its lease. */
  const producers = new Map<number, Promise<P>>();

  function drop(partition: number): void {
    const producer = producers.get(partition);
    if (!producer) return;
    producers.delete(partition);
    void producer.then((p) => options.close(p)).catch(() => undefined);
  }

  function revoke(partition: number, entry: Entry): void {
    entry.revoked = true;
    if (leases.get(partition) === entry) leases.delete(partition);
  }

  return {
    assigned(partitions) {
      generation++;
      const owned = new Set(partitions);
      for (const [partition, entry] of [...leases]) revoke(partition, entry);
      for (const partition of [...producers.keys()]) if (!owned.has(partition)) drop(partition);
    },
    start(partition) {
      const existing = leases.get(partition);
      if (existing && existing.generation === generation && !existing.revoked) return existing.lease;
      // A fresh producer, never one of an earlier assignment or a fenced one.
      drop(partition);
      const opened = options.open(partition);
      producers.set(partition, opened);
      const entry: Entry = { generation, opened, lease: Promise.resolve(null as never), resolved: null, revoked: false };
      entry.lease = opened.then(async (producer) => {
        const from = await options.committed(partition);
        const lease: Lease<P> = {
          partition,
          from,
          producer,
          get current() {
            return !entry.revoked && entry.generation === generation;
          },
        };
        entry.resolved = lease;
        return lease;
      });
      // A failed open or read is tried again at the next batch.
      entry.lease.catch(() => {
        revoke(partition, entry);
        if (producers.get(partition) === opened) producers.delete(partition);
      });
      leases.set(partition, entry);
      return entry.lease;
    },
    fenced(lease) {
      const entry = leases.get(lease.partition);
      if (!entry || entry.resolved !== lease) return;
      revoke(lease.partition, entry);
      if (producers.get(lease.partition) === entry.opened) drop(lease.partition);
    },
    async close() {
      for (const [partition, entry] of [...leases]) revoke(partition, entry);
      const all = [...producers.values()];
      producers.clear();
      for (const producer of all) await producer.then((p) => options.close(p)).catch(() => undefined);
    },
  };
}
