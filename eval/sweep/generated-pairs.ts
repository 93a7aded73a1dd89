/**
 * Near-duplicates and distinct pages made in bulk from the tuning stream's
 * originals (never the held-out stream's), each decided as a pair by the
 * product's decider at the defaults: the original, then the other page.
 *
 * - partly untranslated: every translated original (the pages the stream
 *   draws its partly untranslated kind from, at a rate of 1 in 4), PER_PAGE
 *   versions each (untranslated.ts, the generator's own), so the kind the
 *   stream holds 61 of is measured on hundreds;
 * - substantive edits (substantiveEdit: 10% to 50% of the text from a page
 *   of the same doc set) and hard negatives (hardNegative: versions and
 *   identifiers renamed, at least once outside the page's own chrome),
 *   DISTINCT_PER_PAGE per original: what a looser rule would wrongly call
 *   duplicates.
 *
 * Pages are rendered without the stream's random chrome (the same bare
 * layout for both pages of a pair), so a figure here is of the text alone.
 * Misses of the partly untranslated kind are counted by what held the pair
 * apart: the content numbers (numbersAgreeAt), the sketch's agreement
 * (overlap or script swap), or neither (the candidate not found). Writes
 * eval/results/generated-pairs.json.
 *
 *   node dist/eval/sweep/generated-pairs.js [--out F] [--seed S]
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { createDecider, planFromConfig } from '../../src/dedup/create-decider.js';
import type { DecisionInput } from '../../src/dedup/decider.js';
import { numbersAgreeAt, sketchesAgreeAt } from '../../src/fingerprint/feature-sketch.js';
import { createFingerprinter, type FingerprintResult } from '../../src/fingerprint/index.js';
import { NO_CHROME, renderWithChrome } from '../corpus/chrome.js';
import { hardNegative } from '../corpus/hard-negative.js';
import { pickOriginals } from '../corpus/originals.js';
import { Rng } from '../corpus/prng.js';
import { streamNamed } from '../corpus/streams.js';
import { substantiveEdit, type SubstantiveEdit } from '../corpus/substantive.js';
import { partlyUntranslated } from '../corpus/untranslated.js';

const PER_PAGE = 4;
const DISTINCT_PER_PAGE = 2;
const EDITS: readonly SubstantiveEdit[] = ['paragraphs-rewritten', 'section-added', 'section-removed'];

interface Tally {
  pairs: number;
  duplicates: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: 'eval/results/generated-pairs.json' },
      seed: { type: 'string', default: 'generated-pairs-v1' },
    },
  });
  const tuning = streamNamed('tuning');
  const { originals } = pickOriginals(tuning.compose.seed, tuning.docSets);
  const fp = await createFingerprinter();
  const config = loadConfig({});
  const plan = planFromConfig(config);
  const input = (id: string, r: FingerprintResult): DecisionInput => ({ id, hi: r.hi, lo: r.lo, short: r.short, sketch: r.sketch, fetchedAt: 0 });
  const render = (html: string, language: string): FingerprintResult => fp.fingerprint({ html: renderWithChrome(html, NO_CHROME, language, 'www.example.org') });
  const decide = (a: FingerprintResult, b: FingerprintResult): string => {
    const decider = createDecider(config, plan);
    decider.decide(input('original', a));
    return decider.decide(input('other', b)).verdict;
  };
  const tallies: Record<string, Tally> = {};
  const byLanguage: Record<string, Tally> = {};
  const untranslatedMisses: Record<string, number> = {};
  const count = (t: Record<string, Tally>, key: string, duplicate: boolean): void => {
    const row = (t[key] ??= { pairs: 0, duplicates: 0 });
    row.pairs++;
    if (duplicate) row.duplicates++;
  };
  const bySet = new Map<string, number[]>();
  originals.forEach((o, i) => bySet.set(o.set.key, [...(bySet.get(o.set.key) ?? []), i]));
  originals.forEach((o, oi) => {
    const original = render(o.raw, o.set.language);
    if (o.translatedFrom !== undefined && o.set.translates !== undefined) {
      for (let k = 0; k < PER_PAGE; k++) {
        const made = partlyUntranslated(Rng.derive(values.seed!, `untranslated/${o.set.key}/${o.relPath}/${k}`), o.raw, o.translatedFrom, o.set.translates);
        if (made === null) continue;
        const other = render(made.html, o.set.language);
        const duplicate = decide(original, other) === 'duplicate';
        count(tallies, 'partly-untranslated', duplicate);
        count(byLanguage, o.set.language, duplicate);
        if (!duplicate) {
          const digest = numbersAgreeAt(original.sketch, 0, other.sketch) ? 'same content numbers' : 'other content numbers';
          const agree = sketchesAgreeAt(original.sketch, 0, other.sketch, config.secondStageSimilarity) ? 'sketches agree' : 'sketches disagree';
          untranslatedMisses[`${digest}, ${agree}`] = (untranslatedMisses[`${digest}, ${agree}`] ?? 0) + 1;
        }
      }
    }
    const peers = bySet.get(o.set.key)!.filter((i) => i !== oi);
    if (peers.length === 0) return;
    for (let k = 0; k < DISTINCT_PER_PAGE; k++) {
      const rng = Rng.derive(values.seed!, `distinct/${o.set.key}/${o.relPath}/${k}`);
      const edit = rng.pick(EDITS);
      const substantive = substantiveEdit(rng, o.raw, originals[rng.pick(peers)]!.raw, edit, 0.1 + rng.next() * 0.4);
      if (substantive !== null) count(tallies, 'substantive-edit', decide(original, render(substantive.html, o.set.language)) === 'duplicate');
      const sibling = hardNegative(rng, o.raw, originals[rng.pick(peers)]!.raw);
      if (sibling !== null && sibling.contentChanges >= 1) count(tallies, 'hard-negative', decide(original, render(sibling.html, o.set.language)) === 'duplicate');
    }
  });
  const rate = (t: Tally) => ({ ...t, rate: Math.round((t.duplicates / t.pairs) * 10000) / 10000 });
  const report = {
    generatedBy: 'eval/sweep/generated-pairs.ts',
    seed: values.seed,
    stream: 'tuning originals, rendered without chrome; each pair decided alone at the defaults',
    kinds: Object.fromEntries(Object.entries(tallies).map(([k, t]) => [k, rate(t)])),
    partlyUntranslatedByLanguage: Object.fromEntries(Object.entries(byLanguage).map(([k, t]) => [k, rate(t)])),
    partlyUntranslatedMisses: untranslatedMisses,
  };
  writeFileSync(values.out!, JSON.stringify(report, null, 1) + '\n');
  for (const [k, t] of Object.entries(report.kinds)) console.log(`${k.padEnd(20)} ${t.duplicates} of ${t.pairs} called duplicate (${(100 * t.rate).toFixed(1)}%)`);
  console.log('partly untranslated misses:', JSON.stringify(untranslatedMisses));
}

await main();
