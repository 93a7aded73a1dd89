/**
 * RAM per page held, all in, with the second stage on (the product's defaults
 * otherwise): one fresh process holds N generated pages and reports the RSS
 * growth over the empty process (after a full collection, and the peak), not
 * only the arrays; the disk tier's bytes per page; and the time per decision
 * once N pages are held, disk reads included (the tier file is in the page
 * cache: it was just written): wall time, and the process's CPU time, which a
 * machine shared with other work inflates less.
 *
 *   npx tsc -p tsconfig.json && MALLOC_MMAP_THRESHOLD_=32768 NODE_OPTIONS=--max-semi-space-size=2 node --expose-gc dist/bench/dedup/memory.js [pages=1000000] [tier=file|memory] [fill=decide|restore]
 *
 * fill=restore loads the N pages as a changelog replay does (Decider.restoreBatch, 10,000 at a
 * time: the same structures, bands included, built in bulk), then times decide() as usual: a
 * 10M fill through decide() takes over an hour on a loaded 2-core machine.
 *
 * (MALLOC_MMAP_THRESHOLD_ and NODE_OPTIONS as the container image sets them: deploy/docker/Dockerfile.)
 *
 * The stream is generated page by page (nothing per page is kept outside the
 * decider while it fills; the timed pages are generated after the RAM is
 * measured and before the clock starts): 90% random fingerprints and sketches, 10% near copies of an
 * earlier page (1 to 8 bits flipped, up to 11 sketch bins changed), ids like
 * "https://example.org/docs/section-N/page-M.html" (about 45 bytes).
 * Appends a run to bench/results/memory.json (a run of the same pages and
 * tier is replaced).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execSync } from 'node:child_process';
import { mulberry32Uint32 } from '../../src/mulberry32.js';

const pages = Number(process.argv[2] ?? 1_000_000);
const tierKind = process.argv[3] ?? 'file';
/** decide: every page through Decider.decide; restore: through Decider.restoreBatch (the changelog replay path, bulk), much faster to fill. */
const fillMode = process.argv[4] ?? 'decide';
const TIMED = Number(process.env.MEMORY_BENCH_TIMED ?? 20_000);

/** RSS after full collections, with a turn of the event loop between them (V8 frees some array buffers after the collection that found them dead). */
async function rss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return process.memoryUsage().rss;
}

const rssEmpty = await rss();

const { loadConfig } = await import('../../src/config.js');
const { createDecider, planFromConfig } = await import('../../src/dedup/create-decider.js');
const { FingerprintIndex } = await import('../../src/index/index.js');
const { PageStore } = await import('../../src/dedup/page-store.js');
const { SKETCH_BINS } = await import('../../src/fingerprint/index.js');
type Input = import('../../src/dedup/decider.js').DecisionInput;

const dir = mkdtempSync(join(tmpdir(), 'dedup-memory-'));
let tier: unknown = undefined;
let closeTier = (): void => {};
if (tierKind === 'file') {
  const { filePageTier } = await import('../../src/storage/file-blob-store.js');
  const t = filePageTier(dir);
  tier = t;
  closeTier = () => t.close();
}

/** The seed mixed first, so seed 0 does not start the stream at the PRNG's own start. */
const rng = (seed: number): (() => number) => mulberry32Uint32((seed ^ 0x9e3779b9) >>> 0);

const sketch = new Uint8Array(SKETCH_BINS);
const input = { id: '', hi: 0, lo: 0, short: false, fetchedAt: 1_700_000_000_000, sketch } as { -readonly [K in keyof Input]: Input[K] };

