/**
 * The second stage: simhash within k stays the first stage; candidates beyond
 * k (within the radius, or sharing a sketch band) count only when the feature
 * sketches agree, and every candidate, within k too, only when the two pages
 * hold the same content numbers. Checked as a
 * property against a brute-force oracle over generated streams (clusters of
 * nearby fingerprints, sketches sharing a chosen share of bins, short pages,
 * repeated ids), and through a snapshot and a changelog restore.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Decider, type DecisionInput, type SecondStage } from '../../../src/dedup/decider.js';
import {
  LARGE_NUMBERS_BYTES,
  MIN_CONFIRMING_SIZE,
  MINHASH_BINS,
  NUMBERS_BYTES,
  SMALL_NUMBERS_MIN_MOVE,
  SCRIPT_BYTES,
  SIZE_BYTES,
  overlapOfEqualBins,
  scriptSwapOfEqualBins,
  similarityOfEqualBins,
  sketchScriptShare,
  sketchSize,
} from '../../../src/fingerprint/feature-sketch.js';
import { CHAIN_LIMIT } from '../../../src/dedup/sketch-bands.js';
import { PageStore } from '../../../src/dedup/page-store.js';
import { filePageTier } from '../../../src/storage/file-blob-store.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const scratch = mkdtempSync(join(tmpdir(), 'second-stage-test-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { hammingDistance } from '../../../src/fingerprint/fingerprint-hex.js';
import { SKETCH_BINS, createFingerprinter, sketchSimilarity } from '../../../src/fingerprint/index.js';
import { decodeResult, encodeResult, WORDS_PER_RESULT } from '../../../src/fingerprint/result-codec.js';
import { loadConfig } from '../../../src/config.js';
import { ConfigError } from '../../../src/errors.js';
import { keepsSketches, secondStageBytesPerPage, secondStageFromConfig } from '../../../src/dedup/create-decider.js';
import { shareBand } from '../../support/sketch-bands-oracle.js';
import { createDecider, planFromConfig } from '../../../src/dedup/create-decider.js';
import { fixtureNames, htmlToText, pagesWithVersions, readFixture, withOtherVersion } from '../fingerprint/fixtures.js';
import { positionedParagraphs } from '../../../eval/corpus/untranslated.js';

const K = 3;
const RADIUS = 7;
const plan = planFromBlocks(RADIUS, [8, 8, 8, 8, 8, 8, 8, 8]);

function newDecider(stage: SecondStage | null, store = new PageStore(64, stage === null ? 0 : SKETCH_BINS), index = FingerprintIndex.create({ plan })): Decider {
  return new Decider({ index, store, k: K, secondStage: stage });
}

interface Expected {
  verdict: 'novel' | 'duplicate';
  duplicateOf: string | null;
  distance: number | null;
  secondStage: 'confirmed' | 'rejected' | null;
}

/** Candidates the oracle found agreeing by a change of script alone (scriptSwapOfEqualBins), not by their overlap. */
let oracleScriptSwaps = 0;
/** Candidates whose digests of small numbers differed across a change of script, which the oracle let pass. */
let oracleSmallNumbersAcrossScripts = 0;

