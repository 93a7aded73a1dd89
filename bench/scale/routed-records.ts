/**
 * CPU of the routed records' codec (src/wire/routed-records.ts) per entry:
 * what an owner spends encoding a chunk's entries records and a holder
 * decoding them, on the main thread of each, outside the Kafka clients.
 *
 * The records are chunks of `pages` entries as one partition gets them
 * (partition-entries.ts: a quarter of the entries table entries, a quarter of
 * those at the page's home with the whole sketch; after the first 1,000
 * entries a quarter are near copies of earlier ones), so the whole sketches
 * are delta-coded against the record's earlier ones as in the pipeline.
 * With mix=home every entry is one at its page's home, with the whole sketch
 * (what a page's home partition gets, and what round two's confirmations
 * carry): the delta coding's cost in full.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/scale/routed-records.js [records=400] [pages=200] [runs=7] [mix=partition|home]
 *
 * Prints JSON, and keeps it in bench/results/routed-records.json (a run of the
 * same mix is replaced): microseconds of CPU per entry to encode and to
 * decode (median of `runs`, after one warm-up run), the bytes per entry, and a
 * CRC-32 of every record's bytes, so two builds can be checked to write the
 * same bytes.
 */
import { execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { decodeEntries, encodeEntries, type EntriesRecord } from '../../src/wire/routed-records.js';
import { median } from '../index/data.js';
import { nearCopyEntries } from './partition-entries.js';

const RECORDS = Number(process.argv[2] ?? 400);
const PAGES = Number(process.argv[3] ?? 200);
const RUNS = Number(process.argv[4] ?? 7);
const MIX = process.argv[5] ?? 'partition';
if (MIX !== 'partition' && MIX !== 'home') throw new Error(`mix must be partition or home, not ${MIX}`);

/** The stream's entries, or only its home entries (a 16th of them, near copies of home entries among them). */
const entries = MIX === 'partition' ? nearCopyEntries(RECORDS * PAGES) : nearCopyEntries(RECORDS * PAGES * 24).filter((e) => (e.tables & 1) !== 0).slice(0, RECORDS * PAGES);
if (entries.length < RECORDS * PAGES) throw new Error(`the stream gave ${entries.length} home entries, not ${RECORDS * PAGES}`);
const records: EntriesRecord[] = [];
for (let r = 0; r < RECORDS; r++) {
  records.push({
    chunk: { inputPartition: r % 6, firstOffset: BigInt(r * PAGES), attempt: 0 },
    pages: entries.slice(r * PAGES, (r + 1) * PAGES).map((page, slot) => ({ slot, page })),
  });
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const encodeRuns: number[] = [];
const decodeRuns: number[] = [];
let bytes = 0;
let crc = 0;
for (let run = 0; run <= RUNS; run++) {
  const encoded: Buffer[] = [];
  let t = cpuUs();
  for (const record of records) encoded.push(encodeEntries(record));
  const encodeUs = cpuUs() - t;
  t = cpuUs();
  let decodedPages = 0;
  for (const value of encoded) decodedPages += decodeEntries(value).pages.length;
  const decodeUs = cpuUs() - t;
  if (decodedPages !== RECORDS * PAGES) throw new Error(`decoded ${decodedPages} entries of ${RECORDS * PAGES}`);
  if (run === 0) {
    // The warm-up run: its bytes are every run's.
    for (const value of encoded) {
      bytes += value.length;
      crc = crc32(value, crc);
    }
    continue;
  }
  encodeRuns.push(encodeUs / (RECORDS * PAGES));
  decodeRuns.push(decodeUs / (RECORDS * PAGES));
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RESULTS = join(ROOT, 'bench', 'results', 'routed-records.json');
const round = (x: number): number => Number(x.toFixed(3));
let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
} catch {
  // Not a git checkout: the commit stays unknown.
}
const result = {
  benchmark: 'routed-records',
  date: new Date().toISOString(),
  commit,
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  mix: MIX,
  records: RECORDS,
  pagesPerRecord: PAGES,
  encodeCpuMicrosPerEntry: round(median(encodeRuns)),
  decodeCpuMicrosPerEntry: round(median(decodeRuns)),
  runsEncode: encodeRuns.map(round),
  runsDecode: decodeRuns.map(round),
  bytesPerEntry: round(bytes / (RECORDS * PAGES)),
  crc32: (crc >>> 0).toString(16),
  loadavg: loadavg().map((x) => round(x)),
};
console.log(JSON.stringify(result));
const kept: { mix: string }[] = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as { runs: { mix: string }[] }).runs : [];
writeFileSync(RESULTS, JSON.stringify({ runs: [...kept.filter((r) => r.mix !== MIX), result] }, null, 1) + '\n');
