/**
 * Open-addressing map from a non-negative 30-bit integer key to an int32
 * value, in typed arrays, cleared in O(1) by a generation stamp. Used by the
 * HTML scanner for tag flags and per-name open-element counts (a Map costs
 * ~5x more per operation on this path).
 */
export class IntTable {
  private keys: Int32Array;
  private vals: Int32Array;
  private stamp: Uint32Array;
  private gen = 1;
  private mask: number;
  private size = 0;

  constructor(capacity = 256) {
    let cap = 16;
    while (cap < capacity * 2) cap *= 2;
    this.mask = cap - 1;
    this.keys = new Int32Array(cap);
    this.vals = new Int32Array(cap);
    this.stamp = new Uint32Array(cap);
  }

  clear(): void {
    this.size = 0;
    if (++this.gen === 0xffffffff) {
      this.stamp.fill(0);
      this.gen = 1;
    }
  }

  get(key: number): number {
    const mask = this.mask;
    let i = Math.imul(key, 0x9e3779b1) >>> 0 & mask;
    while (this.stamp[i] === this.gen) {
      if (this.keys[i] === key) return this.vals[i]!;
      i = (i + 1) & mask;
    }
    return 0;
  }

  /** Adds delta to the value of key (absent keys count as 0). */
  add(key: number, delta: number): void {
    const mask = this.mask;
    let i = Math.imul(key, 0x9e3779b1) >>> 0 & mask;
    while (this.stamp[i] === this.gen) {
      if (this.keys[i] === key) {
        this.vals[i]! += delta;
        return;
      }
      i = (i + 1) & mask;
    }
    this.stamp[i] = this.gen;
    this.keys[i] = key;
    this.vals[i] = delta;
    if (++this.size * 2 > mask) this.grow();
  }

  private grow(): void {
    const { keys, vals, stamp, gen } = this;
    const cap = (this.mask + 1) * 2;
    this.mask = cap - 1;
    this.keys = new Int32Array(cap);
    this.vals = new Int32Array(cap);
    this.stamp = new Uint32Array(cap);
    this.gen = 1;
    this.size = 0;
    for (let i = 0; i < keys.length; i++) if (stamp[i] === gen) this.add(keys[i]!, vals[i]!);
  }
}