/** The rule, by brute force over every earlier page (candidates beyond the radius only through a shared band). */
function oracle(pages: readonly DecisionInput[], stage: SecondStage | null): Expected[] {
  const firstSeen = new Map<string, number>();
  const kept: { page: DecisionInput; expected: Expected }[] = [];
  const out: Expected[] = [];
  for (const page of pages) {
    const before = firstSeen.get(page.id);
    if (before !== undefined) {
      out.push({ ...kept[before]!.expected, secondStage: null });
      continue;
    }
    let best = -1;
    let bestDistance = 65;
    let rejected = false;
    kept.forEach(({ page: q }, j) => {
      const d = hammingDistance(page.hi, page.lo, q.hi, q.lo);
      if (d > (stage === null ? K : stage.radius) && !(stage !== null && shareBand(page.sketch!, q.sketch!, stage.bands ?? 0))) return;
      // A short page matches by simhash only exactly; above 0, only its sketch can confirm, and
      // only when both pages are large enough for their sketches to say anything.
      const shortPair = d > 0 && (page.short || q.short);
      const filled = (x: Uint8Array): boolean => x.subarray(0, MINHASH_BINS).some((b) => b !== 0) && sketchSize(x, 0) >= MIN_CONFIRMING_SIZE;
      if (shortPair && (stage === null || !filled(page.sketch!) || !filled(q.sketch!))) return;
      if (stage !== null) {
        let equal = 0;
        for (let b = 0; b < MINHASH_BINS; b++) if (page.sketch![b] === q.sketch![b]) equal++;
        const [sizeA, sizeB] = [sketchSize(page.sketch!, 0), sketchSize(q.sketch!, 0)];
        const [shareA, shareB] = [sketchScriptShare(page.sketch!, 0), sketchScriptShare(q.sketch!, 0)];
        // The content numbers: the digest of the others equal, and the small numbers' too unless
        // one page has less of the other scripts and more Latin than the other, each by
        // SMALL_NUMBERS_MIN_MOVE of the larger page.
        let sameLarge = true;
        let sameSmall = true;
        for (let b = MINHASH_BINS; b < MINHASH_BINS + NUMBERS_BYTES; b++) {
          if (page.sketch![b] === q.sketch![b]) continue;
          if (b < MINHASH_BINS + LARGE_NUMBERS_BYTES) sameLarge = false;
          else sameSmall = false;
        }
        const larger = Math.max(sizeA, sizeB);
        const otherDown = sizeA * shareA - sizeB * shareB;
        const latinUp = sizeB * (1 - shareB) - sizeA * (1 - shareA);
        const moved = larger > 0 && Math.abs(otherDown) >= SMALL_NUMBERS_MIN_MOVE * larger && Math.abs(latinUp) >= SMALL_NUMBERS_MIN_MOVE * larger && otherDown > 0 === latinUp > 0;
        if (sameLarge && !sameSmall && moved) oracleSmallNumbersAcrossScripts++;
        const sameNumbers = sameLarge && (sameSmall || moved);
        // The sketches agree: the overlap, or one script's text for another's.
        const byOverlap = overlapOfEqualBins(equal, sizeA, sizeB) >= stage.minSimilarity;
        const agree = byOverlap || scriptSwapOfEqualBins(equal, sizeA, shareA, sizeB, shareB);
        if (agree && !byOverlap && sameNumbers) oracleScriptSwaps++;
        // Beyond k: the sketches must agree and the content numbers be the same; within k, the
        // content numbers alone (when both sketches are known: not zeros in every bin).
        const known = page.sketch!.subarray(0, MINHASH_BINS).some((x) => x !== 0) && q.sketch!.subarray(0, MINHASH_BINS).some((x) => x !== 0);
        if (d > K || shortPair ? !agree || !sameNumbers : known && !sameNumbers) {
          rejected = true;
          return;
        }
      }
      if (d < bestDistance) {
        best = j;
        bestDistance = d;
      }
    });
    const expected: Expected =
      best < 0
        ? { verdict: 'novel', duplicateOf: null, distance: null, secondStage: stage !== null && rejected ? 'rejected' : null }
        : { verdict: 'duplicate', duplicateOf: kept[best]!.page.id, distance: bestDistance, secondStage: stage !== null && bestDistance > K ? 'confirmed' : null };
    firstSeen.set(page.id, kept.length);
    kept.push({ page, expected });
    out.push(expected);
  }
  return out;
}

