/**
 * Golden vectors: fixed fingerprints for fixed pages, committed in
 * golden-vectors.json. A change of tokenizer, stop words, weights, shingling
 * or hash constants changes them, and this test makes that a visible,
 * reviewed decision: regenerate with
 *   UPDATE_GOLDEN=1 node --test dist/test/unit/fingerprint/golden.test.js
 * and say why in the commit message (stored fingerprints in a running index
 * become incomparable with new ones: plan a re-fingerprint). A change of the
 * vectors must come with a bump of FINGERPRINT_DEFINITION
 * (fingerprint-version.ts), which names the definition in snapshots: the
 * digest of the vectors is recorded per definition in golden-definition.json.
 * The feature sketches a second stage stores per page are persisted state as
 * well: a change of theirs must come with a bump of SKETCH_DEFINITION, whose
 * digests are in golden-sketch-definition.json.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SKETCH_DEFINITION } from '../../../src/fingerprint/fingerprint-version.js';
import { DEFAULT_FEATURE_OPTIONS, FINGERPRINT_DEFINITION, createFingerprinter, fingerprintToHex, fingerprintVersion, type FeatureOptions } from '../../../src/fingerprint/index.js';
import { fixtureNames, readFixture, repoRoot } from './fixtures.js';

const FILE = join(repoRoot(), 'test', 'unit', 'fingerprint', 'golden-vectors.json');
const DEFINITION_FILE = join(repoRoot(), 'test', 'unit', 'fingerprint', 'golden-definition.json');
const SKETCH_DEFINITION_FILE = join(repoRoot(), 'test', 'unit', 'fingerprint', 'golden-sketch-definition.json');

/** Digest of the vectors' fingerprints (simhash and exact hash per page and options). */
function digest(vectors: Vector[]): string {
  return createHash('sha256').update(JSON.stringify(vectors.map((v) => [v.page, v.options, v.simhash, v.exact]))).digest('hex');
}

/** Digest of the vectors' feature sketches. */
function sketchDigest(vectors: Vector[]): string {
  return createHash('sha256').update(JSON.stringify(vectors.map((v) => [v.page, v.options, v.sketch]))).digest('hex');
}

/**
 * Under UPDATE_GOLDEN: checks that `current` is the definition the digest is recorded under, or a
 * new one (a changed digest needs a bumped constant), and returns the definitions with it.
 */
function recordDefinition(definitions: Record<string, string>, current: number, got: string, constant: string): Record<string, string> {
  const known = Object.entries(definitions).find(([, d]) => d === got);
  assert.ok(
    known === undefined ? definitions[String(current)] === undefined : known[0] === String(current),
    `the golden vectors changed: bump ${constant} in src/fingerprint/fingerprint-version.ts first`,
  );
  return { ...definitions, [String(current)]: got };
}

interface Vector {
  page: string;
  options: Partial<FeatureOptions>;
  simhash: string;
  exact: string;
  features: number;
  textLength: number;
  sketch: string;
}

const INLINE: Record<string, { html?: string; text?: string }> = {
  'inline:empty': { text: '' },
  'inline:english': { text: 'The quick brown fox jumps over the lazy dog while the crawler fetches another copy of the same page.' },
  'inline:chinese': { text: '中华人民共和国国务院新闻办公室今天发布白皮书，介绍了中国在生态环境保护方面取得的进展。' },
  'inline:damaged-html': {
    html: '\ufeff<html><head><!-- cut <meta charset=utf-8><script>var t = "</head><body><p>Con\u0007trol, bi\u200edi, N\u0000UL and so\u00adft hy&shy;phen; release 1.5.11 of c&oelig;ur &#150; 2024-05-06 10:31, 1,234 views</p><!-- end --><script>x()</script></body></html>',
  },
  'inline:counters': { text: 'Posted 5 minutes ago, 1,234 views, 35 comments. Page generated 2024-03-05 07:51:16 in 597 ms with 12 queries. Release 1.5.11 notes.' },
  'inline:body-class-html': {
    html: '<html><body class="single post-template-default has-sidebar"><main><p>A page whose body class names a sidebar keeps its content: boilerplate rules look at parts of a page, never at the page itself.</p></main></body></html>',
  },
  'inline:korean-counters': { text: '글꼴 및 글꼴 크기 조회 16,222회 · 댓글 118개 · 최종 수정일 2022-09-26. 적분 및 합계 범위는 2022년 9월 26일에 버전 7.4.2에서 바뀌었습니다.' },
  'inline:invisible-in-numbers': { text: 'Django 3.\u202a1 renamed mysql.\u200fW003 (Listing 2-\u200e4, src/main.rs\u202a:10:5) on 2024-\u200e05-06 10:\u200d31; release v0.\u00003.0.' },
  'inline:book-sidebar-html': {
    html: '<html><body><div id="sidebar" class="widget-area"><p>Recent posts and a tag cloud of the site</p></div><div class="section"><h2>Why GNU/Linux?</h2><p>Many factors dictated the choice of the distribution.</p><div class="sidebar"><p class="title">BACK TO BASICS Linux or GNU/Linux?</p><div class="para">Linux is only a kernel: the name of the system honours the GNU project.</div></div><p>The operating system comes next.</p></div></body></html>',
  },
  'inline:signed-numbers': { text: 'The smallest finite value is -3.40282347e+38 and the largest 3.40282347e+38; read() returns \u22121 on error, 1 on success, in UTF-8 on pages 2-4.' },
  // A BOM (or any run of noise) in front: the page without it (definition 13). Before, the BOM was a
  // visible letter-poor block, and the run it started took the title with the advertisement.
  'inline:bom-before-title-html': {
    html: '\ufeff<!DOCTYPE html>\n<html><head><title>Associated Items - The Rust Reference</title></head><body><div><span>Advertisement</span><div><a href="https://ads.example/click">An online course, 30% off this week</a></div></div><p>Associated items are the items declared in traits or defined in implementations. They are called this because they are defined on an associate type, the type in the implementation.</p></body></html>',
  },
  'inline:mixed-html': {
    html: '<html><head><title>Caf&eacute; &amp; Co</title></head><body><nav>Home</nav><p>Ünïcödé wörds, 日本語のテキスト, 1,234 views.</p></body></html>',
  },
};

