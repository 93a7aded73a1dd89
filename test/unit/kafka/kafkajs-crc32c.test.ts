/**
 * kafkajs 2.2.4's record batch encoder, once the product's client factory
 * has run (createKafka, src/kafka/client.ts, which applies
 * useFastCrc32cInKafkajs from src/kafka/kafkajs-crc32c.ts): it checksums
 * batches with our crc32c, never kafkajs's own, and the checksum is the one
 * kafkajs's own gives over the same bytes. Which function the encoder calls
 * is read from V8's precise coverage (call counts), so the test sees what
 * runs, not what a module exports. Importing the CLI's pipeline and demo
 * feed does not load the encoder (kafkajs loads it on a client's first
 * produce or fetch), so the replacement can still take when createKafka
 * runs. And when the encoder has loaded before the replacement, the
 * replacement says it is not in force.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createKafka } from '../../../src/kafka/client.js';
import { KAFKAJS_RECORD_BATCH_MODULE, useFastCrc32cInKafkajs } from '../../../src/kafka/kafkajs-crc32c.js';
import { PATCHED_KAFKAJS_VERSION } from '../../../src/kafka/kafkajs-version.js';
import { createLogger } from '../../../src/logger.js';

const require = createRequire(import.meta.url);
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (bytes: Uint8Array) => number;

type Record = (fields: { offsetDelta: number; key: Buffer; value: Buffer }) => unknown;
type RecordBatch = (fields: { records: unknown[] }) => Promise<{ buffer: Buffer }>;

/** Calls per function name in the files whose URL ends with one of `files`, over what `run` did. */
async function callCounts(files: readonly string[], run: () => Promise<void>): Promise<Map<string, number>> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await run();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    await session.post('Profiler.stopPreciseCoverage');
    const counts = new Map<string, number>();
    for (const script of result) {
      const file = files.find((f) => script.url.endsWith(f));
      if (file === undefined) continue;
      for (const fn of script.functions) counts.set(`${file}:${fn.functionName}`, (counts.get(`${file}:${fn.functionName}`) ?? 0) + (fn.ranges[0]?.count ?? 0));
    }
    return counts;
  } finally {
    session.disconnect();
  }
}

test(`the installed kafkajs is ${PATCHED_KAFKAJS_VERSION}; after createKafka its record batch encoder checksums with our crc32c, to kafkajs's values`, async () => {
  assert.equal((require('kafkajs/package.json') as { version: string }).version, PATCHED_KAFKAJS_VERSION);
  // The product's entry path: every client the product makes comes from createKafka, and kafkajs
  // is already imported (by client.ts) when it runs.
  createKafka(
    { brokers: ['127.0.0.1:1'], clientId: 'test', instanceId: '0', kafkaSsl: false, kafkaSslCaFile: '', kafkaSaslMechanism: 'none', kafkaSaslUsername: '', kafkaSaslPassword: '' },
    createLogger('error', {}, () => undefined),
  );

  const { RecordBatch } = require(KAFKAJS_RECORD_BATCH_MODULE) as { RecordBatch: RecordBatch };
  const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as Record;
  const batches: Buffer[] = [];
  const counts = await callCounts(['/src/kafka/crc32c.js', '/recordBatch/crc32C/crc32C.js'], async () => {
    for (let n = 1; n <= 5; n++) {
      const records = Array.from({ length: n }, (_, i) => Record({ offsetDelta: i, key: Buffer.from(`key-${i}`), value: Buffer.alloc(100 * i + 7, i) }));
      batches.push((await RecordBatch({ records })).buffer);
    }
  });
  assert.equal(counts.get('/src/kafka/crc32c.js:crc32c'), batches.length, 'our crc32c is not what the encoder calls');
  assert.equal(counts.get('/recordBatch/crc32C/crc32C.js:crc32C') ?? 0, 0, 'the encoder called kafkajs\'s own CRC-32C');
  // FirstOffset (8), Length (4), PartitionLeaderEpoch (4), Magic (1), CRC (4), then the bytes it covers.
  for (const batch of batches) assert.equal(batch.readUInt32BE(17), kafkajsCrc32c(batch.subarray(21)));
  // The encoder has loaded: from now on this can only report, not apply.
  assert.equal(useFastCrc32cInKafkajs(), true);
});

test('the CLI\'s `run` and `demo-feed` load everything they import without loading the record batch encoder, so createKafka\'s replacement takes', () => {
  const dist = (path: string) => fileURLToPath(new URL(`../../../src/${path}`, import.meta.url));
  const script = `
    import { createRequire } from 'node:module';
    await import(${JSON.stringify(dist('app/pipeline.js'))});
    await import(${JSON.stringify(dist('producers/demo-crawler.js'))});
    const require = createRequire(${JSON.stringify(dist('kafka/kafkajs-crc32c.js'))});
    const loaded = require.cache[require.resolve(${JSON.stringify(KAFKAJS_RECORD_BATCH_MODULE)})] !== undefined;
    const { useFastCrc32cInKafkajs } = await import(${JSON.stringify(dist('kafka/kafkajs-crc32c.js'))});
    process.stdout.write(JSON.stringify({ loaded, inForce: useFastCrc32cInKafkajs() }));
  `;
  assert.deepEqual(JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })), { loaded: false, inForce: true });
});

test('when the record batch encoder loaded first, the replacement says it is not in force', () => {
  const module = fileURLToPath(new URL('../../../src/kafka/kafkajs-crc32c.js', import.meta.url));
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(module)});
    require(${JSON.stringify(KAFKAJS_RECORD_BATCH_MODULE)});
    const { useFastCrc32cInKafkajs } = await import(${JSON.stringify(module)});
    process.stdout.write(JSON.stringify([useFastCrc32cInKafkajs(), useFastCrc32cInKafkajs()]));
  `;
  assert.equal(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }), '[false,false]');
});
