/**
 * Substantive edits: the reader gets something else (paragraphs rewritten,
 * a section added, a section removed). These are NOT near-duplicates and are
 * labelled as negatives. The new text comes from another page of the same
 * doc set, so language and template stay the same. The share of visible text
 * that changed is recorded, so the report can show how small a real change
 * simhash still confuses with a near-duplicate.
 */
import { chromeRanges, insideAny, visibleText } from './html-text.js';
import { escapeHtml } from './markup.js';
import type { Rng } from './prng.js';

export type SubstantiveEdit = 'paragraphs-rewritten' | 'section-added' | 'section-removed';

interface Block {
  readonly start: number;
  readonly end: number;
  readonly open: string;
  readonly inner: string;
  readonly close: string;
  readonly textLength: number;
}

/** A paragraph: <p>, or DocBook/Publican's <div class="para"> without nested divs. */
const P_RE = /(<p\b[^>]*>)([\s\S]*?)(<\/p>)|(<div class="para"[^>]*>)((?:(?!<div)[\s\S])*?)(<\/div>)/gi;

export interface ParagraphMarkup {
  readonly start: number;
  readonly end: number;
  readonly open: string;
  readonly inner: string;
  readonly close: string;
}

/** Every paragraph (P_RE) from `from` on, outside the document's own chrome, in order. */
export function contentParagraphs(html: string, from = 0): ParagraphMarkup[] {
  const chrome = chromeRanges(html);
  const out: ParagraphMarkup[] = [];
  P_RE.lastIndex = from;
  for (let m = P_RE.exec(html); m !== null; m = P_RE.exec(html)) {
    if (insideAny(chrome, m.index)) continue;
    const [open, inner, close] = m[1] !== undefined ? [m[1], m[2]!, m[3]!] : [m[4]!, m[5]!, m[6]!];
    out.push({ start: m.index, end: m.index + m[0].length, open, inner, close });
  }
  return out;
}

/** Paragraphs of the document's content (not of its navigation, header, footer or sidebar) with 40 characters of text or more. */
export function paragraphs(html: string): Block[] {
  const body = /<body\b[^>]*>/i.exec(html);
  const out: Block[] = [];
  for (const p of contentParagraphs(html, body === null ? 0 : body.index)) {
    const textLength = visibleText(p.inner).length;
    if (textLength >= 40) out.push({ ...p, textLength });
  }
  return out;
}

/** Consecutive blocks from a random start until `target` characters of text are covered. */
function run(rng: Rng, blocks: readonly Block[], target: number): Block[] {
  const start = rng.int(0, blocks.length - 1);
  const out: Block[] = [];
  let covered = 0;
  for (let i = 0; i < blocks.length && covered < target; i++) {
    const b = blocks[(start + i) % blocks.length]!;
    out.push(b);
    covered += b.textLength;
  }
  return out.sort((a, b) => a.start - b.start);
}

export interface SubstantiveResult {
  readonly html: string;
  readonly edit: SubstantiveEdit;
  readonly changedFraction: number;
}

/**
 * Applies one substantive edit changing about `fraction` of the text, with
 * paragraphs of `donorHtml`; null when either page has too few paragraphs.
 */
export function substantiveEdit(rng: Rng, html: string, donorHtml: string, edit: SubstantiveEdit, fraction: number): SubstantiveResult | null {
  const blocks = paragraphs(html);
  const donorAll = paragraphs(donorHtml);
  const prose = donorAll.filter((b) => b.textLength >= 80);
  const donor = prose.length >= 3 ? prose : donorAll;
  const total = visibleText(html).length;
  if (blocks.length < 3 || donor.length < 3 || total < 400) return null;
  const target = fraction * total;
  if (edit === 'section-removed' || edit === 'paragraphs-rewritten') {
    const chosen = run(rng, blocks, target);
    const donorStart = rng.int(0, donor.length - 1);
    let out = '';
    let last = 0;
    let changed = 0;
    chosen.forEach((b, i) => {
      out += html.slice(last, b.start);
      if (edit === 'paragraphs-rewritten') out += `${b.open}${donor[(donorStart + i) % donor.length]!.inner}${b.close}`;
      last = b.end;
      changed += b.textLength;
    });
    out += html.slice(last);
    return { html: out, edit, changedFraction: Math.min(1, changed / total) };
  }
  const inserted = run(rng, donor, target);
  const heading = visibleText(inserted[0]!.inner).split(/[.。!?！？]/)[0]!.slice(0, 60);
  const section = `<div class="section"><h2>${escapeHtml(heading)}</h2>${inserted.map((b) => b.open + b.inner + b.close).join('\n')}</div>`;
  const at = rng.pick(blocks).end;
  const added = inserted.reduce((n, b) => n + b.textLength, 0);
  return { html: html.slice(0, at) + section + html.slice(at), edit, changedFraction: Math.min(1, added / total) };
}
