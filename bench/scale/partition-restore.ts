/**
 * What a routed index partition's restore costs (src/kafka/routed-holder.ts:
 * a partition taken on replays dedup.order and its dedup.index partition):
 * the same N entries given to a fresh IndexPartition, once by apply() (probe
 * then record, what every chunk cost before chunks already committed were
 * told apart) and once by replay() (record only, what a committed chunk costs
 * now), alternated run by run over the same entries, each into a page tier
 * of scratch files as the holder gives it. Only the partition's own work is
 * timed: reading and decoding the records from Kafka comes on top of both.
 *
 * The entries are partition-entries.ts's (22% table entries, 78% a page's one
 * band key), a quarter of them near copies of earlier ones, so that the
 * probes apply() makes find candidates.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/scale/partition-restore.js [entries=1000000] [runs=2]
 *
 * Writes bench/results/partition-restore.json: per method, CPU and wall
 * microseconds per entry (medians of the runs), and seconds for the N.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { IndexPartition } from '../../src/dedup/index-partition.js';
import { planFromBlocks } from '../../src/index/index.js';
import type { SecondStage } from '../../src/dedup/decider.js';
import { filePageTier } from '../../src/storage/file-blob-store.js';
import { nearCopyEntries, partitionBenchHead, timingSummary } from './partition-entries.js';

const ENTRIES = Number(process.argv[2] ?? 1_000_000);
const RUNS = Number(process.argv[3] ?? 2);
const STAGE: SecondStage = { radius: 3, minSimilarity: 0.85, bands: 14 };
const PLAN = planFromBlocks(3, [16, 16, 16, 16]);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RESULTS = join(ROOT, 'bench', 'results', 'partition-restore.json');

const entries = nearCopyEntries(ENTRIES);

type Method = 'apply' | 'replay';
interface Timing { wallUs: number; cpuUs: number; seconds: number; tableEntries: number; bandEntries: number }

function restore(method: Method): Timing {
  const scratch = mkdtempSync(join(tmpdir(), 'partition-restore-'));
  const tier = filePageTier(scratch);
  try {
    const partition = new IndexPartition(0, PLAN, 3, STAGE, null, tier);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    if (method === 'apply') for (let i = 0; i < ENTRIES; i++) partition.apply(entries[i]!, i);
    else for (let i = 0; i < ENTRIES; i++) partition.replay(entries[i]!, i);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return { wallUs: (ms * 1000) / ENTRIES, cpuUs: (cpu.user + cpu.system) / ENTRIES, seconds: ms / 1000, tableEntries: partition.size, bandEntries: partition.bands?.size ?? 0 };
  } finally {
    tier.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

const loadAtStart = loadavg().map((x) => Number(x.toFixed(2)));
const timings: Record<Method, Timing[]> = { apply: [], replay: [] };
for (let run = 0; run < RUNS; run++) {
  for (const method of (run % 2 === 0 ? ['apply', 'replay'] : ['replay', 'apply']) as Method[]) {
    const t = restore(method);
    timings[method].push(t);
    console.log(JSON.stringify({ run, method, ...t }));
  }
}
const summary = (Object.keys(timings) as Method[]).map((method) => {
  const ts = timings[method];
  return {
    method,
    ...timingSummary(ts, 2),
    tableEntries: ts[0]!.tableEntries,
    bandEntries: ts[0]!.bandEntries,
  };
});
const [apply, replay] = summary;
const doc = {
  ...partitionBenchHead('bench/scale/partition-restore.ts', `node dist/bench/scale/partition-restore.js ${ENTRIES} ${RUNS}`, ENTRIES, STAGE.bands!, loadAtStart),
  summary,
  replayOverApplyCpu: Number((replay!.cpuMicrosPerEntry / apply!.cpuMicrosPerEntry).toFixed(3)),
};
writeFileSync(RESULTS, `${JSON.stringify(doc, null, 2)}\n`);
console.log(JSON.stringify(doc, null, 2));
