/**
 * A prototype of main-content weighting (not in the product): before the
 * product's extractor runs, blank the text of blocks that read as chrome by
 * their shape rather than their class names: link-dense blocks (menus, ad
 * links, "related posts", tag clouds) and blocks with too few letters to be
 * prose (counters, "Advertisement", timestamps). Weight 0 or 1 per block, the
 * crudest form of the boilerpipe / Readability text-density idea; the sweep
 * measures whether it is worth building properly in src/fingerprint/.
 */
import { decodeEntities, splitHtml, tagName, type Part } from '../corpus/html-text.js';

const BLOCK = new Set(['address', 'article', 'aside', 'blockquote', 'body', 'br', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'td', 'th', 'tr', 'ul']);

export interface DensityOptions {
  /** Blocks with more than this share of their characters inside links are dropped. */
  readonly maxLinkDensity: number;
  /** Blocks with fewer "letter units" are dropped (a CJK character counts as `cjkWeight` letters). */
  readonly minLetters: number;
  readonly cjkWeight: number;
}

export const DEFAULT_DENSITY: DensityOptions = { maxLinkDensity: 0.5, minLetters: 30, cjkWeight: 4 };

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/gu;

function letterUnits(text: string, cjkWeight: number): number {
  const cjk = text.match(CJK)?.length ?? 0;
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  return letters - cjk + cjk * cjkWeight;
}

/** The page with the text of chrome-shaped blocks removed (markup kept). */
export function dropChromeShapedBlocks(html: string, options: DensityOptions = DEFAULT_DENSITY): string {
  const parts = splitHtml(html);
  let link = 0;
  let blockStart = 0;
  let textChars = 0;
  let linkChars = 0;
  let texts: number[] = [];
  const flush = (): void => {
    const text = texts.map((i) => decodeEntities(parts[i]!.value)).join(' ');
    const keep = textChars > 0 && linkChars / textChars <= options.maxLinkDensity && letterUnits(text, options.cjkWeight) >= options.minLetters;
    if (!keep) for (const i of texts) parts[i] = { ...parts[i]!, value: ' ' };
    texts = [];
    textChars = 0;
    linkChars = 0;
    blockStart++;
  };
  parts.forEach((p: Part, i) => {
    if (p.kind === 'tag') {
      const name = tagName(p.value);
      if (name === 'a') link = Math.max(0, link + (p.value.startsWith('</') ? -1 : 1));
      if (BLOCK.has(name)) flush();
      return;
    }
    if (p.kind !== 'text') return;
    const n = p.value.replace(/\s+/g, '').length;
    if (n === 0) return;
    texts.push(i);
    textChars += n;
    if (link > 0) linkChars += n;
  });
  flush();
  return parts.map((p) => p.value).join('');
}
