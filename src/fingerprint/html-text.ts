/**
 * Streaming HTML -> content text, a hand-written scanner over the page's code
 * units (copied once into a reused typed array; the string's indexOf finds the
 * ends of quoted values, comments and raw text): one left-to-right pass, no
 * DOM, no recursion, O(n) on any input. Text is
 * written as UTF-16 code units into a reusable TextBuffer (no string is built
 * per text node), which the tokenizer reads directly.
 *
 * What it keeps: text nodes and <title>, with every tag acting as a word
 * boundary (one space), character references decoded (html-entities.ts).
 *
 * What it always drops: comments, doctype, processing instructions and CDATA;
 * <script> <style> <noscript> <textarea> <xmp> <iframe> <noembed> <noframes>
 * (raw text, scanned to the matching end tag case-insensitively); the
 * contents of <template> <svg> <math> <object> <applet> <canvas> <video>
 * <audio> <map>.
 *
 * <html> <body> <main> <article> are never chrome, whatever their class or id.
 *
 * With boilerplate 'remove' it also drops whole elements that are page chrome
 * rather than content (paper section 4: site templates make hot prefixes; two
 * articles of one site must not look alike because they share a menu):
 * <nav> <header> <footer> <aside> <form> <button> <select> <dialog> <menu>
 * <time> <address> <fieldset> <label> <datalist> <option>; any element whose
 * role is navigation, banner, contentinfo, complementary, search, menu,
 * menubar, toolbar, dialog or alertdialog; any hidden element (hidden,
 * aria-hidden="true", display:none / visibility:hidden); any element whose
 * class or id names chrome (see CHROME_SUBSTR and CHROME_WORD: nav, menu,
 * sidebar, footer, header, breadcrumb, ad/ads/advert, sponsor, banner, promo,
 * widget, counter, views, date/time/timestamp/byline, share/social,
 * cookie/consent, newsletter, comments, related/popular/trending, pagination,
 * toolbar, skip links, tags, meta, toc...).
 *
 * A book's sidebar is not a site's: DocBook and docutils write their `sidebar`
 * element (a boxed aside of the text: "BACK TO BASICS", "IN PRACTICE") as an
 * element whose class is `sidebar` alone, inside the book's division (a
 * <section>, or an element of class section, chapter, preface, appendix or
 * sect1..sect5). Such a box is content, <aside> or not; a `sidebar` anywhere
 * else, or with other classes beside it ("widget sidebar-widget"), or named by
 * its id, is chrome.
 *
 * Chrome that does not name itself (generated class names on plain <div>s:
 * CSS modules, "opaque" themes, anti-adblock markup) is then judged by its
 * shape, also in 'remove' mode only (block-shape.ts): link-dense blocks, and
 * runs of letter-poor blocks that lead into no prose, unless that would take
 * more than half of the page's letters. While copying text the scanner counts
 * its letter units and visible characters, and at every BLOCK start or end
 * tag it records where the block ends, the counts so far and the block's link
 * text (inside <a href>); the decisions and the removal follow after the scan.
 *
 * Nesting is tracked with a flat stack of open element names (30-bit name
 * hashes in an Int32Array). An end tag closes the nearest open element of that
 * name and everything opened inside it; an end tag with no open element of
 * that name is ignored, checked in O(1) with per-name open counts, so stray
 * end tags cannot make the scan quadratic, and each element is popped at most
 * once. <li> <dt> <dd> <option> <tr> <td> <th> close an open sibling of their
 * kind and block elements close an open <p>, as browsers do, so unclosed list
 * items do not keep a skipped region open. `<x/>` closes itself.
 */
import * as blockShape from './block-shape.js';
import { BlockShapeFilter, type BlockShape } from './block-shape.js';
import { decodeEntity } from './html-entities.js';
import { IntTable } from './int-table.js';
import { TextBuffer } from './text-buffer.js';

/** The shape table as a constant of this module, which V8 folds into copyText's loop (tokenizer.ts says why). */
const { SHAPE } = blockShape;

export type BoilerplateMode = 'remove' | 'keep';

