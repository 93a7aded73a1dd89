/**
 * Just enough HTML for the corpus generator: a lossless split into tags,
 * text, comments and raw script/style bodies (join the parts and you get the
 * input back), and the reader-visible text. Deliberately independent of the
 * product's extractor, so the labels do not lean on the thing they measure.
 */

export type PartKind = 'tag' | 'text' | 'comment' | 'raw';

export interface Part {
  kind: PartKind;
  value: string;
  /** Inside <pre>/<textarea>, where whitespace is content. */
  pre: boolean;
}

const TOKEN_RE = /<!--[\s\S]*?-->|<(script|style)\b[^>]*>([\s\S]*?)<\/\1\s*>|<\/?[A-Za-z][^<>]*>|<![^<>]*>|<\?[^<>]*>/gi;

export function splitHtml(html: string): Part[] {
  const parts: Part[] = [];
  let pre = 0;
  let last = 0;
  TOKEN_RE.lastIndex = 0;
  for (let m = TOKEN_RE.exec(html); m !== null; m = TOKEN_RE.exec(html)) {
    if (m.index > last) parts.push({ kind: 'text', value: html.slice(last, m.index), pre: pre > 0 });
    const token = m[0];
    if (token.startsWith('<!--')) {
      parts.push({ kind: 'comment', value: token, pre: pre > 0 });
    } else if (m[1] !== undefined) {
      const body = m[2]!;
      const open = token.slice(0, token.indexOf('>') + 1);
      const close = token.slice(open.length + body.length);
      parts.push({ kind: 'tag', value: open, pre: pre > 0 });
      if (body.length > 0) parts.push({ kind: 'raw', value: body, pre: pre > 0 });
      parts.push({ kind: 'tag', value: close, pre: pre > 0 });
    } else {
      const name = tagName(token);
      if (name === 'pre' || name === 'textarea') pre = Math.max(0, pre + (token.startsWith('</') ? -1 : 1));
      parts.push({ kind: 'tag', value: token, pre: pre > 0 || name === 'pre' });
    }
    last = m.index + token.length;
  }
  if (last < html.length) parts.push({ kind: 'text', value: html.slice(last), pre: pre > 0 });
  return parts;
}

export function joinParts(parts: readonly Part[]): string {
  let s = '';
  for (const p of parts) s += p.value;
  return s;
}

/** Lower-case tag name of a tag token ('' for doctype and the like). */
export function tagName(tag: string): string {
  const m = /^<\/?([A-Za-z][A-Za-z0-9:-]*)/.exec(tag);
  return m === null ? '' : m[1]!.toLowerCase();
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', copy: '©', mdash: '—', ndash: '–', hellip: '…', rsquo: '’', lsquo: '‘', rdquo: '”', ldquo: '“' };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (all, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
    }
    return ENTITIES[body.toLowerCase()] ?? all;
  });
}

/** What a reader sees: text outside tags, comments, script and style; whitespace collapsed. */
export function visibleText(html: string): string {
  const parts = splitHtml(html);
  let inHead = false;
  let inTitle = false;
  const out: string[] = [];
  for (const p of parts) {
    if (p.kind === 'tag') {
      const name = tagName(p.value);
      const closing = p.value.startsWith('</');
      if (name === 'head') inHead = !closing;
      if (name === 'title') inTitle = !closing;
      if (name !== '' && !closing && /^(p|div|li|h[1-6]|br|tr|td|th|dt|dd|pre|section|article|table)$/.test(name)) out.push(' ');
    } else if (p.kind === 'text' && (!inHead || inTitle)) {
      out.push(decodeEntities(p.value));
    }
  }
  return out.join('').replace(/\s+/g, ' ').trim();
}

export function titleOf(html: string): string {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  return m === null ? '' : decodeEntities(m[1]!).replace(/\s+/g, ' ').trim();
}

/** Han ideographs, kana and hangul: written without spaces between words. */
export const CJK_CHAR_RE = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;

