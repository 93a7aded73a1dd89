import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Label, PageKind } from '../../../eval/labels.js';
import { changeBucket, errorCodeOf, parseVerdictLine, scoreVerdicts, type VerdictLine } from '../../../eval/score.js';

function label(id: string, cluster: string, kind: PageKind, extra: Partial<Label> = {}): Label {
  return { id, cluster, kind, site: 'docs', language: 'en', sourceId: null, detail: null, chromeMarkup: 'semantic', changedFraction: null, ...extra };
}

const novel = (id: string): VerdictLine => ({ id, verdict: 'novel', duplicateOf: null, distance: null });
const dup = (id: string, of: string, distance = 1): VerdictLine => ({ id, verdict: 'duplicate', duplicateOf: of, distance });
const err = (id: string, code: string): VerdictLine => ({ id, error: `${code}: something` });

// Stream: a (original), b (original), a1 (near-dup of a), a2 (near-dup of a), b1 (word edit of b), s (substantive edit of b), h (hostile)
const LABELS: Label[] = [
  label('a', 'A', 'original'),
  label('b', 'B', 'original', { site: 'wiki', language: 'zh-cn' }),
  label('a1', 'A', 'ad-banner', { sourceId: 'a' }),
  label('a2', 'A', 'exact-copy', { sourceId: 'a' }),
  label('b1', 'B', 'word-edit', { sourceId: 'b', site: 'wiki', language: 'zh-cn' }),
  label('s', 'S', 'substantive-edit', { sourceId: 'b', site: 'wiki', language: 'zh-cn', changedFraction: 0.23 }),
  label('h', 'H', 'hostile', { site: 'hostile', language: 'und', detail: 'empty' }),
];

describe('scoreVerdicts', () => {
  it('a perfect run has precision, recall and F1 of 1 and no false positives', () => {
    const s = scoreVerdicts(LABELS, [novel('a'), novel('b'), dup('a1', 'a'), dup('a2', 'a1', 0), dup('b1', 'b'), novel('s'), err('h', 'PAGE_EMPTY')]);
    assert.equal(s.overall.precision, 1);
    assert.equal(s.overall.recall, 1);
    assert.equal(s.overall.f1, 1);
    assert.equal(s.overall.falsePositiveRateOriginals, 0);
    assert.equal(s.overall.positives, 3);
    assert.equal(s.overall.negatives, 4);
    assert.deepEqual(s.hostile, { empty: { 'error:PAGE_EMPTY': 1 } });
    assert.deepEqual(s.errorCodes, { PAGE_EMPTY: 1 });
  });

  it('a duplicate of an earlier page of the same cluster is correct, even of a near-duplicate', () => {
    const s = scoreVerdicts(LABELS, [novel('a'), novel('b'), dup('a1', 'a'), dup('a2', 'a1'), novel('b1'), novel('s'), novel('h')]);
    assert.equal(s.overall.truePositives, 2);
    assert.equal(s.byKind['exact-copy']!.recall, 1);
    assert.equal(s.byKind['word-edit']!.recall, 0);
    assert.equal(s.overall.recall, 2 / 3);
    assert.equal(s.overall.precision, 1);
  });

  it('naming a page of another cluster, a later page, itself or an unknown id is a wrong match', () => {
    for (const of of ['b', 'a2', 'a1', 'nope']) {
      const s = scoreVerdicts(LABELS, [novel('a'), novel('b'), dup('a1', of), novel('a2'), novel('b1'), novel('s'), novel('h')]);
      assert.equal(s.overall.truePositives, 0, of);
      assert.equal(s.overall.wrongMatches, 1, of);
      assert.equal(s.overall.falseNegatives, 3, of);
      assert.equal(s.overall.precision, 0, of);
      assert.equal(s.byKind['ad-banner']!.recall, 0, of);
    }
  });

  it('an original or a substantive edit called duplicate is a false positive', () => {
    const s = scoreVerdicts(LABELS, [novel('a'), dup('b', 'a'), dup('a1', 'a'), dup('a2', 'a'), dup('b1', 'b'), dup('s', 'b'), novel('h')]);
    assert.equal(s.overall.falsePositives, 2);
    assert.equal(s.overall.originalsCalledDuplicate, 1);
    assert.equal(s.overall.falsePositiveRateOriginals, 1 / 2);
    assert.equal(s.overall.duplicateRateSubstantive, 1);
    assert.equal(s.overall.precision, 3 / 5);
    assert.equal(s.overall.recall, 1);
    assert.ok(Math.abs(s.overall.f1! - 0.75) < 1e-12);
    assert.equal(s.bySubstantiveChange['20-30%']!.substantiveCalledDuplicate, 1);
  });

  it('errors and missing verdicts are misses on near-duplicates and not false positives on negatives', () => {
    const s = scoreVerdicts(LABELS, [err('a', 'PAGE_INVALID'), novel('b'), err('a1', 'PAGE_TOO_LARGE'), dup('b1', 'b'), novel('s')]);
    assert.equal(s.overall.errors, 2);
    assert.equal(s.overall.missing, 2); // a2, h
    assert.equal(s.overall.recall, 1 / 3);
    assert.equal(s.overall.precision, 1);
    assert.equal(s.overall.falsePositives, 0);
    assert.deepEqual(s.hostile, { empty: { missing: 1 } });
  });

  it('groups by site and language (hostile input left out) and orders kinds', () => {
    const s = scoreVerdicts(LABELS, [novel('a'), novel('b'), dup('a1', 'a'), dup('a2', 'a'), novel('b1'), novel('s'), novel('h')]);
    assert.deepEqual(Object.keys(s.bySite), ['docs', 'wiki']);
    assert.deepEqual(Object.keys(s.byLanguage), ['en', 'zh-cn']);
    assert.equal(s.byLanguage['en']!.recall, 1);
    assert.equal(s.byLanguage['zh-cn']!.recall, 0);
    assert.equal(s.bySite['wiki']!.pages, 3);
    assert.deepEqual(Object.keys(s.byKind), ['original', 'substantive-edit', 'hostile', 'exact-copy', 'ad-banner', 'word-edit']);
  });

  it('counts verdicts for unknown ids and repeated verdicts as unexpected, the first one wins', () => {
    const s = scoreVerdicts(LABELS, [novel('a'), dup('a', 'b'), novel('zzz'), { id: null, error: 'UNPARSEABLE: x' }]);
    assert.equal(s.unexpectedVerdicts, 3);
    assert.equal(s.byKind['original']!.falsePositives, 0);
  });

  it('matches an error line without an id to the page on that input line', () => {
    const s = scoreVerdicts(LABELS, [novel('a'), novel('b'), dup('a1', 'a'), dup('a2', 'a'), dup('b1', 'b'), novel('s'), { id: null, line: 7, error: 'PAGE_TOO_LARGE: big' }]);
    assert.equal(s.overall.missing, 0);
    assert.equal(s.unexpectedVerdicts, 0);
    assert.deepEqual(s.hostile, { empty: { 'error:PAGE_TOO_LARGE': 1 } });
  });

  it('reports null (not 0 or NaN) for ratios without a denominator', () => {
    const s = scoreVerdicts([label('a', 'A', 'original')], [novel('a')]);
    assert.equal(s.overall.precision, null);
    assert.equal(s.overall.recall, null);
    assert.equal(s.overall.f1, null);
    assert.equal(s.overall.falsePositiveRateOriginals, 0);
  });
});

