/**
 * Boilerplate by shape: the HTML scanner (html-text.ts, boilerplate 'remove')
 * drops chrome that names itself (nav, footer, class="sidebar"...); chrome
 * with generated class names on plain <div>s (CSS modules, "opaque" themes,
 * anti-adblock markup) is only recognisable by its shape. The rule, after the
 * eval prototype eval/sweep/density-filter.ts (a crude form of the
 * boilerpipe / Readability text-density idea), measured in docs/quality.md:
 *
 * - A block is the text between two block tags, start or end (BLOCK in
 *   html-text.ts: div, p, li, td, h1..h6, br...), so the text directly inside
 *   an outer block is judged apart from the blocks nested in it: each piece
 *   of text belongs to the innermost block that holds it.
 * - Link-dense: more than maxLinkDensity of the block's visible characters
 *   (not whitespace, not controls or other noise) are link text (inside <a href>). Chrome.
 * - Letter-poor: fewer than minLetters letter units (a letter counts 1; a Han,
 *   kana or hangul character 4, as it carries about as much as a short word;
 *   digits and symbols 0). A run of letter-poor blocks is decided by the
 *   block after it: kept when that is prose (a heading or a label introduces
 *   the paragraph after it), chrome when it is link-dense or the page ends (a
 *   widget's title before its link list, a counter line, "Advertisement").
 * - Anything else is prose, and kept.
 * - The chrome-shaped blocks are removed (each run of them becomes one space)
 *   only if they hold at most maxDropShare of the page's letter units and the
 *   page has letters at all: a page that is mostly links or short lines (an
 *   index, a table of numbers) is left whole rather than emptied.
 *
 * The scanner counts letter units and visible units as it copies text (one
 * table load per character, SHAPE) and records, at every block boundary,
 * where the block ends, the running counts and the block's link units (four
 * ints in a typed array reused across pages; nothing is allocated per
 * block). apply() then decides every block in O(1) from the differences of
 * the counts, with no second reading of the text, and compacts the text in
 * place.
 */
import { CLASS, HAN, KANA, SPACE, WORD, isNoise } from './char-class.js';
import type { TextBuffer } from './text-buffer.js';

/** Thresholds of the rule. */
export interface BlockShape {
  /** A block with more than this share of its visible characters inside links is chrome. */
  readonly maxLinkDensity: number;
  /** A block with fewer letter units is letter-poor. */
  readonly minLetters: number;
  /** Nothing is removed from a page when the chrome-shaped blocks hold more than this share of its letter units. */
  readonly maxDropShare: number;
}

/**
 * The prototype's thresholds; on the tuning corpus none of 10, 15, 30 or 40 letters, link density
 * 1/3 or 2/3, or share 0.3 or 0.7 did better (docs/fingerprint.md, "Boilerplate by shape").
 */
export const DEFAULT_BLOCK_SHAPE: BlockShape = Object.freeze({ maxLinkDensity: 0.5, minLetters: 20, maxDropShare: 0.5 });

/**
 * Per UTF-16 code unit: bits 0..2 its weight in letter units (0, 1, or 4 for Han, kana and
 * hangul letters), bit 3 set when it is visible: not whitespace, not a C0 control, not noise
 * (isNoise: controls, bidi marks, zero-width characters render as nothing, so a run of them in
 * front of a page or a block is no block of its own and changes no block's link share). A letter is
 * \p{L} as the tokenizer's classes see it (combining marks are not letters; surrogates, so astral
 * letters, count as visible non-letters).
 */
export const SHAPE = new Uint8Array(65536);
const VISIBLE = 8;
(function buildShape(): void {
  const mark = /\p{M}/u;
  for (let c = 0; c < 65536; c++) {
    const cls = CLASS[c]!;
    let weight = 0;
    if (cls === HAN || cls === KANA || (cls === WORD && (c < 0x300 || !mark.test(String.fromCharCode(c))))) {
      const cjk = (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af);
      weight = cjk ? 4 : 1;
    }
    SHAPE[c] = weight | (cls === SPACE || c <= 0x20 || isNoise(c) ? 0 : VISIBLE);
  }
})();

function grow(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}

/** Block records: end offset (~end: not judged), letter units and visible units written up to it, link units in the block. */
const STRIDE = 4;

export class BlockShapeFilter {
  private blocks = new Int32Array(1024 * STRIDE);
  private blockCount = 0;
  private lastEnd = 0;
  /** Chrome-shaped text as [start, end) pairs, ascending, adjacent ones merged. */
  private spans = new Int32Array(256);
  private spanCount = 0;
  private readonly minLetters: number;
  private readonly maxLinkDensity: number;
  private readonly maxDropShare: number;

