/** A growable UTF-16 code-unit buffer: the extracted text of a page, reused across pages. */
export class TextBuffer {
  units: Uint16Array;
  length = 0;

  constructor(initialCapacity = 64 * 1024) {
    this.units = new Uint16Array(initialCapacity);
  }

  /** Makes room for `extra` more code units. */
  reserve(extra: number): Uint16Array {
    const need = this.length + extra;
    if (need > this.units.length) {
      let cap = this.units.length * 2;
      while (cap < need) cap *= 2;
      const units = new Uint16Array(cap);
      units.set(this.units.subarray(0, this.length));
      this.units = units;
    }
    return this.units;
  }

  /** Replaces the content with a string. */
  setString(s: string): void {
    this.length = 0;
    const n = s.length;
    const units = this.reserve(n);
    for (let i = 0; i < n; i++) units[i] = s.charCodeAt(i);
    this.length = n;
  }

  toString(): string {
    return decodeUnits(this.units, 0, this.length);
  }
}

const decoder = new TextDecoder('utf-16le');

/** The string of units[s..e) (lone surrogates survive: UTF-16LE decoding maps them to U+FFFD). */
export function decodeUnits(units: Uint16Array, s: number, e: number): string {
  return decoder.decode(units.subarray(s, e));
}
