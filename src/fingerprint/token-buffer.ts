/** A growable struct-of-arrays of tokens: 64-bit hash lanes and a NUM flag. Reused across pages. */
export class TokenBuffer {
  a: Int32Array;
  b: Int32Array;
  num: Uint8Array;
  length = 0;

  constructor(initialCapacity = 4096) {
    this.a = new Int32Array(initialCapacity);
    this.b = new Int32Array(initialCapacity);
    this.num = new Uint8Array(initialCapacity);
  }

  clear(): void {
    this.length = 0;
  }

  push(a: number, b: number, num: number): void {
    if (this.length === this.a.length) this.grow();
    const i = this.length++;
    this.a[i] = a;
    this.b[i] = b;
    this.num[i] = num;
  }

  private grow(): void {
    const cap = this.a.length * 2;
    const a = new Int32Array(cap);
    const b = new Int32Array(cap);
    const num = new Uint8Array(cap);
    a.set(this.a);
    b.set(this.b);
    num.set(this.num);
    this.a = a;
    this.b = b;
    this.num = num;
  }
}
