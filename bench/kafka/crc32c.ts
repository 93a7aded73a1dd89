/**
 * CRC-32C benchmark (not a test): MB/s of kafkajs 2.2.4's own bytewise
 * CRC-32C (the one its record batch encoder runs over every batch produced)
 * against ours (src/kafka/crc32c.ts, slicing-by-16), over buffers of 256 B to
 * 1 MB of seeded random bytes, each an unaligned Buffer slice as the encoder's
 * are. Each row runs in a fresh process; within it, a warm-up, then RUNS runs
 * of about 32 MB each, timed by the process's CPU time (user + system) and by
 * the wall clock; the median of each. Rows alternate the two implementations.
 * Writes bench/results/crc32c.json.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/kafka/crc32c.js [--sizes 256,1024,16384,262144,1048576]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { crc32c } from '../../src/kafka/crc32c.js';
import { mulberry32Uint32 } from '../../src/mulberry32.js';

const argv = process.argv.slice(2);
const arg = (name: string, def: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : def;
};
const RUNS = 7;
const BYTES_PER_RUN = 32 * 1024 * 1024;

type Implementation = 'kafkajs' | 'ours';

function implementation(name: Implementation): (bytes: Uint8Array) => number {
  // kafkajs's index module, as its encoder requires it (this process never replaces it).
  return name === 'ours' ? crc32c : (createRequire(import.meta.url)('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (bytes: Uint8Array) => number);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function runCase(name: Implementation, size: number): Record<string, unknown> {
  const checksum = implementation(name);
  const next = mulberry32Uint32(size);
  // One byte in front, so the slice starts at an odd byteOffset.
  const backing = Buffer.alloc(size + 1);
  for (let i = 0; i < backing.length; i++) backing[i] = next() & 0xff;
  const bytes = backing.subarray(1);
  const reps = Math.max(1, Math.round(BYTES_PER_RUN / size));
  let sink = 0;
  for (let i = 0; i < reps; i++) sink ^= checksum(bytes);
  const cpuRates: number[] = [];
  const wallRates: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const cpu = process.cpuUsage();
    const wall = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) sink ^= checksum(bytes);
    const wallSeconds = Number(process.hrtime.bigint() - wall) / 1e9;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    cpuRates.push((reps * size) / 1e6 / cpuSeconds);
    wallRates.push((reps * size) / 1e6 / wallSeconds);
  }
  const mbPerCpuSecond = median(cpuRates);
  return {
    implementation: name,
    bytes: size,
    crc: checksum(bytes),
    mbPerCpuSecond: Math.round(mbPerCpuSecond),
    mbPerSecondWall: Math.round(median(wallRates)),
    nsPerByte: Math.round((1e3 / mbPerCpuSecond) * 100) / 100,
    loadAverage: Math.round(loadavg()[0]! * 10) / 10,
    // Returned (and dropped by the parent) so that no call's result is unused.
    sink,
  };
}

function commit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench/kafka'], { encoding: 'utf8' }).trim();
    return dirty === '' ? sha : `uncommitted (on ${sha})`;
  } catch {
    return 'uncommitted';
  }
}

function main(): void {
  if (argv[0] === '--case') {
    process.stdout.write(`${JSON.stringify(runCase(argv[1] as Implementation, Number(argv[2])))}\n`);
    return;
  }
  const sizes = arg('--sizes', '256,1024,16384,262144,1048576').split(',').map(Number);
  const rows: Record<string, unknown>[] = [];
  for (const size of sizes) {
    const byName: Record<string, Record<string, unknown>> = {};
    for (const name of ['kafkajs', 'ours'] as const) {
      const r = spawnSync(process.execPath, [process.argv[1]!, '--case', name, String(size)], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`case ${name} ${size} failed: ${r.stderr}`);
      const row = JSON.parse(r.stdout.trim()) as Record<string, unknown>;
      delete row.sink;
      process.stderr.write(`[bench:crc32c] ${JSON.stringify(row)}\n`);
      byName[name] = row;
      rows.push(row);
    }
    if (byName.kafkajs!.crc !== byName.ours!.crc) throw new Error(`the two disagree at ${size} bytes`);
    byName.ours!.speedup = Math.round(((byName.ours!.mbPerCpuSecond as number) / (byName.kafkajs!.mbPerCpuSecond as number)) * 100) / 100;
  }
  const cpu = cpus();
  const result = {
    date: new Date().toISOString(),
    commit: commit(),
    node: process.version,
    command: `node dist/bench/kafka/crc32c.js --sizes ${sizes.join(',')}`,
    machine: { cpu: cpu[0]?.model, cores: cpu.length, memoryGB: Math.round(totalmem() / 2 ** 30), os: `${platform()} ${release()}` },
    method: `One fresh process per row, the two implementations alternating; seeded random bytes in an unaligned Buffer slice; a warm-up, then ${RUNS} runs of about ${BYTES_PER_RUN / 2 ** 20} MB each; mbPerCpuSecond is the median over the runs of MB (10^6 bytes) per second of process CPU time, mbPerSecondWall the same by the wall clock; speedup is ours over kafkajs's in CPU time. Machine shared with other jobs (1-minute load average per row).`,
    rows,
  };
  writeFileSync(arg('--out', join(process.cwd(), 'bench/results/crc32c.json')), `${JSON.stringify(result, null, 2)}\n`);
}

main();
