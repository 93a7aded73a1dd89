/**
 * A natural near-duplicate: a translated page with some of its paragraphs
 * left in the source language, as a translation in progress is published
 * (LibreOffice's help ships such pages: untranslated strings fall back to
 * the English text; so do books translated through gettext, such as the
 * Debian Administrator's Handbook). The other version of each paragraph is
 * real text from the package, not generated: the source page of the same
 * path, whose paragraphs carry the same ids (`<p id="par_id…">`) or, in a
 * book built from one DocBook source, come in the same order. A reader of either
 * version gets the same document, so a few paragraphs in the source language
 * keep the page a near-duplicate; the changed share is capped well below the
 * 10% from which substantive edits start (substantive.ts), and recorded.
 */
import { chromeRanges, insideAny, visibleText } from './html-text.js';
import type { Rng } from './prng.js';
import { contentParagraphs } from './substantive.js';
import type { Translation } from './sources.js';

/** At most this many paragraphs go back to the source language. */
export const MAX_UNTRANSLATED_PARAGRAPHS = 3;
/** At most this share of the page's visible text goes back to the source language. */
export const MAX_UNTRANSLATED_SHARE = 0.08;

const ID_PARAGRAPH_RE = /(<p\b[^>]*\bid="(par_id[^"]*)"[^>]*>)([\s\S]*?)(<\/p>)/gi;

export interface IdParagraph {
  readonly id: string;
  readonly start: number;
  readonly end: number;
  readonly open: string;
  readonly inner: string;
  readonly close: string;
  readonly text: string;
}

/** Paragraphs with an id, outside the document's own chrome; ids that occur more than once are left out. */
export function idParagraphs(html: string): Map<string, IdParagraph> {
  const chrome = chromeRanges(html);
  const seen = new Map<string, IdParagraph>();
  const repeated = new Set<string>();
  ID_PARAGRAPH_RE.lastIndex = 0;
  for (let m = ID_PARAGRAPH_RE.exec(html); m !== null; m = ID_PARAGRAPH_RE.exec(html)) {
    const id = m[2]!;
    if (seen.has(id)) repeated.add(id);
    if (insideAny(chrome, m.index)) continue;
    seen.set(id, { id, start: m.index, end: m.index + m[0].length, open: m[1]!, inner: m[3]!, close: m[4]!, text: visibleText(m[3]!) });
  }
  for (const id of repeated) seen.delete(id);
  return seen;
}

/** Every paragraph outside the document's own chrome (as substantive.ts reads them), in order, named by its position (`#0`, `#1`, …). */
export function positionedParagraphs(html: string): IdParagraph[] {
  return contentParagraphs(html).map((p, i) => ({ ...p, id: `#${i}`, text: visibleText(p.inner) }));
}

/**
 * The translated page's paragraphs, each with its source paragraph: by id, or by position when
 * both pages have the same number of paragraphs (otherwise the pages are not one document's
 * versions and nothing pairs).
 */
export function pairedParagraphs(translated: string, source: string, pairBy: Translation['pairBy'] = 'id'): Array<readonly [IdParagraph, IdParagraph]> {
  if (pairBy === 'position') {
    const ours = positionedParagraphs(translated);
    const theirs = positionedParagraphs(source);
    return ours.length === theirs.length ? ours.map((p, i) => [p, theirs[i]!] as const) : [];
  }
  const theirs = idParagraphs(source);
  const pairs: Array<readonly [IdParagraph, IdParagraph]> = [];
  for (const p of idParagraphs(translated).values()) {
    const s = theirs.get(p.id);
    if (s !== undefined) pairs.push([p, s]);
  }
  return pairs;
}

export interface UntranslatedResult {
  readonly html: string;
  /** Ids of the paragraphs now in the source language. */
  readonly paragraphs: readonly string[];
  /** Share of the page's visible text (in the translated version) that is now in the source language. */
  readonly changedFraction: number;
}

/**
 * The translated page with 1 to `maxParagraphs` of its translated paragraphs
 * replaced by the source page's paragraphs of the same id, changing at most
 * `maxShare` of its visible text. Links in the source paragraphs are pointed
 * at the translation's folder (`hrefFrom` to `hrefTo`), as the translation's
 * own build writes them. Null when no translated paragraph fits.
 */
export function partlyUntranslated(
  rng: Rng,
  translated: string,
  source: string,
  link: Pick<Translation, 'hrefFrom' | 'hrefTo' | 'pairBy'>,
  maxParagraphs = MAX_UNTRANSLATED_PARAGRAPHS,
  maxShare = MAX_UNTRANSLATED_SHARE,
): UntranslatedResult | null {
  const total = visibleText(translated).length;
  if (total === 0) return null;
  const sourceOf = new Map<IdParagraph, IdParagraph>();
  // Translated paragraphs only: one whose text equals the source's is already untranslated.
  for (const [p, s] of pairedParagraphs(translated, source, link.pairBy)) {
    if (p.text.length > 0 && s.text.length >= 20 && s.text !== p.text) sourceOf.set(p, s);
  }
  const wanted = rng.int(1, maxParagraphs);
  const chosen: IdParagraph[] = [];
  let changed = 0;
  for (const p of rng.shuffle([...sourceOf.keys()])) {
    if (chosen.length >= wanted) break;
    if ((changed + p.text.length) / total > maxShare) continue;
    chosen.push(p);
    changed += p.text.length;
  }
  if (chosen.length === 0) return null;
  chosen.sort((a, b) => a.start - b.start);
  let html = '';
  let last = 0;
  for (const p of chosen) {
    const theirs = sourceOf.get(p)!.inner;
    const inner = link.hrefFrom === link.hrefTo ? theirs : theirs.split(`href="${link.hrefFrom}`).join(`href="${link.hrefTo}`);
    html += translated.slice(last, p.start) + p.open + inner + p.close;
    last = p.end;
  }
  html += translated.slice(last);
  return { html, paragraphs: chosen.map((p) => p.id), changedFraction: changed / total };
}
