/**
 * What one index partition of the routed design (docs/architecture.md,
 * "Sharded mode, routed by table prefix") costs per entry as it grows: the
 * real IndexPartition (src/dedup/index-partition.ts) filled to N entries,
 * then timed over further entries, at N = 1M, 10M (and 100M where the
 * machine's memory allows).
 *
 * The entries come as a partition of a 64-partition index gets them
 * (partition-entries.ts). A quarter of the
 * timed entries are near copies of held pages (1 to 6 bits and a few bins
 * moved, the same band key), so probes find candidates in both the table
 * index and the band log.
 *
 *   npx tsc -p tsconfig.json && node --expose-gc dist/bench/scale/partition-probe.js [entries=1000000,10000000] [timed=50000] [tier=file|memory]
 *
 * tier=file (the default) gives the partition a page tier of scratch files,
 * as the routed holder does (ids, sketches and the band keys' sorted runs on
 * disk, read with pread); tier=memory keeps them in RAM.
 *
 * Writes bench/results/partition-probe.json (a run of the same N and tier is
 * replaced): per N, microseconds per entry (probe then record; table and
 * band entries apart, and quantiles), the partition's bytes per entry in RAM
 * (its arrays, and the tier's when it is in memory; the band log's part
 * apart, per band entry) and on disk, and the process's RSS growth.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { IndexPartition, type RoutedPage } from '../../src/dedup/index-partition.js';
import { partitionEntries } from './partition-entries.js';
import { planFromBlocks } from '../../src/index/index.js';
import type { SecondStage } from '../../src/dedup/decider.js';
import { mulberry32 } from '../../src/mulberry32.js';
import { memoryPageTier } from '../../src/dedup/blob-store.js';
import { filePageTier } from '../../src/storage/file-blob-store.js';

const SIZES = (process.argv[2] ?? '1000000,10000000').split(',').map(Number);
const TIMED = Number(process.argv[3] ?? 50_000);
const TIER = process.argv[4] ?? 'file';
if (TIER !== 'file' && TIER !== 'memory') throw new Error(`tier must be file or memory, not ${TIER}`);
const STAGE: SecondStage = { radius: 3, minSimilarity: 0.85, bands: 14 };
const PLAN = planFromBlocks(3, [16, 16, 16, 16]);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RESULTS = join(ROOT, 'bench', 'results', 'partition-probe.json');

const rand = mulberry32(0x5eed1234);
const entry = partitionEntries(rand);

function rss(): number {
  globalThis.gc?.();
  return process.memoryUsage().rss;
}

const quantile = (sorted: Float64Array, q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

interface Run {
  entriesHeld: number;
  tier?: string;
}
const runs: Run[] = [];
for (const size of SIZES) {
  const rss0 = rss();
  const scratch = TIER === 'file' ? mkdtempSync(join(tmpdir(), 'partition-probe-')) : null;
  const files = scratch === null ? null : filePageTier(scratch);
  const tier = files ?? memoryPageTier();
  const partition = new IndexPartition(0, PLAN, 3, STAGE, null, tier);
  // Kept to make near copies of: a sample of the held entries.
  const sample: RoutedPage[] = [];
  const fillStart = performance.now();
  for (let i = 0; i < size; i++) {
    const e = entry(i, null);
    partition.apply(e, i);
    if ((i & 1023) === 0) sample.push(e);
  }
  const fillSeconds = (performance.now() - fillStart) / 1000;
  const rssFilled = rss();
  const times = new Float64Array(TIMED);
  let tableMs = 0;
  let tableCount = 0;
  let bandMs = 0;
  let bandCount = 0;
  let found = 0;
  // Made before the clock starts: the timed loop runs apply() alone.
  const timed = Array.from({ length: TIMED }, (_, j) => entry(size + j, rand() < 0.25 ? sample[(rand() * sample.length) | 0]! : null));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let j = 0; j < TIMED; j++) {
    const e = timed[j]!;
    const t = performance.now();
    const reply = partition.apply(e, size + j);
    const ms = performance.now() - t;
    times[j] = ms * 1000;
    if (reply.settled !== null || reply.unsettled.length > 0) found++;
    if (e.tables !== 0) {
      tableMs += ms;
      tableCount++;
    } else {
      bandMs += ms;
      bandCount++;
    }
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const sorted = times.slice().sort();
  // The page store's and the band log's byteLength count a memory tier's blobs.
  const bandLogRam = partition.bands?.byteLength ?? 0;
  const ram = partition.index.byteLength + partition.store.byteLength + bandLogRam;
  const disk = scratch === null ? 0 : partition.store.tierByteLength + (partition.bands?.bytesOnDisk ?? 0);
  const run = {
    entriesHeld: size,
    tier: TIER,
    tableEntries: partition.size,
    bandEntries: partition.bands?.size ?? 0,
    microsPerEntry: Number(((wallMs * 1000) / TIMED).toFixed(2)),
    cpuMicrosPerEntry: Number(((cpu.user + cpu.system) / TIMED).toFixed(2)),
    microsPerTableEntry: Number(((tableMs * 1000) / tableCount).toFixed(2)),
    microsPerBandEntry: Number(((bandMs * 1000) / bandCount).toFixed(2)),
    microsQuantiles: { p50: Number(quantile(sorted, 0.5).toFixed(2)), p99: Number(quantile(sorted, 0.99).toFixed(2)), max: Number(sorted[sorted.length - 1]!.toFixed(1)) },
    entriesWithAnswers: found / TIMED,
    /** The partition's arrays, and its tier's blobs when they are in memory. */
    ramBytesPerEntry: Number((ram / (size + TIMED)).toFixed(1)),
    /** The band log's part of it, per page it holds (its sequences, its keys' RAM part; its records too in a memory tier). */
    bandLogRamBytesPerBandEntry: Number((bandLogRam / (partition.bands?.size ?? 1)).toFixed(1)),
    /** The tier's files: records, ids, sketches, the band log's records and its runs. */
    diskBytesPerEntry: Number((disk / (size + TIMED)).toFixed(1)),
    rssBytesPerEntry: Number(((rssFilled - rss0) / size).toFixed(1)),
    fillSeconds: Number(fillSeconds.toFixed(1)),
    loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
  };
  runs.push(run);
  console.log(JSON.stringify(run));
  files?.close();
  if (scratch !== null) rmSync(scratch, { recursive: true, force: true });
}

const old = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as { runs: Run[] }) : { runs: [] };
const kept = old.runs.filter((r) => r.tier !== undefined && !runs.some((n) => n.entriesHeld === r.entriesHeld && n.tier === r.tier));
const all = [...kept, ...runs].sort((a, b) => a.entriesHeld - b.entriesHeld || (a.tier ?? '').localeCompare(b.tier ?? ''));
writeFileSync(
  RESULTS,
  `${JSON.stringify({ generatedBy: 'bench/scale/partition-probe.ts', date: new Date().toISOString(), node: process.version, timedEntries: TIMED, plan: '4 tables, blocks 16/16/16/16', bands: STAGE.bands, runs: all }, null, 2)}\n`,
);
