// The worker pool against in-thread work (not a test): fingerprintMany over the same pages as
// fingerprint() in the calling thread, at 1, 2, 4 and 8 threads, in one process. Each run times
// the in-thread pass and the pool pass back to back, so both see the same load on a shared
// machine; the ratio of their medians is what the pool costs (below 1) or gains (above).
// run.mjs includes it in bench/results/fingerprint.json. Alone (after a build):
//   node bench/fingerprint/pool.mjs [runs=7] [threads=1,2,4,8]   -> bench/results/fingerprint-pool.json
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFingerprinter, createFingerprintPool, decodePageBytes } from '../../dist/src/fingerprint/index.js';
import { pageSets } from './page-set.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const round3 = (x) => Math.round(x * 1000) / 1000;
const cpuMs = (u) => (u.user + u.system) / 1000;

function rate(pages, rates) {
  const pps = median(rates);
  const bytes = pages.reduce((s, p) => s + Buffer.byteLength(p.html), 0) / pages.length;
  return { pagesPerSec: Math.round(pps), htmlMBPerSec: Math.round((pps * bytes) / 1e5) / 10, runsPagesPerSec: rates.map(Math.round) };
}

/** Pool against in-thread on the English (text10k) and Chinese (zh) sets, each repeated to about 480 pages, as strings and as bytes. */
export async function poolVsInThread(sets, fp, runs, log = console.error, threadCounts = [1, 2, 4, 8]) {
  const cores = availableParallelism();
  const rows = [];
  // input 'string': the pages as strings (the pool copies each into its chunk buffer, the worker
  // makes a string of it again). input 'bytes': the pages as UTF-8 bytes, as a record carries
  // them; in-thread decodes them (decodePageBytes) and fingerprints, the pool's workers do both.
  for (const [set, input] of [['text10k', 'string'], ['text10k', 'bytes'], ['zh', 'string'], ['zh', 'bytes']]) {
    const pages = Array.from({ length: Math.ceil(480 / sets[set].length) }, () => sets[set]).flat();
    const batch = input === 'string' ? pages.map((p) => ({ html: p.html })) : pages.map((p) => ({ html: new Uint8Array(Buffer.from(p.html)) }));
    const inThread =
      input === 'string'
        ? () => {
            for (const p of batch) fp.fingerprint(p);
          }
        : () => {
            for (const p of batch) fp.fingerprint({ html: decodePageBytes(p.html) });
          };
    for (const threads of threadCounts) {
      const pool = await createFingerprintPool({ threads, features: fp.options });
      inThread();
      await pool.fingerprintMany(batch);
      // Pages/s (wall) and CPU ms per page of the whole process (every thread: the pool's cost in
      // CPU, which a loaded machine does not distort the way it distorts wall time).
      const rates = { inThread: [], pool: [] };
      const cpu = { inThread: [], pool: [] };
      for (let r = 0; r < runs; r++) {
        let c = process.cpuUsage();
        let t = performance.now();
        inThread();
        rates.inThread.push(batch.length / ((performance.now() - t) / 1000));
        cpu.inThread.push(cpuMs(process.cpuUsage(c)) / batch.length);
        c = process.cpuUsage();
        t = performance.now();
        await pool.fingerprintMany(batch);
        rates.pool.push(batch.length / ((performance.now() - t) / 1000));
        cpu.pool.push(cpuMs(process.cpuUsage(c)) / batch.length);
      }
      await pool.close();
      const a = rate(pages, rates.inThread);
      const b = rate(pages, rates.pool);
      const row = {
        set,
        input,
        threads,
        pages: batch.length,
        inThreadPagesPerSec: a.pagesPerSec,
        poolPagesPerSec: b.pagesPerSec,
        poolOverInThread: Math.round((b.pagesPerSec / a.pagesPerSec) * 1000) / 1000,
        inThreadCpuMsPerPage: round3(median(cpu.inThread)),
        poolCpuMsPerPage: round3(median(cpu.pool)),
        poolCpuOverInThread: round3(median(cpu.pool) / median(cpu.inThread)),
        inThreadRuns: a.runsPagesPerSec,
        poolRuns: b.runsPagesPerSec,
        ...(threads > cores ? { note: `${threads} threads on ${cores} cores` } : {}),
        poolResult: b,
      };
      rows.push(row);
      log(`pool ${String(threads).padStart(2)} threads  ${set.padEnd(8)} ${input.padEnd(6)} in-thread ${String(a.pagesPerSec).padStart(6)} pages/s  pool ${String(b.pagesPerSec).padStart(6)} pages/s  x${row.poolOverInThread}  CPU/page ${row.inThreadCpuMsPerPage} -> ${row.poolCpuMsPerPage} ms (x${row.poolCpuOverInThread})${row.note ? `  (${row.note})` : ''}`);
    }
  }
  return {
    method: `fingerprintMany over the same pages (each set repeated to about 480) against fingerprint() in the calling thread, interleaved run by run; median of ${runs} runs each after one warm-up pass; poolOverInThread = pool pages/s / in-thread pages/s; CPU ms per page is the whole process's (process.cpuUsage: every thread), poolCpuOverInThread their ratio`,
    cores,
    ...(cores < Math.max(...threadCounts) ? { note: `this machine has ${cores} cores: rows with more threads than that show oversubscription, not scaling` } : {}),
    rows,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const runs = Number(process.argv[2] ?? 7);
  const threadCounts = (process.argv[3] ?? '1,2,4,8').split(',').map(Number);
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  const fp = await createFingerprinter();
  const result = await poolVsInThread(pageSets(), fp, runs, console.error, threadCounts);
  let commit = 'uncommitted';
  try {
    const git = (args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    commit = git(['rev-parse', 'HEAD']);
    if (git(['status', '--porcelain', 'src/fingerprint'])) commit += '+dirty';
  } catch {}
  const report = {
    benchmark: 'fingerprint-pool',
    date: new Date().toISOString(),
    commit,
    node: process.version,
    machine: { cpu: cpus()[0]?.model, cores: availableParallelism(), loadavgAtStart: loadAtStart, loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
    ...result,
    rows: result.rows.map(({ poolResult, ...row }) => row),
  };
  writeFileSync(join(ROOT, 'bench', 'results', 'fingerprint-pool.json'), JSON.stringify(report, null, 1) + '\n');
}
