/**
 * Renders the measured figures of bench/results/index.json (and
 * index-restore.json) into docs/index.md between the bench markers, so no number in the doc is typed by hand.
 *   node dist/bench/index/render-doc.js [--check]
 * --check exits 1 when the doc is out of date with the results.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.cwd();
const resultsPath = join(root, 'bench/results/index.json');
const docPath = join(root, 'docs/index.md');
const START = '<!-- bench:index:start -->';
const END = '<!-- bench:index:end -->';

type Row = Record<string, unknown>;
const r = JSON.parse(readFileSync(resultsPath, 'utf8')) as {
  date: string;
  commit: string;
  node: string;
  gcc: string;
  machine: { cpu: string; cores: number; memoryGB: number };
  method: string;
  online: Row[];
  baseline: Row[];
  allPairs: Row;
  largestNIn8GB: Row[];
};

const fmt = (x: unknown, digits = 0): string =>
  typeof x === 'number' ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : String(x);
const human = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

const lines: string[] = [];
lines.push(
  `Measured ${r.date.slice(0, 10)} on ${r.machine.cpu} (${r.machine.cores} cores, ${r.machine.memoryGB} GB), Node ${r.node}, ${r.gcc}; commit ${r.commit}.`,
  '',
  r.method,
  '',
  '**Online index, k = 3** (queries/s are medians; "vs C" = our rate / the C pigeonhole rate on the same data in the same run):',
  '',
  '| N | implementation | plan | inserts/s | queries/s | as built | vs C | candidates/query | bytes/fp (arrays) | bytes/fp (RSS delta) | recall |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
);
for (const c of r.baseline) {
  lines.push(
    `| ${human(c['n'] as number)} | C, plain 4 x 16 (gcc -O3) | 4 tables | build ${fmt(c['build_ms'])} ms | ${fmt(c['queries_per_s'])} | - | 1.00 | ${fmt(c['candidates_per_query'], 1)} | ${fmt(c['table_bytes_per_fp'], 1)} | ${fmt(c['rss_delta_bytes_per_fp'], 1)} | - |`,
  );
  for (const o of r.online.filter((x) => x['n'] === c['n'])) {
    if (o['sameAs'] !== undefined) {
      lines.push(`| ${human(o['n'] as number)} | TS${o['compressed'] ? ', compressed' : ''} | planner: chooses ${o['sameAs']} at this N | (as above) | | | | | | | |`);
      continue;
    }
    lines.push(
      `| ${human(o['n'] as number)} | TS${o['compressed'] ? ', compressed' : ''} | ${o['plan'] === 'planner' ? 'planner: ' : ''}${o['planDesc']} | ${fmt(o['insertsPerS'])} | ${fmt(o['queriesPerS'])} | ${fmt(o['queriesPerSAsBuilt'])} | ${fmt(o['vsC'], 2)} | ${fmt(o['candidatesPerQuery'], 1)} | ${fmt(o['bytesPerFp'], 1)} | ${fmt(o['rssDeltaBytesPerFp'], 1)} | ${fmt(o['recall'], 3)} (${o['recallSample']} queries) |`,
    );
  }
}
const pairedRows = (r as unknown as { pairedVsC?: { rows: Row[] } }).pairedVsC?.rows ?? [];
if (pairedRows.length > 0) {
  lines.push('', '**TS 4 x 16 vs C, paired** (C and TS runs alternated, so both see the same load):', '');
  lines.push('| N | rounds | C queries/s (median) | TS queries/s (median) | TS / C |', '|---|---|---|---|---|');
  for (const p of pairedRows) {
    lines.push(`| ${human(p['n'] as number)} | ${p['rounds']} | ${fmt(p['cMedian'])} | ${fmt(p['tsMedian'])} | ${fmt(p['ratio'], 2)} |`);
  }
}
const ap = r.allPairs;
const ours = ap['ours'] as Row;
const peer = ap['simhashPybind'] as Row | string;
lines.push('', '**All pairs within 3 bits** (1% of the fingerprints planted at 1-3 bits of an earlier one):', '');
lines.push('| N | implementation | plan | time | pairs |', '|---|---|---|---|---|');
lines.push(`| ${human(ours['n'] as number)} | findAllPairs (TS) | ${ours['plan']} | ${fmt(ours['medianMs'])} ms | ${fmt(ours['pairs'])} |`);
if (typeof peer === 'object') {
  lines.push(
    `| ${human(peer['n'] as number)} | simhash-pybind find_all (best of blocks 4/5/6: ${peer['bestBlocks']}) | C(blocks, 3) tables | ${fmt(peer['medianMs'])} ms | ${fmt(peer['pairs'])} |`,
  );
}
const big = ap['oursBig'] as Row | undefined;
if (big !== undefined) lines.push(`| ${human(big['n'] as number)} | findAllPairs (TS) | ${big['plan']} | ${fmt(big['medianMs'])} ms | ${fmt(big['pairs'])} |`);
if (typeof ap['ratio'] === 'number') lines.push('', `findAllPairs / find_all time ratio at ${human(ours['n'] as number)}: ${fmt(ap['ratio'], 2)}.`);
lines.push('', '**Largest N in 8 GB**, estimated from the measured bytes per fingerprint at the largest N:', '');
lines.push('| plan | compressed | by array bytes | by RSS delta |', '|---|---|---|---|');
for (const e of r.largestNIn8GB) lines.push(`| ${e['plan']} | ${e['compressed']} | ${human(Math.round((e['byByteLength'] as number) / 1e6) * 1e6)} | ${human(Math.round((e['byRss'] as number) / 1e6) * 1e6)} |`);

/** Replaces the text between two markers; throws when they are missing. */
function between(doc: string, start: string, end: string, body: string[]): string {
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`docs/index.md lacks the ${start} ... ${end} markers`);
  return `${doc.slice(0, a + start.length)}\n${body.join('\n')}\n${doc.slice(b)}`;
}

