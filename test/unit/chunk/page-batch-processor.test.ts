/**
 * The chunk processor's two rules, over many generated chunks: every input
 * record ends in exactly one verdict or one dead letter (never none, never
 * two), and only the record's own faults become dead letters: an error of
 * ours (a decider that throws) stops the chunk instead of dead-lettering a
 * good page. A verdict too large for its topic becomes a dead letter, not a
 * refused transaction.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPageBatchProcessor, DLQ_HEADERS, type InputRecord, type OutputMessage } from '../../../src/chunk/page-batch-processor.js';
import { createRecordCodec } from '../../../src/wire/record-codec.js';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { Decider } from '../../../src/dedup/decider.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { mulberry32 } from '../../support/rng.js';

const topics = { sourceTopic: 'in', novelTopic: 'novel', duplicateTopic: 'dup', deadLetterTopic: 'dlq', fingerprintsTopic: 'fp' };

const rng = mulberry32;

const WORDS = 'crawler fetched the page again with another banner and a new counter while the article text stayed the same for readers'.split(' ');

function record(r: () => number, offset: number): { record: InputRecord; kind: string } {
  const roll = r();
  const text = Array.from({ length: 40 + Math.floor(r() * 80) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  const page = { id: `id-${Math.floor(r() * 60)}`, url: `https://example.org/${offset}`, fetchedAt: 1_700_000_000_000 + offset, html: `<html><body><p>${text}</p></body></html>` };
  let value: Buffer | null;
  let kind = 'page';
  if (roll < 0.06) (value = Buffer.from('{"id": "x", "url": '), (kind = 'broken-json'));
  else if (roll < 0.1) (value = Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), (kind = 'bad-utf8'));
  else if (roll < 0.14) (value = null, (kind = 'null'));
  else if (roll < 0.18) (value = Buffer.from(JSON.stringify({ ...page, html: '<html><script>var x = 1</script></html>' })), (kind = 'empty'));
  else if (roll < 0.22) (value = Buffer.from(JSON.stringify({ url: page.url, html: page.html })), (kind = 'no-id'));
  else if (roll < 0.25) (value = Buffer.from([0, 0, 0, 0, 42, 1, 2, 3]), (kind = 'unknown-schema'));
  else value = Buffer.from(JSON.stringify(page));
  return { record: { partition: 0, offset: String(offset), key: null, value, timestamp: String(1_700_000_000_000 + offset) }, kind };
}

async function processor(decider: Decider, maxRecordBytes?: Map<string, number>) {
  const codec = await createRecordCodec({ registry: null, format: 'json', topics: { pagesTopic: 'in', novelTopic: 'novel', duplicateTopic: 'dup', fingerprintsTopic: 'fp' }, maxPageBytes: 1 << 20 });
  const fingerprinter = await createFingerprinter();
  return createPageBatchProcessor({ topics, codec, fingerprinter, decider, maxDeadLetterBytes: 1 << 20, ...(maxRecordBytes ? { maxRecordBytes } : {}) });
}

const newDecider = () => new Decider({ index: FingerprintIndex.create({ plan: planFromBlocks(3, [16, 16, 16, 16]) }), k: 3 });

test('every record of every chunk ends in exactly one verdict or one dead letter', async () => {
  const decider = newDecider();
  const p = await processor(decider);
  let offset = 0;
  const kinds = new Map<string, number>();
  for (let seed = 1; seed <= 40; seed++) {
    const r = rng(seed);
    const chunk = Array.from({ length: 1 + Math.floor(r() * 60) }, () => record(r, offset++));
    for (const c of chunk) kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
    const out = await p.process(chunk.map((c) => c.record));
    const verdicts = [...(out.topicMessages.get('novel') ?? []), ...(out.topicMessages.get('dup') ?? [])];
    const dead = out.topicMessages.get('dlq') ?? [];
    assert.equal(verdicts.length + dead.length, chunk.length, `seed ${seed}: one outcome per record`);
    const deadOffsets = dead.map((m: OutputMessage) => m.headers![DLQ_HEADERS.offset]);
    assert.equal(new Set(deadOffsets).size, dead.length, 'no record dead-lettered twice');
    for (const c of chunk) {
      const isDead = deadOffsets.includes(c.record.offset);
      assert.equal(isDead, c.kind !== 'page', `seed ${seed}: a ${c.kind} record at ${c.record.offset} ${isDead ? 'was' : 'was not'} dead-lettered`);
    }
    for (const m of dead) assert.notEqual(m.headers![DLQ_HEADERS.code], 'UNKNOWN');
  }
  // The generator produced every kind it claims to.
  assert.deepEqual([...kinds.keys()].sort(), ['bad-utf8', 'broken-json', 'empty', 'no-id', 'null', 'page', 'unknown-schema']);
});

test('an error of ours is not dead-lettered: the chunk fails', async () => {
  const decider = newDecider();
  decider.decide = () => {
    throw new TypeError('index corrupted');
  };
  const p = await processor(decider);
  const r = rng(7);
  const chunk = Array.from({ length: 20 }, (_, i) => record(r, i).record).map((rec, i) => ({ ...rec, value: Buffer.from(JSON.stringify({ id: `ok-${i}`, url: 'https://e.org', fetchedAt: 1_700_000_000_000, html: '<p>a page with quite a few words in it to fingerprint for sure</p>' })) }));
  await assert.rejects(p.process(chunk), /index corrupted/);
});

test('a verdict larger than its topic accepts becomes a PAGE_TOO_LARGE dead letter', async () => {
  const p = await processor(newDecider(), new Map([['novel', 64 * 1024], ['dup', 1024 * 1024], ['dlq', 1024 * 1024]]));
  const big = `<p>${'many different words here '.repeat(4000)}</p>`;
  const small = '<p>a small page with enough words to be fingerprinted properly today</p>';
  const out = await p.process([
    { partition: 0, offset: '0', key: null, value: Buffer.from(JSON.stringify({ id: 'big', url: 'https://e.org/big', fetchedAt: 1_700_000_000_000, html: big })), timestamp: '0' },
    { partition: 0, offset: '1', key: null, value: Buffer.from(JSON.stringify({ id: 'small', url: 'https://e.org/small', fetchedAt: 1_700_000_000_000, html: small })), timestamp: '0' },
  ]);
  assert.deepEqual((out.topicMessages.get('novel') ?? []).map((m) => m.key), ['small']);
  const dead = out.topicMessages.get('dlq') ?? [];
  assert.equal(dead.length, 1);
  assert.equal(dead[0]!.headers![DLQ_HEADERS.code], 'PAGE_TOO_LARGE');
  assert.match(dead[0]!.headers![DLQ_HEADERS.message]!, /novel verdict is \d+ bytes/);
});
