/**
 * Markup reformatted, content untouched: tag-name case, attribute order,
 * quote style, void-element slashes, whitespace and indentation between
 * tags. Whitespace inside <pre> and script/style bodies is left alone.
 */
import { joinParts, splitHtml, tagName, type Part } from './html-text.js';
import type { Rng } from './prng.js';

const ATTR_RE = /([^\s"'=<>\/]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?/g;
const BLOCK = new Set(['html', 'head', 'body', 'title', 'meta', 'link', 'script', 'style', 'div', 'p', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'thead', 'tbody', 'tr', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'section', 'article', 'nav', 'header', 'footer', 'aside', 'main', 'form', 'hr', 'br', 'blockquote']);
const VOID = new Set(['br', 'img', 'input', 'meta', 'link', 'hr', 'col', 'area', 'base', 'wbr', 'source']);

export type ReformatOp = 'tag-case' | 'attribute-order' | 'quotes' | 'void-slash' | 'whitespace';
export const REFORMAT_OPS: readonly ReformatOp[] = ['tag-case', 'attribute-order', 'quotes', 'void-slash', 'whitespace'];

function rewriteTag(tag: string, ops: ReadonlySet<ReformatOp>): string {
  const m = /^<(\/?)([A-Za-z][A-Za-z0-9:-]*)([\s\S]*?)(\/?)>$/.exec(tag);
  if (m === null) return tag;
  const [, slash, name, rest, selfClose] = m as unknown as [string, string, string, string, string];
  let attrs = [...rest.matchAll(ATTR_RE)].map((a) => ({ name: a[1]!, value: a[2] }));
  if (ops.has('attribute-order')) attrs = attrs.reverse();
  if (ops.has('quotes')) {
    attrs = attrs.map((a) => (a.value !== undefined && a.value.startsWith('"') && !a.value.includes("'") ? { ...a, value: `'${a.value.slice(1, -1)}'` } : a));
  }
  const outName = ops.has('tag-case') ? name.toUpperCase() : name;
  let close = selfClose;
  if (ops.has('void-slash') && VOID.has(name.toLowerCase())) close = selfClose === '/' ? '' : ' /';
  const body = attrs.map((a) => (a.value === undefined ? ` ${a.name}` : ` ${a.name}=${a.value}`)).join('');
  if (!ops.has('attribute-order') && !ops.has('quotes')) return `<${slash}${outName}${rest.replace(/\s*$/, '')}${close === ' /' ? ' /' : close}>`;
  return `<${slash}${outName}${body}${close}>`;
}

/** Applies 2-5 reformatting operations; the reader-visible text is unchanged. */
export function reformatMarkup(rng: Rng, html: string): { html: string; detail: string } {
  const chosen = rng.shuffle(REFORMAT_OPS).slice(0, rng.int(2, REFORMAT_OPS.length));
  const ops = new Set(chosen);
  const parts = splitHtml(html);
  const out: Part[] = [];
  let depth = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.kind === 'tag' && tagName(p.value) !== '') {
      const name = tagName(p.value);
      const closing = p.value.startsWith('</');
      if (!VOID.has(name)) depth = Math.max(0, depth + (closing ? -1 : 1));
      out.push({ ...p, value: rewriteTag(p.value, ops) });
      const next = parts[i + 1];
      if (ops.has('whitespace') && !p.pre && next !== undefined && next.kind === 'tag' && BLOCK.has(name) && BLOCK.has(tagName(next.value)) && rng.chance(0.3)) {
        out.push({ kind: 'text', value: `\n${' '.repeat(Math.min(depth, 12) * 2)}`, pre: false });
      }
    } else if (p.kind === 'text' && ops.has('whitespace') && !p.pre) {
      out.push({ ...p, value: /^\s+$/.test(p.value) ? `\n${' '.repeat(Math.min(depth, 12) * 2)}` : p.value.replace(/[ \t\r\n]+/g, (ws) => (ws.includes('\n') ? ' ' : rng.chance(0.05) ? '\n' : ws)) });
    } else {
      out.push(p);
    }
  }
  return { html: joinParts(out), detail: [...chosen].sort().join('+') };
}
