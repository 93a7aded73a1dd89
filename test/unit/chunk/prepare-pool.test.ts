/**
 * The prepare pool against the inline path as the oracle: over many generated
 * chunks (JSON and Avro pages, broken JSON, ids and bodies with invalid
 * UTF-8, binary bodies, empty pages, pages too large, no id, no value, unknown
 * schema ids, re-sent ids with changed content) both processors write the same messages, byte for byte: same
 * verdicts, same novel values, same dead letters with the same codes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import avro from 'avsc';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { RegistryClient } from '../../../src/wire/registry.js';
import { createPageBatchProcessor, type InputRecord, type OutputMessage } from '../../../src/chunk/page-batch-processor.js';
import { createPreparePool } from '../../../src/chunk/prepare-pool.js';
import { createRecordCodec, readSchema, type RecordCodec } from '../../../src/wire/record-codec.js';
import { createFingerprinter } from '../../../src/fingerprint/index.js';
import { Decider } from '../../../src/dedup/decider.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { mulberry32 } from '../../support/rng.js';

const topics = { sourceTopic: 'in', novelTopic: 'novel', duplicateTopic: 'dup', deadLetterTopic: 'dlq', fingerprintsTopic: 'fp' };
const codecTopics = { pagesTopic: 'in', novelTopic: 'novel', duplicateTopic: 'dup', fingerprintsTopic: 'fp' };
const MAX_PAGE_BYTES = 64 * 1024;
const CRAWLED_PAGE_ID = 7;

const rng = mulberry32;

/** A registry in memory with the client's contract: ids per subject, 404 for an unknown id, magic byte + id + body. */
function memoryRegistry(): RegistryClient {
  const types = new Map<number, avro.Type>([[CRAWLED_PAGE_ID, avro.Type.forSchema(JSON.parse(readSchema('crawled-page')))]]);
  let next = 100;
  const typeOf = (id: number): avro.Type => {
    const type = types.get(id);
    if (type === undefined) throw Object.assign(new Error(`schema ${id} not found`), { status: 404 });
    return type;
  };
  const registry = {
    async register({ schema }: { schema: string }) {
      const id = next++;
      types.set(id, avro.Type.forSchema(JSON.parse(schema)));
      return { id };
    },
    async getSchema(id: number) {
      return typeOf(id);
    },
    async decode(buffer: Buffer) {
      return typeOf(buffer.readInt32BE(1)).fromBuffer(buffer.subarray(5));
    },
    async encode(id: number, payload: unknown) {
      const header = Buffer.alloc(5);
      header.writeInt32BE(id, 1);
      return Buffer.concat([header, typeOf(id).toBuffer(payload)]);
    },
  };
  // The codec's registry client: calls run as they are (no deadline needed in memory).
  return {
    registry: registry as unknown as SchemaRegistry,
    displayUrl: 'memory',
    call: (_what, operation) => operation(),
    registerSchema: async (_subject, schema) => (await registry.register({ schema })).id,
    health: () => ({ lastSuccessAt: 0, consecutiveFailures: 0 }),
  };
}

const crawledPageType = avro.Type.forSchema(JSON.parse(readSchema('crawled-page')));
/** The same schema with the id as bytes: Avro writes a string and bytes alike, so this writes a string id that is not UTF-8. */
const rawIdType = avro.Type.forSchema({ ...JSON.parse(readSchema('crawled-page')), fields: JSON.parse(readSchema('crawled-page')).fields.map((f: { name: string }) => (f.name === 'id' ? { ...f, type: 'bytes' } : f)) });
function avroRecord(schemaId: number, page: Record<string, unknown>): Buffer {
  const header = Buffer.alloc(5);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat([header, crawledPageType.toBuffer(page)]);
}

const WORDS = 'crawler fetched the page again with another banner and a new counter while the article text stayed the same for readers café 東京'.split(' ');

