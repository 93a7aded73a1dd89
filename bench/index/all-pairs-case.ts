/**
 * findAllPairs over the stored fingerprints of a dataset, in a fresh process:
 *   node dist/bench/index/all-pairs-case.js DATA PASSES
 * Prints one JSON object (median wall time after one warm-up when PASSES > 1).
 */
import { describePlan, findAllPairs } from '../../src/index/index.js';
import { planAllPairs } from '../../src/index/planner.js';
import { median, readDataset } from './data.js';

const [path, passesArg = '3'] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: all-pairs-case DATA PASSES');
const passes = Number(passesArg);
const d = readDataset(path);
const n = d.hi.length;
const plan = planAllPairs(3, n);
const times: number[] = [];
let pairs = 0;
if (passes > 1) findAllPairs(d.hi, d.lo, 3, plan);
for (let p = 0; p < passes; p++) {
  const t0 = performance.now();
  const r = findAllPairs(d.hi, d.lo, 3, plan);
  times.push(performance.now() - t0);
  pairs = r.a.length;
}
const cost = describePlan(plan, n);
console.log(
  JSON.stringify({
    impl: 'ts-findAllPairs',
    n,
    k: 3,
    plan: `${cost.tables} tables, blocks ${plan.blockWidths.join('/')}, min prefix ${cost.minPrefixBits}`,
    medianMs: Math.round(median(times)),
    timesMs: times.map(Math.round),
    pairs,
  }),
);
