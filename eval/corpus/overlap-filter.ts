/**
 * Keeps the originals honest: two pages of one doc set can be near-duplicates
 * by nature (a page and its printable twin, an untranslated fallback, two
 * stub pages of one template). Labelling them "distinct" would charge the
 * detector for a correct answer. So an original is dropped when the Jaccard
 * similarity of its 5-token shingles with an earlier kept original reaches
 * `threshold`. MinHash (64 mixes) finds the candidate pairs, exact set
 * Jaccard decides. This measure is independent of simhash.
 */
import { textTokens } from './html-text.js';

export const HASHES = 64;
const SHINGLE = 5;

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mix(x: number, seed: number): number {
  let h = (x ^ seed) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export function shingleSet(text: string): Set<number> {
  const tokens = textTokens(text);
  const out = new Set<number>();
  if (tokens.length < SHINGLE) {
    if (tokens.length > 0) out.add(fnv1a(tokens.join(' ')));
    return out;
  }
  for (let i = 0; i + SHINGLE <= tokens.length; i++) out.add(fnv1a(tokens.slice(i, i + SHINGLE).join(' ')));
  return out;
}

export function jaccard(a: ReadonlySet<number>, b: ReadonlySet<number>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  let inter = 0;
  for (const x of small) if (big.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/** MinHash signature of a shingle set (64 mixes); agreeing positions / 64 estimates Jaccard. */
export function signature(set: ReadonlySet<number>): Uint32Array {
  const sig = new Uint32Array(HASHES).fill(0xffffffff);
  for (const x of set) {
    for (let i = 0; i < HASHES; i++) {
      const h = mix(x, 0x9e3779b9 * (i + 1));
      if (h < sig[i]!) sig[i] = h;
    }
  }
  return sig;
}

export interface OverlapFilter {
  /** Returns the index of a kept text it near-duplicates, or -1 after keeping it. */
  offer(text: string): { similarTo: number; jaccard: number };
}

export function createOverlapFilter(threshold: number): OverlapFilter {
  const sets: Set<number>[] = [];
  const sigs: Uint32Array[] = [];
  const minAgree = Math.floor(HASHES * threshold * 0.6);
  return {
    offer(text) {
      const set = shingleSet(text);
      const sig = signature(set);
      let best = -1;
      let bestJ = 0;
      for (let j = 0; j < sigs.length; j++) {
        const other = sigs[j]!;
        let agree = 0;
        for (let i = 0; i < HASHES; i++) if (other[i] === sig[i]) agree++;
        if (agree < minAgree) continue;
        const jac = jaccard(set, sets[j]!);
        if (jac > bestJ) {
          bestJ = jac;
          best = j;
        }
      }
      if (best >= 0 && bestJ >= threshold) return { similarTo: best, jaccard: bestJ };
      sets.push(set);
      sigs.push(sig);
      return { similarTo: -1, jaccard: bestJ };
    },
  };
}