/** A stream: a few cluster centres, members a few bits away, sketches sharing a drawn share of bins with the centre's. */
const streams = fc
  .record({
    centres: fc.array(fc.record({ hi: fc.nat(0xffffffff), lo: fc.nat(0xffffffff), sketch: fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS }) }), { minLength: 1, maxLength: 4 }),
    members: fc.array(
      fc.record({
        centre: fc.nat(3),
        bits: fc.uniqueArray(fc.nat(63), { maxLength: 9 }),
        // Most members share most bins with their centre (near-duplicates); some share few.
        keepBins: fc.oneof(fc.constant(MINHASH_BINS), fc.integer({ min: 36, max: MINHASH_BINS }), fc.integer({ min: 0, max: MINHASH_BINS })),
        // One member in four has other content numbers than its centre (a hard negative's).
        otherNumbers: fc.nat(3),
        // One member in four has another size than its centre (text added or removed), one in
        // four another script share (text of one script for another's, with the size).
        otherSize: fc.nat(3),
        otherScript: fc.nat(3),
        salt: fc.nat(255),
        shortDraw: fc.nat(9),
        repeat: fc.nat(11),
      }),
      { minLength: 1, maxLength: 60 },
    ),
    minSimilarity: fc.constantFrom(0.5, 0.7, 0.85, 0.95),
    bands: fc.constantFrom(0, 7, 14),
    // K: no wider probe, the bands alone reach beyond k (the product's default).
    radius: fc.constantFrom(K, 5, RADIUS),
  })
  .map(({ centres, members, minSimilarity, bands, radius }) => {
    const pages: DecisionInput[] = [];
    members.forEach((m, i) => {
      // One page in twelve re-sends an earlier id (its fingerprint may differ: a re-crawl).
      const id = m.repeat === 0 && i > 0 ? `p${i >> 1}` : `p${i}`;
      const c = centres[m.centre % centres.length]!;
      let { hi, lo } = c;
      for (const b of m.bits) {
        if (b >= 32) hi = (hi ^ (1 << (b - 32))) >>> 0;
        else lo = (lo ^ (1 << b)) >>> 0;
      }
      const sketch = new Uint8Array(c.sketch);
      for (let b = m.keepBins; b < MINHASH_BINS; b++) sketch[b] = (sketch[b]! + 1 + ((m.salt + b) % 255)) & 0xff;
      if (m.otherNumbers === 0) sketch[MINHASH_BINS + (m.salt % NUMBERS_BYTES)] ^= 1 + (m.salt % 255);
      if (m.otherSize === 0) sketch[SKETCH_BINS - SIZE_BYTES + (m.salt % SIZE_BYTES)] ^= 1 + (m.salt % 255);
      if (m.otherScript === 0) sketch[SKETCH_BINS - SIZE_BYTES - SCRIPT_BYTES] = (sketch[SKETCH_BINS - SIZE_BYTES - SCRIPT_BYTES]! + 128 + m.salt) & 0xff;
      pages.push({ id, hi, lo, short: m.shortDraw === 0, fetchedAt: 0, sketch });
    });
    // At most CHAIN_LIMIT pages: then no band holds more pages with one key than a probe looks at.
    return { pages: pages.slice(0, CHAIN_LIMIT), minSimilarity, bands, radius };
  });

/** The stream decided in order, as the fields the oracle gives. */
function decideAll(stage: SecondStage | null, pages: readonly DecisionInput[]): Expected[] {
  const d = newDecider(stage);
  return pages.map((p) => {
    const v = d.decide(p);
    return { verdict: v.verdict, duplicateOf: v.duplicateOf, distance: v.distance, secondStage: v.secondStage };
  });
}

test('decisions with the second stage equal the brute-force rule (generated streams)', () => {
  fc.assert(
    fc.property(streams, ({ pages, minSimilarity, bands, radius }) => {
      const stage = { radius, minSimilarity, bands };
      assert.deepEqual(decideAll(stage, pages), oracle(pages, stage));
    }),
    { numRuns: 300, seed: 9 },
  );
});

