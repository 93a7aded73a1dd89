// What starting a fingerprint pool costs: wall time until every worker is ready, the process's CPU
// (every thread) and the RSS it added, at 2 and 4 threads, the default features (jieba on). Each
// count is started in a process of its own, `runs` times. Writes bench/results/fingerprint-pool-start.json.
//
//   npx tsc -p tsconfig.json && node bench/fingerprint/pool-start.mjs [runs=3]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');

if (process.argv[2] === '--one') {
  const { createFingerprintPool } = await import(join(ROOT, 'dist', 'src', 'fingerprint', 'index.js'));
  const threads = Number(process.argv[3]);
  const c0 = process.cpuUsage();
  const r0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const pool = await createFingerprintPool({ threads });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  const rssMB = (process.memoryUsage().rss - r0) / 1e6;
  await pool.fingerprintMany([{ html: '<p>中文分词，北京清华大学</p>' }]);
  await pool.close();
  console.log(JSON.stringify({ threads, wallMs: Math.round(wallMs), cpuMs: Math.round((cpu.user + cpu.system) / 1000), rssMB: Math.round(rssMB) }));
} else {
  const runs = Number(process.argv[2] ?? 3);
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  const loadAtStart = loadavg();
  const rows = [];
  for (let r = 0; r < runs; r++) {
    for (const threads of [2, 4]) {
      rows.push(JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--one', String(threads)], { encoding: 'utf8' }).trim()));
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const summary = [2, 4].map((threads) => {
    const mine = rows.filter((x) => x.threads === threads);
    return { threads, wallMs: median(mine.map((x) => x.wallMs)), cpuMs: median(mine.map((x) => x.cpuMs)), rssMB: median(mine.map((x) => x.rssMB)) };
  });
  const out = { benchmark: 'fingerprint pool start', date: new Date().toISOString(), commit, node: process.version, loadavgAtStart: loadAtStart, loadavgAtEnd: loadavg(), method: 'createFingerprintPool({ threads }) with the default features, in a fresh process each; medians of the runs', summary, runs: rows };
  writeFileSync(join(ROOT, 'bench', 'results', 'fingerprint-pool-start.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(JSON.stringify(summary));
}