/** Page i of the stream, written into `input` (no allocation but the id). */
function page(i: number): Input {
  const r = rng(i);
  const copy = i > 0 && r() % 10 === 0;
  const base = copy ? r() % i : i;
  const o = rng(base * 2 + 1);
  let hi = o();
  let lo = o();
  for (let b = 0; b < SKETCH_BINS; b++) sketch[b] = o() & 0xff;
  if (copy) {
    for (let f = 1 + (r() % 8); f > 0; f--) {
      const bit = r() % 64;
      if (bit < 32) hi = (hi ^ (1 << bit)) >>> 0;
      else lo = (lo ^ (1 << (bit - 32))) >>> 0;
    }
    for (let c = r() % 12; c > 0; c--) sketch[r() % SKETCH_BINS] = r() & 0xff;
  }
  input.id = `https://example.org/docs/section-${i % 997}/page-${i}.html`;
  input.hi = hi;
  input.lo = lo;
  input.fetchedAt = 1_700_000_000_000 + i * 10;
  return input;
}

const config = loadConfig({ DEDUP_EXPECTED_FINGERPRINTS: String(pages) });
const plan = planFromConfig(config);
const index = FingerprintIndex.create({ plan, initialCapacity: Math.min(pages, 1 << 20) });
const store = new (PageStore as unknown as new (c: number, s: number, t?: unknown) => InstanceType<typeof PageStore>)(1024, SKETCH_BINS, tier);
const decider = createDecider(config, plan, { index, store });
const fillStarted = process.hrtime.bigint();
if (fillMode === 'restore') {
  const BATCH = 10_000;
  for (let from = 0; from < pages; from += BATCH) {
    const batch = [];
    for (let i = from; i < Math.min(pages, from + BATCH); i++) {
      const p = page(i);
      batch.push({ page: { ...p, sketch: p.sketch!.slice() }, duplicateOf: null, distance: 0, sequence: i });
    }
    decider.restoreBatch(batch);
  }
} else {
  for (let i = 0; i < pages; i++) decider.decide(page(i));
}
const fillSeconds = Number(process.hrtime.bigint() - fillStarted) / 1e9;

const rssHeld = await rss();
const usage = process.memoryUsage();
const peakRss = process.resourceUsage().maxRSS * 1024;
// The bands' RAM: the buffer and what locates the runs' entries; the runs are in the tier (in RAM with tier=memory).
const bandsOnDisk = store.bands?.bytesOnDisk ?? 0;
const bands = (store.bands?.byteLength ?? 0) + (tierKind === 'memory' ? bandsOnDisk : 0);
const bandRuns = store.bands?.runCount ?? 0;
const storeBytes = store.byteLength - bands;
const indexBytes = index.byteLength;
const fingerprintBytes = index.nextReference * (8 + 1 / 8);
const tierBytes = (store as unknown as { tierByteLength?: number }).tierByteLength ?? 0;

// The timed pages are generated before the clock starts: the figures are the decider's, not the generator's.
const timedPages: Input[] = [];
for (let i = pages; i < pages + TIMED; i++) {
  const p = page(i);
  timedPages.push({ ...p, sketch: p.sketch!.slice() });
}

// MEMORY_BENCH_CPU_PROFILE=file: a V8 CPU profile of the timed decisions alone (the fill left out), for
// `node --cpu-prof`-style analysis; the profiler's cost shows in the figures, so such a run is not written.
const profilePath = process.env.MEMORY_BENCH_CPU_PROFILE;
let stopProfile = async (): Promise<void> => {};
if (profilePath !== undefined) {
  const { Session } = await import('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.start');
  stopProfile = async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(profilePath, JSON.stringify(profile));
    session.disconnect();
  };
}

let duplicates = 0;
const each = new Float64Array(TIMED);
const readsBefore = store.bands?.diskReads ?? 0;
const cpuStarted = process.cpuUsage();
const started = process.hrtime.bigint();
for (let i = pages; i < pages + TIMED; i++) {
  const t0 = process.hrtime.bigint();
  if (decider.decide(timedPages[i - pages]!).verdict === 'duplicate') duplicates++;
  each[i - pages] = Number(process.hrtime.bigint() - t0) / 1e3;
}
const micros = Number(process.hrtime.bigint() - started) / 1e3 / TIMED;
const bandReads = ((store.bands?.diskReads ?? 0) - readsBefore) / TIMED;
const cpu = process.cpuUsage(cpuStarted);
await stopProfile();
// CPU time of the process (user + system: the preads included), which a machine shared with other
// work does not inflate the way it inflates wall time.
const cpuMicros = (cpu.user + cpu.system) / TIMED;
each.sort();
const quantile = (q: number): number => Number(each[Math.min(TIMED - 1, Math.floor(q * TIMED))]!.toFixed(1));
/** The slowest decisions' share of the total: the bands' and the tables' merges land on a few. */
let top = 0;
for (let i = Math.floor(TIMED * 0.999); i < TIMED; i++) top += each[i]!;
closeTier();
rmSync(dir, { recursive: true, force: true });