  constructor(shape: BlockShape = DEFAULT_BLOCK_SHAPE) {
    this.minLetters = shape.minLetters;
    this.maxLinkDensity = shape.maxLinkDensity;
    this.maxDropShare = shape.maxDropShare;
  }

  /** Starts a page. */
  reset(): void {
    this.blockCount = 0;
    this.lastEnd = 0;
    this.spanCount = 0;
    if (this.blocks.length > 65536 * STRIDE) this.blocks = new Int32Array(1024 * STRIDE);
    if (this.spans.length > 65536) this.spans = new Int32Array(256);
  }

  /**
   * A block tag at text offset `at`: the block before it ends there. `letters` and `visible`: the
   * letter units and visible units of all the text up to `at`; `link`: the visible units of link
   * text in this block. `judged` false: the block is kept as it is and ends no run (the title).
   */
  boundary(at: number, letters: number, visible: number, link: number, judged = true): void {
    if (at === this.lastEnd) return;
    const k = this.blockCount * STRIDE;
    if (k === this.blocks.length) this.blocks = grow(this.blocks);
    const blocks = this.blocks;
    blocks[k] = judged ? at : ~at;
    blocks[k + 1] = letters;
    blocks[k + 2] = visible;
    blocks[k + 3] = link;
    this.blockCount++;
    this.lastEnd = at;
  }

  /**
   * Decides every block of the page's text and removes the chrome-shaped ones from it. The last
   * block ends at the end of the text; `letters`, `visible`, `link` as for boundary().
   */
  apply(out: TextBuffer, letters: number, visible: number, link: number): void {
    this.boundary(out.length, letters, visible, link);
    const blocks = this.blocks;
    const end4 = this.blockCount * STRIDE;
    const minLetters = this.minLetters;
    const maxLinkDensity = this.maxLinkDensity;
    let start = 0;
    let lettersBefore = 0;
    let visibleBefore = 0;
    let dropped = 0;
    // The pending run of letter-poor blocks: [runStart, runEnd), runEnd -1 for none.
    let runStart = 0;
    let runEnd = -1;
    let runLetters = 0;
    for (let k = 0; k < end4; k += STRIDE) {
      const end = blocks[k]!;
      const blockLetters = blocks[k + 1]! - lettersBefore;
      const chars = blocks[k + 2]! - visibleBefore;
      lettersBefore = blocks[k + 1]!;
      visibleBefore = blocks[k + 2]!;
      const blockStart = start;
      start = end < 0 ? ~end : end;
      // Whitespace only, or the title: not judged, and no break in a run.
      if (end < 0 || chars === 0) continue;
      if (blocks[k + 3]! > maxLinkDensity * chars) {
        if (runEnd >= 0) {
          this.drop(runStart, runEnd);
          dropped += runLetters;
          runEnd = -1;
        }
        this.drop(blockStart, end);
        dropped += blockLetters;
      } else if (blockLetters < minLetters) {
        if (runEnd < 0) {
          runStart = blockStart;
          runLetters = 0;
        }
        runEnd = end;
        runLetters += blockLetters;
      } else {
        // Prose: the letter-poor run before it, if any, leads into it and stays.
        runEnd = -1;
      }
    }
    if (runEnd >= 0) {
      this.drop(runStart, runEnd);
      dropped += runLetters;
    }
    if (this.spanCount > 0 && letters > 0 && dropped <= this.maxDropShare * letters) this.compact(out);
  }

  private drop(start: number, end: number): void {
    const k = this.spanCount;
    if (k > 0 && this.spans[k - 1] === start) {
      this.spans[k - 1] = end;
      return;
    }
    if (k === this.spans.length) this.spans = grow(this.spans);
    this.spans[k] = start;
    this.spans[k + 1] = end;
    this.spanCount = k + 2;
  }

  /** Replaces every span by one space, in place, in one pass. */
  private compact(out: TextBuffer): void {
    const units = out.units;
    const spans = this.spans;
    const count = this.spanCount;
    let w = spans[0]!;
    let from = w;
    for (let k = 0; k <= count; k += 2) {
      const to = k < count ? spans[k]! : out.length;
      // Short stretches (a table cell between two dropped ones) are cheaper to copy by hand than
      // through copyWithin's call.
      if (to - from > 64) {
        units.copyWithin(w, from, to);
        w += to - from;
      } else {
        for (let i = from; i < to; i++) units[w++] = units[i]!;
      }
      if (k === count) break;
      units[w++] = 0x20;
      from = spans[k + 1]!;
    }
    out.length = w;
  }
}
