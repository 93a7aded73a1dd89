/**
 * A few words edited (1-3): a typo fixed, a word replaced, dropped or added,
 * in the prose of the page. In CJK text a "word" is one or two characters.
 */
import { CJK_CHAR_RE, chromeRanges, insideAny, joinParts, splitHtml, tagName, type Part } from './html-text.js';
import type { Rng } from './prng.js';

const WORD_RE = /\p{L}{3,}/gu;
const CJK_RUN_RE = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{4,}/gu;

/** Text parts of the body that read as prose (not head, code, script, or the document's own chrome). */
function proseParts(parts: readonly Part[], chrome: readonly [number, number][]): number[] {
  const out: number[] = [];
  let inBody = false;
  let code = 0;
  let offset = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    const at = offset;
    offset += p.value.length;
    if (p.kind === 'tag') {
      const name = tagName(p.value);
      if (name === 'body') inBody = !p.value.startsWith('</');
      if (name === 'code' || name === 'kbd' || name === 'tt' || name === 'samp') code += p.value.startsWith('</') ? -1 : 1;
      continue;
    }
    if (!inBody || code > 0 || p.kind !== 'text' || p.pre || insideAny(chrome, at)) continue;
    const text = p.value;
    if (text.trim().length >= 24 && (text.match(WORD_RE)?.length ?? 0) + (text.match(CJK_RUN_RE)?.length ?? 0) >= 3) out.push(i);
  }
  return out;
}

function vocabulary(parts: readonly Part[], indices: readonly number[], cjk: boolean): string[] {
  const seen = new Set<string>();
  for (const i of indices) {
    const text = parts[i]!.value;
    if (cjk) for (const m of text.matchAll(CJK_RUN_RE)) for (const c of m[0]) seen.add(c);
    else for (const m of text.matchAll(WORD_RE)) seen.add(m[0].toLowerCase());
  }
  return [...seen].sort();
}

function editOnce(rng: Rng, text: string, cjk: boolean, vocab: readonly string[]): { text: string; op: string } | null {
  if (cjk) {
    const runs = [...text.matchAll(CJK_RUN_RE)];
    if (runs.length === 0 || vocab.length < 10) return null;
    const run = rng.pick(runs);
    const at = run.index! + rng.int(0, run[0].length - 2);
    const width = rng.int(1, 2);
    const op = rng.weighted([['replace', 3], ['delete', 1], ['insert', 1]] as const);
    const fresh = Array.from({ length: width }, () => rng.pick(vocab)).join('');
    if (op === 'replace') return fresh === text.slice(at, at + width) ? null : { text: text.slice(0, at) + fresh + text.slice(at + width), op };
    if (op === 'delete') return { text: text.slice(0, at) + text.slice(at + width), op };
    return { text: text.slice(0, at) + fresh + text.slice(at), op };
  }
  const words = [...text.matchAll(WORD_RE)];
  if (words.length === 0 || vocab.length < 10) return null;
  const w = rng.pick(words);
  const start = w.index!;
  const end = start + w[0].length;
  const op = rng.weighted([['replace', 3], ['delete', 1], ['insert', 1], ['typo', 1]] as const);
  if (op === 'replace') {
    const fresh = rng.pick(vocab);
    return fresh.toLowerCase() === w[0].toLowerCase() ? null : { text: text.slice(0, start) + fresh + text.slice(end), op };
  }
  if (op === 'delete') return { text: text.slice(0, start) + text.slice(end).replace(/^[ \t]/, ''), op };
  if (op === 'insert') return { text: `${text.slice(0, start)}${rng.pick(vocab)} ${text.slice(start)}`, op };
  const i = rng.int(0, w[0].length - 2);
  const chars = [...w[0]];
  const t = chars[i]!;
  chars[i] = chars[i + 1]!;
  chars[i + 1] = t;
  const swapped = chars.join('');
  return swapped === w[0] ? null : { text: text.slice(0, start) + swapped + text.slice(end), op };
}

/** Edits 1-3 words of the prose; null when the page has no prose to edit. */
export function editWords(rng: Rng, html: string): { html: string; detail: string } | null {
  const parts = splitHtml(html);
  const candidates = proseParts(parts, chromeRanges(html));
  if (candidates.length === 0) return null;
  const cjk = candidates.filter((i) => CJK_CHAR_RE.test(parts[i]!.value)).length > candidates.length / 2;
  const usable = cjk ? candidates.filter((i) => CJK_CHAR_RE.test(parts[i]!.value)) : candidates;
  const vocab = vocabulary(parts, usable, cjk);
  const edits = rng.int(1, 3);
  const ops: string[] = [];
  for (let tries = 0; ops.length < edits && tries < 20; tries++) {
    const i = rng.pick(usable);
    const done = editOnce(rng, parts[i]!.value, cjk, vocab);
    if (done === null) continue;
    parts[i] = { ...parts[i]!, value: done.text };
    ops.push(done.op);
  }
  if (ops.length === 0) return null;
  return { html: joinParts(parts), detail: `${ops.length}:${ops.join('+')}` };
}
