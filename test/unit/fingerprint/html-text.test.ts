/**
 * The HTML scanner against the WHATWG rules: the defects found on real pages
 * as examples, then a differential test against parse5 on every real fixture
 * page and on generated markup that exercises the tokenizer's corners
 * (quotes inside unquoted values and names, abrupt comments, bogus comments,
 * character references, case, stray end tags).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { HtmlTextExtractor } from '../../../src/fingerprint/html-text.js';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { TextBuffer } from '../../../src/fingerprint/text-buffer.js';
import { fixtureNames, htmlToText, readFixture } from './fixtures.js';
import { collapse, oracleText, scannerText } from './html-oracle.js';

describe('HTML scanner: defects found on real pages', () => {
  it('a quote inside an unquoted attribute value does not open a string', () => {
    const html = "<p>one <img alt=Don't> two three</p><p>four five</p><p>it's six</p>";
    assert.equal(scannerText(html), "one two three four five it's six");
    assert.equal(scannerText(html, 'remove'), "one two three four five it's six");
    assert.equal(scannerText('<p title=a"b class=x>seven</p><p>eight "nine"</p>'), 'seven eight "nine"');
  });

  it("'<!-->' and '<!--->' are empty comments, '--!>' closes one; a comment is no word boundary", () => {
    assert.equal(scannerText('<p>one</p><!--><p>two</p><!--->three<!-- x --!>four'), 'one two threefour');
    assert.equal(scannerText('<p>fo<!-- -->o b<?x>ar</p>'), 'foo bar');
  });

  it('named references outside Latin-1 decode to their characters', () => {
    assert.equal(scannerText('c&oelig;ur &mdash; na&iuml;ve &Scaron;koda &NotEqualTilde; &notit; &copy2024'), 'cœur — naïve Škoda ≂̸ ¬it; ©2024');
    assert.equal(scannerText('&bogus; &amp &#x1F600; &#0; &#xD800;'), '&bogus; & 😀 \ufffd \ufffd');
  });

  it('numeric references to 0x80..0x9F are the Windows-1252 characters', () => {
    assert.equal(scannerText('1&#150;2 &#147;q&#148; &#128;5 &#x85;'), '1–2 “q” €5 …');
  });

  it('end tags with quoted attributes do not end at a quoted ">"', () => {
    assert.equal(scannerText('<p>one</p title=">oops"><p>two</p>'), 'one two');
  });

  it('a truncated head (unterminated comment or script) does not empty the page', () => {
    assert.equal(scannerText('<html><head><!-- truncated <title>T</title></head><body><p>text here</p>'), 'T text here');
    assert.equal(scannerText('<html><head><script>var a = 1;</head><body><p>text here</p>'), 'text here');
  });

  it('a comment or script cut off in the head does not swallow the body up to a later comment or script', () => {
    const later = '<p>kept</p><!-- footer --><script>x()</script><p>end</p>';
    assert.equal(scannerText(`<html><head><!-- cut <meta charset="utf-8"></head><body><p>text here</p>${later}</body></html>`), 'text here kept end');
    assert.equal(scannerText(`<html><head><script>var t = "</head><body><p>text here</p>${later}</body></html>`), 'text here kept end');
    // After <body>, comments follow the standard.
    assert.equal(scannerText('<body><p>a</p><!-- x <p>hidden</p> --><p>b</p></body>'), 'a b');
  });

  it('a comment or script cut off before the title does not swallow the title up to a later comment or script in the head', () => {
    // Every real fixture page, with a comment or script after its title (as most heads have), cut
    // into by a comment or script that never ends: the page keeps its text, title included.
    const pages = fixtureNames().map(readFixture);
    fc.assert(
      fc.property(fc.nat(pages.length - 1), fc.constantFrom('<!-- cut here by a broken proxy ', '<script>var tracker = "', '<style>.x { color: red'), fc.constantFrom('<!-- generated -->', '<script src="site.js"></script>', '<script>var a = "b";</script>', '<style>p { margin: 0 }</style>'), (which, cut, later) => {
        const html = pages[which]!.replace(/<\/title>/i, (m) => m + later);
        const head = /<head\b[^>]*>/i.exec(html)!;
        const at = head.index + head[0].length;
        const damaged = html.slice(0, at) + cut + html.slice(at);
        assert.equal(scannerText(damaged), scannerText(html));
      }),
      { numRuns: 60, seed: 3 },
    );
  });
});

describe('HTML scanner: paid links are chrome', () => {
  it('a link marked rel="sponsored", anywhere in the text of a real page, leaves its fingerprint as it was', async () => {
    // Inside a paragraph the link is no block of its own, so the shape rule cannot see it: only
    // the mark the ad carries can.
    const fp = await createFingerprinter();
    const pages = fixtureNames().map(readFixture);
    const original = pages.map((html) => fp.fingerprint({ html }));
    const ad = fc.tuple(fc.constantFrom('sponsored', 'nofollow sponsored', 'Sponsored noopener'), fc.constantFrom('Northwind Cloud: mechanical keyboards, save up to 60% today', 'CloudNimbus, a password manager: first month free', 'Get the deal'));
    fc.assert(
      fc.property(fc.nat(pages.length - 1), fc.double({ min: 0, max: 1, noNaN: true }), ad, (which, where, [rel, text]) => {
        const html = pages[which]!;
        // A space between two words of a paragraph's text.
        const spaces = [...html.matchAll(/<p\b[^>]*>[^<]*?[a-z] [a-z]/g)].map((m) => m.index + m[0].length - 2);
        fc.pre(spaces.length > 0);
        const at = spaces[Math.floor(where * spaces.length)]!;
        const r = fp.fingerprint({ html: `${html.slice(0, at)} <a href="https://ads.example/c?x=1" rel="${rel}">${text}</a>${html.slice(at)}` });
        const o = original[which]!;
        assert.deepEqual([r.hi, r.lo, r.exactHi, r.exactLo], [o.hi, o.lo, o.exactHi, o.exactLo]);
      }),
      { numRuns: 100, seed: 4 },
    );
  });
});

describe('HTML scanner: page containers are never chrome', () => {
  it('a class, id or role on <html>, <body>, <main> or <article> never drops the page', () => {
    const chromeish = fc.constantFrom('no-sidebar', 'has-sidebar', 'single post-template-default header-fixed', 'page-footer', 'nav-open', 'ads', 'menu-collapsed', 'date-2024', 'navigation');
    fc.assert(
      fc.property(fc.constantFrom('html', 'body', 'main', 'article'), fc.constantFrom('class', 'id', 'role'), chromeish, (tag, attr, value) => {
        const html = `<${tag} ${attr}="${value}"><p>The content of the page is here.</p></${tag}>`;
        assert.equal(scannerText(html, 'remove'), 'The content of the page is here.');
      }),
      { numRuns: 200, seed: 31 },
    );
    // A real page whose body class names a sidebar (the Apache manual's no-sidebar pages).
    assert.equal(scannerText('<body id="manual-page" class="no-sidebar"><div id="page-header">Modules</div><div id="preamble"><h1>File Descriptor Limits</h1><p>When using a large number of Virtual Hosts</p></div></body>', 'remove'), 'File Descriptor Limits When using a large number of Virtual Hosts');
  });
});

describe("HTML scanner: a book's sidebar is content, a site's is chrome", () => {
  // DocBook and docutils write a sidebar (a boxed aside of the text: "BACK TO BASICS", "IN
  // PRACTICE") as an element of class `sidebar` inside the book's division. The Debian
  // Administrator's Handbook has some on most pages; they were dropped as a site's sidebar, and
  // with them a third to a half of some pages' text.
  const pages = fixtureNames().map(readFixture);
  /** Paragraphs of the real fixture pages: [page, start, end]. */
  const paragraphs = pages.flatMap((html, page) => [...html.matchAll(/<p\b[^>]*>[^<]{40,}<\/p>/g)].map((m) => [page, m.index, m.index + m[0].length] as const));
  const division = fc.constantFrom(['<div class="section">', '</div>'], ['<section id="s1">', '</section>'], ['<div class="chapter"><ul><li class="listitem">', '</li></ul></div>'], ['<div class="sect2">', '</div>']);
  const box = fc.constantFrom(['<div class="sidebar">', '</div>'], ['<aside class="sidebar">', '</aside>'], ['<div class="Sidebar ">', '</div>']);

  it('a paragraph boxed as a sidebar inside a division keeps the text and the fingerprint of the same paragraph in a plain <div>', async () => {
    const fp = await createFingerprinter();
    let kept = 0;
    fc.assert(
      fc.property(fc.nat(paragraphs.length - 1), division, box, (which, [open, close], [boxOpen, boxClose]) => {
        const [page, start, end] = paragraphs[which]!;
        const html = pages[page]!;
        const wrap = (a: string, b: string) => `${html.slice(0, start)}${open}${a}${html.slice(start, end)}${b}${close}${html.slice(end)}`;
        const plain = wrap('<div>', '</div>');
        const boxed = wrap(boxOpen, boxClose);
        assert.equal(scannerText(boxed, 'remove'), scannerText(plain, 'remove'));
        const [p, b] = [fp.fingerprint({ html: plain }), fp.fingerprint({ html: boxed })];
        assert.deepEqual([b.hi, b.lo, b.exactHi, b.exactLo], [p.hi, p.lo, p.exactHi, p.exactLo]);
        // The property binds only where the plain page keeps the paragraph (not in its own chrome): count those.
        if (scannerText(plain, 'remove').includes(collapse(htmlToText(html.slice(start, end))))) kept++;
      }),
      { numRuns: 150, seed: 12 },
    );
    assert.ok(kept >= 140, `only ${kept} of 150 boxed paragraphs were content of their page`);
  });

  it("a site's sidebar (outside any division, named by its id, or with other classes) is still chrome", async () => {
    const fp = await createFingerprinter();
    const widget = fc.constantFrom(
      '<div class="sidebar"><h3>Popular posts</h3><p>Ten things every administrator should know about backups and restores</p></div>',
      '<div class="section"><div id="sidebar"><p>Subscribe to our newsletter for weekly news about free software releases</p></div></div>',
      '<section><div class="widget sidebar-widget"><p>Subscribe to our newsletter for weekly news about free software releases</p></div></section>',
      '<section><div class="sidebar" id="sidebar"><p>Ten things every administrator should know about backups and restores</p></div></section>',
      '<aside class="sidebar"><p>Ten things every administrator should know about backups and restores</p></aside>',
    );
    const original = pages.map((html) => fp.fingerprint({ html }));
    fc.assert(
      fc.property(fc.nat(pages.length - 1), widget, (which, insert) => {
        const html = pages[which]!.replace(/<body\b[^>]*>/i, (m) => m + insert);
        const r = fp.fingerprint({ html });
        const o = original[which]!;
        assert.deepEqual([r.hi, r.lo, r.exactHi, r.exactLo], [o.hi, o.lo, o.exactHi, o.exactLo]);
      }),
      { numRuns: 60, seed: 13 },
    );
  });
});

