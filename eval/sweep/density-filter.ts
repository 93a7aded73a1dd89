/**
 * A prototype of main-content weighting: before the product's extractor runs,
 * blank the text of blocks that read as chrome by their shape rather than
 * their class names: link-dense blocks (menus, ad links, "related posts", tag
 * clouds) and blocks with too few letters to be prose (counters,
 * "Advertisement", timestamps). Weight 0 or 1 per block, the crudest form of
 * the boilerpipe / Readability text-density idea. The product's extractor now
 * has its own version of the rule (src/fingerprint/block-shape.ts: it keeps
 * letter-poor runs that lead into prose, and never judges the title), so in
 * the sweep this runs on top of it; reweightBlocks is still only here.
 */
import { decodeEntities, splitHtml, tagName, type Part } from '../corpus/html-text.js';

const BLOCK = new Set(['address', 'article', 'aside', 'blockquote', 'body', 'br', 'dd', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'td', 'th', 'tr', 'ul']);

export interface DensityOptions {
  /** Leave the page alone when blanking would remove more than this share of its letters. */
  readonly maxDropShare: number;
  /** Blocks with more than this share of their characters inside links are dropped. */
  readonly maxLinkDensity: number;
  /** Blocks with fewer "letter units" are dropped (a CJK character counts as `cjkWeight` letters). */
  readonly minLetters: number;
  readonly cjkWeight: number;
}

export const DEFAULT_DENSITY: DensityOptions = { maxDropShare: 0.5, maxLinkDensity: 0.5, minLetters: 20, cjkWeight: 4 };

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/gu;

function letterUnits(text: string, cjkWeight: number): number {
  const cjk = text.match(CJK)?.length ?? 0;
  const letters = text.match(/\p{L}/gu)?.length ?? 0;
  return letters - cjk + cjk * cjkWeight;
}

/** The page with the text of chrome-shaped blocks removed (markup kept). */
export function dropChromeShapedBlocks(html: string, options: DensityOptions = DEFAULT_DENSITY): string {
  return reweightBlocks(html, options, 0);
}

/**
 * The page with the text of prose-shaped blocks repeated `repeat` times, so
 * their features weigh that much more than chrome-shaped ones (tf weighting);
 * repeat 0 means: blank the chrome-shaped blocks instead.
 */
export function reweightBlocks(html: string, options: DensityOptions, repeat: number): string {
  const parts = splitHtml(html);
  let link = 0;
  let textChars = 0;
  let linkChars = 0;
  let texts: number[] = [];
  let totalLetters = 0;
  let droppedLetters = 0;
  const drop: number[] = [];
  const prose: number[] = [];
  const flush = (): void => {
    const text = texts.map((i) => decodeEntities(parts[i]!.value)).join(' ');
    const letters = letterUnits(text, options.cjkWeight);
    const keep = textChars > 0 && linkChars / textChars <= options.maxLinkDensity && letters >= options.minLetters;
    totalLetters += letters;
    if (!keep) {
      droppedLetters += letters;
      drop.push(...texts);
    } else {
      prose.push(...texts);
    }
    texts = [];
    textChars = 0;
    linkChars = 0;
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
  if (repeat > 0) {
    for (const i of prose) parts[i] = { ...parts[i]!, value: Array.from({ length: repeat }, () => parts[i]!.value).join(' ') };
  } else {
    if (droppedLetters > options.maxDropShare * totalLetters) return html;
    for (const i of drop) parts[i] = { ...parts[i]!, value: ' ' };
  }
  return parts.map((p) => p.value).join('');
}
