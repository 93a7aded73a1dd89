/**
 * Hard negatives: a sibling of a real page made from the same page, as a
 * site's generator makes release notes of another version or the API page of
 * a sibling class. Every version number in the text is changed and the
 * page's most frequent identifiers (CamelCase, snake_case, dotted or with
 * digits) are renamed to identifiers of another page of the same site,
 * everywhere. The prose around them is the same, but for a reader it is
 * another document: a correct detector keeps it novel.
 */
import { chromeRanges, insideAny, joinParts, splitHtml } from './html-text.js';
import type { Rng } from './prng.js';

const VERSION_RE = /\b\d+(?:\.\d+)+\b/g;
const IDENT_RE = /\b(?:[A-Za-z]+_[A-Za-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Za-z]+[0-9]+[A-Za-z0-9]*)\b/g;

function textOf(html: string): string {
  return splitHtml(html)
    .filter((p) => p.kind === 'text')
    .map((p) => p.value)
    .join(' ');
}

function frequent(text: string, re: RegExp, min: number): string[] {
  const counts = new Map<string, number>();
  for (const m of text.matchAll(re)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  return [...counts].filter(([, c]) => c >= min).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
}

function otherVersion(rng: Rng, v: string): string {
  const parts = v.split('.').map(Number);
  const i = rng.int(0, parts.length - 1);
  parts[i] = parts[i]! + rng.int(1, 9);
  return parts.join('.');
}

/**
 * The sibling page, or null when the page has neither versions nor repeated
 * identifiers. `contentChanges` counts the replacements outside the page's
 * own chrome (chromeRanges): a sibling whose only change is a version number
 * in the site header ("LibreOffice 7.4 Help") is the same document for a
 * reader, so a stream may require some (ComposeOptions.hardNegativeMinContentChanges).
 */
export function hardNegative(rng: Rng, html: string, donorHtml: string): { html: string; detail: string; contentChanges: number } | null {
  const text = textOf(html);
  const versions = frequent(text, VERSION_RE, 1);
  const idents = frequent(text, IDENT_RE, 2).slice(0, 6);
  const donorIdents = frequent(textOf(donorHtml), IDENT_RE, 1).filter((w) => !idents.includes(w));
  const map = new Map<string, string>();
  for (const v of versions) map.set(v, otherVersion(rng, v));
  idents.forEach((w, i) => map.set(w, donorIdents[i] ?? `${w}${rng.int(2, 9)}`));
  if (map.size === 0) return null;
  const re = new RegExp(`(?<![\\w.])(?:${[...map.keys()].sort((a, b) => b.length - a.length).map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?![\\w]|\\.\\d)`, 'g');
  const parts = splitHtml(html);
  const chrome = chromeRanges(html);
  let changed = 0;
  let contentChanges = 0;
  let offset = 0;
  for (const p of parts) {
    const at = offset;
    offset += p.value.length;
    if (p.kind !== 'text') continue;
    p.value = p.value.replace(re, (m) => {
      changed++;
      if (!insideAny(chrome, at)) contentChanges++;
      return map.get(m) ?? m;
    });
  }
  if (changed === 0) return null;
  const detail = [versions.length > 0 ? 'versions' : '', idents.length > 0 ? 'identifiers' : ''].filter(Boolean).join('+');
  return { html: joinParts(parts), detail, contentChanges };
}
