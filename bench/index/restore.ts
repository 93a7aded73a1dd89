/**
 * Restore benchmark (not a test): how fast a shard's state comes back.
 *   - bulk load: FingerprintIndex.bulkInsert of n fingerprints (one call), and
 *     one-by-one insert() for comparison (at 1M only: minutes at 10M);
 *   - changelog-style restore: Decider.restoreBatch in batches of 10,000
 *     (index + page store, ids of 40 bytes), the path a replay takes;
 *   - snapshot: writeSnapshotFile / readSnapshotFile of that state (streamed,
 *     CRC-32 checked), bytes and rates;
 *   - memory: the state's own byte counts and the process RSS.
 * Single-threaded, so every rate is per core. Each size runs in a fresh
 * process; each timing is the median of three runs. Seeded data.
 * Writes bench/results/index-restore.json.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/index/restore.js [--sizes 1e6,1e7]
 *   node dist/bench/index/render-doc.js        (renders the figures into docs/index.md)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { FingerprintIndex, planFromBlocks, type TablePlan } from '../../src/index/index.js';
import { Decider, type RestoredDecision } from '../../src/dedup/decider.js';
import { readSnapshotFile, writeSnapshotFile } from '../../src/storage/state-snapshot.js';
import { rng } from './data.js';

const argv = process.argv.slice(2);
const arg = (name: string, def: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : def;
};
const RUNS = 3;
const BATCH = 10_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function time(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

async function runCase(n: number, planName: string): Promise<Record<string, unknown>> {
  const plan: TablePlan = planName === '4x16' ? planFromBlocks(3, [16, 16, 16, 16]) : planFromBlocks(3, [13, 13, 13, 13, 12]);
  const next = rng(n ^ 0x5eed);
  const his = new Uint32Array(n);
  const los = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    his[i] = next();
    los[i] = next();
  }
  const row: Record<string, unknown> = { n, plan: planName, tables: plan.tables.length, loadAverageAtStart: Math.round(loadavg()[0]! * 10) / 10 };
  // Warm-up on a small set, then the measured runs, each on a fresh index.
  FingerprintIndex.create({ plan }).bulkInsert(his, los, Math.min(n, 100_000));
  const bulk: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const index = FingerprintIndex.create({ plan });
    bulk.push(time(() => index.bulkInsert(his, los, n)));
  }
  row.bulkInsertSeconds = median(bulk);
  row.bulkInsertPerSecond = Math.round(n / median(bulk));
  row.bulkInsertBestPerSecond = Math.round(n / Math.min(...bulk));
  if (n <= 1_000_000) {
    const seq: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const index = FingerprintIndex.create({ plan });
      seq.push(time(() => {
        for (let i = 0; i < n; i++) index.insert(his[i]!, los[i]!);
      }));
    }
    row.insertPerSecond = Math.round(n / median(seq));
  }
  // Changelog-style restore of index + page store, in replay-sized batches.
  let decider: Decider | null = null;
  const restore: number[] = [];
  const base = 1_700_000_000_000;
  for (let r = 0; r < RUNS; r++) {
    const d = new Decider({ index: FingerprintIndex.create({ plan }), k: 3 });
    const batch: RestoredDecision[] = new Array(BATCH);
    let seconds = 0;
    for (let from = 0; from < n; from += BATCH) {
      const m = Math.min(BATCH, n - from);
      batch.length = m;
      for (let j = 0; j < m; j++) {
        const i = from + j;
        batch[j] = { page: { id: `https://example.org/p/${String(i).padStart(16, '0')}`, hi: his[i]!, lo: los[i]!, short: false, fetchedAt: base + i }, duplicateOf: null, distance: 0, sequence: i };
      }
      seconds += time(() => d.restoreBatch(batch));
    }
    restore.push(seconds);
    decider = d;
  }
  row.restoreBatchPerSecond = Math.round(n / median(restore));
  row.restoreBatchBestPerSecond = Math.round(n / Math.min(...restore));
  const d = decider!;
  row.indexBytes = d.index.byteLength;
  row.storeBytes = d.store.byteLength;
  row.bytesPerPage = Math.round(((d.index.byteLength + d.store.byteLength) / n) * 10) / 10;
  row.rssBytes = process.memoryUsage().rss;
  const dir = mkdtempSync(join(arg('--dir', tmpdir()), 'restore-bench-'));
  try {
    const path = join(dir, 'shard-0.snapshot');
    const header = { createdAt: new Date().toISOString(), clusterId: 'bench', changelogTopic: 'bench', offsets: { '0': String(n) }, k: 3, plan, pages: d.store.size };
    let bytes = 0;
    const writes: number[] = [];
    const reads: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      writes.push(await timeAsync(async () => (bytes = await writeSnapshotFile(path, header, d.index, d.store))));
      reads.push(await timeAsync(async () => {
        const loaded = await readSnapshotFile(path);
        if (loaded === null || loaded.index.size !== n || loaded.store.size !== n) throw new Error('snapshot did not round trip');
      }));
    }
    row.snapshotBytes = bytes;
    row.snapshotWriteSeconds = median(writes);
    row.snapshotReadSeconds = median(reads);
    row.snapshotWriteMBps = Math.round(bytes / 1e6 / median(writes));
    row.snapshotReadMBps = Math.round(bytes / 1e6 / median(reads));
    row.snapshotReadPagesPerSecond = Math.round(n / median(reads));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  row.peakRssBytes = process.resourceUsage().maxRSS * 1024;
  row.loadAverageAtEnd = Math.round(loadavg()[0]! * 10) / 10;
  return row;
}

function commit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench/index'], { encoding: 'utf8' }).trim();
    return dirty === '' ? sha : `uncommitted (on ${sha})`;
  } catch {
    return 'uncommitted';
  }
}

async function main(): Promise<void> {
  if (argv[0] === '--case') {
    process.stdout.write(`${JSON.stringify(await runCase(Number(argv[1]), argv[2]!))}\n`);
    return;
  }
  const sizes = arg('--sizes', '1e6,1e7').split(',').map(Number);
  const rows: Record<string, unknown>[] = [];
  for (const n of sizes) {
    // The planner picks 4 x 16 at these sizes; 10 tables show how the cost grows with t.
    for (const plan of ['4x16', '13x4+12']) {
      process.stderr.write(`[bench:restore] n=${n} plan=${plan}\n`);
      const r = spawnSync(process.execPath, [process.argv[1]!, '--case', String(n), plan, ...argv.filter((a, i) => a === '--dir' || argv[i - 1] === '--dir')], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (r.status !== 0) throw new Error(`case n=${n} ${plan} failed: ${r.stderr}`);
      const row = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
      process.stderr.write(`[bench:restore] ${JSON.stringify(row)}\n`);
      rows.push(row);
    }
  }
  const cpu = cpus();
  const result = {
    date: new Date().toISOString(),
    commit: commit(),
    node: process.version,
    machine: { cpu: cpu[0]?.model, cores: cpu.length, memoryGB: Math.round(totalmem() / 2 ** 30), os: `${platform()} ${release()}` },
    method: `One fresh process per row; single-threaded (rates are per core); each timing the median of ${RUNS} runs (best in brackets) on a machine shared with other jobs (1-minute load average per row). ` +
      `Restore = Decider.restoreBatch in batches of ${BATCH.toLocaleString('en-US')} with 40-byte ids. Snapshot files on the local disk (${arg('--dir', tmpdir())}).`,
    rows,
  };
  writeFileSync(arg('--out', join(process.cwd(), 'bench/results/index-restore.json')), `${JSON.stringify(result, null, 2)}\n`);
}

await main();
