/**
 * Renders bench/results/scale.json into docs/performance.md between the
 * bench:scale markers, so no figure of the scale-out section is typed by hand.
 *   node dist/bench/scale/render-doc.js [--check]
 * --check exits 1 when the doc is out of date with the results.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../pipeline/common.js';

const resultsPath = join(ROOT, 'bench/results/scale.json');
const docPath = join(ROOT, 'docs/performance.md');
const START = '<!-- bench:scale:start -->';
const END = '<!-- bench:scale:end -->';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const r = JSON.parse(readFileSync(resultsPath, 'utf8')) as any;

const fmt = (x: unknown, digits = 0): string =>
  typeof x === 'number' && Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';
const kb = (bytes: number): string => fmt(bytes / 1024, 1);
const mb = (bytes: number, digits = 0): string => fmt(bytes / 1e6, digits);
const list = (xs: number[], digits = 0): string => xs.map((x) => fmt(x, digits)).join(', ');
const label = (name: string): string =>
  name === 'passthrough' ? 'passthrough' : name === 'single' ? 'single mode' : name.startsWith('sharded-') ? `sharded, ${name.slice(8)} instance${name.slice(8) === '1' ? '' : 's'}` : name;

const p = r.parameters;
const lines: string[] = [];
if (r.smoke) {
  lines.push(
    `> **Smoke run.** These figures come from a check of the harness (${fmt(p.pages)} pages, ${p.runs} repetition${p.runs > 1 ? 's' : ''}, ${p.latencySeconds} s of paced sending) on a machine shared with other work. They show that every case runs, not what the code can do: do not quote them. \`bash bench/scale/run.sh\` with its defaults replaces them.`,
    '',
  );
}
lines.push(
  `Measured ${String(r.date).slice(0, 16).replace('T', ' ')} UTC on ${r.machine.cpu} (${r.machine.cores} cores, ${r.machine.memoryGB} GB), Node ${r.node}, kafkajs ${r.kafkajs}, ${r.broker}; commit ${String(r.commit).slice(0, 12)}${r.dirty ? ' with uncommitted changes in src/' : ''}. ` +
    `Load average ${r.machine.loadavgAtStart.join(' / ')} at the start and ${r.machine.loadavgAtEnd.join(' / ')} at the end (1 / 5 / 15 min); the whole benchmark took ${fmt(r.totalSeconds / 60, 1)} min.`,
  '',
  `Configuration: product defaults${Object.keys(r.config.overrides).length ? ` plus ${Object.entries(r.config.overrides).map(([k, v]) => `\`${k}=${v}\``).join(', ')}` : ''} ` +
    `(k = ${r.config.k}, ${r.config.maxBatchRecords} records per transaction at most, fingerprint threads ${r.config.fingerprintThreads}); ${p.partitions} input partitions; sharded cases with ${p.shards} shards.`,
);
if (r.input) {
  const i = r.input;
  lines.push(
    '',
    `**Input**: ${fmt(i.pages)} pages (${Object.entries(i.kinds).map(([k, v]) => `${fmt(v)} ${k}`).join(', ')}), HTML ${kb(i.htmlBytes.min)} / ${kb(i.htmlBytes.median)} / ${kb(i.htmlBytes.max)} KiB (min / median / max), ${mb(i.avroBytesTotal)} MB of Avro; every throughput run and the restore case decide all of them, each with a fresh input topic, group and output topics.`,
  );
}

if (r.throughput) {
  const t = r.throughput;
  lines.push(
    '',
    `**Throughput** (pages/s from the summed \`dedup_pages_consumed_total\` of the case's processes; the input is let through once every instance is ready, and the window opens when ${fmt(p.warmupFraction * 100)}% of the pages are done; medians of ${p.runs} repetition${p.runs > 1 ? 's' : ''}, the cases interleaved, the order reversed every other repetition; "vs passthrough" is against the passthrough run of the same repetition):`,
    '',
    '| case | pages/s | vs passthrough | runs, pages/s | CPU of the instances, ms/page | broker CPU, ms/page | cores used by the instances | machine busy, cores | other load, cores | rebalances in the window | spawn → all instances ready, s |',
    '|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const s of t.summary) {
    lines.push(
      `| ${label(s.case)} | **${fmt(s.pagesPerSecond)}** | ${s.case === 'passthrough' ? '1' : `**${fmt(s.ratioToPassthrough, 2)}**`} | ${list(s.runsPagesPerSecond)} | ${fmt(s.cpuMsPerPage.instances, 2)} | ${fmt(s.cpuMsPerPage.broker, 2)} | ${fmt(s.cores.instances, 2)} | ${fmt(s.cores.machineBusy, 2)} of ${r.machine.cores} | ${fmt(s.cores.otherLoad, 2)} | ${fmt(s.maxRebalancesInWindow)} | ${fmt(s.allReadySeconds, 1)} |`,
    );
  }
  lines.push(
    '',
    '**Where each page goes.** CPU figures are CPU seconds from /proc over the window, per page, summed over the instances: "main threads" is the thread that runs the Kafka clients, decoding, the sequence tail and the answer join, and encoding; "other threads" are the fingerprint workers plus V8\'s and libuv\'s helper threads. Wall figures are from the processes\' own histograms over the whole run, per page, summed over the instances (partitions run concurrently, so wall time per page can exceed 1 / rate): a chunk is from its prepared pages to its committed transaction; fingerprinting is the chunk\'s wait for the worker pool; "probe + insert" is single mode\'s index work; "answer wait" is sharded mode\'s time from appending a chunk\'s probes to the sequence to having every shard\'s answer. In sharded mode the next chunk is prepared (decoded, fingerprinted) while a chunk waits for its answers, so fingerprinting and answer wait overlap.',
    '',
    '| case | CPU ms/page: all threads | main threads | other threads | registry | wall ms/page: chunk | fingerprinting | probe + insert | answer wait | sequence records applied per page | pages per transaction | duplicates |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const s of t.summary) {
    const c = s.cpuMsPerPage;
    const w = s.wallMsPerPage;
    const sharded = String(s.case).startsWith('sharded');
    lines.push(
      `| ${label(s.case)} | ${fmt(c.instances, 2)} | ${fmt(c.mainThreads, 2)} | ${fmt(c.otherThreads, 2)} | ${fmt(c.registry, 3)} | ${fmt(w.chunk, 2)} | ${s.case === 'passthrough' ? '-' : fmt(w.fingerprint, 2)} | ${s.case === 'single' ? fmt(w.probe, 3) : '-'} | ${sharded ? fmt(w.answerWait, 2) : '-'} | ${sharded ? fmt(s.sequenceRecordsAppliedPerPage, 2) : '-'} | ${fmt(s.pagesPerTransaction)} | ${s.case === 'passthrough' ? '-' : `${fmt(s.duplicateShare * 100, 1)}%`} |`,
    );
  }
  const late = (t.summary as { case: string; maxPagesBeforeAllReady: number }[]).filter((s) => s.maxPagesBeforeAllReady > 0);
  if (late.length) {
    lines.push('', `Pages already committed when the last instance of a case was ready (decided outside the window): ${late.map((s) => `${label(s.case)} ${fmt(s.maxPagesBeforeAllReady)}`).join(', ')}.`);
  }
}

if (r.latency) {
  const l = r.latency;
  lines.push(
    '',
    `**Latency at ${fmt(l.fraction * 100)}% load**: paced at ${fmt(l.ratePagesPerSecond, 1)} pages/s (${fmt(l.fraction * 100)}% of the measured sharded 1-instance rate, ${fmt(l.basePagesPerSecond)} pages/s) on a fresh ${p.partitions}-partition input topic, ${p.latencySeconds} s measured after ${p.latencyWarmupSeconds} s of warm-up (less when the input runs out of pages: see "s sent"), one run per case: input record timestamp to the verdict being visible to a read_committed consumer of the verdict topics.`,
    '',
    '| case | pages/s sent | s sent | pages measured | p50 | p90 | p99 | p99.9 | max | pages per transaction | mean answer wait | rebalances | cores: instances / driver / machine busy |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  for (const x of l.runs) {
    lines.push(
      `| ${label(x.case)} | ${fmt(x.achievedPagesPerSecond)} | ${fmt(x.pages / x.achievedPagesPerSecond, 1)} | ${fmt(x.measuredPages)} | **${fmt(x.p50Ms)} ms** | ${fmt(x.p90Ms)} ms | **${fmt(x.p99Ms)} ms** | ${x.p999Ms === undefined ? '-' : `${fmt(x.p999Ms)} ms`} | ${fmt(x.maxMs)} ms | ${fmt(x.pagesPerTransaction, 1)} | ${x.answerWaitMeanMs === null ? '-' : `${fmt(x.answerWaitMeanMs)} ms`} | ${fmt(x.rebalancesDuringRun)} | ${fmt(x.instancesCores, 2)} / ${fmt(x.driverCores, 2)} / ${fmt(x.machineBusyCores, 2)} of ${r.machine.cores} |`,
    );
  }
}

if (r.restore) {
  const x = r.restore;
  const sizes = (shards: { shard: number; fingerprints: number }[]) => shards.map((s) => `${s.shard}: ${fmt(s.fingerprints)}`).join(', ');
  lines.push(
    '',
    `**Restore after a crash**: two sharded instances decided the ${fmt(x.pages)} pages (${fmt(x.drainSeconds, 1)} s from their spawn), then one was SIGKILLed. The survivor is polled every 50 ms (\`/readyz\`, \`dedup_shards_held\`); restore times are its own \`dedup_shard_restore_seconds\` and \`dedup_rebalance_seconds\`. One run.`,
    '',
    '| shards moved | fingerprints moved | killed instance\'s index, MB | kill → survivor not ready (failure noticed) | not ready → ready with all shards | kill → ready | shards restored | restore time, summed | longest restore at most | rebalance, begin → restored |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${fmt(x.movedShards.length)} of ${fmt(x.shards)} | ${fmt(x.movedFingerprints)} | ${mb(x.killedIndexBytes, 2)} | ${x.noticeSeconds === null ? 'not seen' : `${fmt(x.noticeSeconds, 2)} s`} | ${x.notReadySeconds === null ? 'shorter than a poll (50 ms)' : `**${fmt(x.notReadySeconds, 2)} s**`} | **${fmt(x.killToReadySeconds, 2)} s** | ${fmt(x.restoredShards)} | ${fmt(x.restoreSecondsTotal, 2)} s | ${x.restoreSecondsLongestBucket ?? '-'} s | ${x.rebalanceSeconds === null ? '-' : `${fmt(x.rebalanceSeconds, 2)} s`} |`,
    '',
    `Shard sizes (shard: fingerprints): moved ${sizes(x.movedShards)}; kept ${sizes(x.keptShards)}. The survivor's index after the restore: ${mb(x.survivorIndexBytesAfter, 2)} MB.`,
  );
}

const doc = readFileSync(docPath, 'utf8');
const a = doc.indexOf(START);
const b = doc.indexOf(END);
if (a < 0 || b < a) throw new Error(`docs/performance.md lacks the ${START} ... ${END} markers`);
const next = `${doc.slice(0, a + START.length)}\n${lines.join('\n')}\n${doc.slice(b)}`;
if (process.argv.includes('--check')) {
  if (next !== doc) {
    process.stderr.write('docs/performance.md is out of date with bench/results/scale.json: run node dist/bench/scale/render-doc.js\n');
    process.exit(1);
  }
} else {
  writeFileSync(docPath, next);
}
