/**
 * Regenerates the figures (eval/results/*.svg) and the generated parts of
 * docs/quality.md from eval/results/{corpus,cli-defaults,sweep}.json. Text
 * outside the `<!-- eval:begin NAME -->` / `<!-- eval:end NAME -->` markers is
 * left alone; a marker the generator does not know, or a section without its
 * marker, is an error.
 *
 *   node dist/eval/report/write-report.js [--results eval/results] [--doc docs/quality.md]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { SweepFile } from '../sweep/types.js';
import { prVsKFigure, recallByKindFigure } from './figures.js';
import { markerNames, replaceBetweenMarkers } from './format.js';
import { SECTIONS, type CliResults, type CorpusManifest } from './sections.js';

export const FIGURE_PR = 'figure1-pr-vs-k.svg';
export const FIGURE_KINDS = 'recall-by-kind-vs-k.svg';

export function main(argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      results: { type: 'string', default: 'eval/results' },
      doc: { type: 'string', default: 'docs/quality.md' },
    },
  });
  const read = <T>(name: string): T => JSON.parse(readFileSync(join(values.results, name), 'utf8')) as T;
  const corpus = read<CorpusManifest>('corpus.json');
  const sweep = read<SweepFile>('sweep.json');
  const cli = existsSync(join(values.results, 'cli-defaults.json')) ? read<CliResults>('cli-defaults.json') : null;
  writeFileSync(join(values.results, FIGURE_PR), prVsKFigure(sweep));
  writeFileSync(join(values.results, FIGURE_KINDS), recallByKindFigure(sweep, sweep.recommended));

  let doc = readFileSync(values.doc, 'utf8');
  const found = markerNames(doc);
  const unknown = found.filter((m) => !(m in SECTIONS));
  const absent = Object.keys(SECTIONS).filter((m) => !found.includes(m));
  if (unknown.length > 0 || absent.length > 0) {
    throw new Error(`${values.doc}: unknown markers [${unknown.join(', ')}], missing markers [${absent.join(', ')}]`);
  }
  for (const [name, build] of Object.entries(SECTIONS)) doc = replaceBetweenMarkers(doc, name, build({ corpus, cli, sweep }));
  writeFileSync(values.doc, doc);
  process.stderr.write(`report: wrote ${values.doc}, ${join(values.results, FIGURE_PR)}, ${join(values.results, FIGURE_KINDS)}\n`);
}

main(process.argv.slice(2));