const F_VOID = 1;
const F_RAW = 2;
const F_SKIP = 4;
const F_CHROME = 8;
const F_CLOSES_P = 16;
const F_TITLE = 32;
const F_PLAINTEXT = 64;
const F_P = 128;
/** Phrasing elements: their class/id is not checked for chrome (dates and counters inside them are normalised by the tokenizer). */
const F_INLINE = 2048;
/**
 * Page containers: their class, id and role describe the page, not a part of it
 * (WordPress writes <body class="single has-sidebar ...">), so they are never chrome.
 */
const F_CONTAINER = 4096;
/** Block boundaries for the shape rule (block-shape.ts): the prototype's block elements. */
const F_BLOCK = 8192;
/** On a stack entry only: the element is a book's division (a section, chapter...), where a sidebar box is content. */
const F_DIVISION = 16384;
/** Sibling group in bits 8..10 (li, dt/dd, option, tr, td/th). */
const GROUP_SHIFT = 8;
const GROUP_MASK = 7;

/** 30-bit hash of a lower-case ASCII name (FNV-1a), a Smi on every V8 build. */
function nameHash(s: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

/**
 * Bits 16..23 of a known name's flags: its index (1..255), under which the scanner counts its open
 * elements in an array; other names (0) are counted in a hash table.
 */
const INDEX_SHIFT = 16;
const INDEX_MASK = 0xff;
const TAG_FLAGS = new IntTable(256);
const indexed = new Set<string>();
function flag(names: string, f: number): void {
  for (const name of names.split(' ')) {
    if (!indexed.has(name)) {
      indexed.add(name);
      TAG_FLAGS.add(nameHash(name), indexed.size << INDEX_SHIFT);
    }
    TAG_FLAGS.add(nameHash(name), f);
  }
}
flag('area base br col embed hr img input keygen link meta param source track wbr basefont bgsound frame image isindex', F_VOID);
flag('script style noscript textarea xmp iframe noembed noframes', F_RAW);
flag('template svg math object applet canvas video audio map', F_SKIP);
flag('nav header footer aside form button select dialog menu time address datalist fieldset label option optgroup', F_CHROME);
flag(
  'address article aside blockquote details div dl fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr main menu nav ol p pre section table ul',
  F_CLOSES_P,
);
flag('title', F_TITLE);
flag('plaintext', F_PLAINTEXT);
flag('p', F_P);
flag('a abbr b bdi bdo cite code data dfn em font i kbd mark q rp rt ruby s samp small span strong sub sup tt u var', F_INLINE);
flag('html body main article', F_CONTAINER);
flag('address article aside blockquote body br dd div dl dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table td th tr ul', F_BLOCK);
flag('li', 1 << GROUP_SHIFT);
flag('dt dd', 2 << GROUP_SHIFT);
flag('option', 3 << GROUP_SHIFT);
flag('tr', 4 << GROUP_SHIFT);
flag('td th', 5 << GROUP_SHIFT);

if (indexed.size > INDEX_MASK) throw new Error('html-text: too many indexed tag names');

const N_P = nameHash('p');
const N_A = nameHash('a');
const N_BR = nameHash('br');
const N_BODY = nameHash('body');
const A_CLASS = nameHash('class');
const A_ID = nameHash('id');
const A_ROLE = nameHash('role');
const A_HIDDEN = nameHash('hidden');
const A_ARIA_HIDDEN = nameHash('aria-hidden');
const A_STYLE = nameHash('style');
const A_HREF = nameHash('href');
const A_REL = nameHash('rel');
/** rel="sponsored": the link is paid (the attribute search engines ask ads and affiliate links to carry). */
const SPONSORED_REL = /(?:^|\s)sponsored(?:\s|$)/i;

const CHROME_ROLES = /^\s*(?:navigation|banner|contentinfo|complementary|search|menu|menubar|toolbar|dialog|alertdialog)\b/i;
const CHROME_SUBSTR =
  /sidebar|navbar|navigation|footer|breadcrumb|cookie|advert|sponsor|banner|widget|newsletter|pagination|sharing|social|masthead|toolbar|taboola|outbrain|disqus|comment|consent|subscribe|timestamp|byline|dateline|hitcount|viewcount/i;
const CHROME_WORD =
  /(?:^|[^a-z0-9])(?:ad|ads|adv|adsense|adslot|adunit|nav|menu|header|date|time|related|popular|trending|promo|promoted|share|skip|print|counter|views|hits|pager|modal|popup|tags|meta|toc)(?:$|[^a-z0-9])/i;
/** A class of exactly `sidebar`: DocBook's and docutils' sidebar element, content inside a division. */
const SIDEBAR_BOX = /^\s*sidebar\s*$/i;
/** Classes of a book's divisions (DocBook's section, chapter, preface, appendix, sect1..sect5; docutils' section). */
const DIVISION_CLASS = /(?:^|\s)(?:section|chapter|preface|appendix|sect[1-5])(?:\s|$)/i;
/** What a class or id value says (chromeAttribute, cached per value): it names chrome, is exactly `sidebar`, names a division. */
const C_CHROME = 1;
const C_SIDEBAR_BOX = 2;
const C_DIVISION = 4;
const N_SECTION = nameHash('section');
const HIDDEN_STYLE = /display\s*:\s*none|visibility\s*:\s*hidden/i;

// The tests below compare against the largest char first: most chars read are letters, past it.
function isTagSpace(c: number): boolean {
  return c <= 0x20 && (c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d || c === 0x0c);
}

/** Finds `</name` (ASCII case-insensitive, then a non-name char) from i; returns its index or -1. */
function findEndTag(html: string, name: string, i: number): number {
  const n = html.length;
  const len = name.length;
  for (;;) {
    const j = html.indexOf('</', i);
    if (j === -1) return -1;
    let k = 0;
    while (k < len && j + 2 + k < n && (html.charCodeAt(j + 2 + k) | 0x20) === name.charCodeAt(k)) k++;
    if (k === len) {
      const c = j + 2 + len < n ? html.charCodeAt(j + 2 + len) : 0x3e;
      if (isTagSpace(c) || c === 0x3e || c === 0x2f) return j;
    }
    i = j + 2;
  }
}

export class HtmlTextExtractor {
  private stack = new Int32Array(256);
  /** The tag flags of each open element, beside its name (no table lookup when it closes). */
  private stackFlags = new Int32Array(256);
  private depth = 0;
  /** Open elements per name: per index for the known names (INDEX_SHIFT), in the table for the others. */
  private readonly openCounts = new Int32Array(INDEX_MASK + 1);
  private readonly open = new IntTable(256);
  private readonly classCache = new Map<string, number>();
  private readonly noEndTagFrom = new Map<string, number>();
  private readonly remove: boolean;
  private skipFrom = -1;
  private pendingSpace = false;
  private out!: TextBuffer;
  /**
   * The page's code units, copied once per page (one native copy): the scanner reads them from
   * this typed array, and searches the string itself with its indexOf (a loop over the units is no
   * faster, even on short quoted values). A charCodeAt checks the string's representation (one- or
   * two-byte, flat or sliced) on every read; a typed array read does not: the scan takes about 14%
   * less CPU a page on the English bench set (docs/fingerprint.md, Performance). Like the output
   * buffer, it keeps the size of the largest page read. Past the page's end it holds an earlier
   * page: every read is below n (html-text.test.ts checks it).
   */
  private readonly source = new TextBuffer();
  private src = this.source.units;
  /** Set by scanName: the end of the last scanned name and its hash. */
  private nameEnd = 0;
  private nameKey = 0;
  /** Set by attributes(): the tag ended with '/>'; a class, id, role or style named chrome. */
  private selfClosing = false;
  private chrome = false;
  /** Set by attributes(): the class is exactly `sidebar` (C_SIDEBAR_BOX), or names a division (C_DIVISION). */
  private marks = 0;
  /** Set by attributes() of an <a>: it has an href (an <a> without one is a placeholder, not a link). */
  private href = false;
  /** Set by attributes() ('remove' mode): rel names the link sponsored, so an <a> with it is an ad, chrome. */
  private sponsored = false;
  /** 'remove' mode: the shape rule (block-shape.ts). */
  private readonly blocks: BlockShapeFilter | undefined;
  /** 'remove' mode: letter units and visible characters of all the text written (SHAPE). */
  private letters = 0;
  private visible = 0;
  /**
   * The open link (an <a href>): `visible` when it opened or the current block began, -1 for
   * none, and its index in the stack; visible characters of link text in the current block.
   */
  private linkFrom = -1;
  private linkDepth = 0;
  private blockLink = 0;
  /** A <body> start tag has been seen (then no comment or script is checked for swallowing it). */
  private bodySeen = false;
  /** Index of the next '<body' (-1: none left; -2: not searched yet). */
  private nextBody = -2;
  /** A <title> start tag has been seen, and the index of the next '<title' (as nextBody). */
  private titleSeen = false;
  private nextTitle = -2;

  constructor(mode: BoilerplateMode, shape?: BlockShape) {
    this.remove = mode === 'remove';
    this.blocks = this.remove ? new BlockShapeFilter(shape) : undefined;
  }

  /** Extracts the content text of html into out (replacing its content). */
  extract(html: string, out: TextBuffer): void {
    const n = html.length;
    this.source.setString(html);
    this.src = this.source.units;
    this.out = out;
    out.clear();
    out.reserve(n + 16);
    this.depth = 0;
    this.openCounts.fill(0);
    this.open.clear();
    this.skipFrom = -1;
    this.pendingSpace = false;
    if (this.noEndTagFrom.size > 0) this.noEndTagFrom.clear();
    this.bodySeen = false;
    this.nextBody = -2;
    this.titleSeen = false;
    this.nextTitle = -2;
    this.letters = 0;
    this.visible = 0;
    this.linkFrom = -1;
    this.blockLink = 0;
    this.blocks?.reset();
    let i = 0;
    while (i < n) {
      if (this.skipFrom >= 0) {
        const lt = html.indexOf('<', i);
        if (lt === -1) break;
        i = this.markup(html, lt);
        continue;
      }
      i = this.copyText(html, i, n);
      if (i < n) i = this.markup(html, i);
    }
    if (this.blocks !== undefined) this.blocks.apply(out, this.letters, this.visible, this.takeBlockLink());
    if (this.depth > 4096) {
      this.stack = new Int32Array(256);
      this.stackFlags = new Int32Array(256);
    }
    this.open.clear();
  }

  /** Copies text from i up to the next '<' (decoding references); returns the index of '<' or n. */
  private copyText(html: string, i: number, end: number): number {
    const src = this.src;
    const out = this.out;
    let units = out.units;
    let len = out.length;
    if (this.pendingSpace && i < end && src[i]! !== 0x3c) {
      if (len > 0) units[len++] = 0x20;
      this.pendingSpace = false;
    }
    // Leading whitespace (the indentation between tags) first: it counts for nothing.
    while (i < end) {
      const c = src[i]!;
      if (c > 0x20) break;
      units[len++] = c;
      i++;
    }
    if (this.blocks === undefined) {
      while (i < end) {
        const c = src[i]!;
        if (c === 0x3c) break;
        if (c === 0x26) {
          out.length = len;
          i = decodeEntity(html, i, end, out);
          units = out.units;
          len = out.length;
          continue;
        }
        units[len++] = c;
        i++;
      }
      out.length = len;
      return i;
    }
    // 'remove' mode: the same, counting letter units and visible characters for the shape rule.
    const shapes = SHAPE;
    let letters = this.letters;
    let visible = this.visible;
    while (i < end) {
      const c = src[i]!;
      if (c === 0x3c) break;
      if (c === 0x26) {
        out.length = len;
        i = decodeEntity(html, i, end, out);
        units = out.units;
        for (; len < out.length; len++) {
          const shape = shapes[units[len]!]!;
          letters += shape & 7;
          visible += shape >>> 3;
        }
        continue;
      }
      units[len++] = c;
      const shape = shapes[c]!;
      letters += shape & 7;
      visible += shape >>> 3;
      i++;
    }
    out.length = len;
    this.letters = letters;
    this.visible = visible;
    return i;
  }

  /** A block boundary ('remove' mode): records the block that ends here. */
  private endBlock(judged = true): void {
    this.blocks!.boundary(this.out.length, this.letters, this.visible, this.takeBlockLink(), judged);
  }

  /** The link text of the current block, which a link still open continues into the next one. */
  private takeBlockLink(): number {
    let link = this.blockLink;
    if (this.linkFrom >= 0) {
      link += this.visible - this.linkFrom;
      this.linkFrom = this.visible;
    }
    this.blockLink = 0;
    return link;
  }

  /** Handles the markup at lt ('<'); returns the index after it. */
  private markup(html: string, lt: number): number {
    const src = this.src;
    const n = html.length;
    const c = lt + 1 < n ? src[lt + 1]! | 0x20 : 0;
    if (c >= 0x61 && c <= 0x7a) return this.startTag(html, lt);
    if (c === 0x2f) return this.endTag(html, lt);
    if (c === 0x21 || c === 0x3f) {
      // Comments, bogus comments and doctypes render as nothing: "foo<!-- -->bar" shows "foobar",
      // so they are no word boundary (React and other renderers put '<!-- -->' between text nodes).
      if (html.startsWith('<!--', lt)) return this.comment(html, lt + 4);
      // Doctype, CDATA outside foreign content, '<?': a bogus comment, to the next '>'.
      const e = html.indexOf('>', lt + 2);
      return e === -1 ? n : e + 1;
    }
    // A '<' that starts no markup is text.
    if (this.skipFrom < 0) {
      const out = this.out;
      if (this.pendingSpace) {
        if (out.length > 0) out.units[out.length++] = 0x20;
        this.pendingSpace = false;
      }
      out.units[out.length++] = 0x3c;
      this.visible++;
    }
    return lt + 1;
  }

  /**
   * A comment whose text starts at j (after '<!--'); returns the index after it. 13.2.5.43-52:
   * '<!-->' and '<!--->' are empty comments; '-->' or '--!>' ends one. An unterminated comment
   * runs to the end of the input in the standard, which empties a truncated page whose head
   * holds a stray '<!--'; we end it at its first '>' instead (what browsers did before HTML5),
   * so such a page is still decided. Pages without the damage are unaffected.
   */
  private comment(html: string, j: number): number {
    const src = this.src;
    const n = html.length;
    if (j < n && src[j]! === 0x3e) return j + 1;
    if (j + 1 < n && src[j]! === 0x2d && src[j + 1]! === 0x3e) return j + 2;
    let e = html.indexOf('--', j);
    while (e !== -1) {
      // '--' then any further '-', then '>' or '!>'.
      let k = e + 2;
      while (k < n && src[k]! === 0x2d) k++;
      if (k < n && src[k]! === 0x3e) return this.swallowsBody(html, j, k) ? this.recoverComment(html, j) : k + 1;
      if (k + 1 < n && src[k]! === 0x21 && src[k + 1]! === 0x3e) return this.swallowsBody(html, j, k) ? this.recoverComment(html, j) : k + 2;
      e = html.indexOf('--', k);
    }
    return this.recoverComment(html, j);
  }

  private recoverComment(html: string, j: number): number {
    const gt = html.indexOf('>', j);
    return gt === -1 ? html.length : gt + 1;
  }

  /**
   * Whether a comment or raw-text element opened before <body> reaches past the page's <body
   * tag, or past its <title> before any title was read: damage (a truncated comment or script in
   * the head whose end is some later comment's or script's), not a comment. A browser shows such
   * a page without its title, or empty; we end the damaged element early instead, so the page
   * keeps the text a reader knows it by. Checked only until <body> is seen, so it costs one search
   * per head-level comment or script.
   */
  private swallowsBody(html: string, from: number, end: number): boolean {
    if (this.bodySeen) return false;
    // The next '<body' and '<title' at or after `from`, searched again only once passed: linear in the page.
    if (this.nextBody !== -1) {
      if (this.nextBody < from) this.nextBody = html.indexOf('<body', from);
      if (this.nextBody !== -1 && this.nextBody < end) return true;
    }
    if (this.titleSeen || this.nextTitle === -1) return false;
    if (this.nextTitle < from) this.nextTitle = html.indexOf('<title', from);
    return this.nextTitle !== -1 && this.nextTitle < end;
  }

  /** Scans a tag or attribute name from j, lower-casing ASCII; sets nameEnd and nameKey. */
  private scanName(html: string, j: number, n: number, stopAtEquals: boolean): void {
    const src = this.src;
    let h = 0x811c9dc5 | 0;
    const start = j;
    while (j < n) {
      let c = src[j]!;
      if (c <= 0x3e) {
        if (isTagSpace(c) || c === 0x2f || c === 0x3e) break;
        if (stopAtEquals && c === 0x3d && j > start) break;
      } else if (c <= 0x5a && c >= 0x41) c += 32;
      h = Math.imul(h ^ c, 0x01000193);
      j++;
    }
    this.nameEnd = j;
    this.nameKey = h & 0x3fffffff;
  }

  private startTag(html: string, lt: number): number {
    const n = html.length;
    this.scanName(html, lt + 1, n, false);
    let j = this.nameEnd;
    const name = this.nameKey;
    const nameStart = lt + 1;
    const nameLen = j - nameStart;
    const flags = TAG_FLAGS.get(name);
    if (name === N_BODY) this.bodySeen = true;
    if (name === N_A) this.href = false;
    const collect = this.remove && this.skipFrom < 0 && (flags & (F_VOID | F_RAW | F_INLINE | F_CONTAINER)) === 0;
    // Only an <a>'s attribute names matter beyond the chrome check (href, rel).
    j = this.attributes(html, j, collect, collect || name === N_A);
    if (j < 0) return n;
    let chrome = this.chrome || (this.sponsored && name === N_A);
    const divisionFlag = (this.marks & C_DIVISION) !== 0 || name === N_SECTION ? F_DIVISION : 0;
    const selfClosing = this.selfClosing;
    this.pendingSpace = true;
    if ((flags & F_BLOCK) !== 0 && this.blocks !== undefined) this.endBlock();
    if ((flags & (F_RAW | F_TITLE)) !== 0) {
      if ((flags & F_TITLE) !== 0) this.titleSeen = true;
      const tag = html.slice(nameStart, nameStart + nameLen).toLowerCase();
      // A name known to have no end tag after an earlier position has none after this one
      // either: '<script>' repeated 50,000 times stays linear.
      const noEnd = this.noEndTagFrom.get(tag);
      let e = noEnd !== undefined && noEnd <= j ? -1 : findEndTag(html, tag, j);
      if (e === -1 && noEnd === undefined) this.noEndTagFrom.set(tag, j);
      if (e !== -1 && this.swallowsBody(html, j, e)) e = -1;
      const end = e === -1 ? n : e;
      if (e === -1) return this.unterminatedRawText(html, j);
      if ((flags & F_TITLE) !== 0 && this.skipFrom < 0) {
        // The title names the page: it is no block of it, and is never judged by its shape (chrome
        // added at the top of the body must not decide whether the title is kept).
        if (this.blocks !== undefined) this.endBlock();
        // RCDATA: a '<' inside the title is text.
        for (let p = this.copyText(html, j, end); p < end; p = this.copyText(html, p + 1, end)) {
          this.out.units[this.out.length++] = 0x3c;
          this.visible++;
        }
        this.pendingSpace = true;
        if (this.blocks !== undefined) this.endBlock(false);
      }
      const close = this.attributes(html, e + 2 + nameLen, false, false);
      return close < 0 ? n : close;
    }
    if ((flags & F_PLAINTEXT) !== 0) {
      if (this.skipFrom < 0) this.copyText(html, j, n);
      return n;
    }
    if ((flags & F_VOID) !== 0 || selfClosing) return j;
    this.implicitClose(flags);
    let chromeTag = (flags & F_CHROME) !== 0;
    if ((this.marks & C_SIDEBAR_BOX) !== 0) {
      if (this.insideDivision()) chromeTag = false;
      else chrome = true;
    }
    const skip = (flags & F_SKIP) !== 0 || (this.remove && (chrome || chromeTag));
    this.push(name, flags | divisionFlag);
    if (skip && this.skipFrom < 0) this.skipFrom = this.depth - 1;
    // The link ends when this element is popped (by depth, not by name: an <a name> placeholder
    // around it is no link). A link inside a link counts once.
    if (name === N_A && this.href && this.linkFrom < 0 && this.blocks !== undefined) {
      this.linkFrom = this.visible;
      this.linkDepth = this.depth - 1;
    }
    return j;
  }

  /**
   * Lexes the attributes of a tag from j to its '>' as the WHATWG tokenizer does (13.2.5.32-42):
   * only a quote right after '=' opens a quoted value, so "alt=Don't" is an unquoted value and
   * a quote inside a name is part of the name. Quoted values are skipped with indexOf. Sets
   * selfClosing ('/>' ends the tag) and, when collect, chrome. Returns the index after '>', or
   * -1 when the input ends inside the tag (the standard then drops the tag). Without `names` the
   * attribute names are skipped, not hashed: href and rel count on an <a> only, and the chrome
   * check only when collect.
   */
  private attributes(html: string, j: number, collect: boolean, names: boolean): number {
    const src = this.src;
    const n = html.length;
    this.chrome = false;
    this.marks = 0;
    this.sponsored = false;
    this.selfClosing = false;
    for (;;) {
      let c = 0;
      while (j < n && isTagSpace((c = src[j]!))) j++;
      if (j >= n) return -1;
      if (c === 0x3e) return j + 1;
      if (c === 0x2f) {
        j++;
        if (j < n && src[j]! === 0x3e) {
          this.selfClosing = true;
          return j + 1;
        }
        continue;
      }
      const as = j;
      let attr = 0;
      if (names) {
        this.scanName(html, j, n, true);
        j = this.nameEnd;
        attr = this.nameKey;
        if (attr === A_HREF) this.href = true;
      } else {
        // Where scanName(..., true) ends the name.
        for (; j < n; j++) {
          const d = src[j]!;
          if (d <= 0x3e && (isTagSpace(d) || d === 0x2f || d === 0x3e || (d === 0x3d && j > as))) break;
        }
      }
      const ae = j;
      while (j < n && isTagSpace(src[j]!)) j++;
      let vs = -1;
      let ve = -1;
      if (j < n && src[j]! === 0x3d) {
        j++;
        while (j < n && isTagSpace(src[j]!)) j++;
        const q = j < n ? src[j]! : 0;
        if (q === 0x22 || q === 0x27) {
          // indexOf, even for short values: a loop of charCodeAt over the first 24 units made the
          // scan 15% slower on the English bench set.
          const e = html.indexOf(q === 0x22 ? '"' : "'", j + 1);
          if (e === -1) return -1;
          vs = j + 1;
          ve = e;
          j = e + 1;
        } else {
          vs = j;
          while (j < n) {
            const d = src[j]!;
            if (isTagSpace(d) || d === 0x3e) break;
            j++;
          }
          ve = j;
        }
      }
      if (collect && !this.chrome && ae - as >= 2 && ae - as <= 11) this.chrome = this.chromeAttribute(html, attr, vs, ve);
      else if (attr === A_REL && this.remove && vs >= 0) this.sponsored = SPONSORED_REL.test(html.slice(vs, ve));
    }
  }

  /**
   * A <script>, <style>, <title>... whose end tag never comes. The standard makes the rest of
   * the input its content, which empties a page truncated inside its head; we end it at its
   * first '<' that starts a tag instead, so such a page is still decided (the element's own
   * content, up to there, is dropped).
   */
  private unterminatedRawText(html: string, j: number): number {
    const src = this.src;
    const n = html.length;
    for (let lt = html.indexOf('<', j); lt !== -1; lt = html.indexOf('<', lt + 1)) {
      let c = lt + 1 < n ? src[lt + 1]! : 0;
      if (c === 0x2f) c = lt + 2 < n ? src[lt + 2]! : 0;
      c |= 0x20;
      if (c >= 0x61 && c <= 0x7a) return lt;
    }
    return n;
  }

  /** Whether an open element is a book's division (F_DIVISION). */
  private insideDivision(): boolean {
    for (let k = this.depth - 1; k >= 0; k--) if ((this.stackFlags[k]! & F_DIVISION) !== 0) return true;
    return false;
  }

  private push(name: number, flags: number): void {
    if (this.depth === this.stack.length) {
      const stack = new Int32Array(this.stack.length * 2);
      stack.set(this.stack);
      this.stack = stack;
      const stackFlags = new Int32Array(stack.length);
      stackFlags.set(this.stackFlags);
      this.stackFlags = stackFlags;
    }
    this.stackFlags[this.depth] = flags;
    this.stack[this.depth++] = name;
    const index = (flags >>> INDEX_SHIFT) & INDEX_MASK;
    if (index !== 0) this.openCounts[index]!++;
    else this.open.add(name, 1);
  }

  private implicitClose(flags: number): void {
    if (this.depth === 0) return;
    const topFlags = this.stackFlags[this.depth - 1]!;
    const group = (flags >>> GROUP_SHIFT) & GROUP_MASK;
    if ((group !== 0 && ((topFlags >>> GROUP_SHIFT) & GROUP_MASK) === group) || ((topFlags & F_P) !== 0 && (flags & F_CLOSES_P) !== 0)) {
      this.popTo(this.depth - 1);
    }
  }

  private popTo(depth: number): void {
    const stack = this.stack;
    const stackFlags = this.stackFlags;
    while (this.depth > depth) {
      const top = --this.depth;
      const index = (stackFlags[top]! >>> INDEX_SHIFT) & INDEX_MASK;
      if (index !== 0) this.openCounts[index]!--;
      else this.open.add(stack[top]!, -1);
    }
    if (this.skipFrom >= this.depth) this.skipFrom = -1;
    if (this.linkFrom >= 0 && this.depth <= this.linkDepth) {
      this.blockLink += this.visible - this.linkFrom;
      this.linkFrom = -1;
    }
  }

  /** Open elements of the name. */
  private openCount(name: number): number {
    const index = (TAG_FLAGS.get(name) >>> INDEX_SHIFT) & INDEX_MASK;
    return index !== 0 ? this.openCounts[index]! : this.open.get(name);
  }

  private endTag(html: string, lt: number): number {
    const src = this.src;
    const n = html.length;
    const c = lt + 2 < n ? src[lt + 2]! | 0x20 : 0;
    if (c >= 0x61 && c <= 0x7a) {
      this.scanName(html, lt + 2, n, false);
      const name = this.nameKey;
      // Most end tags end right after their name. Others carry attributes (ignored, but their quotes
      // hide '>'), to be lexed; one cut off by the end of input is dropped.
      const e = this.nameEnd < n && src[this.nameEnd]! === 0x3e ? this.nameEnd + 1 : this.attributes(html, this.nameEnd, false, false);
      if (e < 0) return n;
      // Most end tags close the element opened last; the others look up whether one is open at all.
      if ((this.depth > 0 && this.stack[this.depth - 1] === name) || this.openCount(name) > 0) {
        let k = this.depth - 1;
        while (this.stack[k] !== name) k--;
        if ((this.stackFlags[k]! & F_BLOCK) !== 0 && this.blocks !== undefined) this.endBlock();
        this.popTo(k);
        this.pendingSpace = true;
      } else if (name === N_P || name === N_BR) {
        // A stray </p> makes an empty <p>, a stray </br> a <br> (13.2.6.4.7); any other stray end tag is nothing.
        this.pendingSpace = true;
        if (this.blocks !== undefined) this.endBlock();
      }
      return e;
    }
    // '</>' is nothing (13.2.5.7, missing-end-tag-name).
    if (lt + 2 < n && src[lt + 2]! === 0x3e) return lt + 3;
    // '</' and anything else is a bogus comment, to the next '>'.
    const close = html.indexOf('>', lt + 2);
    return close === -1 ? n : close + 1;
  }

  private chromeAttribute(html: string, attr: number, vs: number, ve: number): boolean {
    if (attr === A_HIDDEN) return true;
    if (vs < 0) return false;
    if (attr === A_CLASS || attr === A_ID) {
      const value = html.slice(vs, ve);
      let code = this.classCache.get(value);
      if (code === undefined) {
        code = SIDEBAR_BOX.test(value) ? C_SIDEBAR_BOX : CHROME_SUBSTR.test(value) || CHROME_WORD.test(value) ? C_CHROME : 0;
        if (DIVISION_CLASS.test(value)) code |= C_DIVISION;
        if (this.classCache.size >= 10_000) this.classCache.clear();
        this.classCache.set(value, code);
      }
      // An id of `sidebar` names the site's: only a class marks a book's box.
      if (attr === A_ID && code === C_SIDEBAR_BOX) return true;
      if (attr === A_CLASS) this.marks |= code & (C_SIDEBAR_BOX | C_DIVISION);
      return (code & C_CHROME) !== 0;
    }
    if (attr === A_ROLE) return CHROME_ROLES.test(html.slice(vs, ve));
    if (attr === A_ARIA_HIDDEN) return html.slice(vs, ve).trim().toLowerCase() === 'true';
    if (attr === A_STYLE) return HIDDEN_STYLE.test(html.slice(vs, ve));
    return false;
  }
}
