/**
 * What a routed index partition's snapshot costs (src/storage/partition-snapshot.ts),
 * beside the replay it saves (partition-restore.ts): N entries
 * (partition-entries.ts's, a quarter near copies, as partition-restore.ts
 * builds them) replayed into an IndexPartition in a page tier of scratch
 * files, then the partition written to a snapshot file and loaded from it
 * into a new tier, beside a replay of the same entries into a fresh
 * partition (what a restore without the snapshot does). The band log's part
 * alone is also loaded from memory two ways: as written (BandLog.readFrom: the
 * runs' entries copied, their RAM part rebuilt) and as the alternative layout
 * would (every page's keys added again with SketchBands.addKeys, in ref order,
 * which rebuilds the runs by sorting and merging; the regrouping of the runs'
 * entries by ref it would need first is not counted). Only the
 * partition's own work is timed: reading the records from Kafka comes on top
 * of the replay. The file is written and read through the page cache (its
 * fsync included in the write); a cold disk adds its read time to the load.
 *
 *   npx tsc -p tsconfig.json && node --expose-gc dist/bench/scale/partition-snapshot.js [entries=1000000] [runs=3]
 *
 * Writes bench/results/partition-snapshot.json: per step (write, load,
 * replay, bandsAsWritten, bandsByAddKeys), CPU and wall microseconds per entry (medians of the runs) and
 * seconds for the N; the file's bytes per entry and per part.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { IndexPartition } from '../../src/dedup/index-partition.js';
import { planFromBlocks } from '../../src/index/index.js';
import type { SecondStage } from '../../src/dedup/decider.js';
import { filePageTier } from '../../src/storage/file-blob-store.js';
import { readPartitionSnapshot, writePartitionSnapshot, type PartitionSnapshotHeader } from '../../src/storage/partition-snapshot.js';
import { nearCopyEntries, partitionBenchHead, timingSummary, type EntryTiming } from './partition-entries.js';
import { BandLog } from '../../src/dedup/band-log.js';
import { SketchBands } from '../../src/dedup/sketch-bands.js';
import { bufferSource, concatChunks } from '../../src/index/index.js';

const ENTRIES = Number(process.argv[2] ?? 1_000_000);
const RUNS = Number(process.argv[3] ?? 3);
const STAGE: SecondStage = { radius: 3, minSimilarity: 0.85, bands: 14 };
const PLAN = planFromBlocks(3, [16, 16, 16, 16]);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RESULTS = join(ROOT, 'bench', 'results', 'partition-snapshot.json');
const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => undefined);

const entries = nearCopyEntries(ENTRIES);

type Step = 'write' | 'load' | 'replay' | 'bandsAsWritten' | 'bandsByAddKeys';
type Timing = EntryTiming;

function timed(work: () => void | Promise<void>): Promise<Timing> | Timing {
  gc();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const done = (): Timing => {
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    return { wallUs: (ms * 1000) / ENTRIES, cpuUs: (cpu.user + cpu.system) / ENTRIES, seconds: ms / 1000 };
  };
  const result = work();
  return result instanceof Promise ? result.then(done) : done();
}

const header: Omit<PartitionSnapshotHeader, 'position' | 'pages' | 'bandPages' | 'indexBytes' | 'storeBytes' | 'bandsBytes'> = {
  createdAt: new Date().toISOString(),
  clusterId: 'bench',
  indexTopic: 'dedup.index',
  orderTopic: 'dedup.order',
  partition: 0,
  indexPartitions: 64,
  k: 3,
  plan: PLAN,
  secondStage: STAGE,
  fingerprintVersion: 'bench',
  orderNext: ENTRIES,
  indexOffset: String(ENTRIES),
};

const scratch = mkdtempSync(join(tmpdir(), 'partition-snapshot-'));
let file = { bytes: 0, indexBytes: 0, storeBytes: 0, bandsBytes: 0, tableEntries: 0, bandEntries: 0, bandRuns: 0 };

/** A partition of the N entries (replayed), then written and loaded: the timings of the replay, the write and the load. */
async function round(run: number): Promise<Record<Step, Timing>> {
  const dir = join(scratch, `run-${run}`);
  const tier = filePageTier(join(dir, 'tier-a'));
  const loadedTier = filePageTier(join(dir, 'tier-b'));
  try {
    const partition = new IndexPartition(0, PLAN, 3, STAGE, null, tier);
    const replay = timed(() => {
      for (let i = 0; i < ENTRIES; i++) partition.replay(entries[i]!, i);
    }) as Timing;
    const path = join(dir, `partition-0.snapshot`);
    let bytes = 0;
    const write = await timed(async () => {
      bytes = await writePartitionSnapshot(path, header, partition);
    });
    let loaded: IndexPartition | null = null;
    let got: PartitionSnapshotHeader | null = null;
    const load = await timed(async () => {
      const read = await readPartitionSnapshot(path, { plan: PLAN, k: 3, secondStage: STAGE, routing: null, tier: loadedTier });
      loaded = read!.state;
      got = read!.header;
    });
    const h = got! as PartitionSnapshotHeader;
    const state = loaded! as IndexPartition;
    if (state.position !== partition.position || state.size !== partition.size || state.bands!.size !== partition.bands!.size) throw new Error('the loaded partition differs');
    if (statSync(path).size !== bytes) throw new Error('file size');
    // The band log's part alone, from memory, each way into a tier of scratch files.
    const bandsBytes = concatChunks(partition.bands!.snapshotChunks(4 << 20));
    const bandTier = filePageTier(join(dir, 'tier-c'));
    const bandsAsWritten = timed(() => {
      BandLog.readFrom(bufferSource(bandsBytes), STAGE.bands!, bandTier.runs).dispose();
    }) as Timing;
    const keys = new Uint32Array(1);
    const bandsByAddKeys = timed(() => {
      const bands = new SketchBands(STAGE.bands!, { blobs: bandTier.runs });
      let ref = 0;
      for (const e of entries) {
        if (e.bandKeys.length === 0) continue;
        keys[0] = e.bandKeys[0]!;
        bands.addKeys(ref++, keys, 1, 0);
      }
      bands.dispose();
    }) as Timing;
    bandTier.close();
    file = { bytes, indexBytes: h.indexBytes, storeBytes: h.storeBytes, bandsBytes: h.bandsBytes, tableEntries: partition.size, bandEntries: partition.bands!.size, bandRuns: partition.bands!.bands.runCount };
    return { replay, write, load, bandsAsWritten, bandsByAddKeys };
  } finally {
    tier.close();
    loadedTier.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const loadAtStart = loadavg().map((x) => Number(x.toFixed(2)));
const timings: Record<Step, Timing[]> = { write: [], load: [], replay: [], bandsAsWritten: [], bandsByAddKeys: [] };
try {
  for (let run = 0; run < RUNS; run++) {
    const t = await round(run);
    for (const step of Object.keys(timings) as Step[]) timings[step].push(t[step]);
    console.log(JSON.stringify({ run, ...t }));
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const summary = (Object.keys(timings) as Step[]).map((step) => {
  return { step, ...timingSummary(timings[step], 3) };
});
const cpu = (step: Step): number => summary.find((s) => s.step === step)!.cpuMicrosPerEntry;
const doc = {
  ...partitionBenchHead('bench/scale/partition-snapshot.ts', `node --expose-gc dist/bench/scale/partition-snapshot.js ${ENTRIES} ${RUNS}`, ENTRIES, STAGE.bands!, loadAtStart),
  file: { ...file, bytesPerEntry: Number((file.bytes / ENTRIES).toFixed(2)) },
  summary,
  note: 'Every step is per entry of the N (bandsAsWritten and bandsByAddKeys too, though they handle the band pages alone).',
  loadOverReplayCpu: Number((cpu('load') / cpu('replay')).toFixed(3)),
};
writeFileSync(RESULTS, `${JSON.stringify(doc, null, 2)}\n`);
console.log(JSON.stringify(doc, null, 2));
