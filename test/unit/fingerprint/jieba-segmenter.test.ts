/**
 * The segmenter against jieba-rs itself (@node-rs/jieba's native `cut(text, true)`, the oracle):
 * the same words, in the same order, over real pages and over generated text that mixes
 * dictionary words, unknown characters (the HMM's work), the extension blocks, characters jieba
 * does not count as Han, ASCII and whitespace.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { Worker } from 'node:worker_threads';
import { jiebaTables } from '../../../src/fingerprint/cjk-segmenter.js';
import { JiebaSegmenter } from '../../../src/fingerprint/jieba-segmenter.js';
import { fixtureNames, htmlToText, readFixture } from './fixtures.js';

const require = createRequire(import.meta.url);
const { Jieba } = require('@node-rs/jieba') as { Jieba: { withDict(dict: Uint8Array): { cut(text: string, hmm: boolean): string[] } } };
const { dict } = require('@node-rs/jieba/dict.js') as { dict: Uint8Array };

const native = Jieba.withDict(dict);
const ours = JiebaSegmenter.fromDictionary(dict);

/** The first differing word, with some context, for a readable failure. */
function firstDifference(want: string[], got: string[]): string {
  let i = 0;
  while (i < want.length && want[i] === got[i]) i++;
  return `word ${i}: jieba ${JSON.stringify(want.slice(Math.max(0, i - 2), i + 4))}, ours ${JSON.stringify(got.slice(Math.max(0, i - 2), i + 4))}`;
}

function assertSameCut(text: string): void {
  const want = native.cut(text, true);
  const got = ours.cutString(text);
  if (want.length !== got.length || want.some((w, k) => w !== got[k])) assert.fail(`${JSON.stringify(text.slice(0, 80))}: ${firstDifference(want, got)}`);
}

/** Dictionary words (with their frequencies the route weighs), as a generator's vocabulary. */
const dictionaryWords = new TextDecoder()
  .decode(dict)
  .split('\n')
  .slice(0, 60_000)
  .map((line) => line.split(' ')[0]!)
  .filter((w) => w.length > 0);
/** Characters of the dictionary, one at a time: their combinations are mostly unknown words. */
const dictionaryChars = [...new Set(dictionaryWords.slice(0, 20_000).join(''))];
const unusual = [
  '々', '〇', '⺀', '⼀', // Han by script, not in jieba's blocks: a word each
  '㐀', '䶵', '鿖', '鿿', '豈', '﨎', // in jieba's blocks but not the HMM's range
  '𠀀', '𠮷', '𪚥', '𫝀', '𰀀', // beyond the BMP: inside and outside jieba's blocks
  '\n', '\r\n', ' ', '\u3000', '\t',
  'a', 'Z', '9', '1.5', 'ab12', 'v2.0%', '.', '%', '-', '_', '#', '&', '+',
  '，', '。', '～', '（', '）', '𝟘',
];

