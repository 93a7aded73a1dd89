/**
 * A reformatter for property tests: parses a page with parse5 and writes it
 * back with markup-only changes that leave the text a browser renders
 * unchanged (void elements with or without '/>', character references for
 * non-ASCII text, comments dropped, attribute order and quoting, tag and
 * attribute case, CRLF and other whitespace, wrapper divs around blocks,
 * empty comments inside text, as server-side renderers write them).
 */
import { parse } from 'parse5';
import { seeded } from './fixtures.js';

export interface Reformat {
  voidSlash: boolean;
  numericRefs: 'none' | 'decimal' | 'hex';
  dropComments: boolean;
  attributeOrder: 'same' | 'reversed' | 'shuffled';
  /** minimal: unquoted wherever the tokenizer allows (a value may hold quotes, as in alt=Don't). */
  quoting: 'double' | 'single' | 'minimal';
  upperCase: boolean;
  whitespace: 'same' | 'crlf' | 'random';
  wrapperDivs: boolean;
  commentsInText: boolean;
  seed: number;
}

export const IDENTITY: Reformat = {
  voidSlash: false,
  numericRefs: 'none',
  dropComments: false,
  attributeOrder: 'same',
  quoting: 'double',
  upperCase: false,
  whitespace: 'same',
  wrapperDivs: false,
  commentsInText: false,
  seed: 1,
};

interface Node {
  nodeName: string;
  tagName?: string;
  namespaceURI?: string;
  attrs?: { name: string; value: string }[];
  childNodes?: Node[];
  content?: Node;
  value?: string;
  data?: string;
  name?: string;
}

const HTML_NS = 'http://www.w3.org/1999/xhtml';
const VOID = new Set('area base br col embed hr img input link meta param source track wbr'.split(' '));
const RAW = new Set('script style xmp iframe noembed noframes noscript plaintext'.split(' '));

const PRESERVE = new Set(['pre', 'textarea', 'listing']);
const WRAPPABLE = new Set('p div ul ol dl table pre h1 h2 h3 h4 h5 h6 section blockquote figure'.split(' '));
const FLOW_PARENTS = new Set('body div section article main blockquote'.split(' '));

export function reformat(html: string, r: Reformat): string {
  const rnd = seeded(r.seed);
  const out: string[] = [];

  const name = (s: string, html: boolean): string => (r.upperCase && html ? s.toUpperCase() : s);
  const attrText = (value: string): string => {
    const v = value.replace(/&/g, '&amp;');
    if (r.quoting === 'minimal' && v.length > 0 && !/[\s>]/.test(v) && !/^["']/.test(v)) return '=' + v;
    if (r.quoting === 'single') return `='${v.replace(/'/g, '&#39;')}'`;
    return `="${v.replace(/"/g, '&quot;')}"`;
  };
  const whitespace = (s: string): string => {
    if (r.whitespace === 'same') return s;
    if (r.whitespace === 'crlf') return s.replace(/\r?\n/g, '\r\n');
    return s.replace(/[ \t\n\r\f]+/g, () => [' ', '\n', '\r\n', '  \t', '\n\n   '][Math.floor(rnd() * 5)]!);
  };
  const text = (s: string, preserve: boolean, rcdata: boolean): string => {
    if (!r.commentsInText || rcdata) return escapeText(s, preserve);
    const pieces: string[] = [];
    let from = 0;
    for (let i = 1; i < s.length; i++) {
      if (rnd() < 0.03 && !(s.charCodeAt(i) >= 0xdc00 && s.charCodeAt(i) <= 0xdfff)) {
        pieces.push(escapeText(s.slice(from, i), preserve));
        from = i;
      }
    }
    pieces.push(escapeText(s.slice(from), preserve));
    return pieces.join('<!-- -->');
  };
  const escapeText = (s: string, preserve: boolean): string => {
    let t = s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\u00a0/g, '&nbsp;');
    if (r.numericRefs !== 'none') {
      t = t.replace(/[^\u0000-\u007f]/gu, (ch) => (r.numericRefs === 'hex' ? `&#x${ch.codePointAt(0)!.toString(16)};` : `&#${ch.codePointAt(0)};`));
    }
    return preserve ? t : whitespace(t);
  };

  const element = (node: Node, preserve: boolean): void => {
    const isHtml = node.namespaceURI === HTML_NS;
    const tag = node.tagName!;
    let attrs = [...(node.attrs ?? [])];
    if (r.attributeOrder === 'reversed') attrs.reverse();
    else if (r.attributeOrder === 'shuffled') attrs = attrs.map((a) => [rnd(), a] as const).sort((x, y) => x[0] - y[0]).map(([, a]) => a);
    out.push('<' + name(tag, isHtml));
    for (const a of attrs) out.push(' ' + name(a.name, isHtml) + attrText(a.value));
    if (isHtml && VOID.has(tag)) {
      out.push(r.voidSlash ? ' />' : '>');
      return;
    }
    out.push('>');
    const kids = tag === 'template' && node.content ? node.content.childNodes ?? [] : node.childNodes ?? [];
    const childRaw = isHtml && RAW.has(tag);
    const childPreserve = preserve || (isHtml && PRESERVE.has(tag));
    const wrap = r.wrapperDivs && isHtml && FLOW_PARENTS.has(tag);
    for (const child of kids) {
      const wrapped = wrap && child.namespaceURI === HTML_NS && WRAPPABLE.has(child.tagName ?? '') && rnd() < 0.5;
      if (wrapped) out.push(name('<div>', true));
      visit(child, childPreserve, childRaw, isHtml && (tag === 'title' || tag === 'textarea'));
      if (wrapped) out.push(name('</div>', true));
    }
    out.push('</' + name(tag, isHtml) + '>');

  };

  const visit = (node: Node, preserve: boolean, raw: boolean, rcdata = false): void => {
    switch (node.nodeName) {
      case '#document':
        for (const c of node.childNodes ?? []) visit(c, false, false);
        return;
      case '#documentType':
        out.push(r.upperCase ? '<!DOCTYPE html>' : '<!doctype html>');
        return;
      case '#comment':
        if (!r.dropComments) out.push(`<!--${node.data}-->`);
        return;
      case '#text':
        out.push(raw ? node.value! : text(node.value!, preserve, rcdata));
        return;
      default:
        element(node, preserve);
    }
  };
  visit(parse(html) as unknown as Node, false, false);
  return out.join('');
}
