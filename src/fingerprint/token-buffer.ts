/** What a token is (TokenBuffer.num). */
export const TOKEN_WORD = 0;
/** NUM: a date, a time or a counter, one token for all of them. */
export const TOKEN_NUM = 1;
/** A number that is content: a version, a quantity, an identifier with digits ("1.5.11", "Foo2"). */
export const TOKEN_NUMBER = 2;
/** A word on the stop list (the tokenizer's table of word kinds): left out of the features. */
export const TOKEN_STOP = 3;

/** Tokens a buffer keeps from one page to the next (640 KiB of arrays). */
export const KEPT_TOKENS = 1 << 16;

/**
 * A growable struct-of-arrays of tokens: 64-bit hash lanes, the token's kind (TOKEN_*) and its
 * script (1: written in another script than Latin, such as Han, kana, hangul or Cyrillic; 0: Latin,
 * digits). Reused across pages.
 */
export class TokenBuffer {
  a: Int32Array;
  b: Int32Array;
  num: Uint8Array;
  script: Uint8Array;
  length = 0;
  private readonly initialCapacity: number;

  constructor(initialCapacity = 4096) {
    this.initialCapacity = initialCapacity;
    this.a = new Int32Array(initialCapacity);
    this.b = new Int32Array(initialCapacity);
    this.num = new Uint8Array(initialCapacity);
    this.script = new Uint8Array(initialCapacity);
  }

  /** Empties the buffer; grown past KEPT_TOKENS for a huge page, it goes back to its first size. */
  clear(): void {
    this.length = 0;
    if (this.a.length > Math.max(KEPT_TOKENS, this.initialCapacity)) {
      this.a = new Int32Array(this.initialCapacity);
      this.b = new Int32Array(this.initialCapacity);
      this.num = new Uint8Array(this.initialCapacity);
      this.script = new Uint8Array(this.initialCapacity);
    }
  }

  push(a: number, b: number, num: number, script = 0): void {
    if (this.length === this.a.length) this.grow();
    const i = this.length++;
    this.a[i] = a;
    this.b[i] = b;
    this.num[i] = num;
    this.script[i] = script;
  }

  private grow(): void {
    const cap = this.a.length * 2;
    const a = new Int32Array(cap);
    const b = new Int32Array(cap);
    const num = new Uint8Array(cap);
    const script = new Uint8Array(cap);
    a.set(this.a);
    b.set(this.b);
    num.set(this.num);
    script.set(this.script);
    this.a = a;
    this.b = b;
    this.num = num;
    this.script = script;
  }
}