describe('jieba segmenter', () => {
  it('cuts as jieba does on the examples its authors give (dictionary route and HMM)', () => {
    assert.deepEqual(ours.cutString('我来到北京清华大学'), ['我', '来到', '北京', '清华大学']);
    // 杭研 is not in the dictionary: the HMM joins it.
    assert.deepEqual(ours.cutString('他来到了网易杭研大厦'), ['他', '来到', '了', '网易', '杭研', '大厦']);
    assert.deepEqual(ours.cutString('我们中出了一个叛徒'), ['我们', '中出', '了', '一个', '叛徒']);
  });

  it('gives jieba-rs\'s words on the text of every fixture page and on its Han runs alone', () => {
    let chinese = 0;
    for (const name of fixtureNames()) {
      const text = htmlToText(readFixture(name));
      assertSameCut(text);
      const runs = (text.match(/\p{Script=Han}+/gu) ?? []).join('\n');
      if (runs.length > 1000) chinese++;
      assertSameCut(runs);
    }
    assert.ok(chinese >= 3, `fixture pages with Chinese: ${chinese}`);
  });

  it('gives jieba-rs\'s words on generated text: dictionary words, unknown characters, other scripts and whitespace', () => {
    const piece = fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...dictionaryWords) },
      { weight: 4, arbitrary: fc.constantFrom(...dictionaryChars) },
      { weight: 1, arbitrary: fc.constantFrom(...unusual) },
      // Any character of the HMM's range: most are missing from some state's emissions, where
      // Viterbi's candidates tie and jieba-rs takes the larger state.
      { weight: 2, arbitrary: fc.integer({ min: 0x4e00, max: 0x9fd5 }).map((c) => String.fromCharCode(c)) },
    );
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 60 }), (pieces) => assertSameCut(pieces.join(''))),
      { numRuns: 3000 },
    );
  });

  it('reports the words of units[from..to) as end offsets into the units it was given', () => {
    const text = 'x中华人民共和国成立了\n北京y';
    const units = Uint16Array.from(text, (c) => c.charCodeAt(0));
    const count = ours.cut(units, 1, units.length - 1);
    const ends = Array.from(ours.wordEnds.subarray(0, count));
    const words = ours.cutString(text.slice(1, -1));
    assert.deepEqual(ends, words.reduce<number[]>((acc, w) => [...acc, (acc.at(-1) ?? 1) + w.length], []));
    assert.equal(ends.at(-1), units.length - 1);
  });

  it('reads a dictionary as jieba-rs does: a word met twice keeps its last frequency, one without a frequency weighs 0', () => {
    const dictionaries = [
      '北京 100\n大学 100\n北京大学 100000\n',
      '北京 100\n大学 100\n北京大学 100000\n北京大学 1\n',
      '北京 100 ns\n大学\n北京大学 3\n学 7\n',
      '  北京   20  \n\n大学 5\r\n',
      // Frequency 0 weighs log 0 = -Infinity, so 北 + 京 and 北京 tie: jieba takes the longer.
      '北京 0\n北 0\n京 5\n大学 3\n',
    ];
    for (const text of dictionaries) {
      const bytes = new TextEncoder().encode(text);
      const want = Jieba.withDict(bytes).cut('北京大学在北京', true);
      assert.deepEqual(JiebaSegmenter.fromDictionary(bytes).cutString('北京大学在北京'), want, JSON.stringify(text));
    }
    assert.throws(() => JiebaSegmenter.fromDictionary('北京 many\n'), /no whole frequency/);
  });

  it('shares its tables with a worker thread: the worker cuts alike over the same memory, reading no dictionary of its own', async () => {
    const tables = await jiebaTables();
    for (const array of [tables.first, tables.unit, tables.weightIndex, tables.weights, tables.rootChild, tables.pairs, tables.filter]) {
      assert.ok(array.buffer instanceof SharedArrayBuffer, 'every table is shared memory');
    }
    const text = '他来到了网易杭研大厦，我来到北京清华大学';
    const worker = new Worker(new URL('./jieba-tables-worker.js', import.meta.url), { workerData: { tables, text } });
    const reply = await new Promise<{ words: string[] }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    assert.deepEqual(reply.words, native.cut(text, true));
    assert.equal(tables.weights[0], 42, 'the worker wrote into the same memory');
    tables.weights[0] = NaN;
  });

  it('keeps no scratch grown for a huge run: one long run of Chinese leaves its arrays at their usual size, and cuts after it as before', () => {
    const segmenter = JiebaSegmenter.fromDictionary(dict);
    // 300,000 units in one run: words the dictionary knows and characters it does not (the HMM's).
    const words = dictionaryWords.slice(1000, 1400).join('');
    const unknown = '杭研鼐鼒鼕鼗';
    let text = '';
    while (text.length < 300_000) text += words + unknown;
    // And 70,000 of one character no word repeats: single steps, all buffered for one HMM cut.
    text += '鼗'.repeat(70_000);
    const units = Uint16Array.from(text, (c) => c.charCodeAt(0));
    const count = segmenter.cut(units, 0, units.length);
    assert.equal(segmenter.wordEnds[count - 1], units.length);
    // The words are read after the cut; the next cut drops them too.
    assert.deepEqual(segmenter.cutString('我来到北京清华大学'), ['我', '来到', '北京', '清华大学']);
    const kept = segmenter.scratchLengths;
    assert.ok(kept.route <= 1 << 16 && kept.viterbi <= 1 << 16 && kept.wordEnds <= 1 << 16, JSON.stringify(kept));
  });
});