test('with the second stage off, the same streams get the first stage alone', () => {
  fc.assert(
    fc.property(streams, ({ pages }) => {
      assert.deepEqual(decideAll(null, pages), oracle(pages, null));
    }),
    { numRuns: 100, seed: 10 },
  );
});

test('the generated streams exercise both outcomes of the second stage', () => {
  let confirmed = 0;
  let rejected = 0;
  oracleScriptSwaps = 0;
  oracleSmallNumbersAcrossScripts = 0;
  fc.assert(
    fc.property(streams, ({ pages, minSimilarity, bands, radius }) => {
      for (const e of oracle(pages, { radius, minSimilarity, bands })) {
        if (e.secondStage === 'confirmed') confirmed++;
        if (e.secondStage === 'rejected') rejected++;
      }
    }),
    { numRuns: 300, seed: 9 },
  );
  assert.ok(confirmed > 50 && rejected > 50, `confirmed ${confirmed}, rejected ${rejected}`);
  assert.ok(oracleScriptSwaps > 10, `only ${oracleScriptSwaps} candidates agree by a change of script alone`);
  assert.ok(oracleSmallNumbersAcrossScripts > 5, `only ${oracleSmallNumbersAcrossScripts} candidates with other small numbers across a change of script`);
});

test('the generated streams hold pages within k of an earlier page with other content numbers', () => {
  let turnedDown = 0;
  fc.assert(
    fc.property(streams, ({ pages, minSimilarity, bands, radius }) => {
      const alone = oracle(pages, null);
      oracle(pages, { radius, minSimilarity, bands }).forEach((e, i) => {
        if (e.verdict === 'novel' && alone[i]!.verdict === 'duplicate') turnedDown++;
      });
    }),
    { numRuns: 300, seed: 9 },
  );
  // 50 with this seed: fewer than before sketch definition 7 (61), as other small numbers across a
  // change of script no longer turn a page down.
  assert.ok(turnedDown > 40, `only ${turnedDown} first-stage duplicates turned down`);
});

test('real pages with another version in their text are novel at the defaults, within k or not', async () => {
  // The release notes of the next version, the sibling class's API page: simhash alone calls many
  // of them duplicates at 0 to 3 bits, the defaults (second stage on) none.
  const fp = await createFingerprinter();
  const config = loadConfig({});
  const pages = pagesWithVersions();
  assert.ok(pages.length >= 5);
  let withinK = 0;
  fc.assert(
    fc.property(fc.nat(pages.length - 1), fc.nat(), fc.integer({ min: 1, max: 9 }), (which, pick, delta) => {
      const html = pages[which]!;
      const sibling = withOtherVersion(html, pick, delta);
      const a = fp.fingerprint({ html });
      const b = fp.fingerprint({ html: sibling.html });
      // Only siblings whose version reached the features (not a date, not in removed chrome).
      if (a.hi === b.hi && a.lo === b.lo && a.exactHi === b.exactHi && a.exactLo === b.exactLo) return;
      const decider = createDecider(config, planFromConfig(config));
      const input = (id: string, r: typeof a): DecisionInput => ({ id, hi: r.hi, lo: r.lo, short: r.short, sketch: r.sketch, fetchedAt: 0 });
      decider.decide(input('page', a));
      const v = decider.decide(input('sibling', b));
      if (hammingDistance(a.hi, a.lo, b.hi, b.lo) <= config.k) {
        withinK++;
        assert.equal(v.secondStage, 'rejected');
      }
      assert.equal(v.verdict, 'novel', `${sibling.from} -> ${sibling.to} at ${v.distance} bits`);
    }),
    { numRuns: 100, seed: 21 },
  );
  assert.ok(withinK > 30, `only ${withinK} siblings within k`);
});