/** Tokens for overlap measures: a word of a spaced script, or one CJK character. */
export function textTokens(text: string): string[] {
  return text.toLowerCase().match(/[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[\p{L}\p{N}_]+/gu) ?? [];
}

const STOP: Record<string, ReadonlySet<string>> = {
  en: new Set(['the', 'and', 'of', 'to', 'is', 'in', 'that', 'for', 'with', 'this', 'are', 'be', 'by', 'it']),
  de: new Set(['der', 'die', 'und', 'das', 'ist', 'nicht', 'mit', 'den', 'ein', 'eine', 'zu', 'sie', 'auf', 'wird']),
  fr: new Set(['le', 'la', 'les', 'des', 'et', 'est', 'une', 'du', 'pour', 'dans', 'que', 'qui', 'pas', 'sur']),
  es: new Set(['el', 'la', 'los', 'las', 'de', 'del', 'y', 'que', 'en', 'para', 'una', 'por', 'con', 'se']),
  it: new Set(['il', 'lo', 'la', 'gli', 'le', 'di', 'che', 'per', 'una', 'del', 'della', 'con', 'non', 'sono']),
  'pt-br': new Set(['o', 'os', 'as', 'de', 'do', 'da', 'dos', 'das', 'que', 'para', 'uma', 'com', 'não', 'em']),
  ru: new Set(['и', 'в', 'на', 'с', 'по', 'для', 'не', 'что', 'это', 'как', 'из', 'или', 'от', 'к']),
};

/**
 * Is the page's visible text mostly in `language`? CJK languages and Korean
 * by script share, spaced ones by stop words against English. Rejects
 * untranslated fallbacks in translated doc sets.
 */
export function looksLikeLanguage(text: string, language: string): boolean {
  const tokens = textTokens(text);
  if (tokens.length < 40) return false;
  if (language === 'zh-cn' || language === 'zh-tw' || language === 'ja') {
    let cjk = 0;
    let kana = 0;
    for (const t of tokens) {
      if (t.length === 1 && CJK_CHAR_RE.test(t)) cjk++;
      if (/[\u3040-\u30ff]/.test(t)) kana++;
    }
    if (cjk / tokens.length < 0.5) return false;
    return language === 'ja' ? kana / cjk > 0.1 : kana / cjk < 0.02;
  }
  if (language === 'ko') {
    // Hangul syllables count one token each (textTokens), like CJK characters.
    let hangul = 0;
    for (const t of tokens) if (/[\uac00-\ud7af]/.test(t)) hangul++;
    return hangul / tokens.length >= 0.5;
  }
  const count = (lang: string): number => {
    const set = STOP[lang]!;
    let n = 0;
    for (const t of tokens) if (set.has(t)) n++;
    return n;
  };
  if (language === 'en') return count('en') / tokens.length > 0.04;
  return count(language) > 1.5 * count('en') && count(language) / tokens.length > 0.03;
}

const CHROME_TAGS = new Set(['nav', 'header', 'footer', 'aside', 'form', 'menu']);
const CHROME_NAME_RE =
  /(?:^|[^a-z])(?:nav|navbar|navheader|navfooter|navigation|docnav|menu|sidebar|sphinxsidebar|footer|header|quickview|toc|breadcrumbs?|banner|related|langs?|toplang|bottomlang|copyright|ad|ads|widget|search)(?:[^a-z]|$)/i;
const VOID_TAGS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

/**
 * Where a document's own chrome is (navigation, headers, footers, sidebars,
 * language bars, tables of contents), as [start, end) offsets. Edits that
 * claim to change the content (word edits, substantive edits) stay out of
 * these ranges, so a label never says "content changed" for a footer edit.
 * Approximate by design (tags, class and id names); the generator's own rule,
 * not the product's.
 */
export function chromeRanges(html: string): [number, number][] {
  const parts = splitHtml(html);
  const stack: { name: string; start: number; chrome: boolean }[] = [];
  const out: [number, number][] = [];
  let offset = 0;
  for (const p of parts) {
    const at = offset;
    offset += p.value.length;
    if (p.kind !== 'tag') continue;
    const name = tagName(p.value);
    if (name === '' || VOID_TAGS.has(name) || p.value.endsWith('/>')) continue;
    if (p.value.startsWith('</')) {
      let i = stack.length - 1;
      while (i >= 0 && stack[i]!.name !== name) i--;
      if (i < 0) continue;
      while (stack.length > i) {
        const e = stack.pop()!;
        if (e.chrome) out.push([e.start, offset]);
      }
      continue;
    }
    if ((name === 'p' || name === 'li') && stack.length > 0 && stack[stack.length - 1]!.name === name) {
      const e = stack.pop()!;
      if (e.chrome) out.push([e.start, at]);
    }
    const attrs = /\s(?:class|id)\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi;
    let named = false;
    for (let m = attrs.exec(p.value); m !== null; m = attrs.exec(p.value)) if (CHROME_NAME_RE.test(m[2] ?? m[3] ?? m[4] ?? '')) named = true;
    stack.push({ name, start: at, chrome: CHROME_TAGS.has(name) || named });
  }
  for (const e of stack) if (e.chrome) out.push([e.start, html.length]);
  return out.sort((a, b) => a[0] - b[0]);
}

export function insideAny(ranges: readonly (readonly [number, number])[], at: number): boolean {
  for (const [s, e] of ranges) if (at >= s && at < e) return true;
  return false;
}
