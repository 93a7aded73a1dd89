/**
 * Chinese word segmentation: jieba's algorithm and dictionary (jieba-segmenter.ts), the words as
 * offsets into the caller's code units. The dictionary is the one @node-rs/jieba ships
 * (`@node-rs/jieba/dict.js`, 349k words); its native cut is what the differential test holds this
 * one to, word for word. One segmenter per thread, created on first use (reading the dictionary
 * takes about 0.35 s; the trie holds about 20 MB).
 *
 * The tokenizer cuts each Han run where it lies in the text. HMM is on (jieba's default): it joins
 * unknown names and new words instead of leaving single characters.
 */
import { JiebaSegmenter } from './jieba-segmenter.js';

export interface CjkSegmenter {
  /** Cuts units[from..to) into words and returns how many there are; their end offsets are wordEnds[0..count). */
  cut(units: Uint16Array, from: number, to: number): number;
  /** End offsets of the last cut's words (reallocated as it grows: read it after cut). */
  readonly wordEnds: Int32Array;
  /** The words of a string, for tests and tools. */
  cutString(text: string): string[];
}

let shared: Promise<CjkSegmenter> | undefined;

export function loadJiebaSegmenter(): Promise<CjkSegmenter> {
  shared ??= (async () => {
    const { dict } = await import('@node-rs/jieba/dict.js');
    return JiebaSegmenter.fromDictionary(dict);
  })();
  return shared;
}

/** The IDF table jieba ships (`word idf` per line), for TF-IDF weighting. */
export async function loadJiebaIdfText(): Promise<string> {
  const { idf } = await import('@node-rs/jieba/dict.js');
  return new TextDecoder('utf-8').decode(idf);
}
