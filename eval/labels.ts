/**
 * The labelled corpus's vocabulary, shared by the generator and the scorer.
 *
 * A page is one line of pages.jsonl (`id`, `url`, `html`, `fetchedAt`, in
 * stream order); its label is one line of labels.jsonl. Pages of one cluster
 * are the same document as a reader sees it: an original and its
 * near-duplicates. A duplicate verdict is correct only when it names an
 * earlier page of the same cluster.
 */

/** Near-duplicates of an earlier page: a correct detector calls these duplicates. */
export const NEAR_DUPLICATE_KINDS = [
  'exact-copy',
  'url-alias',
  'reformat',
  'session-tracking',
  'counter-timestamp',
  'ad-banner',
  'widget',
  'word-edit',
  'mixed',
  'damaged',
] as const;

/**
 * Near-duplicates that occur in the packages themselves rather than being
 * generated (the Handbook's translations in the tuning stream, LibreOffice's
 * help in the held-out one): a translated page with a few
 * paragraphs left in the source language (corpus/untranslated.ts).
 */
export const NATURAL_NEAR_DUPLICATE_KINDS = ['partly-untranslated'] as const;

/** Pages a correct detector keeps novel (or, for hostile input, rejects). */
export const NEGATIVE_KINDS = ['original', 'substantive-edit', 'hard-negative', 'hostile'] as const;

/** Near-duplicate kinds the generator makes from an original (the ten of both streams). */
export type GeneratedNearDuplicateKind = (typeof NEAR_DUPLICATE_KINDS)[number];
export type NearDuplicateKind = GeneratedNearDuplicateKind | (typeof NATURAL_NEAR_DUPLICATE_KINDS)[number];
export type NegativeKind = (typeof NEGATIVE_KINDS)[number];
export type PageKind = NearDuplicateKind | NegativeKind;

export const ALL_KINDS: readonly PageKind[] = [...NEGATIVE_KINDS, ...NEAR_DUPLICATE_KINDS, ...NATURAL_NEAR_DUPLICATE_KINDS];

export function isNearDuplicateKind(kind: string): kind is NearDuplicateKind {
  return (NEAR_DUPLICATE_KINDS as readonly string[]).includes(kind) || (NATURAL_NEAR_DUPLICATE_KINDS as readonly string[]).includes(kind);
}

export interface Page {
  readonly id: string;
  readonly url: string;
  readonly html: string;
  readonly fetchedAt: string;
}

export interface Label {
  readonly id: string;
  /** Same cluster = same document for a reader. */
  readonly cluster: string;
  readonly kind: PageKind;
  /** Doc set the page comes from ('hostile' for hostile input). */
  readonly site: string;
  /** BCP 47-ish primary language ('und' for hostile input). */
  readonly language: string;
  /** The earlier page this one was derived from, if any. */
  readonly sourceId: string | null;
  /** Sub-kind: which edits, which hostile input, which substantive change. */
  readonly detail: string | null;
  /** How the page's theme marks up ads, counters and widgets (see corpus/chrome.ts); null for hostile input. */
  readonly chromeMarkup: 'semantic' | 'opaque' | null;
  /** Share of the reader-visible text that changed (substantive edits, partly untranslated pages). */
  readonly changedFraction: number | null;
}