function restoreLines(): string[] {
  const path = join(root, 'bench/results/index-restore.json');
  if (!existsSync(path)) return ['(not measured yet)'];
  const x = JSON.parse(readFileSync(path, 'utf8')) as { date: string; commit: string; node: string; machine: { cpu: string; cores: number; memoryGB: number }; method: string; rows: Row[] };
  const mb = (b: unknown): string => fmt((b as number) / 1e6);
  const out = [
    `Measured ${x.date.slice(0, 10)} on ${x.machine.cpu} (${x.machine.cores} cores, ${x.machine.memoryGB} GB), Node ${x.node}; commit ${x.commit}. ${x.method}`,
    '',
    '| N | plan | bulkInsert /s | insert() /s | restoreBatch /s (index + page store) | snapshot MB | write MB/s | read MB/s | read pages/s | index + store bytes/page | peak RSS MB | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of x.rows) {
    out.push(
      `| ${human(r['n'] as number)} | ${r['plan'] === '4x16' ? '4 x 16' : '13,13,13,13,12'} (${r['tables']} tables) | ${fmt(r['bulkInsertPerSecond'])} (${fmt(r['bulkInsertBestPerSecond'])}) | ${r['insertPerSecond'] === undefined ? '-' : fmt(r['insertPerSecond'])} | ${fmt(r['restoreBatchPerSecond'])} (${fmt(r['restoreBatchBestPerSecond'])}) | ${mb(r['snapshotBytes'])} | ${fmt(r['snapshotWriteMBps'])} | ${fmt(r['snapshotReadMBps'])} | ${fmt(r['snapshotReadPagesPerSecond'])} | ${fmt(r['bytesPerPage'], 1)} | ${mb(r['peakRssBytes'])} | ${fmt(r['loadAverageAtStart'], 1)}-${fmt(r['loadAverageAtEnd'], 1)} |`,
    );
  }
  return out;
}

const doc = readFileSync(docPath, 'utf8');
let next = between(doc, START, END, lines);
next = between(next, '<!-- bench:index-restore:start -->', '<!-- bench:index-restore:end -->', restoreLines());
if (process.argv.includes('--check')) {
  if (next !== doc) {
    process.stderr.write('docs/index.md is out of date with bench/results/index.json or index-restore.json: run node dist/bench/index/render-doc.js\n');
    process.exit(1);
  }
} else {
  writeFileSync(docPath, next);
}