test('short real pages: a few words edited is a duplicate at the defaults, another short page of the same prose is not', async () => {
  // A short page (fewer than minFeatures features) was matched only exactly, so a help page of
  // twenty words with one word edited was novel. Its sketch confirms the edit; two distinct short
  // pages (other runs of the same page's prose) stay apart, and with the stage off the rule is
  // the paper's again.
  const fp = await createFingerprinter();
  const config = loadConfig({});
  const off = loadConfig({ DEDUP_SECOND_STAGE_BANDS: '0' });
  const prose = fixtureNames().map((n) => htmlToText(readFixture(n)).split(/\s+/).filter((w) => /^\p{L}{3,}$/u.test(w)));
  let short = 0;
  let caught = 0;
  let distinct = 0;
  fc.assert(
    fc.property(fc.nat(), fc.integer({ min: 16, max: 32 }), fc.nat(), fc.nat(), (which, length, at, pick) => {
      const words = prose[which % prose.length]!;
      if (words.length < 3 * length) return;
      const from = at % (words.length - 3 * length + 1);
      const original = words.slice(from, from + length);
      const edited = [...original];
      edited[pick % length] = 'replacement';
      const other = words.slice(from + 2 * length, from + 3 * length);
      const [a, b, c] = [original, edited, other].map((w) => fp.fingerprint({ html: `<p>${w.join(' ')}</p>` }));
      if (!a!.short || !b!.short || a!.features < MIN_CONFIRMING_SIZE || (a!.hi === b!.hi && a!.lo === b!.lo)) return;
      short++;
      const input = (id: string, r: typeof a): DecisionInput => ({ id, hi: r!.hi, lo: r!.lo, short: r!.short, sketch: r!.sketch, fetchedAt: 0 });
      const decider = createDecider(config, planFromConfig(config));
      decider.decide(input('page', a));
      if (decider.decide(input('edited', b)).verdict === 'duplicate') caught++;
      const apart = decider.decide(input('other', c));
      if (apart.verdict === 'novel') distinct++;
      const paper = createDecider(off, planFromConfig(off));
      paper.decide(input('page', a));
      assert.equal(paper.decide(input('edited', b)).verdict, 'novel');
    }),
    { numRuns: 500, seed: 43 },
  );
  assert.ok(short > 150, `only ${short} short pages`);
  assert.ok(caught >= 0.8 * short, `${caught} of ${short} short pages with a word edited called duplicate`);
  assert.equal(distinct, short, `${short - distinct} distinct short pages called duplicate`);
});

/**
 * The Debian Reference's fixture chapters in Chinese and English, paragraph by paragraph: built
 * from one DocBook source, they have the same paragraphs in the same order.
 */
function translatedChapters(): { zh: string[]; en: string[] }[] {
  return ['debref-ch08', 'debref-pr01'].map((chapter) => {
    const zh = positionedParagraphs(readFixture(`${chapter}.zh-cn.html`)).map((p) => p.inner);
    const en = positionedParagraphs(readFixture(`${chapter}.en.html`)).map((p) => p.inner);
    assert.equal(zh.length, en.length, chapter);
    return { zh, en };
  });
}

/** A page of these paragraphs and nothing else. */
const paragraphsPage = (paragraphs: readonly string[]): string => `<html><body><main>${paragraphs.map((p) => `<p>${p}</p>`).join('')}</main></body></html>`;

