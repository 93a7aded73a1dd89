/**
 * Lookup tables keyed by token hash, built once per process: stop words,
 * date words, and (lazily, only for TF-IDF) jieba's IDF table.
 */
import { loadJiebaIdfText } from './cjk-segmenter.js';
import { hashUnits } from './feature-hash.js';
import { StaticTable64 } from './hash-table-64.js';
import { CHINESE_STOP_WORDS, DATE_CUE_WORDS, DATE_WORDS, ENGLISH_STOP_WORDS } from './stop-words.js';

/** What a word is, in the tokenizer's table of word kinds (wordKindTable): a date word, a stop word. */
export const WORD_DATE = 1;
export const WORD_STOP = 2;

/** Sets each word of `words`, hashed as the tokenizer hashes a word token (hashUnits), to `value` in table. */
export function addWords(table: StaticTable64, words: Iterable<string>, value: number): StaticTable64 {
  const h = new Uint32Array(2);
  for (const w of words) {
    hashUnits(w, h);
    table.set(h[0]!, h[1]!, value);
  }
  return table;
}

function tableOf(words: readonly string[], value = 1): StaticTable64 {
  return addWords(new StaticTable64(words.length), words, value);
}

let dateWords: StaticTable64 | undefined;

/** The date words (WORD_DATE). */
export function dateWordTable(): StaticTable64 {
  dateWords ??= tableOf(DATE_WORDS, WORD_DATE);
  return dateWords;
}

let smallNumbers: StaticTable64 | undefined;

/** The plain numbers of one or two digits, 0 to 99 and 00 to 09, hashed as number tokens are (the fingerprinter leaves them out of the digest of content numbers). */
export function smallNumberTable(): StaticTable64 {
  smallNumbers ??= tableOf(Array.from({ length: 110 }, (_, i) => (i < 100 ? String(i) : `0${i - 100}`)));
  return smallNumbers;
}

let wordKinds: StaticTable64 | undefined;

/**
 * The date words (WORD_DATE) and the stop words (WORD_STOP) in one table, for the tokenizer: one
 * lookup per word tells both (a word on both lists is a date word, as the tokenizer reads dates first).
 */
export function wordKindTable(): StaticTable64 {
  if (wordKinds === undefined) {
    const stop = [...ENGLISH_STOP_WORDS, ...CHINESE_STOP_WORDS];
    wordKinds = addWords(new StaticTable64(stop.length + DATE_WORDS.length), stop, WORD_STOP);
    addWords(wordKinds, DATE_WORDS, WORD_DATE);
  }
  return wordKinds;
}

let dateCues: StaticTable64 | undefined;

/** DATE_CUE_WORDS, for the tokenizer. */
export function dateCueTable(): StaticTable64 {
  dateCues ??= tableOf(DATE_CUE_WORDS);
  return dateCues;
}

export interface IdfTable {
  readonly table: StaticTable64;
  /** IDF given to tokens not in the table: the median of the table. */
  readonly defaultIdf: number;
}

let idf: Promise<IdfTable> | undefined;

/** jieba's idf.txt (`word idf` per line, ~270k Chinese words), hashed like tokens. */
export function loadIdfTable(): Promise<IdfTable> {
  idf ??= loadJiebaIdfText().then(parseIdf);
  return idf;
}

export function parseIdf(text: string): IdfTable {
  const lines = text.split('\n');
  const table = new StaticTable64(lines.length);
  const values: number[] = [];
  const h = new Uint32Array(2);
  for (const line of lines) {
    const sp = line.lastIndexOf(' ');
    if (sp <= 0) continue;
    const value = Number(line.slice(sp + 1));
    if (!Number.isFinite(value) || value <= 0) continue;
    hashUnits(line.slice(0, sp).toLowerCase(), h);
    table.set(h[0]!, h[1]!, value);
    values.push(value);
  }
  values.sort((x, y) => x - y);
  const defaultIdf = values.length > 0 ? values[values.length >> 1]! : 1;
  return { table, defaultIdf };
}
