/**
 * What the second stage's sketch should be a sketch of: the page's words and
 * shingles (sketch definition 4, the product's), its shingles alone
 * (definitions up to 3) or its words alone. From the tuning corpus's
 * originals (never the held-out stream's), this makes word edits (editWords,
 * the generator's own), substantive edits (substantiveEdit, 10% to 50% of the
 * text from a page of the same doc set) and pairs of distinct pages of one
 * doc set, plus pairs of distinct demo-feed articles (src/producers/
 * demo-pages.ts: random sentences over one narrow vocabulary), and counts per
 * page length how many each sketch confirms at a threshold, with the same
 * digest of content numbers and identifiers, as the decider asks. Writes
 * eval/results/sketch-words.json.
 *
 *   node dist/eval/sweep/sketch-words.js [--pages P] [--labels L] [--out F] [--seed S]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { FeatureSketcher, WORD_COPY_SALT, numbersAgreeAt, sketchSimilarity } from '../../src/fingerprint/feature-sketch.js';
import { SKETCH_BINS, createFingerprinter, type Fingerprinter } from '../../src/fingerprint/index.js';
import { demoPages } from '../../src/producers/demo-pages.js';
import { Rng } from '../corpus/prng.js';
import { substantiveEdit, type SubstantiveEdit } from '../corpus/substantive.js';
import { editWords } from '../corpus/word-edit.js';
import { loadCorpus } from './load-corpus.js';

type PairKind = 'word-edit' | 'substantive-edit' | 'distinct' | 'distinct-demo';
const SKETCHES = ['product', 'shingles', 'words', 'words1', 'words3'] as const;
const THRESHOLDS = [0.8, 0.825, 0.85, 0.875, 0.9] as const;
/** Page lengths in features of the original (the default shingles), lower bounds. */
const LENGTHS = [0, 150, 400] as const;
const EDITS: readonly SubstantiveEdit[] = ['paragraphs-rewritten', 'section-added', 'section-removed'];

interface Sketches {
  /** The fingerprinter's own: each word twice (salted copy) and each shingle once. */
  product: Uint8Array;
  shingles: Uint8Array;
  words: Uint8Array;
  /** Words once and shingles once. */
  words1: Uint8Array;
  /** Words three times and shingles once. */
  words3: Uint8Array;
  features: number;
}

/** The fingerprinter's feature counter, for the shingle sketch of definition 3 (not part of its interface). */
interface WithCounter {
  counter: { entryA: Int32Array; entryB: Int32Array; size: number };
}

const sketcher = new FeatureSketcher();
const NONE: WithCounter['counter'] = { entryA: new Int32Array(0), entryB: new Int32Array(0), size: 0 };

/**
 * The bins over `shingles` once and `words` at `weight` copies (the copies salted as
 * FeatureSketcher.addWord salts its second one), with `digestOf`'s digest of numbers.
 */
function sketchOf(shingles: WithCounter['counter'], words: WithCounter['counter'], weight: number, digestOf: Uint8Array): Uint8Array {
  sketcher.reset();
  for (let e = 0; e < shingles.size; e++) sketcher.add(shingles.entryA[e]!, shingles.entryB[e]!);
  for (let e = 0; e < words.size; e++) for (let w = 0; w < weight; w++) sketcher.add(words.entryA[e]! ^ Math.imul(WORD_COPY_SALT, w), words.entryB[e]!);
  const out = new Uint8Array(SKETCH_BINS);
  sketcher.write(out);
  out.set(digestOf.subarray(SKETCH_BINS - 8), SKETCH_BINS - 8);
  return out;
}

