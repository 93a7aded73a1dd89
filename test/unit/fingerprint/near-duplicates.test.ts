import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFingerprinter, hammingDistance, type FingerprintResult } from '../../../src/fingerprint/index.js';
import { fixtureNames, readFixture } from './fixtures.js';

const dist = (a: FingerprintResult, b: FingerprintResult): number => hammingDistance(a.hi, a.lo, b.hi, b.lo);

/** Replaces the n-th (0-based) match of re in s. */
function replaceNth(s: string, re: RegExp, n: number, by: string): string {
  let k = 0;
  return s.replace(new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g'), (m) => (k++ === n ? by : m));
}

const VARIANTS: Record<string, (html: string) => string> = {
  'ad block inserted': (h) =>
    h.replace(/<body[^>]*>/, (m) => `${m}<div class="ad-slot"><a href="/x">Cheap watches and shoes, best offers today only, click here</a></div>`),
  'ad block swapped': (h) =>
    h.replace(/<body[^>]*>/, (m) => `${m}<div class="ad-slot"><a href="/y">Luxury cruises to tropical islands, book now and save big</a></div>`),
  'counter and timestamp changed': (h) =>
    h.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g, '2031-01-02 03:04:05').replace(/Last updated on [A-Za-z]+ \d\d, \d{4}/g, 'Last updated on March 09, 2031'),
  'documentation version changed': (h) => h.replace(/3\.11\.2/g, '3.11.9').replace(/版本 2\.100/g, '版本 2.101'),
  'markup reformatted': (h) => h.replace(/>\s*</g, '>\n    <').replace(/<p>/g, '<p class="para" data-x="1">'),
  'word edited': (h) => replaceNth(h, /(?<=<p>[^<]*)(?:\b[a-z]{6,}\b|[\u4e00-\u9fff]{2})/, 2, 'gadget'),
};

/**
 * A version number is content (numbers are content, docs/fingerprint.md), and the title that
 * carries it ("Python 3.11.2 documentation") is a prose page's heading: with page chrome
 * removed by shape, fewer features dilute those two changed shingles, and python-fractions.html
 * moves 4 bits (0-1 on the other pages). Everything else stays within 3.
 */
const BOUND: Record<string, number> = { 'documentation version changed': 4 };

describe('near-duplicates of real pages (fixtures) stay within 3 bits (a changed version number: 4)', () => {
  for (const name of fixtureNames()) {
    it(name, async () => {
      const fp = await createFingerprinter();
      const html = readFixture(name);
      const base = fp.fingerprint({ html });
      assert.equal(base.short || base.empty, false);
      for (const [variant, make] of Object.entries(VARIANTS)) {
        const changed = make(html);
        if (variant === 'word edited') assert.ok(changed !== html, `${variant} changed nothing in ${name}`);
        const d = dist(base, fp.fingerprint({ html: changed }));
        assert.ok(d <= (BOUND[variant] ?? 3), `${name}: ${variant} moved ${d} bits`);
      }
    });
  }

  it('an ad block is invisible with boilerplate removal, visible without', async () => {
    const html = readFixture('python-fractions.html');
    const remove = await createFingerprinter();
    const keep = await createFingerprinter({ boilerplate: 'keep' });
    const withAd = VARIANTS['ad block inserted']!(html);
    assert.deepEqual(remove.fingerprint({ html: withAd }), remove.fingerprint({ html }));
    assert.notDeepEqual(keep.fingerprint({ html: withAd }).exactHi, keep.fingerprint({ html }).exactHi);
  });
});

describe('distinct pages of one site template land far apart', () => {
  const groups: Record<string, string[]> = {
    'python docs (Sphinx)': fixtureNames().filter((n) => n.startsWith('python-')),
    'Debian Reference en (DocBook)': fixtureNames().filter((n) => n.startsWith('debref-') && n.endsWith('.en.html')),
    'Debian Reference zh-cn (DocBook)': fixtureNames().filter((n) => n.endsWith('.zh-cn.html')),
  };
  for (const [group, names] of Object.entries(groups)) {
    it(`${group}: every pair > 10 bits`, async () => {
      assert.ok(names.length >= 3);
      const fp = await createFingerprinter();
      const res = names.map((n) => fp.fingerprint({ html: readFixture(n) }));
      for (let i = 0; i < res.length; i++) {
        for (let j = i + 1; j < res.length; j++) {
          const d = dist(res[i]!, res[j]!);
          assert.ok(d > 10, `${names[i]} vs ${names[j]}: ${d} bits`);
        }
      }
    });
  }
});