function record(r: () => number, offset: number): { record: InputRecord; kind: string } {
  const roll = r();
  const words = Array.from({ length: 40 + Math.floor(r() * 80) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  const page = { id: `id-${Math.floor(r() * 50)}`, url: `https://example.org/${offset}`, fetchedAt: 1_700_000_000_000 + offset, html: `<html><body><p>${words}</p></body></html>` };
  let value: Buffer | null;
  let kind = 'page';
  if (roll < 0.05) (value = Buffer.from('{"id": "x", "url": '), (kind = 'broken-json'));
  else if (roll < 0.08) (value = Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), (kind = 'bad-utf8'));
  else if (roll < 0.1) (value = null, (kind = 'null'));
  else if (roll < 0.12) (value = Buffer.alloc(0), (kind = 'no-value'));
  else if (roll < 0.15) (value = Buffer.from(JSON.stringify({ ...page, html: '<html><script>var x = 1</script></html>' })), (kind = 'empty'));
  else if (roll < 0.18) (value = Buffer.from(JSON.stringify({ url: page.url, html: page.html })), (kind = 'no-id'));
  else if (roll < 0.2) (value = Buffer.from(JSON.stringify({ ...page, html: 'x'.repeat(MAX_PAGE_BYTES + 10) })), (kind = 'too-large-body'));
  else if (roll < 0.21) (value = Buffer.from(JSON.stringify({ ...page, html: 'x'.repeat(MAX_PAGE_BYTES + 70 * 1024) })), (kind = 'too-large-record'));
  else if (roll < 0.23) (value = Buffer.from([0, 0, 0, 0, 42, 1, 2, 3]), (kind = 'unknown-schema'));
  else if (roll < 0.24) (value = Buffer.from([0, 0, 0]), (kind = 'short-avro'));
  else if (roll < 0.26) (value = Buffer.concat([avroRecord(CRAWLED_PAGE_ID, { ...page, html: null, text: null }).subarray(0, 12)]), (kind = 'truncated-avro'));
  else if (roll < 0.27) (value = avroRecord(CRAWLED_PAGE_ID, { ...page, html: Buffer.from([...Buffer.from(`<p>${words}`), 0xc3, 0x28, 0xff, ...Buffer.from(' bytes</p>')]), text: null }), (kind = 'avro-bad-utf8'));
  else if (roll < 0.28) (value = avroRecord(CRAWLED_PAGE_ID, { ...page, html: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...Array.from({ length: 300 }, () => Math.floor(r() * 256))]), text: null }), (kind = 'avro-binary'));
  else if (roll < 0.285) (value = Buffer.concat([Buffer.from([0, 0, 0, 0, CRAWLED_PAGE_ID]), rawIdType.toBuffer({ ...page, id: Buffer.from([0x69, 0x64, 0xff, 0x2d, Math.floor(r() * 50)]), html: Buffer.from(page.html), text: null })]), (kind = 'avro-bad-utf8-id'));
  else if (roll < 0.29) (value = Buffer.from(`{"id":"${page.id}","text":"${words} \\ud800 lone"}`), (kind = 'lone-surrogate'));
  else if (roll < 0.3) (value = Buffer.concat([Buffer.from(`{"id":"${page.id}","html":"<p>${words.slice(0, 40)}`), Buffer.from([0xe6, 0x97, 0xe9]), Buffer.from(`${words.slice(40)}</p>"}`)]), (kind = 'json-bad-utf8'));
  else if (roll < 0.34) (value = Buffer.from(JSON.stringify({ id: page.id, url: page.url, text: words })), (kind = 'text'));
  else if (roll < 0.37) (value = Buffer.from(JSON.stringify({ id: page.id, url: page.url, html: `<p>${words}</p>`, fetchedAt: '2026-01-02T03:04:05Z' })), (kind = 'iso-date'));
  // Bodies whose bytes are not the UTF-8 of the text read from them: a novel verdict must carry the text's bytes, not these.
  else if (roll < 0.39) (value = avroRecord(CRAWLED_PAGE_ID, { ...page, html: Buffer.from(`\ufeff${page.html}`), text: null }), (kind = 'avro-utf8-bom'));
  else if (roll < 0.41) (value = avroRecord(CRAWLED_PAGE_ID, { ...page, html: Buffer.from(`\u00ff\u00fe${Buffer.from(page.html, 'utf16le').toString('latin1')}`), text: null }), (kind = 'avro-misread-utf16'));
  else if (roll < 0.65) (value = avroRecord(CRAWLED_PAGE_ID, { ...page, html: Buffer.from(page.html), text: null }), (kind = 'avro'));
  else value = Buffer.from(JSON.stringify(page));
  return { record: { partition: 0, offset: String(offset), key: null, value, timestamp: String(1_700_000_000_000 + offset) }, kind };
}