function sketchesOf(fp: Fingerprinter, fpWords: Fingerprinter, html: string): Sketches {
  const r = fp.fingerprint({ html });
  // Words: the features of single tokens (stop words and NUM left out, as in the product).
  fpWords.fingerprint({ html });
  const shingles = (fp as unknown as WithCounter).counter;
  const words = (fpWords as unknown as WithCounter).counter;
  return {
    product: r.sketch,
    // Definition 3: the bins over the distinct shingles alone.
    shingles: sketchOf(shingles, NONE, 0, r.sketch),
    words: sketchOf(NONE, words, 1, r.sketch),
    words1: sketchOf(shingles, words, 1, r.sketch),
    words3: sketchOf(shingles, words, 3, r.sketch),
    features: r.features,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      pages: { type: 'string', default: 'eval/.cache/pages.jsonl' },
      labels: { type: 'string', default: 'eval/.cache/labels.jsonl' },
      out: { type: 'string', default: 'eval/results/sketch-words.json' },
      seed: { type: 'string', default: 'sketch-words' },
    },
  });
  const corpus = await loadCorpus(values.pages!, values.labels!);
  const labelOf = new Map(corpus.labels.map((l) => [l.id, l]));
  const fp = await createFingerprinter();
  const fpWords = await createFingerprinter({ shingleSize: 1 });
  const rng = new Rng(values.seed!);
  const groups = new Map<string, string[]>();
  corpus.ids.forEach((id, i) => {
    const l = labelOf.get(id);
    const html = corpus.contents[i]?.html;
    if (l?.kind !== 'original' || typeof html !== 'string') return;
    const key = `${l.site}/${l.language}`;
    groups.set(key, [...(groups.get(key) ?? []), html]);
  });
  // counts[kind][length][sketch][threshold] = confirmed; totals[kind][length] = pairs.
  const counts: Record<string, Record<number, Record<string, number[]>>> = {};
  const totals: Record<string, Record<number, number>> = {};
  const note = (kind: PairKind, base: Sketches, other: Sketches): void => {
    const length = [...LENGTHS].reverse().find((b) => base.features >= b)!;
    totals[kind] ??= {};
    totals[kind]![length] = (totals[kind]![length] ?? 0) + 1;
    counts[kind] ??= {};
    const byLength = (counts[kind]![length] ??= Object.fromEntries(SKETCHES.map((k) => [k, THRESHOLDS.map(() => 0)])));
    for (const sketch of SKETCHES) {
      const a = base[sketch];
      const b = other[sketch];
      const similarity = sketchSimilarity(a, b);
      const same = numbersAgreeAt(a, 0, b);
      THRESHOLDS.forEach((t, i) => {
        if (same && similarity >= t) byLength[sketch]![i]!++;
      });
    }
  };
  for (const pages of groups.values()) {
    for (const html of pages) {
      const base = sketchesOf(fp, fpWords, html);
      if (base.features === 0) continue;
      for (let round = 0; round < 2; round++) {
        const edited = editWords(rng, html);
        if (edited !== null) note('word-edit', base, sketchesOf(fp, fpWords, edited.html));
        const donor = pages[rng.int(0, pages.length - 1)]!;
        if (donor === html) continue;
        const made = substantiveEdit(rng, html, donor, rng.pick(EDITS), 0.1 + rng.next() * 0.4);
        if (made !== null) note('substantive-edit', base, sketchesOf(fp, fpWords, made.html));
        note('distinct', base, sketchesOf(fp, fpWords, donor));
      }
    }
  }
  // Distinct articles of one demo site: one narrow vocabulary, other sentences.
  const demo = new Map<string, Sketches[]>();
  let n = 0;
  for (const p of demoPages({ seed: 5 })) {
    if (++n > 1500) break;
    if (p.kind !== 'original') continue;
    const site = new URL(p.url).host;
    demo.set(site, [...(demo.get(site) ?? []), sketchesOf(fp, fpWords, p.html)]);
  }
  for (const sketches of demo.values()) for (let i = 1; i < sketches.length; i++) note('distinct-demo', sketches[i - 1]!, sketches[i]!);
  const rows = Object.entries(totals).flatMap(([kind, byLength]) =>
    Object.entries(byLength).map(([length, pairs]) => ({
      kind,
      featuresFrom: Number(length),
      pairs,
      confirmed: Object.fromEntries(
        SKETCHES.map((s) => [s, Object.fromEntries(THRESHOLDS.map((t, i) => [String(t), counts[kind]![Number(length)]![s]![i]!]))]),
      ),
    })),
  );
  writeFileSync(values.out!, JSON.stringify({ generatedBy: 'eval/sweep/sketch-words.ts', seed: values.seed, thresholds: THRESHOLDS, rows }, null, 1) + '\n');
  for (const r of rows) {
    const cells = SKETCHES.map((s) => `${s} ${THRESHOLDS.map((t) => `${t}:${r.confirmed[s]![String(t)]}`).join(' ')}`);
    console.log(`${r.kind.padEnd(17)} features>=${String(r.featuresFrom).padEnd(4)} ${String(r.pairs).padStart(5)} pairs, confirmed: ${cells.join(' | ')}`);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