describe('parseVerdictLine', () => {
  it('reads the batch CLI verdict and error lines', () => {
    assert.deepEqual(parseVerdictLine('{"id":"x","verdict":"duplicate","duplicateOf":"y","distance":2,"fingerprint":"00000000000000ff"}'), {
      id: 'x',
      verdict: 'duplicate',
      duplicateOf: 'y',
      distance: 2,
      fingerprint: '00000000000000ff',
    });
    assert.deepEqual(parseVerdictLine('{"id":"x","verdict":"novel","duplicateOf":null,"distance":null}'), { id: 'x', verdict: 'novel', duplicateOf: null, distance: null });
    assert.deepEqual(parseVerdictLine('{"id":null,"line":3,"error":"RECORD_UNDECODABLE: not valid JSON"}'), { id: null, line: 3, error: 'RECORD_UNDECODABLE: not valid JSON' });
  });

  it('turns junk into error verdicts instead of throwing', () => {
    assert.equal(parseVerdictLine('not json').error?.startsWith('UNPARSEABLE'), true);
    assert.equal(parseVerdictLine('[1]').error?.startsWith('MALFORMED'), true);
    assert.equal(parseVerdictLine('{"id":"x","verdict":"duplicate"}').error?.startsWith('MALFORMED'), true);
  });

  it('errorCodeOf takes the code before the colon', () => {
    assert.equal(errorCodeOf('PAGE_EMPTY: page has no text'), 'PAGE_EMPTY');
    assert.equal(errorCodeOf('weird'), 'weird');
    assert.equal(errorCodeOf(''), 'UNKNOWN');
  });

  it('changeBucket uses 10%-wide buckets', () => {
    assert.equal(changeBucket(0.1), '10-20%');
    assert.equal(changeBucket(0.499), '40-50%');
    assert.equal(changeBucket(1), '90-100%');
  });
});
