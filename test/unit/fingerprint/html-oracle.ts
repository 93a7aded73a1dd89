/**
 * The reference for the HTML scanner: parse5 (a maintained, spec-conformant
 * WHATWG parser) builds the DOM a browser would, and this walks it for the
 * text our scanner means to keep in boilerplate 'keep' mode: every text node
 * outside the elements whose content is never visible text, with one space at
 * every element boundary (the scanner makes every tag a word boundary;
 * comments are none, as they render as nothing). Both sides are compared after collapsing whitespace.
 */
import { parse } from 'parse5';
import { HtmlTextExtractor } from '../../../src/fingerprint/html-text.js';
import { TextBuffer } from '../../../src/fingerprint/text-buffer.js';

const DROPPED = new Set(
  'script style noscript textarea xmp iframe noembed noframes template svg math object applet canvas video audio map'.split(' '),
);

interface Node {
  nodeName: string;
  value?: string;
  childNodes?: Node[];
}

export function oracleText(html: string): string {
  const parts: string[] = [];
  const walk = (node: Node): void => {
    if (node.nodeName === '#text') {
      parts.push(node.value ?? '');
      return;
    }
    if (node.nodeName === '#comment' || node.nodeName === '#documentType') return;
    if (DROPPED.has(node.nodeName)) {
      parts.push(' ');
      return;
    }
    parts.push(' ');
    for (const child of node.childNodes ?? []) walk(child);
    parts.push(' ');
  };
  walk(parse(html, { scriptingEnabled: true }) as unknown as Node);
  return collapse(parts.join(''));
}

const keep = new HtmlTextExtractor('keep');
const buffer = new TextBuffer();

/** Our scanner's text in 'keep' mode, NULs dropped (the tree builder drops them; our tokenizer ignores them). */
export function scannerText(html: string, mode: 'keep' | 'remove' = 'keep'): string {
  const extractor = mode === 'keep' ? keep : new HtmlTextExtractor('remove');
  extractor.extract(html, buffer);
  return collapse(buffer.toString().replace(/\u0000/g, ''));
}

export function collapse(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
