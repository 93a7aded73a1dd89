/**
 * Index benchmarks (not tests): online index vs a plain C pigeonhole table on
 * the same data, and all pairs vs simhash-pybind's find_all. Every case runs
 * in a fresh process; query rates are medians of several passes after a
 * warm-up. Writes bench/results/index.json.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/index/run.js [--sizes 1e6,1e7] [--pairs 1e6] [--pairs-big 1e7] [--quick]
 *   node dist/bench/index/run.js --paired [--rounds 3]   (adds the paired C/TS rounds to an existing results file)
 *
 * The machine is shared, so the load moves between cases; --paired runs the C
 * baseline and the TS 4 x 16 index alternately, several rounds, and compares
 * the medians of the two series.
 *
 * Needs gcc; the Python peer needs bench/.venv/index (bench/index/setup-peer.sh).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, release, platform } from 'node:os';
import { join } from 'node:path';
import { planFromBlocks, planTables } from '../../src/index/index.js';
import { ensureDataset } from './data.js';

const root = process.cwd();
const build = join(root, 'bench/.build/index');
const argv = process.argv.slice(2);
const arg = (name: string, def: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : def;
};
const quick = argv.includes('--quick');
const sizes = arg('--sizes', '1e6,1e7').split(',').map(Number);
const pairsN = Number(arg('--pairs', '1e6'));
const pairsBigN = Number(arg('--pairs-big', '1e7'));
const passes = quick ? 3 : 5;
const queries = 100_000;
const out = arg('--out', join(root, 'bench/results/index.json'));

function log(msg: string): void {
  process.stderr.write(`[bench:index] ${msg}\n`);
}

function json(cmd: string, args: string[]): Record<string, unknown> {
  log(`${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr}`);
  const line = r.stdout.trim().split('\n').pop()!;
  const parsed = JSON.parse(line) as Record<string, unknown>;
  log(line);
  return parsed;
}

function commit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src/index', 'bench/index'], { encoding: 'utf8' }).trim();
    return dirty === '' ? sha : `uncommitted (on ${sha})`;
  } catch {
    return 'uncommitted';
  }
}

mkdirSync(build, { recursive: true });
if (argv.includes('--paired')) {
  await paired();
  process.exit(0);
}
const cBin = join(build, 'pigeonhole');
execFileSync('gcc', ['-O3', '-march=native', '-o', cBin, join(root, 'bench/index/pigeonhole.c')]);
const gccVersion = execFileSync('gcc', ['--version'], { encoding: 'utf8' }).split('\n')[0];

const node = process.execPath;
const online: Record<string, unknown>[] = [];
const baseline: Record<string, unknown>[] = [];
for (const n of sizes) {
  const data = join(build, `online-${n}.bin`);
  ensureDataset(data, n, queries, 1);
  const c = json(cBin, [data, String(passes)]);
  baseline.push(c);
  const sample = n > 2e6 ? '100' : '500';
  const chosen = planTables({ k: 3, expectedSize: n });
  const plannerIs4x16 = JSON.stringify(chosen) === JSON.stringify(planFromBlocks(3, [16, 16, 16, 16]));
  for (const plan of ['4x16', '5x13', 'planner']) {
    for (const compressed of [false, true]) {
      if (quick && compressed && plan !== '4x16') continue;
      if (plan === 'planner' && plannerIs4x16) {
        online.push({ impl: 'ts-index', plan, compressed, n, sameAs: '4x16', planDesc: '4 tables, blocks 16/16/16/16 (the 4x16 rows)' });
        continue;
      }
      // Ten compressed tables at 10M take many minutes to build on this machine; the raw row shows the design.
      if (plan === '5x13' && compressed && n > 2e6) continue;
      const r = json(node, ['--expose-gc', join(root, 'dist/bench/index/online-case.js'), data, plan, String(compressed), String(passes), sample]);
      r['vsC'] = Number(((r['queriesPerS'] as number) / (c['queries_per_s'] as number)).toFixed(3));
      r['hitsAgreeWithC'] = r['hits'] === c['hits'];
      online.push(r);
    }
  }
}

const allPairs: Record<string, unknown> = {};
{
  const data = join(build, `pairs-${pairsN}.bin`);
  ensureDataset(data, pairsN, 0, 2, 0.01);
  const ts = json(node, [join(root, 'dist/bench/index/all-pairs-case.js'), data, quick ? '1' : '3']);
  allPairs['ours'] = ts;
  const py = join(root, 'bench/.venv/index/bin/python');
  if (existsSync(py)) {
    const peer = json(py, [join(root, 'bench/index/find_all.py'), data, quick ? '1' : '3', '4', '5', '6']);
    allPairs['simhashPybind'] = peer;
    allPairs['ratio'] = Number(((ts['medianMs'] as number) / (peer['medianMs'] as number)).toFixed(3));
    allPairs['note'] = 'find_all takes a set, so duplicate fingerprints collapse; pair counts can differ by the pairs those duplicates form';
  } else {
    allPairs['simhashPybind'] = 'not run: bench/.venv/index missing (bash bench/index/setup-peer.sh)';
  }
  if (pairsBigN > 0) {
    const big = join(build, `pairs-${pairsBigN}.bin`);
    ensureDataset(big, pairsBigN, 0, 3, 0.01);
    allPairs['oursBig'] = json(node, [join(root, 'dist/bench/index/all-pairs-case.js'), big, '1']);
  }
}

// Largest N in 8 GB, from the measured bytes per fingerprint at the largest size.
const largest = Math.max(...sizes);
const estimate = online
  .filter((r) => r['n'] === largest && r['sameAs'] === undefined && (r['plan'] === '4x16' || r['plan'] === 'planner'))
  .map((r) => ({
    plan: r['plan'],
    compressed: r['compressed'],
    byByteLength: Math.floor(8e9 / (r['bytesPerFp'] as number)),
    byRss: Math.floor(8e9 / Math.max(r['bytesPerFp'] as number, r['rssDeltaBytesPerFp'] as number)),
  }));

const cpu = cpus();
const result = {
  benchmark: 'index',
  date: new Date().toISOString(),
  commit: commit(),
  node: process.version,
  gcc: gccVersion,
  machine: { cpu: cpu[0]?.model, cores: cpu.length, memoryGB: Math.round(totalmem() / 2 ** 30), os: `${platform()} ${release()}` },
  method:
    `Shared ${cpu.length}-core machine with other jobs running: every figure is a median (query passes: ${passes} after one warm-up; ` +
    'all pairs: 3 runs after one warm-up), each case in a fresh process. k = 3. 100k queries, 10% planted at 1-3 bits of a stored fingerprint. ' +
    'queriesPerS is after compact() (one sorted run per table, as after a restore); queriesPerSAsBuilt is the state streaming inserts leave. ' +
    'Recall/false positives: a sample of queries checked against a brute-force scan.',
  online,
  baseline,
  allPairs,
  largestNIn8GB: estimate,
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
log(`wrote ${out}`);

async function paired(): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const rounds = Number(arg('--rounds', '3'));
  const results = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
  const bin = join(build, 'pigeonhole');
  execFileSync('gcc', ['-O3', '-march=native', '-o', bin, join(root, 'bench/index/pigeonhole.c')]);
  const rows: Record<string, unknown>[] = [];
  for (const n of sizes) {
    const data = join(build, `online-${n}.bin`);
    ensureDataset(data, n, queries, 1);
    const c: number[] = [];
    const ts: number[] = [];
    for (let i = 0; i < rounds; i++) {
      c.push(json(bin, [data, String(passes)])['queries_per_s'] as number);
      ts.push(json(process.execPath, ['--expose-gc', join(root, 'dist/bench/index/online-case.js'), data, '4x16', 'false', String(passes), '0'])['queriesPerS'] as number);
    }
    const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    rows.push({ n, rounds, cQueriesPerS: c, tsQueriesPerS: ts, cMedian: med(c), tsMedian: med(ts), ratio: Number((med(ts) / med(c)).toFixed(3)) });
  }
  results['pairedVsC'] = { date: new Date().toISOString(), note: 'C and TS 4 x 16 runs alternated; medians of the per-run medians', rows };
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  log(`added pairedVsC to ${out}`);
}