const per = (bytes: number): number => Number((bytes / pages).toFixed(1));
const run = {
  pagesHeld: pages,
  secondStage: true,
  tier: tierKind,
  fill: fillMode,
  ramBytesPerPage: per(rssHeld - rssEmpty),
  peakRamBytesPerPage: per(peakRss - rssEmpty),
  diskBytesPerPage: per(tierBytes),
  microsPerDecision: Number(micros.toFixed(2)),
  cpuMicrosPerDecision: Number(cpuMicros.toFixed(2)),
  microsPerDecisionQuantiles: { p50: quantile(0.5), p90: quantile(0.9), p99: quantile(0.99), max: quantile(1) },
  slowestTenthPercentShareOfTime: Number((top / (micros * TIMED)).toFixed(3)),
  breakdownBytesPerPage: {
    tables: per(indexBytes - fingerprintBytes),
    fingerprints: per(fingerprintBytes),
    pageStore: per(storeBytes),
    sketchesInRam: tierKind === 'memory' ? per(pages * SKETCH_BINS) : 0,
    bands: per(bands),
    bandsOnDisk: per(bandsOnDisk),
    arraysTotal: per(decider.byteLength),
  },
  /** Where the RSS is, by V8's account (after a full collection): the JS heap, and the typed arrays' buffers outside it. */
  processBytesPerPage: { heapUsed: per(usage.heapUsed), heapTotal: per(usage.heapTotal), arrayBuffers: per(usage.arrayBuffers) },
  plan: `${plan.tables.length} tables, blocks ${plan.blockWidths.join('/')}`,
  bands: config.secondStageBands,
  /** The bands' sorted runs in the tier when the timing began, and their reads per decision (pread with a file tier). */
  bandRuns,
  bandReadsPerDecision: Number(bandReads.toFixed(2)),
  duplicateShare: Number((duplicates / TIMED).toFixed(3)),
  fillSeconds: Number(fillSeconds.toFixed(1)),
  timedDecisions: TIMED,
  node: process.version,
  /** The glibc setting the container image sets (deploy/docker/Dockerfile); null = glibc's default. */
  mallocMmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null,
  /** The V8 flags the run had (the image sets --max-semi-space-size=2); null = none. */
  nodeOptions: [process.env.NODE_OPTIONS ?? '', ...process.execArgv.filter((f) => f !== '--expose-gc')].join(' ').trim() || null,
  commit: (() => {
    try {
      return execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
    } catch {
      return null;
    }
  })(),
  loadAverage: (await import('node:os')).loadavg().map((x) => Number(x.toFixed(2))),
  measuredAt: new Date().toISOString(),
};
process.stdout.write(`${JSON.stringify(run, null, 2)}\n`);
const path = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'results', 'memory.json');
if (process.env.MEMORY_BENCH_NO_WRITE !== '1' && profilePath === undefined) {
  mkdirSync(dirname(path), { recursive: true });
  const old = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { runs: (typeof run)[] }) : { runs: [] };
  const runs = old.runs.filter((r) => !(r.pagesHeld === run.pagesHeld && r.tier === run.tier && (r.fill ?? 'decide') === run.fill));
  runs.push(run);
  runs.sort((a, b) => a.pagesHeld - b.pagesHeld || a.tier.localeCompare(b.tier));
  writeFileSync(path, `${JSON.stringify({ generatedBy: 'bench/dedup/memory.ts', runs }, null, 2)}\n`);
}