describe('HTML scanner against parse5 (differential)', () => {
  it('gives the text of the browser DOM on every real fixture page', () => {
    for (const name of fixtureNames()) {
      assert.equal(scannerText(readFixture(name)), oracleText(readFixture(name)), name);
    }
  });

  const word = fc.constantFrom('one', 'two', "it's", 'Don\'t', 'a"b', 'x=y', '5>3', 'a<b', '& c', '1 < 2', 'Über', '日本語', 'ひらがな');
  const ref = fc.constantFrom('&amp;', '&lt;', '&oelig;', '&mdash;', '&eacute', '&notit;', '&#150;', '&#x6587;', '&#12501;', '&bogus;', '&', '&#', '&#x;', '&nbsp;', '&copy2024');
  const text = fc.array(fc.oneof(word, ref, fc.constantFrom(' ', '\n', '\r\n', '\t')), { maxLength: 8 }).map((xs) => xs.join(''));
  const tagName = fc.constantFrom('p', 'div', 'span', 'a', 'b', 'em', 'li', 'ul', 'h1', 'section', 'img', 'br', 'meta', 'hr', 'input', 'title', 'script', 'style', 'textarea');
  const attrValue = fc.oneof(
    fc.constantFrom('x', "Don't", 'a"b', '>', '/', '', 'a b', '="', "'q'", '`'),
    fc.string({ unit: fc.constantFrom('a', '"', "'", '>', '/', '=', ' ', '<', '&'), maxLength: 5 }),
  );
  const attr = fc
    .tuple(fc.constantFrom('alt', 'class', 'id', 'title', 'data-x', 'a"b', "c'd", '=e', 'HREF'), fc.constantFrom('unquoted', 'double', 'single', 'none', 'spaced'), attrValue)
    .map(([name, quoting, value]) => {
      if (quoting === 'none') return ` ${name}`;
      if (quoting === 'double') return ` ${name}="${value.replace(/"/g, '')}"`;
      if (quoting === 'single') return ` ${name}='${value.replace(/'/g, '')}'`;
      if (quoting === 'spaced') return ` ${name} = "${value.replace(/"/g, '')}"`;
      const v = value.replace(/[\s>]/g, '');
      return ` ${name}=${v.length > 0 && !/^["']/.test(v) ? v : 'v'}`;
    });
  const caseOf = (s: string, upper: boolean): string => (upper ? s.toUpperCase() : s);
  const startTag = fc
    .tuple(tagName, fc.array(attr, { maxLength: 3 }), fc.constantFrom('>', '/>', ' >', ' / >'), fc.boolean())
    .map(([name, attrs, end, upper]) => {
      if (name === 'script' || name === 'style') return `<${name}${attrs.join('')}>if (a < b && c > d) x = "</p>";</${name}>`;
      if (name === 'textarea' || name === 'title') return `<${name}>raw <b>text</b> &amp; more</${caseOf(name, upper)}>`;
      return `<${caseOf(name, upper)}${attrs.join('')}${end}`;
    });
  const endTag = fc.tuple(tagName, fc.constantFrom('>', ' foo="a>b">', " x='>'>")).map(([name, end]) => (name === 'script' || name === 'style' || name === 'textarea' || name === 'title' ? '</p>' : `</${name}${end}`));
  const markup = fc.constantFrom('<!-- c -->', '<!-->', '<!--->', '<!-- a -- b --!>', '<!---->', '<!DOCTYPE html>', '<?xml version="1.0"?>', '</>', '< p>', '<3', '<![CDATA[ x ]]>', '</ p>', '<!-- <p>hidden</p> -->');
  const page = fc.array(fc.oneof(text, startTag, endTag, markup), { minLength: 1, maxLength: 30 }).map((xs) => xs.join(''));

  it('gives the text of the browser DOM on generated markup', () => {
    fc.assert(
      fc.property(page, (html) => {
        assert.equal(scannerText(html), oracleText(html));
      }),
      { numRuns: 3000, seed: 20261123 },
    );
  });

  it('reads nothing past the end of a page: an extractor reused after a longer page gives the text a fresh one gives', () => {
    // The scanner reads a page from a buffer it reuses, which past the page's end still holds the
    // page before: a page cut anywhere (inside a tag, a quoted value, a comment, a reference), read
    // right after the whole page, must give the text of the cut page alone.
    const reused = { keep: new HtmlTextExtractor('keep'), remove: new HtmlTextExtractor('remove') };
    const whole = new TextBuffer();
    const cutText = new TextBuffer();
    const freshText = new TextBuffer();
    fc.assert(
      fc.property(page, fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom('keep' as const, 'remove' as const), (html, where, mode) => {
        const cut = html.slice(0, Math.floor(where * html.length));
        reused[mode].extract(html, whole);
        reused[mode].extract(cut, cutText);
        new HtmlTextExtractor(mode).extract(cut, freshText);
        assert.equal(cutText.toString(), freshText.toString());
      }),
      { numRuns: 2000, seed: 20261129 },
    );
  });
});
