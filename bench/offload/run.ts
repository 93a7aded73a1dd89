/**
 * Consuming-thread cost of prepare + decide (decode, validate, fingerprint,
 * encode the verdicts) per page, three ways, no Kafka:
 *   inline        DEDUP_FINGERPRINT_THREADS=-1: everything on this thread
 *   fingerprint   the former default: decode and encode here, fingerprint on worker threads (strings cloned in)
 *   prepare       the prepare pool: decode, fingerprint and novel encoding on worker threads (bytes transferred)
 * Main-thread time is performance.eventLoopUtilization().active over the run;
 * process CPU (process.cpuUsage: every thread) and wall time are reported too.
 * Cases are interleaved, repeated, and medians reported; the Avro codec runs
 * against an in-memory registry with the product's schemas.
 *
 *   node dist/bench/offload/run.js [pages=2000] [runs=5] [threads=2] [chunk=500] [set=demo|bench]
 * demo: src/producers/demo-pages.ts (about 4 KB of HTML each); bench: the pipeline
 * benchmark's pages (bench/pipeline/pages.ts, 5-50 KB). Writes bench/results/offload-<set>.json
 */
import { writeFileSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import avro from 'avsc';
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { createPageBatchProcessor, type InputRecord } from '../../src/chunk/page-batch-processor.js';
import { createPreparePool } from '../../src/chunk/prepare-pool.js';
import { createFingerprintPool, createFingerprinter } from '../../src/fingerprint/index.js';
import { createRecordCodec } from '../../src/wire/record-codec.js';
import { demoPages } from '../../src/producers/demo-pages.js';
import { benchPages } from '../pipeline/pages.js';
import { Decider } from '../../src/dedup/decider.js';
import { FingerprintIndex, planFromBlocks } from '../../src/index/index.js';

const [pagesArg, runsArg, threadsArg, chunkArg, setArg] = process.argv.slice(2);
const PAGE_SET = setArg === 'bench' ? 'bench' : 'demo';
const PAGES = Number(pagesArg ?? 2000);
const RUNS = Number(runsArg ?? 5);
const THREADS = Number(threadsArg ?? 2);
const CHUNK = Number(chunkArg ?? 500);

function memoryRegistry(): SchemaRegistry {
  const types = new Map<number, avro.Type>();
  let next = 1;
  const typeOf = (id: number): avro.Type => {
    const type = types.get(id);
    if (type === undefined) throw Object.assign(new Error(`schema ${id} not found`), { status: 404 });
    return type;
  };
  return {
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
  } as unknown as SchemaRegistry;
}

const topics = { sourceTopic: 'in', novelTopic: 'novel', duplicateTopic: 'dup', deadLetterTopic: 'dlq', fingerprintsTopic: 'fp' };
const codecTopics = { pagesTopic: 'in', novelTopic: 'novel', duplicateTopic: 'dup', fingerprintsTopic: 'fp' };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const results: Record<string, unknown>[] = [];
for (const format of ['avro', 'json'] as const) {
  const codec = await createRecordCodec({ registry: memoryRegistry(), format, topics: codecTopics, maxPageBytes: 4 << 20 });
  const feed = demoPages({ seed: 42 });
  const pages = PAGE_SET === 'bench' ? benchPages({ count: PAGES, seed: 42, minBytes: 5 * 1024, maxBytes: 50 * 1024 }) : Array.from({ length: PAGES }, () => feed.next().value!);
  // Records as kafkajs hands them over: views into one larger fetch buffer.
  const values = await Promise.all(pages.map((p) => codec.encodePage({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: p.html, text: null })));
  const fetch = Buffer.concat(values);
  let at = 0;
  const records: InputRecord[] = values.map((v, i) => {
    const value = fetch.subarray(at, at + v.length);
    at += v.length;
    return { partition: 0, offset: String(i), key: null, value, timestamp: String(pages[i]!.fetchedAt) };
  });
  const htmlBytes = pages.reduce((s, p) => s + Buffer.byteLength(p.html), 0);
  const fingerprinter = await createFingerprinter();
  const fingerprintPool = await createFingerprintPool({ threads: THREADS });
  const preparePool = await createPreparePool({ codec, threads: THREADS });
  const cases = {
    inline: { pool: null, preparePool: null },
    fingerprint: { pool: fingerprintPool, preparePool: null },
    prepare: { pool: null, preparePool },
  };
  const samples: Record<string, { main: number[]; cpu: number[]; wall: number[] }> = {};
  for (let run = -1; run < RUNS; run++) {
    for (const [name, pools] of Object.entries(cases)) {
      const decider = new Decider({ index: FingerprintIndex.create({ plan: planFromBlocks(3, [16, 16, 16, 16]) }), k: 3 });
      const processor = createPageBatchProcessor({ topics, codec, fingerprinter, decider, maxDeadLetterBytes: 1 << 20, ...pools });
      const elu = performance.eventLoopUtilization();
      const cpu = process.cpuUsage();
      const started = performance.now();
      let outputs = 0;
      for (let c = 0; c < records.length; c += CHUNK) {
        const out = await processor.process(records.slice(c, c + CHUNK));
        outputs += out.novel + out.duplicates;
      }
      const wall = performance.now() - started;
      const used = process.cpuUsage(cpu);
      const active = performance.eventLoopUtilization(elu).active;
      if (outputs !== records.length) throw new Error(`${name}: ${outputs} verdicts for ${records.length} records`);
      if (run < 0) continue; // warm-up
      const s = (samples[name] ??= { main: [], cpu: [], wall: [] });
      s.main.push(active / PAGES);
      s.cpu.push((used.user + used.system) / 1000 / PAGES);
      s.wall.push(wall / PAGES);
    }
  }
  await fingerprintPool.close();
  await preparePool.close();
  for (const [name, s] of Object.entries(samples)) {
    const row = {
      format,
      path: name,
      pageSet: PAGE_SET,
      pages: PAGES,
      meanHtmlBytes: Math.round(htmlBytes / PAGES),
      mainThreadMsPerPage: +median(s.main).toFixed(4),
      processCpuMsPerPage: +median(s.cpu).toFixed(4),
      wallMsPerPage: +median(s.wall).toFixed(4),
      mainThreadMsPerPageRuns: s.main.map((x) => +x.toFixed(4)),
    };
    results.push(row);
    console.log(JSON.stringify(row));
  }
}

let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
} catch {
  // not a checkout
}
const report = {
  experiment: 'consuming-thread milliseconds per page for prepare + decide (decode, fingerprint, encode verdicts), no Kafka',
  command: `node dist/bench/offload/run.js ${PAGES} ${RUNS} ${THREADS} ${CHUNK} ${PAGE_SET}`,
  date: new Date().toISOString(),
  node: process.version,
  cpus: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`,
  commit,
  threads: THREADS,
  chunkRecords: CHUNK,
  runs: RUNS,
  note: 'medians over runs after one warm-up, cases interleaved; the machine is shared, so figures are noisy',
  results,
};
writeFileSync(new URL(`../../../bench/results/offload-${PAGE_SET}.json`, import.meta.url), `${JSON.stringify(report, null, 1)}\n`);
