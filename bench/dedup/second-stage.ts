/**
 * What the second stage (DEDUP_SECOND_STAGE_RADIUS, and DEDUP_SECOND_STAGE_BANDS
 * written radius+bands; 0 = off, 0+14 = the default: 14 bands, no wider probe) costs the decider: time per decision (probe, band
 * candidates, sketch checks, insert) and bytes per page held (index tables +
 * page store + sketches + bands), against the first stage alone, with the
 * table plan the product's planner picks for each radius at this size.
 *
 * The stream: N pages, 80% with random fingerprints and sketches, 20% copies
 * of an earlier page with 1 to 8 bits flipped and most of its sketch kept
 * (near-duplicates, within and beyond k). Decisions are timed after the index
 * holds N pages, over 50,000 more.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/dedup/second-stage.js [pages=1000000] [radii=0,0+7,0+14,4,6,4+14]
 *
 * Prints one JSON object and writes bench/results/second-stage.json.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDecider, planFromConfig } from '../../src/dedup/create-decider.js';
import { loadConfig } from '../../src/config.js';
import { SKETCH_BINS } from '../../src/fingerprint/index.js';
import type { DecisionInput } from '../../src/dedup/decider.js';
import { mulberry32Uint32 } from '../../src/mulberry32.js';

const pages = Number(process.argv[2] ?? 1_000_000);
const radii = (process.argv[3] ?? '0,0+7,0+14,4,6,4+14').split(',').map((r) => r.split('+').map(Number) as [number, number?]);
const TIMED = 50_000;

const rand = mulberry32Uint32(0x9e3779b9);

function makeStream(n: number): DecisionInput[] {
  const out: DecisionInput[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 0 && rand() % 5 === 0) {
      const base = out[rand() % out.length]!;
      let { hi, lo } = base;
      const flips = 1 + (rand() % 8);
      for (let f = 0; f < flips; f++) {
        const bit = rand() % 64;
        if (bit < 32) hi = (hi ^ (1 << bit)) >>> 0;
        else lo = (lo ^ (1 << (bit - 32))) >>> 0;
      }
      const sketch = base.sketch!.slice();
      for (let c = rand() % 12; c > 0; c--) sketch[rand() % SKETCH_BINS] = rand() & 0xff;
      out.push({ id: `p${i}`, hi, lo, short: false, fetchedAt: 1_700_000_000_000, sketch });
      continue;
    }
    const sketch = new Uint8Array(SKETCH_BINS);
    for (let b = 0; b < SKETCH_BINS; b++) sketch[b] = rand() & 0xff;
    out.push({ id: `p${i}`, hi: rand(), lo: rand(), short: false, fetchedAt: 1_700_000_000_000, sketch });
  }
  return out;
}

const stream = makeStream(pages + TIMED);
const results = [];
for (const [radius, bands = 0] of radii) {
  const config = loadConfig({ DEDUP_SECOND_STAGE_RADIUS: String(radius), DEDUP_SECOND_STAGE_BANDS: String(bands), DEDUP_EXPECTED_FINGERPRINTS: String(pages) });
  const plan = planFromConfig(config);
  const decider = createDecider(config, plan);
  const fill = stream.slice(0, pages);
  const loadStarted = process.hrtime.bigint();
  for (const p of fill) decider.decide(p);
  const loadSeconds = Number(process.hrtime.bigint() - loadStarted) / 1e9;
  let duplicates = 0;
  let confirmed = 0;
  let candidates = 0;
  const started = process.hrtime.bigint();
  for (let i = pages; i < pages + TIMED; i++) {
    const v = decider.decide(stream[i]!);
    if (v.verdict === 'duplicate') duplicates++;
    if (v.secondStage === 'confirmed') confirmed++;
    candidates += v.candidates;
  }
  const micros = Number(process.hrtime.bigint() - started) / 1e3 / TIMED;
  const row = {
    radius: radius === 0 ? null : radius,
    bands,
    tables: plan.tables.length,
    blockWidths: plan.blockWidths.join(','),
    microsPerDecision: Number(micros.toFixed(2)),
    candidatesPerProbe: Number((candidates / TIMED).toFixed(1)),
    bytesPerPage: Number((decider.byteLength / decider.index.size).toFixed(1)),
    duplicateShare: Number((duplicates / TIMED).toFixed(4)),
    confirmedShare: Number((confirmed / TIMED).toFixed(4)),
    loadSeconds: Number(loadSeconds.toFixed(1)),
  };
  results.push(row);
  process.stderr.write(`${JSON.stringify(row)}\n`);
}
const out = { generatedBy: 'bench/dedup/second-stage.ts', node: process.version, pages, timedDecisions: TIMED, k: 3, results };
const path = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'results', 'second-stage.json');
mkdirSync(dirname(path), { recursive: true });
writeFileSync(path, `${JSON.stringify(out, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