const newDecider = () => new Decider({ index: FingerprintIndex.create({ plan: planFromBlocks(3, [16, 16, 16, 16]) }), k: 3 });

function sameMessages(a: Map<string, OutputMessage[]>, b: Map<string, OutputMessage[]>, context: string): void {
  assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort(), `${context}: topics`);
  for (const [topic, messages] of a) {
    const other = b.get(topic)!;
    assert.equal(other.length, messages.length, `${context}: ${topic} count`);
    messages.forEach((m, i) => {
      assert.deepEqual(other[i]!.key, m.key, `${context}: ${topic}[${i}] key`);
      assert.deepEqual(other[i]!.headers, m.headers, `${context}: ${topic}[${i}] headers`);
      assert.ok(Buffer.from(other[i]!.value).equals(m.value), `${context}: ${topic}[${i}] value bytes`);
    });
  }
}

for (const format of ['avro', 'json'] as const) {
  test(`${format} verdicts: the prepare pool writes what the inline path writes, byte for byte`, async () => {
    const registry = memoryRegistry();
    const codec = await createRecordCodec({ registry, format, topics: codecTopics, maxPageBytes: MAX_PAGE_BYTES });
    // Count the records the pooled path decodes again on this thread (re-sent ids whose fingerprint changed).
    let decodedHere = 0;
    const countingCodec: RecordCodec = { ...codec, decodePage: (value, at) => (decodedHere++, codec.decodePage(value, at)) };
    const fingerprinter = await createFingerprinter();
    const pool = await createPreparePool({ codec: countingCodec, threads: 2, taskBytes: 16 * 1024 });
    const limits = new Map([['novel', 40 * 1024], ['dup', 1 << 20], ['dlq', 1 << 20]]);
    const inline = createPageBatchProcessor({ topics, codec, fingerprinter, decider: newDecider(), maxDeadLetterBytes: 4096, maxRecordBytes: limits });
    const pooled = createPageBatchProcessor({ topics, codec: countingCodec, fingerprinter, preparePool: pool, decider: newDecider(), maxDeadLetterBytes: 4096, maxRecordBytes: limits });
    const kinds = new Map<string, number>();
    const codes = new Set<string>();
    let offset = 0;
    try {
      for (let seed = 1; seed <= 30; seed++) {
        const r = rng(seed);
        const chunk = Array.from({ length: 1 + Math.floor(r() * 50) }, () => record(r, offset++));
        for (const c of chunk) kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
        const records = chunk.map((c) => c.record);
        const want = await inline.process(records);
        const got = await pooled.process(records);
        sameMessages(want.topicMessages, got.topicMessages, `seed ${seed}`);
        // An Avro id that is not UTF-8 is refused on both paths, never repaired into another id.
        const dlq = want.topicMessages.get('dlq') ?? [];
        for (const c of chunk.filter((x) => x.kind === 'avro-bad-utf8-id')) {
          const letter = dlq.find((m) => String(m.headers?.['dedup.source.offset']) === c.record.offset);
          assert.equal(String(letter?.headers?.['dedup.error.code']), 'PAGE_INVALID_UTF8', `seed ${seed}: Avro id with invalid UTF-8 at offset ${c.record.offset}`);
        }
        assert.deepEqual(got.verdicts, want.verdicts, `seed ${seed}: verdicts`);
        assert.deepEqual([...got.deadLetters].sort(), [...want.deadLetters].sort(), `seed ${seed}: dead-letter codes`);
        for (const code of want.deadLetters.keys()) codes.add(code);
      }
    } finally {
      await pool.close();
    }
    assert.equal(kinds.size, 22, `every kind generated: ${[...kinds.keys()].join(' ')}`);
    assert.deepEqual([...codes].sort(), ['PAGE_BINARY', 'PAGE_EMPTY', 'PAGE_INVALID', 'PAGE_INVALID_UTF8', 'PAGE_TOO_LARGE', 'RECORD_UNDECODABLE', 'SCHEMA_UNKNOWN']);
    assert.ok(decodedHere > 0, 'some re-sent ids with changed content took the fallback');
  });
}

