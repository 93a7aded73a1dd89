/**
 * Chinese word segmentation: jieba's algorithm and dictionary (jieba-segmenter.ts), the words as
 * offsets into the caller's code units. The dictionary is the one @node-rs/jieba ships
 * (`@node-rs/jieba/dict.js`, 349k words); its native cut is what the differential test holds this
 * one to, word for word. One segmenter per thread, created on first use. Reading the dictionary
 * takes 0.3-0.5 s and its tables hold 17.6 MB, so a pool reads it once and shares the tables with
 * its workers (jiebaTables, useJiebaTables).
 *
 * The tokenizer cuts each Han run where it lies in the text. HMM is on (jieba's default): it joins
 * unknown names and new words instead of leaving single characters.
 */
import { JiebaSegmenter, type JiebaTables } from './jieba-segmenter.js';

export type { JiebaTables } from './jieba-segmenter.js';

export interface CjkSegmenter {
  /** Cuts units[from..to) into words and returns how many there are; their end offsets are wordEnds[0..count). */
  cut(units: Uint16Array, from: number, to: number): number;
  /** End offsets of the last cut's words (reallocated as it grows: read it after cut). */
  readonly wordEnds: Int32Array;
  /** The words of a string, for tests and tools. */
  cutString(text: string): string[];
}

let shared: Promise<JiebaSegmenter> | undefined;

export function loadJiebaSegmenter(): Promise<CjkSegmenter> {
  return loadShared();
}

function loadShared(): Promise<JiebaSegmenter> {
  shared ??= (async () => {
    const { dict } = await import('@node-rs/jieba/dict.js');
    return JiebaSegmenter.fromDictionary(dict);
  })();
  return shared;
}

/**
 * This thread's dictionary tables, read on first use: a pool hands them to its workers
 * (useJiebaTables), which then cut with this memory instead of reading the dictionary each.
 */
export async function jiebaTables(): Promise<JiebaTables> {
  return (await loadShared()).tables;
}

/** Makes this thread's segmenter one over tables another thread read (jiebaTables), unless it has one already. */
export function useJiebaTables(tables: JiebaTables): void {
  shared ??= Promise.resolve(JiebaSegmenter.fromTables(tables));
}

/** The IDF table jieba ships (`word idf` per line), for TF-IDF weighting. */
export async function loadJiebaIdfText(): Promise<string> {
  const { idf } = await import('@node-rs/jieba/dict.js');
  return new TextDecoder('utf-8').decode(idf);
}
