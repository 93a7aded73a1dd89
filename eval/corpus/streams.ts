/**
 * The two labelled streams the harness builds. "tuning" is the corpus the
 * product's defaults were chosen on (docs/quality.md, the sweep); "heldout"
 * reads other Debian packages with another seed and is never swept, so its
 * figures say what a stream nobody tuned on gets. Both use the same
 * generators (chrome, near-duplicates, substantive edits, hard negatives,
 * hostile input) and the natural near-duplicate kind, partly untranslated
 * pages (LibreOffice's help paired by paragraph id in the held-out stream,
 * the Debian Administrator's Handbook paired by position in the tuning one).
 */
import { DEFAULT_COMPOSE, type ComposeOptions } from './compose.js';
import { HELDOUT_DOC_SETS } from './heldout-sources.js';
import { DOC_SETS, type DocSet } from './sources.js';

export interface StreamSpec {
  readonly docSets: readonly DocSet[];
  readonly compose: ComposeOptions;
}

export const STREAMS = {
  tuning: { docSets: DOC_SETS, compose: { ...DEFAULT_COMPOSE, partlyUntranslatedRate: 0.25 } },
  heldout: { docSets: HELDOUT_DOC_SETS, compose: { ...DEFAULT_COMPOSE, seed: 'simhash-heldout-v1', partlyUntranslatedRate: 0.25, hardNegativeMinContentChanges: 1 } },
} as const satisfies Record<string, StreamSpec>;

export type StreamName = keyof typeof STREAMS;

export function streamNamed(name: string): StreamSpec {
  if (!Object.hasOwn(STREAMS, name)) throw new Error(`unknown stream "${name}" (known: ${Object.keys(STREAMS).join(', ')})`);
  return STREAMS[name as StreamName];
}
