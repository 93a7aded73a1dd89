/**
 * One online-index case in a fresh process (so RSS is this case's own):
 *   node dist/bench/index/online-case.js DATA PLAN COMPRESSED PASSES SAMPLE
 * PLAN is "4x16", "5x13" (the 10-table design) or "planner". Prints one JSON object.
 */
import { hammingDistance } from '../../src/fingerprint/fingerprint-hex.js';
import { createQueryResult, describePlan, FingerprintIndex, planFromBlocks, planTables } from '../../src/index/index.js';
import { median, readDataset } from './data.js';

const [path, planName = '4x16', compressedArg = 'false', passesArg = '5', sampleArg = '200'] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: online-case DATA PLAN COMPRESSED PASSES SAMPLE');
const compressed = compressedArg === 'true';
const passes = Number(passesArg);
const sample = Number(sampleArg);
const d = readDataset(path);
const n = d.hi.length;
const q = d.qhi.length;
const plan =
  planName === 'planner'
    ? planTables({ k: 3, expectedSize: n })
    : planName === '5x13'
      ? planFromBlocks(3, [13, 13, 13, 13, 12])
      : planFromBlocks(3, [16, 16, 16, 16]);
const gc = (globalThis as { gc?: () => void }).gc;

gc?.();
const rss0 = process.memoryUsage().rss;
const t0 = performance.now();
const index = FingerprintIndex.create({ plan, compressed, initialCapacity: n });
for (let i = 0; i < n; i++) index.insert(d.hi[i]!, d.lo[i]!);
const buildMs = performance.now() - t0;
const out = createQueryResult(256);

function queryPass(): { rate: number; hits: number; candidates: number } {
  let hits = 0;
  let candidates = 0;
  const s = performance.now();
  for (let i = 0; i < q; i++) {
    hits += index.query(d.qhi[i]!, d.qlo[i]!, 3, out);
    candidates += out.candidates;
  }
  return { rate: q / ((performance.now() - s) / 1e3), hits, candidates };
}

function measure(): { queriesPerS: number; hits: number; candidatesPerQuery: number; passes: number[] } {
  queryPass(); // warm-up
  const runs = Array.from({ length: passes }, () => queryPass());
  return {
    queriesPerS: Math.round(median(runs.map((r) => r.rate))),
    hits: runs[0]!.hits,
    candidatesPerQuery: runs[0]!.candidates / q,
    passes: runs.map((r) => Math.round(r.rate)),
  };
}

const asBuilt = measure();
const t1 = performance.now();
index.compact();
const compactMs = performance.now() - t1;
gc?.();
const rssAfter = process.memoryUsage().rss;
const compacted = measure();

// Recall and precision against a brute-force scan, on a sample of the queries
// (every 10th query is planted, so the sample starts with planted ones).
let expected = 0;
let found = 0;
let wrong = 0;
for (let s = 0; s < sample; s++) {
  const i = (s * 10 + (s % 2 === 0 ? 0 : 1)) % q;
  const want = new Set<number>();
  for (let r = 0; r < n; r++) if (hammingDistance(d.qhi[i]!, d.qlo[i]!, d.hi[r]!, d.lo[r]!) <= 3) want.add(r);
  const got = index.query(d.qhi[i]!, d.qlo[i]!, 3, out);
  expected += want.size;
  for (let j = 0; j < got; j++) {
    if (want.has(out.refs[j]!)) found++;
    else wrong++;
  }
}

const cost = describePlan(plan, n);
console.log(
  JSON.stringify({
    impl: 'ts-index',
    plan: planName,
    planDesc: `${plan.tables.length} tables, blocks ${plan.blockWidths.join('/')}, min prefix ${cost.minPrefixBits}`,
    tables: plan.tables.length,
    compressed,
    n,
    queries: q,
    buildMs: Math.round(buildMs),
    insertsPerS: Math.round(n / (buildMs / 1e3)),
    compactMs: Math.round(compactMs),
    queriesPerS: compacted.queriesPerS,
    queriesPerSAsBuilt: asBuilt.queriesPerS,
    passes: compacted.passes,
    hits: compacted.hits,
    candidatesPerQuery: Number(compacted.candidatesPerQuery.toFixed(2)),
    expectedCandidatesPerQuery: Number(cost.expectedCandidatesPerProbe.toFixed(2)),
    bytesPerFp: Number((index.byteLength / index.size).toFixed(2)),
    rssDeltaBytesPerFp: Number(((rssAfter - rss0) / n).toFixed(2)),
    recallSample: sample,
    recall: expected === 0 ? 1 : found / expected,
    falsePositives: wrong,
    expectedInSample: expected,
  }),
);
