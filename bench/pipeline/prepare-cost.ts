/**
 * What a prepare worker spends per page, in one thread, by stage: the same
 * pages the scale bench sends (bench/pipeline/pages.ts, Avro as the crawler
 * encodes them), prepared whole as a worker does (prepare-records.ts), and
 * each stage alone over the same pages:
 *
 * - avro: the record's Avro body to an object (avsc, as the worker does);
 * - validate: toCrawledPage, which decodes the html bytes to a string;
 * - fingerprint: the fingerprinter over that string (what the fingerprint
 *   bench and a bare fingerprint pool time);
 * - novel: the novel verdict's Avro value, built as the worker builds it;
 * - fingerprintZh / fingerprintOther: the fingerprint alone, per page with
 *   Han characters (segmented by jieba) and per page without.
 *
 * CPU is the process's (process.cpuUsage: V8's helper threads, the garbage
 * collector's among them, count), over rounds alternated stage by stage; the
 * median round is reported. No Kafka: this accounts for the worker threads'
 * CPU per page in the pipeline against the fingerprint alone.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/pipeline/prepare-cost.js [pages=1500] [rounds=5]
 *
 * Writes "prepareCost" into bench/results/pipeline.json, keeping its other keys.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import { loadConfig } from '../../src/config.js';
import { featureOptionsFromConfig } from '../../src/dedup/create-decider.js';
import { createFingerprinter, fingerprintToBytes, fingerprintToHex } from '../../src/fingerprint/index.js';
import { createRecordPreparer, type PrepareRequest } from '../../src/chunk/prepare-records.js';
import { readSchema } from '../../src/wire/record-codec.js';
import { isBodyReadAsIs, toCrawledPage, type CrawledPage } from '../../src/wire/crawled-page.js';
import { benchPages } from './pages.js';

const PAGES = Number(process.argv[2] ?? 1500);
const ROUNDS = Number(process.argv[3] ?? 5);
const TASK_BYTES = 512 * 1024;
const PAGE_SCHEMA_ID = 1;
const NOVEL_SCHEMA_ID = 2;
const RESULTS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'results', 'pipeline.json');

const config = loadConfig({});
const features = featureOptionsFromConfig(config);
const pageSchema = readSchema('crawled-page');
const pageType = avro.Type.forSchema(JSON.parse(pageSchema));
const novelType = avro.Type.forSchema(JSON.parse(readSchema('novel-page')));

// The scale bench's pages (bench/scale/run.ts: 5 to 50 KB of HTML), encoded as the crawler sends them.
const pages = benchPages({ count: PAGES, seed: 7, minBytes: 5 * 1024, maxBytes: 50 * 1024 });
const header = Buffer.alloc(5);
header.writeInt32BE(PAGE_SCHEMA_ID, 1);
const values = pages.map((p) => Buffer.concat([header, pageType.toBuffer({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, html: Buffer.from(p.html), text: null })]));
const valueBytes = values.reduce((n, v) => n + v.length, 0);
const now = Date.now();

/** The chunks a prepare pool would send: values back to back, about TASK_BYTES each. */
function tasks(): PrepareRequest[] {
  const out: PrepareRequest[] = [];
  for (let i = 0; i < values.length; ) {
    let bytes = 0;
    let j = i;
    while (j < values.length && (j === i || bytes + values[j]!.length <= TASK_BYTES)) bytes += values[j++]!.length;
    const buffer = new Uint8Array(bytes);
    const ends = new Uint32Array(j - i);
    let at = 0;
    for (let n = i; n < j; n++) {
      buffer.set(values[n]!, at);
      at += values[n]!.length;
      ends[n - i] = at;
    }
    out.push({ id: out.length + 1, values: buffer.buffer, ends, fallbackFetchedAt: new Float64Array(j - i).fill(now), schemas: out.length === 0 ? [[PAGE_SCHEMA_ID, pageSchema]] : [] });
    i = j;
  }
  return out;
}

const prepare = await createRecordPreparer({ features, format: 'avro', maxPageBytes: config.maxPageBytes, novelSchemaId: NOVEL_SCHEMA_ID, novelSchema: readSchema('novel-page') });
const fingerprinter = await createFingerprinter(features);
const bodies = values.map((v) => v.subarray(5));
const decoded = bodies.map((b) => pageType.fromBuffer(b) as Record<string, unknown>);
const crawled: CrawledPage[] = decoded.map((r) => toCrawledPage(r, { maxPageBytes: config.maxPageBytes, fallbackFetchedAt: now }));
const prints = crawled.map((p) => fingerprinter.fingerprint({ html: p.html! }));