test('a prepared chunk carries pages without their bodies, and their fingerprints', async () => {
  const codec = await createRecordCodec({ registry: null, format: 'json', topics: codecTopics, maxPageBytes: MAX_PAGE_BYTES });
  const fingerprinter = await createFingerprinter();
  const pool = await createPreparePool({ codec, threads: 1 });
  try {
    const p = createPageBatchProcessor({ topics, codec, fingerprinter, preparePool: pool, decider: newDecider(), maxDeadLetterBytes: 4096 });
    const html = '<p>a page with quite a few words in it to fingerprint for sure</p>';
    const prepared = await p.prepare([{ partition: 0, offset: '0', key: null, value: Buffer.from(JSON.stringify({ id: 'a', url: 'u', html })), timestamp: '5' }]);
    const page = prepared.decoded[0]!;
    assert.ok(!(page instanceof Error) && 'novelValue' in page && !('html' in page));
    assert.deepEqual(prepared.results, [fingerprinter.fingerprint({ html })]);
  } finally {
    await pool.close();
  }
});

test('a registry outage throws out of prepare (retriable): nothing is dead-lettered', async () => {
  const registry = memoryRegistry();
  const codec = await createRecordCodec({ registry, format: 'avro', topics: codecTopics, maxPageBytes: MAX_PAGE_BYTES });
  (registry.registry as unknown as { getSchema: (id: number) => Promise<unknown> }).getSchema = async () => {
    throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  };
  const pool = await createPreparePool({ codec, threads: 1 });
  try {
    const p = createPageBatchProcessor({ topics, codec, fingerprinter: await createFingerprinter(), preparePool: pool, decider: newDecider(), maxDeadLetterBytes: 4096 });
    const value = avroRecord(CRAWLED_PAGE_ID, { id: 'a', url: 'u', fetchedAt: 1, html: Buffer.from('<p>words here</p>'), text: null });
    await assert.rejects(p.process([{ partition: 0, offset: '0', key: null, value, timestamp: '0' }]), { code: 'REGISTRY', retriable: true });
  } finally {
    await pool.close();
  }
});

test('a worker that dies fails the chunk with WORKER_FAILED and closes the pool', async () => {
  const codec = await createRecordCodec({ registry: null, format: 'json', topics: codecTopics, maxPageBytes: MAX_PAGE_BYTES });
  const pool = await createPreparePool({ codec, threads: 2, workerUrl: new URL('./dying-prepare-worker.js', import.meta.url) });
  const p = createPageBatchProcessor({ topics, codec, fingerprinter: await createFingerprinter(), preparePool: pool, decider: newDecider(), maxDeadLetterBytes: 4096 });
  const r = rng(3);
  const records = Array.from({ length: 10 }, (_, i) => ({ ...record(r, i).record, value: Buffer.from(JSON.stringify({ id: `p${i}`, html: '<p>some words</p>' })) }));
  await assert.rejects(p.process(records), { code: 'WORKER_FAILED' });
  await assert.rejects(pool.prepare([Buffer.from('{"id":"a","text":"b"}')], [0]), { code: 'WORKER_FAILED' }, 'the pool stays closed');
  await pool.close();
});

test('closing the pool rejects the chunks in flight and every later one', async () => {
  const codec = await createRecordCodec({ registry: null, format: 'json', topics: codecTopics, maxPageBytes: MAX_PAGE_BYTES });
  const pool = await createPreparePool({ codec, threads: 1 });
  // One task, on the worker when the pool closes.
  const values = Array.from({ length: 200 }, (_, i) => Buffer.from(JSON.stringify({ id: `p${i}`, html: `<p>${'words of a page '.repeat(100)}</p>` })));
  const inFlight = assert.rejects(pool.prepare(values, values.map(() => 0)), { code: 'WORKER_FAILED' });
  await pool.close();
  await inFlight;
  await assert.rejects(pool.prepare(values.slice(0, 1), [0]), { code: 'WORKER_FAILED' });
});
