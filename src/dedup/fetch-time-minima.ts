/**
 * Age eviction for fetch times in any order: the minimum fetch time of every
 * block of 1,024 refs and of every group of 2^20 refs, kept as pages are
 * recorded. An eviction pass skips a group or block whose minimum is not
 * older than the cutoff and scans only the others, so a page dated in the
 * future no longer shields the stale pages behind it (a cursor that stops at
 * the first young page would). Cost: O(1) per recorded page, 4 bytes per
 * 1,024 refs; per pass, one check per group plus the blocks that hold an
 * evictable page (each such scan evicts at least one page, unless the
 * minimum was left by a page removed some other way, which the scan clears).
 */
export const NO_TIME = 0xffffffff;
const BLOCK_BITS = 10;
const GROUP_BITS = 20;
const BLOCKS_PER_GROUP = 1 << (GROUP_BITS - BLOCK_BITS);

function grown(a: Uint32Array, needed: number): Uint32Array {
  if (needed <= a.length) return a;
  let size = Math.max(16, a.length);
  while (size < needed) size *= 2;
  const next = new Uint32Array(size).fill(NO_TIME);
  next.set(a);
  return next;
}

export class FetchTimeMinima {
  private block: Uint32Array = new Uint32Array(0);
  private group: Uint32Array = new Uint32Array(0);

  /** Records that ref holds a page fetched at `seconds` (uint32). */
  note(ref: number, seconds: number): void {
    const b = ref >>> BLOCK_BITS;
    const g = ref >>> GROUP_BITS;
    if (b >= this.block.length) this.block = grown(this.block, b + 1);
    if (g >= this.group.length) this.group = grown(this.group, g + 1);
    const s = seconds >>> 0;
    if (s < this.block[b]!) this.block[b] = s;
    if (s < this.group[g]!) this.group[g] = s;
  }

  /**
   * Visits in ascending order every ref in [from, to) of the blocks whose
   * minimum is below `cutoff`. visit(ref) evicts the page if it is old and
   * returns the fetch time of what stays at ref (NO_TIME when nothing does);
   * the block and group minima are recomputed from those. skip(ref) is called
   * with the first ref of each block or group passed over unvisited.
   */
  scan(cutoff: number, from: number, to: number, visit: (ref: number) => number, skip: (ref: number) => void): void {
    if (to <= from) return;
    for (let g = from >>> GROUP_BITS; g <= (to - 1) >>> GROUP_BITS && g < this.group.length; g++) {
      if (this.group[g]! >= cutoff) {
        if (this.group[g] !== NO_TIME) skip(Math.max(from, g << GROUP_BITS >>> 0));
        continue;
      }
      let groupMin = NO_TIME;
      const firstBlock = Math.max(g * BLOCKS_PER_GROUP, from >>> BLOCK_BITS);
      const lastBlock = Math.min((g + 1) * BLOCKS_PER_GROUP - 1, (to - 1) >>> BLOCK_BITS);
      for (let b = g * BLOCKS_PER_GROUP; b < firstBlock; b++) groupMin = Math.min(groupMin, this.block[b]!);
      for (let b = firstBlock; b <= lastBlock; b++) {
        let min = this.block[b]!;
        if (min < cutoff) {
          min = NO_TIME;
          const end = Math.min(to, (b + 1) * (1 << BLOCK_BITS));
          for (let ref = Math.max(from, b * (1 << BLOCK_BITS)); ref < end; ref++) {
            const t = visit(ref);
            if (t < min) min = t;
          }
          // Refs of this block at or past `to` are not recorded yet; nothing below `from` is held.
          this.block[b] = min;
        } else if (min !== NO_TIME) {
          skip(Math.max(from, b * (1 << BLOCK_BITS)));
        }
        if (min < groupMin) groupMin = min;
      }
      for (let b = lastBlock + 1; b < (g + 1) * BLOCKS_PER_GROUP && b < this.block.length; b++) groupMin = Math.min(groupMin, this.block[b]!);
      this.group[g] = groupMin;
    }
  }

  get byteLength(): number {
    return this.block.byteLength + this.group.byteLength;
  }
}