// Built once: in the pipeline the consuming thread builds them; here nothing is transferred, so they last.
const chunks = tasks();
let sink = 0;
const stages: Record<string, () => void> = {
  whole: () => {
    for (const task of chunks) sink += prepare(task).novelSpans.length;
  },
  avro: () => {
    for (const b of bodies) sink += (pageType.fromBuffer(b) as { id: string }).id.length;
  },
  validate: () => {
    for (const r of decoded) sink += toCrawledPage(r, { maxPageBytes: config.maxPageBytes, fallbackFetchedAt: now }).html!.length;
  },
  fingerprint: () => {
    for (const p of crawled) sink += fingerprinter.fingerprint({ html: p.html! }).features;
  },
  novel: () => {
    // As prepare-records.ts encodeNovelBody: the record's html bytes as they came when they are the
    // text's UTF-8 (isBodyReadAsIs), else the text encoded again; the Avro value (the header goes
    // into the reply apart).
    for (let i = 0; i < crawled.length; i++) {
      const p = crawled[i]!;
      const r = prints[i]!;
      const raw = (decoded[i] as { html: Buffer }).html;
      const html = isBodyReadAsIs(raw) ? raw : Buffer.from(p.html!);
      sink += header.length + novelType.toBuffer({ id: p.id, url: p.url, fetchedAt: p.fetchedAt, fingerprint: Buffer.from(fingerprintToBytes(r.hi, r.lo)), fingerprintHex: fingerprintToHex(r.hi, r.lo), html, text: p.text }).length;
    }
  },
};

// The fingerprint alone by the page's language: a page with Han characters is segmented by jieba.
const han = crawled.map((p) => /[\u4e00-\u9fff]/.test(p.html!));
for (const zh of [true, false]) {
  stages[zh ? 'fingerprintZh' : 'fingerprintOther'] = () => {
    for (let i = 0; i < crawled.length; i++) if (han[i] === zh) sink += fingerprinter.fingerprint({ html: crawled[i]!.html! }).features;
  };
}
const hanPages = han.filter(Boolean).length;

const samples: Record<string, { cpu: number[]; wall: number[] }> = {};
for (const name of Object.keys(stages)) samples[name] = { cpu: [], wall: [] };
for (const run of [stages.whole!, stages.fingerprint!]) run(); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(stages)) {
    const cpu = process.cpuUsage();
    const wall = performance.now();
    run();
    const used = process.cpuUsage(cpu);
    samples[name]!.wall.push(((performance.now() - wall) * 1000) / PAGES);
    samples[name]!.cpu.push((used.user + used.system) / PAGES);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const perPage: Record<string, { cpuUs: number; wallUs: number }> = {};
for (const [name, s] of Object.entries(samples)) {
  // The language rows per page of that language, not per page of the whole set.
  const scale = name === 'fingerprintZh' ? PAGES / hanPages : name === 'fingerprintOther' ? PAGES / (PAGES - hanPages) : 1;
  perPage[name] = { cpuUs: Number((median(s.cpu) * scale).toFixed(1)), wallUs: Number((median(s.wall) * scale).toFixed(1)) };
}
const parts = ['avro', 'validate', 'fingerprint', 'novel'].reduce((n, k) => n + perPage[k]!.cpuUs, 0);
const result = {
  generatedBy: 'bench/pipeline/prepare-cost.ts',
  date: new Date().toISOString(),
  node: process.version,
  loadAverage: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  pages: PAGES,
  rounds: ROUNDS,
  meanValueBytes: Math.round(valueBytes / PAGES),
  pagesWithHan: hanPages,
  perPage,
  stagesSumCpuUs: Number(parts.toFixed(1)),
  wholeOverFingerprint: Number((perPage.whole!.cpuUs / perPage.fingerprint!.cpuUs).toFixed(3)),
  note: 'One thread, no Kafka. whole = prepare-records.ts over 512 KiB chunks (what a prepare worker does); the other rows are its stages alone over the same pages; fingerprintZh and fingerprintOther are per page of pages with Han characters and without. CPU includes V8 helper threads (process.cpuUsage); median of the rounds.',
};
console.log(JSON.stringify(result, null, 2));
if (sink === -1) console.log(sink);
const file = (() => {
  try {
    return JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
})();
file.prepareCost = result;
writeFileSync(RESULTS, JSON.stringify(file, null, 2) + '\n');
