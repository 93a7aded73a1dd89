/**
 * Picks the original pages: per doc set, files in a seeded order, kept when
 * they are valid UTF-8, not too large, documents of their own (the set's
 * `reject` rule: no redirects or stubs), really in the set's language, have
 * some text, and are not near-duplicates of an already kept original (see
 * overlap-filter.ts).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type DocSet, listHtmlFiles } from './sources.js';
import { looksLikeLanguage, titleOf, visibleText } from './html-text.js';
import { createOverlapFilter } from './overlap-filter.js';
import { Rng } from './prng.js';

export interface Original {
  readonly set: DocSet;
  readonly relPath: string;
  readonly url: string;
  readonly raw: string;
  readonly title: string;
  /** The page this one translates (same path in `set.translates.root`), when the set is a translation and it exists. */
  readonly translatedFrom?: string;
}

export interface Rejections {
  [reason: string]: number;
}

export const MAX_ORIGINAL_BYTES = 400 * 1024;
export const MIN_TEXT_CHARS = 300;
export const OVERLAP_THRESHOLD = 0.5;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The source page of a translation; undefined when it is missing or not UTF-8 (the page then gets no partly untranslated version). */
function readSource(path: string): string | undefined {
  try {
    return utf8.decode(readFileSync(path));
  } catch {
    return undefined;
  }
}

export function pickOriginals(seed: string, sets: readonly DocSet[]): { originals: Original[]; rejected: Rejections } {
  const filter = createOverlapFilter(OVERLAP_THRESHOLD);
  const originals: Original[] = [];
  const rejected: Rejections = {};
  const reject = (reason: string): void => {
    rejected[reason] = (rejected[reason] ?? 0) + 1;
  };
  for (const set of sets) {
    const files = Rng.derive(seed, `files/${set.key}`).shuffle(listHtmlFiles(set.root).filter((rel) => set.accept?.(rel) ?? true));
    let kept = 0;
    for (const rel of files) {
      if (kept >= set.quota) break;
      const path = join(set.root, rel);
      if (statSync(path).size > MAX_ORIGINAL_BYTES) {
        reject('too-large');
        continue;
      }
      let raw: string;
      try {
        raw = utf8.decode(readFileSync(path));
      } catch {
        reject('not-utf8');
        continue;
      }
      const notUsable = set.reject?.(raw) ?? null;
      if (notUsable !== null) {
        reject(notUsable);
        continue;
      }
      if (set.htmlLang !== undefined && !new RegExp(`<html[^>]*\\blang="${set.htmlLang}"`, 'i').test(raw)) {
        reject('fallback-language');
        continue;
      }
      const text = visibleText(raw);
      if (text.length < MIN_TEXT_CHARS) {
        reject('too-little-text');
        continue;
      }
      if (!looksLikeLanguage(text, set.language)) {
        reject('not-in-language');
        continue;
      }
      if (filter.offer(text).similarTo >= 0) {
        reject('near-duplicate-of-kept-original');
        continue;
      }
      const translatedFrom = set.translates === undefined ? undefined : readSource(join(set.translates.root, rel));
      originals.push({ set, relPath: rel, url: set.urlBase + rel, raw, title: titleOf(raw), ...(translatedFrom === undefined ? {} : { translatedFrom }) });
      kept++;
    }
  }
  return { originals, rejected };
}
