/**
 * Stable sorts of uint32 keys carrying a uint32 payload: LSD radix (11, 11,
 * 10 bits) for large inputs, a packed Float64Array sort for small ones.
 * Equal keys keep their input order.
 */

const SMALL = 2048;

/** Sorts keys[0..n) with vals alongside, in place. */
export function sortPairs(keys: Uint32Array, vals: Uint32Array, n: number): void {
  if (n < 2) return;
  if (n <= SMALL) {
    sortSmall(keys, vals, n);
    return;
  }
  let srcK: Uint32Array = keys;
  let srcV: Uint32Array = vals;
  let dstK: Uint32Array = new Uint32Array(n);
  let dstV: Uint32Array = new Uint32Array(n);
  const counts = new Uint32Array(2048);
  for (let pass = 0; pass < 3; pass++) {
    const shift = pass * 11;
    const mask = pass === 2 ? 0x3ff : 0x7ff;
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[(srcK[i]! >>> shift) & mask]!++;
    let sum = 0;
    let single = false;
    for (let d = 0; d <= mask; d++) {
      const c = counts[d]!;
      if (c === n) single = true;
      counts[d] = sum;
      sum += c;
    }
    if (single) continue;
    for (let i = 0; i < n; i++) {
      const key = srcK[i]!;
      const pos = counts[(key >>> shift) & mask]!++;
      dstK[pos] = key;
      dstV[pos] = srcV[i]!;
    }
    const tk = srcK;
    const tv = srcV;
    srcK = dstK;
    srcV = dstV;
    dstK = tk;
    dstV = tv;
  }
  if (srcK !== keys) {
    keys.set(srcK.subarray(0, n));
    vals.set(srcV.subarray(0, n));
  }
}

const packed = { buf: new Float64Array(SMALL), idx: new Uint32Array(SMALL) };

function sortSmall(keys: Uint32Array, vals: Uint32Array, n: number): void {
  const buf = packed.buf.subarray(0, n);
  for (let i = 0; i < n; i++) buf[i] = keys[i]! * SMALL + i;
  buf.sort();
  const idx = packed.idx;
  for (let i = 0; i < n; i++) {
    const v = buf[i]!;
    const key = Math.floor(v / SMALL);
    keys[i] = key;
    idx[i] = v - key * SMALL;
  }
  // Permute vals by idx through the tail of the buffer.
  const tmp = packed.buf;
  for (let i = 0; i < n; i++) tmp[i] = vals[idx[i]!]!;
  for (let i = 0; i < n; i++) vals[i] = tmp[i]!;
}
