/**
 * Which order records a routed index partition restored from a snapshot
 * answers again (src/kafka/routed-holder.ts; docs/architecture.md, "Sharded
 * mode, routed by table prefix"): the chunks its snapshot holds already
 * (order offsets below the snapshot's `orderNext`) whose owners may still
 * wait for a reply. Each such record once.
 *
 * Once, because the holder can read the order log again while a partition is
 * still answering: another partition taken on makes it seek back. A chunk
 * answered already has had its entries dropped (the partition passed it), and
 * answering it twice would wait for them forever, holding every partition
 * of the holder behind it. So a partition remembers how far it has answered,
 * not only where its snapshot stands. Pure.
 */
export class AnswerAgain {
  /** Order offsets below this (the snapshot's orderNext) the snapshot holds. */
  private readonly below: number;
  /** The next order offset not passed yet: records before it are answered (or needed no answer). */
  private next = 0;

  constructor(snapshotOrderNext: number) {
    this.below = snapshotOrderNext;
  }

  /** Whether the order record at `offset`, if its owner may still wait, is one to answer again now. */
  wants(offset: number): boolean {
    return offset >= this.next && offset < this.below;
  }

  /** The order record at `offset` is passed (answered again, or applied, or not needed). */
  passed(offset: number): void {
    // A later reading of the order log (another partition taken on) wants nothing before it again.
    if (offset + 1 > this.next) this.next = offset + 1;
  }
}
