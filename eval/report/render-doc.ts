/** docs/quality.md and the figures as functions of eval/results/*.json (pure). */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SweepFile } from '../sweep/types.js';
import { prVsKFigure, recallByKindFigure } from './figures.js';
import { markerNames, replaceBetweenMarkers } from './format.js';
import { SECTIONS, type CliResults, type CorpusManifest, type HeldoutResults, type ReportInputs } from './sections.js';

export const FIGURE_PR = 'figure1-pr-vs-k.svg';
export const FIGURE_KINDS = 'recall-by-kind-vs-k.svg';
/** The held-out stream's files in eval/results (eval/run.sh with EVAL_STREAM=heldout writes them). */
export const HELDOUT_CORPUS = 'heldout-corpus.json';
export const HELDOUT_CLI = 'heldout-cli-defaults.json';

export function readResults(dir: string): ReportInputs {
  const read = <T>(name: string): T => JSON.parse(readFileSync(join(dir, name), 'utf8')) as T;
  return {
    corpus: read<CorpusManifest>('corpus.json'),
    sweep: read<SweepFile>('sweep.json'),
    cli: existsSync(join(dir, 'cli-defaults.json')) ? read<CliResults>('cli-defaults.json') : null,
    heldout: readHeldout(dir),
  };
}

/** The held-out stream's results, written by `bash eval/heldout.sh`; null before its first run. */
function readHeldout(dir: string): HeldoutResults | null {
  if (!existsSync(join(dir, HELDOUT_CORPUS))) return null;
  const corpus = JSON.parse(readFileSync(join(dir, HELDOUT_CORPUS), 'utf8')) as CorpusManifest;
  const cli = existsSync(join(dir, HELDOUT_CLI)) ? (JSON.parse(readFileSync(join(dir, HELDOUT_CLI), 'utf8')) as CliResults) : null;
  return { corpus, cli };
}

/** The doc with every marker section regenerated; throws on unknown or missing markers. */
export function renderDoc(doc: string, inputs: ReportInputs): string {
  const found = markerNames(doc);
  const unknown = found.filter((m) => !(m in SECTIONS));
  const absent = Object.keys(SECTIONS).filter((m) => !found.includes(m));
  if (unknown.length > 0 || absent.length > 0) throw new Error(`unknown markers [${unknown.join(', ')}], missing markers [${absent.join(', ')}]`);
  let out = doc;
  for (const [name, build] of Object.entries(SECTIONS)) out = replaceBetweenMarkers(out, name, build(inputs));
  return out;
}

export function renderFigures(inputs: ReportInputs): Record<string, string> {
  return { [FIGURE_PR]: prVsKFigure(inputs.sweep), [FIGURE_KINDS]: recallByKindFigure(inputs.sweep, inputs.sweep.recommended) };
}
