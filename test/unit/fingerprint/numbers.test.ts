/**
 * A number in content is content; only dates, times and counters are not.
 * Hard negatives (pages of one template that differ only in versions or
 * identifiers) must not collide, and recrawls that differ only in a counter
 * or a timestamp must keep their fingerprint.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createFingerprinter, hammingDistance, type Fingerprinter } from '../../../src/fingerprint/index.js';
import { MINHASH_BINS } from '../../../src/fingerprint/feature-sketch.js';
import { fixtureNames, htmlToText, readFixture } from './fixtures.js';

const RELEASE = (v: string): string =>
  `<html><body><article><h1>Release notes for version ${v}</h1><p>This release of the library fixes the ` +
  `handling of encoded paths in the router, improves the error messages of the configuration loader, and ` +
  `updates the bundled certificate store. Upgrading from the previous release needs no changes to ` +
  `application code. Version ${v} is available from the package index and as a source archive.</p>` +
  `<p>Thanks to everyone who reported issues and sent patches for ${v}.</p></article></body></html>`;

function distance(fp: Fingerprinter, a: string, b: string): number {
  const x = fp.fingerprint({ html: a });
  const y = fp.fingerprint({ html: b });
  return hammingDistance(x.hi, x.lo, y.hi, y.lo);
}

function exactEqual(fp: Fingerprinter, a: string, b: string): boolean {
  const x = fp.fingerprint({ html: a });
  const y = fp.fingerprint({ html: b });
  return x.exactHi === y.exactHi && x.exactLo === y.exactLo;
}

describe('numbers', () => {
  let fp: Fingerprinter;
  before(async () => {
    fp = await createFingerprinter();
  });

  it('pages that differ only in a version number do not collide', () => {
    assert.ok(distance(fp, RELEASE('1.5.11'), RELEASE('1.6.8')) > 0);
    assert.equal(exactEqual(fp, RELEASE('1.5.11'), RELEASE('1.6.8')), false);
    fc.assert(
      fc.property(fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30)), fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30)), (a, b) => {
        if (a.join('.') === b.join('.')) return;
        assert.equal(exactEqual(fp, RELEASE(a.join('.')), RELEASE(b.join('.'))), false, `${a.join('.')} vs ${b.join('.')}`);
        assert.ok(distance(fp, RELEASE(a.join('.')), RELEASE(b.join('.'))) > 0, `${a.join('.')} vs ${b.join('.')}`);
      }),
      { numRuns: 200, seed: 11 },
    );
  });

  it('real pages with one identifier renamed (Fraction -> Fraction2) do not collide', () => {
    for (const name of fixtureNames().filter((n) => n.startsWith('python-'))) {
      const html = readFixture(name);
      const renamed = html.replace(/\b(Fraction|filecmp|fcntl|InteractiveConsole)\b/g, '$12');
      if (renamed === html) continue;
      assert.ok(distance(fp, html, renamed) > 0, name);
    }
  });

  it('dates, times and counters in content do not move the fingerprint', () => {
    const page = (stamp: string, views: string, ago: string, zh: string): string =>
      `<html><body><article><p>Last updated ${stamp}. Read ${views} views.</p><p>${RELEASE('2.0').replace(/<[^>]+>/g, ' ')}</p>` +
      `<p>Posted ${ago} minutes ago by the maintainers. Page generated in ${Number(ago) * 7} ms with ${Number(ago) + 3} queries.</p><p>更新于${zh}，阅读 ${views} 次。</p></article></body></html>`;
    const dates = fc.date({ min: new Date('1990-01-01'), max: new Date('2030-12-31'), noInvalidDate: true });
    fc.assert(
      fc.property(dates, dates, fc.nat(1_000_000), fc.nat(1_000_000), fc.integer({ min: 1, max: 59 }), fc.integer({ min: 1, max: 59 }), (d1, d2, v1, v2, m1, m2) => {
        const stamp = (d: Date, style: number): string =>
          [d.toISOString(), d.toISOString().slice(0, 10), d.toLocaleDateString('en-US', { dateStyle: 'long', timeZone: 'UTC' }), `${d.getUTCDate()}/${d.getUTCMonth() + 1}/${d.getUTCFullYear()}`][style]!;
        const zh = (d: Date): string => `${d.getUTCFullYear()}年${d.getUTCMonth() + 1}月${d.getUTCDate()}日`;
        for (let style = 0; style < 4; style++) {
          const a = page(stamp(d1, style), v1.toLocaleString('en-US'), String(m1), zh(d1));
          const b = page(stamp(d2, style), v2.toLocaleString('en-US'), String(m2), zh(d2));
          assert.equal(exactEqual(fp, a, b), true, `${stamp(d1, style)} vs ${stamp(d2, style)}`);
        }
      }),
      { numRuns: 200, seed: 12 },
    );
  });

  it('a counter line is one NUM whatever it counts: its words go with its numbers', () => {
    // A counter line in the text of a real page: the same fingerprint whatever the counters
    // count, in which language and with what numbers, so the line adds no word of its own to
    // the page's features. (On text, not HTML: the boilerplate rule may drop a short line and
    // keep a long one, which is its business, not the tokenizer's.)
    const texts = fixtureNames().map((name) => htmlToText(readFixture(name)));
    const counter = fc.tuple(fc.nat(10_000_000), fc.constantFrom('views', 'comments', 'likes', 'Kommentare', 'vues', 'commentaires', 'visitas', 'commenti', 'visualizações', 'просмотров', 'komentarzy', 'minutes ago'));
    const line = (counters: [number, string][]): string => counters.map(([n, w]) => `${n.toLocaleString('en-US')} ${w}`).join(' · ');
    fc.assert(
      fc.property(fc.nat(texts.length - 1), fc.double({ min: 0, max: 1, noNaN: true }), fc.array(counter, { minLength: 1, maxLength: 3 }), fc.array(counter, { minLength: 1, maxLength: 3 }), (which, where, a, b) => {
        const text = texts[which]!;
        const at = text.indexOf(' ', Math.floor(where * text.length));
        const cut = at < 0 ? text.length : at;
        const x = fp.fingerprint({ text: `${text.slice(0, cut)} ${line(a)} ${text.slice(cut)}` });
        const y = fp.fingerprint({ text: `${text.slice(0, cut)} ${line(b)} ${text.slice(cut)}` });
        assert.deepEqual([x.hi, x.lo, x.exactHi, x.exactLo], [y.hi, y.lo, y.exactHi, y.exactLo], `${line(a)} vs ${line(b)}`);
      }),
      { numRuns: 300, seed: 5 },
    );
  });

  it('a metadata line (counters, and a date with the words that introduce it) is one NUM, in any of its languages', () => {
    const texts = fixtureNames().map((name) => htmlToText(readFixture(name)));
    const dates = fc.date({ min: new Date('1990-01-01'), max: new Date('2030-12-31'), noInvalidDate: true });
    const item = fc.oneof(
      fc.tuple(fc.nat(10_000_000), fc.constantFrom('views', 'comments', 'Kommentare', 'commentaires', 'просмотров')).map(([n, w]) => `${n.toLocaleString('en-US')} ${w}`),
      fc.tuple(dates, fc.nat(8)).map(([d, style]) => {
        const iso = d.toISOString().slice(0, 10);
        const long = d.toLocaleDateString('en-US', { dateStyle: 'long', timeZone: 'UTC' });
        const dotted = `${String(d.getUTCDate()).padStart(2, '0')}.${String(d.getUTCMonth() + 1).padStart(2, '0')}.${d.getUTCFullYear()}`;
        const zh = `${d.getUTCFullYear()}年${d.getUTCMonth() + 1}月${d.getUTCDate()}日`;
        const ko = `${d.getUTCFullYear()}년 ${d.getUTCMonth() + 1}월 ${d.getUTCDate()}일`;
        return [`Last updated ${iso}`, `Posted on ${long}`, `Mis à jour le ${iso}`, `Zuletzt aktualisiert am ${dotted}`, `Publicado el ${iso}`, `更新于${zh}`, `Updated ${iso}`, `최종 수정일 ${iso}`, `작성일 ${ko}`][style]!;
      }),
      // Korean counters are written onto their numbers: views 조회 N회, comments 댓글 N개.
      fc.tuple(fc.nat(10_000_000), fc.constantFrom('조회 #회', '댓글 #개', '댓글 #건', '조회수 #회')).map(([n, w]) => w.replace('#', n.toLocaleString('en-US'))),
    );
    const line = fc.array(item, { minLength: 1, maxLength: 3 }).map((items) => items.join(' · '));
    fc.assert(
      fc.property(fc.nat(texts.length - 1), fc.double({ min: 0, max: 1, noNaN: true }), line, line, (which, where, a, b) => {
        const text = texts[which]!;
        const at = text.indexOf(' ', Math.floor(where * text.length));
        const cut = at < 0 ? text.length : at;
        const x = fp.fingerprint({ text: `${text.slice(0, cut)} ${a} ${text.slice(cut)}` });
        const y = fp.fingerprint({ text: `${text.slice(0, cut)} ${b} ${text.slice(cut)}` });
        assert.deepEqual([x.hi, x.lo, x.exactHi, x.exactLo], [y.hi, y.lo, y.exactHi, y.exactLo], `${a} vs ${b}`);
      }),
      { numRuns: 300, seed: 9 },
    );
  });

  it('invisible characters inside a number, a version, a date or a time of a real page leave its fingerprint and sketch as they were', () => {
    // A bidi mark, a soft hyphen, a NUL or a C0 control renders as nothing, so "3.\u202a1" is the
    // version 3.1 a reader sees, and "2024-\u200e05-06" a date: neither may become other content numbers.
    const texts = fixtureNames()
      .map((name) => htmlToText(readFixture(name)))
      .filter((t) => /\d[.,:/-]\d/.test(t));
    const invisible = fc.constantFrom('\u200e', '\u200f', '\u202a', '\u202c', '\u202e', '\u2066', '\u2069', '\ufeff', '\u00ad', '\u200d', '\u0000', '\u0007', '\u0003');
    const NUMBER = /\d+(?:[.,:/-]\d+)+/g;
    let inside = 0;
    fc.assert(
      fc.property(fc.nat(texts.length - 1), fc.array(fc.tuple(fc.nat(), fc.nat(), invisible), { minLength: 1, maxLength: 4 }), (which, marks) => {
        const text = texts[which]!;
        const numbers = [...text.matchAll(NUMBER)];
        // Positions strictly inside a number with joiners, after a joiner in half of them.
        const at = marks.map(([pick, offset, mark]) => {
          const m = numbers[pick % numbers.length]!;
          const joiners = [...m[0].matchAll(/[.,:/-]/g)].map((j) => j.index + 1);
          const i = offset % 2 === 0 ? joiners[offset % joiners.length]! : 1 + (offset % (m[0].length - 1));
          return [m.index + i, mark] as const;
        });
        let damaged = text;
        for (const [i, mark] of [...at].sort((x, y) => y[0] - x[0])) damaged = damaged.slice(0, i) + mark + damaged.slice(i);
        inside += at.length;
        const x = fp.fingerprint({ text });
        const y = fp.fingerprint({ text: damaged });
        assert.deepEqual([y.hi, y.lo, y.exactHi, y.exactLo, Buffer.from(y.sketch).toString('hex')], [x.hi, x.lo, x.exactHi, x.exactLo, Buffer.from(x.sketch).toString('hex')], `page ${which}`);
      }),
      { numRuns: 200, seed: 17 },
    );
    assert.ok(inside >= 200);
  });

  it('a sign is content as a digit is: a content number of a real page negated gives other content numbers', () => {
    // The rustdoc pages of f32::MIN and f32::MAX differ in their words ("Smallest", "Largest")
    // and in one number's sign; without the sign in the number both had one digest of content
    // numbers, and a second stage confirmed them as one document.
    const texts = fixtureNames().map((name) => htmlToText(readFixture(name)));
    const NUMBER = /(?<=[ (=\[])\d+(?:\.\d+)*(?=[ ,;)\]])/g;
    const digest = (text: string) => Buffer.from(fp.fingerprint({ text }).sketch.subarray(MINHASH_BINS)).toString('hex');
    let content = 0;
    fc.assert(
      fc.property(fc.nat(texts.length - 1), fc.nat(), fc.constantFrom('-', '\u2212'), (which, pick, sign) => {
        const text = texts[which]!;
        const numbers = [...text.matchAll(NUMBER)];
        fc.pre(numbers.length > 0);
        const m = numbers[pick % numbers.length]!;
        // The digest is of the set of a page's numbers: one the page holds once, and never negated.
        fc.pre([...text.matchAll(/[-\u2212]?\d+(?:\.\d+)*/g)].filter((n) => n[0].replace(/^[-\u2212]/, '') === m[0]).length === 1);
        const at = m.index;
        const first = m[0].charCodeAt(0) - 0x30;
        const negated = text.slice(0, at) + sign + text.slice(at);
        const other = text.slice(0, at) + String((first + 1) % 10) + text.slice(at + 1);
        const mine = digest(text);
        // Only where the number is content (not a date, a time or a counter) does a digit change the digest.
        if (digest(other) === mine) return;
        content++;
        assert.notEqual(digest(negated), mine, `${JSON.stringify(text.slice(at - 20, at + 20))}`);
      }),
      { numRuns: 200, seed: 23 },
    );
    assert.ok(content >= 100, `only ${content} of 200 numbers were content`);
    // A dash after a letter or a digit is no sign.
    assert.equal(digest('UTF-8 text on pages 2-4 of the manual'), digest('UTF 8 text on pages 2-4 of the manual'));
  });

  it('siblings of real pages that differ in their version numbers are mostly told apart at k = 3', () => {
    // Every version number of a fixture page changed, everywhere, as a site's generator writes
    // the release notes of another version: a feature that holds a content number weighs twice
    // (fingerprinter.ts, NUMBER_WEIGHT), so such a sibling moves more than 3 bits on 301 of 400
    // seeded siblings (177 with equal weights). Not all: a long page with one version in its
    // footer is the same text to simhash, which is why this is a rate, not a rule.
    const pages = fixtureNames().map(readFixture);
    const original = pages.map((html) => fp.fingerprint({ html }));
    const siblings = fc.sample(fc.tuple(fc.nat(pages.length - 1), fc.integer({ min: 1, max: 9 }), fc.nat()), { numRuns: 400, seed: 21 });
    let apart = 0;
    for (const [which, delta, salt] of siblings) {
      const renamed = new Map<string, string>();
      let r = salt;
      const sibling = pages[which]!.replace(/>[^<]*/g, (text) =>
        text.replace(/\b\d+(?:\.\d+)+\b/g, (v) => {
          if (!renamed.has(v)) {
            const parts = v.split('.');
            r = (Math.imul(r, 1103515245) + 12345) >>> 0;
            const i = r % parts.length;
            parts[i] = String(Number(parts[i]) + delta);
            renamed.set(v, parts.join('.'));
          }
          return renamed.get(v)!;
        }),
      );
      const x = original[which]!;
      const y = fp.fingerprint({ html: sibling });
      if (hammingDistance(x.hi, x.lo, y.hi, y.lo) > 3) apart++;
    }
    assert.ok(apart >= 0.7 * siblings.length, `${apart} of ${siblings.length} siblings more than 3 bits apart`);
  });
});