test('short Chinese pages with a paragraph left in English are duplicates of their translation at the defaults; the English original is not', async () => {
  // The Debian Reference's chapters in English and Chinese, built from one DocBook source, have
  // the same paragraphs in the same order. A short page of 4 or 6 of a chapter's Chinese
  // paragraphs with one of them in English (a translation in progress) shares less than the
  // overlap 0.85 with the full translation when that paragraph is a large part of it: 123 of
  // these 270 pages were duplicates by the overlap alone. The sketch's script share confirms one
  // script's text replaced with another's; the English page (a full translation, which shares
  // its commands and file names) stays novel, and a paragraph replaced by another Chinese one
  // (a rewrite) is a duplicate as often as by the overlap alone, but for a few (30 of 270 by the
  // overlap alone: a long paragraph replaced by a short one).
  const fp = await createFingerprinter();
  const config = loadConfig({});
  const page = paragraphsPage;
  let pages = 0;
  let untranslated = 0;
  let translations = 0;
  let rewrites = 0;
  for (const { zh, en } of translatedChapters()) {
    for (let from = 0; from + 6 <= zh.length; from++) {
      for (const length of [4, 6]) {
        const left = from + ((from * 7) % length);
        const other = (left + length + 3) % zh.length;
        const window = zh.slice(from, from + length);
        const [original, partly, english, rewritten] = [
          page(window),
          page(window.map((p, i) => (from + i === left ? en[left]! : p))),
          page(en.slice(from, from + length)),
          page(window.map((p, i) => (from + i === left ? zh[other]! : p))),
        ].map((html) => fp.fingerprint({ html }));
        const input = (id: string, r: typeof original): DecisionInput => ({ id, hi: r!.hi, lo: r!.lo, short: r!.short, sketch: r!.sketch, fetchedAt: 0 });
        const decidedAfter = (r: typeof original) => {
          const decider = createDecider(config, planFromConfig(config));
          decider.decide(input('original', original));
          return decider.decide(input('next', r)).verdict;
        };
        pages++;
        if (decidedAfter(partly) === 'duplicate') untranslated++;
        if (decidedAfter(english) === 'duplicate') translations++;
        if (decidedAfter(rewritten) === 'duplicate') rewrites++;
      }
    }
  }
  assert.equal(pages, 270);
  assert.ok(untranslated >= 220, `${untranslated} of ${pages} pages with a paragraph left in English called duplicate`);
  assert.equal(translations, 0, `${translations} English originals called duplicates of their translation`);
  assert.ok(rewrites <= 35, `${rewrites} of ${pages} pages with a paragraph rewritten called duplicate`);
});

