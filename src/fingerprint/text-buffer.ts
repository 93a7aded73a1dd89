/**
 * Strings at least this long are copied by Buffer's 'utf16le' write, which stores code units in
 * the machine's order only where that is little-endian (x86, Arm as Node runs them); shorter ones,
 * or any on a big-endian machine, unit by unit.
 */
const NATIVE_COPY_MIN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 64 : Infinity;

/**
 * Units a buffer keeps from one page to the next (512 KiB); grown past this for a huge page, it
 * goes back to its first size when it is cleared, so a thread does not hold every buffer at the
 * size of the largest page it ever met.
 */
export const KEPT_UNITS = 1 << 18;

/** A growable UTF-16 code-unit buffer: the extracted text of a page, reused across pages. */
export class TextBuffer {
  units: Uint16Array;
  length = 0;
  /** A byte view of units, for setString's native copy. */
  private bytes: Buffer | undefined;
  private readonly initialCapacity: number;

  constructor(initialCapacity = 64 * 1024) {
    this.initialCapacity = initialCapacity;
    this.units = new Uint16Array(initialCapacity);
  }

  /** Empties the buffer (and gives back what a huge page grew it by: KEPT_UNITS). */
  clear(): void {
    this.length = 0;
    if (this.units.length > Math.max(KEPT_UNITS, this.initialCapacity)) {
      this.units = new Uint16Array(this.initialCapacity);
      this.bytes = undefined;
    }
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
    this.clear();
    const n = s.length;
    const units = this.reserve(n);
    if (n >= NATIVE_COPY_MIN) {
      // One native copy of the code units (lone surrogates included: 'utf16le' writes them as they
      // are), not a charCodeAt per unit, which took a tenth of fingerprint({ text }).
      if (this.bytes?.buffer !== units.buffer) this.bytes = Buffer.from(units.buffer, units.byteOffset, units.byteLength);
      this.bytes.write(s, 0, 'utf16le');
    } else {
      for (let i = 0; i < n; i++) units[i] = s.charCodeAt(i);
    }
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