const OPTION_SETS: Partial<FeatureOptions>[] = [{}, { shingleSize: 1, weighting: 'binary', cjk: 'bigram', stopWords: false, boilerplate: 'keep' }, { weighting: 'tfidf' }, { weighting: 'log-tf', shingleSize: 3, cjk: 'off' }];

async function compute(): Promise<Vector[]> {
  const out: Vector[] = [];
  for (const options of OPTION_SETS) {
    const fp = await createFingerprinter(options);
    const pages: [string, { html?: string; text?: string }][] = [
      ...Object.entries(INLINE),
      ...fixtureNames().map((n): [string, { html: string }] => [n, { html: readFixture(n) }]),
    ];
    for (const [page, content] of pages) {
      const r = fp.fingerprint(content);
      out.push({
        page,
        options,
        simhash: fingerprintToHex(r.hi, r.lo),
        exact: fingerprintToHex(r.exactHi, r.exactLo),
        features: r.features,
        textLength: r.textLength,
        sketch: Buffer.from(r.sketch).toString('hex'),
      });
    }
  }
  return out;
}

describe('golden vectors', () => {
  it('fingerprints of fixed pages are unchanged', async () => {
    const got = await compute();
    const definitions = JSON.parse(readFileSync(DEFINITION_FILE, 'utf8')) as Record<string, string>;
    const sketchDefinitions = JSON.parse(readFileSync(SKETCH_DEFINITION_FILE, 'utf8')) as Record<string, string>;
    if (process.env['UPDATE_GOLDEN'] === '1') {
      const fingerprints = recordDefinition(definitions, FINGERPRINT_DEFINITION, digest(got), 'FINGERPRINT_DEFINITION');
      const sketches = recordDefinition(sketchDefinitions, SKETCH_DEFINITION, sketchDigest(got), 'SKETCH_DEFINITION');
      writeFileSync(FILE, JSON.stringify(got, null, 1) + '\n');
      writeFileSync(DEFINITION_FILE, JSON.stringify(fingerprints, null, 1) + '\n');
      writeFileSync(SKETCH_DEFINITION_FILE, JSON.stringify(sketches, null, 1) + '\n');
      return;
    }
    const want = JSON.parse(readFileSync(FILE, 'utf8')) as Vector[];
    assert.deepEqual(got, want);
    assert.equal(definitions[String(FINGERPRINT_DEFINITION)], digest(want), 'FINGERPRINT_DEFINITION names these vectors');
    assert.equal(sketchDefinitions[String(SKETCH_DEFINITION)], sketchDigest(want), 'SKETCH_DEFINITION names these sketches');
  });

  it('fingerprintVersion names the definition, the options and the Unicode version', () => {
    const v = fingerprintVersion(DEFAULT_FEATURE_OPTIONS);
    assert.equal(v, `simhash-v${FINGERPRINT_DEFINITION};shingle=2,boilerplate=remove,cjk=jieba,weighting=tf,stopWords=1,minFeatures=32;unicode-${process.versions.unicode}`);
    assert.notEqual(fingerprintVersion({ ...DEFAULT_FEATURE_OPTIONS, shingleSize: 3 }), v);
  });
});