test('a count the translation writes as a digit and its source as a word keeps a partly untranslated page a duplicate', async () => {
  // "配额系统允许设置4个限制" against "The quota system allows you to set four limits": the tuning
  // stream's partly untranslated pages were held apart by the digest of content numbers alone
  // more often than by anything else (eval/sweep/generated-pairs.ts). The small numbers have a
  // digest of their own, which may differ across a change of script. Pages as in the test above;
  // the paragraph left in English says how many of something there are in a word, its
  // translation in a digit.
  const fp = await createFingerprinter();
  const config = loadConfig({});
  const page = paragraphsPage;
  const WORDS = ['two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
  const input = (id: string, r: { hi: number; lo: number; short: boolean; sketch: Uint8Array }): DecisionInput => ({ id, hi: r.hi, lo: r.lo, short: r.short, sketch: r.sketch, fetchedAt: 0 });
  const decidedAfter = (first: string, next: string): string => {
    const decider = createDecider(config, planFromConfig(config));
    decider.decide(input('original', fp.fingerprint({ html: first })));
    return decider.decide(input('next', fp.fingerprint({ html: next }))).verdict;
  };
  let plain = 0;
  let counted = 0;
  let sameScript = 0;
  let otherCounts = 0;
  let windows = 0;
  for (const { zh, en } of translatedChapters()) {
    for (let from = 0; from + 6 <= zh.length; from++) {
      const left = from + ((from * 5) % 6);
      const n = 2 + (from % WORDS.length);
      const window = zh.slice(from, from + 6);
      const partly = (zhCount: string, enCount: string): [string, string] => [
        page(window.map((p, i) => (from + i === left ? p + zhCount : p))),
        page(window.map((p, i) => (from + i === left ? en[left]! + enCount : p))),
      ];
      windows++;
      if (decidedAfter(...partly('', '')) === 'duplicate') plain++;
      if (decidedAfter(...partly(`共${n}项。`, ` There are ${WORDS[n - 2]} of them.`)) === 'duplicate') counted++;
      // The same count changed in a page of one script is another page's, as before (where the
      // page's set of numbers changes: neither count is elsewhere in the page, as the 8 of UTF-8).
      const [chinese] = partly(`共${n}项。`, '');
      const [other] = partly(`共${n + 1}项。`, '');
      const numbers = (html: string): string => Buffer.from(fp.fingerprint({ html }).sketch.subarray(MINHASH_BINS, MINHASH_BINS + NUMBERS_BYTES)).toString('hex');
      if (numbers(chinese) === numbers(other)) continue;
      otherCounts++;
      if (decidedAfter(chinese, other) === 'duplicate') sameScript++;
    }
  }
  assert.ok(windows >= 60, `${windows} windows`);
  assert.ok(plain >= 0.8 * windows, `${plain} of ${windows} partly untranslated pages are duplicates`);
  assert.ok(counted >= 0.95 * plain, `${counted} of ${windows} with the count are duplicates, ${plain} without`);
  assert.ok(otherCounts >= 0.5 * windows, `${otherCounts} of ${windows} counts changed the page's numbers`);
  assert.equal(sameScript, 0, `${sameScript} of ${otherCounts} Chinese pages with another count called duplicates`);
});

test('a snapshot of the page store and a changelog restore keep the sketches: later decisions are the same (restored into file tiers)', () => {
  fc.assert(
    // The bands' buffer bound is drawn too: low, the band entries of each decider go through many
    // sorted runs (in memory for the live one, in the file tiers for the restored ones).
    fc.property(streams, fc.nat(59), fc.constantFrom(undefined, 1, 6, 50), ({ pages, minSimilarity, bands, radius }, cutAt, bound) => {
      const stage = { radius, minSimilarity, bands };
      const cut = Math.min(cutAt, pages.length);
      const bounded = (store: PageStore): PageStore => ((store.bandBufferEntries = bound), store);
      const live = newDecider(stage, bounded(new PageStore(64, SKETCH_BINS)));
      const head = pages.slice(0, cut).map((p) => ({ page: p, verdict: live.decide(p) }));
      // Snapshot: the page store's bytes, loaded into a file tier; the index rebuilt from its own.
      const tiers = [filePageTier(scratch), filePageTier(scratch)];
      const fromSnapshot = newDecider(stage, bounded(PageStore.fromBuffer(live.store.toBuffer(), tiers[0])), FingerprintIndex.fromBuffer(live.index.toBuffer()));
      // Changelog: every verdict re-applied in bulk, into a file tier.
      const replayed = newDecider(stage, bounded(new PageStore(64, SKETCH_BINS, tiers[1])));
      const seen = new Set<string>();
      replayed.restoreBatch(
        head
          .filter(({ page }) => !seen.has(page.id) && seen.add(page.id))
          .map(({ page, verdict }) => ({ page, duplicateOf: verdict.duplicateOf, distance: verdict.distance ?? 0, sequence: verdict.sequence })),
      );
      for (const p of pages.slice(cut)) {
        const a = live.decide(p);
        for (const other of [fromSnapshot, replayed]) {
          const b = other.decide(p);
          assert.deepEqual([b.verdict, b.duplicateOf, b.distance, b.secondStage], [a.verdict, a.duplicateOf, a.distance, a.secondStage]);
        }
      }
      for (const t of tiers) t.close();
    }),
    { numRuns: 150, seed: 11 },
  );
});

test('the overlap is 2J / (1 + J) for pages of one size and falls as the sizes part', () => {
  for (let equal = 0; equal <= MINHASH_BINS; equal++) {
    const j = similarityOfEqualBins(equal);
    assert.ok(Math.abs(overlapOfEqualBins(equal, 500, 500) - (2 * j) / (1 + j)) < 1e-12);
    let last = Infinity;
    for (const larger of [500, 550, 700, 1000, 5000]) {
      const overlap = overlapOfEqualBins(equal, 500, larger);
      assert.ok(overlap >= 0 && overlap <= 1 && overlap <= last + 1e-12, `${equal} equal bins, sizes 500 and ${larger}: ${overlap}`);
      last = overlap;
    }
  }
});

test('the decider refuses a second stage it cannot run', () => {
  assert.throws(() => newDecider({ radius: K - 1, minSimilarity: 0.8 }), /radius 2 is outside 3\.\.7/);
  assert.throws(() => newDecider({ radius: 8, minSimilarity: 0.8 }), /radius 8 is outside 3\.\.7/);
  assert.throws(() => newDecider({ radius: 6, minSimilarity: 0.8 }, new PageStore(64, 0)), /keeping 64-byte sketches/);
  assert.throws(() => newDecider({ radius: 6, minSimilarity: 1.5 }), /similarity 1\.5 is outside/);
});

test('config: the second stage is on by default with 14 bands and no wider probe; a radius must exceed k', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.secondStageRadius, 0);
  assert.equal(defaults.secondStageBands, 14);
  assert.ok(keepsSketches(defaults));
  assert.deepEqual(secondStageFromConfig(defaults), { radius: K, minSimilarity: 0.85, bands: 14 });
  const off = loadConfig({ DEDUP_SECOND_STAGE_BANDS: '0' });
  assert.equal(keepsSketches(off), false);
  assert.equal(secondStageFromConfig(off), null);
  assert.equal(secondStageBytesPerPage(off), 0);
  // The bands' RAM only: the 64-byte sketch and the bands' sorted runs are in the page store's
  // tier (on disk in the service); RAM keeps a one-byte key fingerprint per band and page, and a
  // share of the bucket counts.
  assert.ok(secondStageBytesPerPage(defaults) >= 1 * 14 && secondStageBytesPerPage(defaults) <= 2 * 14);
  assert.deepEqual(secondStageFromConfig(loadConfig({ DEDUP_SECOND_STAGE_RADIUS: '6', DEDUP_SECOND_STAGE_BANDS: '0' })), { radius: 6, minSimilarity: 0.85, bands: 0 });
  assert.equal(loadConfig({ DEDUP_SECOND_STAGE_RADIUS: '6' }).secondStageRadius, 6);
  assert.throws(() => loadConfig({ DEDUP_SECOND_STAGE_RADIUS: '3' }), (e: unknown) => e instanceof ConfigError && /must be above k=3/.test(e.message));
  assert.equal(loadConfig({ DEDUP_SECOND_STAGE_RADIUS: '6', DEDUP_MODE: 'sharded' }).secondStageRadius, 6);
  assert.throws(() => loadConfig({ DEDUP_SECOND_STAGE_SIMILARITY: '1.2' }), ConfigError);
  assert.equal(loadConfig({ DEDUP_SECOND_STAGE_RADIUS: '4', DEDUP_SECOND_STAGE_BANDS: '14' }).secondStageBands, 14);
  assert.throws(() => loadConfig({ DEDUP_SECOND_STAGE_BANDS: '5' }), (e: unknown) => e instanceof ConfigError && /must be 0 or one of 2, 4, 7, 8, 14, 28/.test(e.message));
});

test('a fingerprint result carries the page\u2019s feature sketch through the worker codec', async () => {
  const fp = await createFingerprinter();
  const page = { html: '<p>one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty thirty-one thirty-two thirty-three</p>' };
  const r = fp.fingerprint(page);
  const viaCall = new Uint8Array(SKETCH_BINS);
  fp.featureSketch(viaCall);
  assert.deepEqual(r.sketch, viaCall);
  assert.ok(r.sketch.some((b) => b !== 0));
  const words = new Uint32Array(3 * WORDS_PER_RESULT);
  encodeResult(r, words, 1);
  assert.deepEqual(decodeResult(words, 1), r);
});
