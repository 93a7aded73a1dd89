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
 * DEDUP_MEMORY_BUDGET_BYTES bounds the plan as it does the product's (src/index/planner.ts): at 100M
 * pages the defaults plan 10 tables, and a budget of 70 B a page keeps 4 (the row records it).
 *
 * MEMORY_BENCH_TIMED=n times n decisions (by default 20,000, and 100,000 from 10M pages held). MEMORY_BENCH_TRACE=1
 * prints, for all the timed decisions and for the slowest 1% and 0.1%, the tier reads per decision
 * by blob (and the mean time of one), the candidates, and the share of the time of the decisions
 * during which a band run was written, the index's runs changed, or a collection ran; such a run
 * is not written. Every run gives verdictDigest: a change that must keep every verdict keeps it.
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
/**
 * Decisions timed: 20,000, and 100,000 from 10M pages held. The mean must carry the upkeep a
 * decision pays on average: at 10M the bands write a run every ~37,000 decisions (2^19 entries)
 * and merge it, so 20,000 decisions hold one such write or none, and the mean swings by 10 µs.
 */
const TIMED = Number(process.env.MEMORY_BENCH_TIMED ?? (pages >= 10_000_000 ? 100_000 : 20_000));

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
/** MEMORY_BENCH_TRACE=1: count each timed decision's reads of the tier (by blob) and what ran inside it (a band run written, an index merge, a collection); not written to the results. */
const TRACE = process.env.MEMORY_BENCH_TRACE === '1';
/** Reads of the tier: [records, names, band runs] reads, bytes and nanoseconds, since the start. */
const tierReads = new Float64Array(9);
function counted<B extends { read(position: number, into: Uint8Array): void }>(blob: B, slot: number): B {
  if (!TRACE) return blob;
  const read = blob.read.bind(blob);
  blob.read = (position: number, into: Uint8Array): void => {
    tierReads[slot]!++;
    tierReads[slot + 3]! += into.length;
    const t0 = process.hrtime.bigint();
    read(position, into);
    tierReads[slot + 6]! += Number(process.hrtime.bigint() - t0);
  };
  return blob;
}
if (tierKind === 'file') {
  const { filePageTier } = await import('../../src/storage/file-blob-store.js');
  const t = filePageTier(dir);
  counted(t.records, 0);
  counted(t.names, 1);
  const runs = t.runs!;
  tier = { ...t, runs: () => counted(runs(), 2) };
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

// The plan for N, as the defaults give it; DEDUP_MEMORY_BUDGET_BYTES (as an operator sets it) bounds it.
const budget = process.env.DEDUP_MEMORY_BUDGET_BYTES;
const config = loadConfig({ DEDUP_EXPECTED_FINGERPRINTS: String(pages), ...(budget === undefined ? {} : { DEDUP_MEMORY_BUDGET_BYTES: budget }) });
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

/** Per timed decision (TRACE): tier reads and bytes, band candidates, table candidates, and whether a band run was written, the index's runs changed, or a collection ran. */
const traceReads = new Float64Array(TIMED * 3);
const traceBytes = new Float64Array(TIMED);
const traceBandCands = new Float64Array(TIMED);
const traceTableCands = new Float64Array(TIMED);
const traceEvents = new Uint8Array(TIMED);
const EVENT_BAND_WRITE = 1;
const EVENT_INDEX_RUNS = 2;
const EVENT_GC = 4;
const gcSpans: number[] = [];
let gcObserver: { disconnect(): void } | null = null;
if (TRACE) {
  const { PerformanceObserver } = await import('node:perf_hooks');
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcSpans.push(e.startTime, e.startTime + e.duration);
  });
  observer.observe({ entryTypes: ['gc'] });
  gcObserver = observer;
}
const indexRuns = (): number => (index as unknown as { runStart: number[] }).runStart.length;
const starts = new Float64Array(TRACE ? TIMED * 2 : 0);
const { performance } = await import('node:perf_hooks');

let duplicates = 0;
const each = new Float64Array(TIMED);
const readsBefore = store.bands?.diskReads ?? 0;
const readsAtStart = tierReads.slice();
const cpuStarted = process.cpuUsage();
const started = process.hrtime.bigint();
/** A digest of the timed verdicts (FNV-1a over duplicateOf and distance): equal digests, equal verdicts, for a change that must not change any. */
let digest = 0x811c9dc5;
const mix = (text: string): void => {
  for (let c = 0; c < text.length; c++) digest = Math.imul(digest ^ text.charCodeAt(c), 0x01000193);
};
for (let i = pages; i < pages + TIMED; i++) {
  const j = i - pages;
  if (TRACE) {
    const before = tierReads.slice();
    const disk = store.bands?.bytesOnDisk ?? 0;
    const runsBefore = indexRuns();
    starts[j * 2] = performance.now();
    const v = decider.decide(timedPages[j]!);
    starts[j * 2 + 1] = performance.now();
    if (v.verdict === 'duplicate') duplicates++;
    mix(`${v.duplicateOf ?? '-'}:${v.distance ?? '-'};`);
    for (let b = 0; b < 3; b++) traceReads[j * 3 + b] = tierReads[b]! - before[b]!;
    traceBytes[j] = tierReads[3]! + tierReads[4]! + tierReads[5]! - before[3]! - before[4]! - before[5]!;
    traceBandCands[j] = (store.bands as unknown as { count: number } | null)?.count ?? 0;
    traceTableCands[j] = v.candidates;
    if ((store.bands?.bytesOnDisk ?? 0) !== disk) traceEvents[j]! |= EVENT_BAND_WRITE;
    if (indexRuns() !== runsBefore) traceEvents[j]! |= EVENT_INDEX_RUNS;
    each[j] = starts[j * 2 + 1]! * 1e3 - starts[j * 2]! * 1e3;
    continue;
  }
  const t0 = process.hrtime.bigint();
  const v = decider.decide(timedPages[j]!);
  each[j] = Number(process.hrtime.bigint() - t0) / 1e3;
  if (v.verdict === 'duplicate') duplicates++;
  mix(`${v.duplicateOf ?? '-'}:${v.distance ?? '-'};`);
}
const micros = Number(process.hrtime.bigint() - started) / 1e3 / TIMED;
const bandReads = ((store.bands?.diskReads ?? 0) - readsBefore) / TIMED;
const cpu = process.cpuUsage(cpuStarted);
await stopProfile();
// CPU time of the process (user + system: the preads included), which a machine shared with other
// work does not inflate the way it inflates wall time.
const cpuMicros = (cpu.user + cpu.system) / TIMED;
let trace: object | null = null;
if (TRACE) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  gcObserver?.disconnect();
  // A decision a collection overlapped.
  for (let s = 0; s < gcSpans.length; s += 2) {
    for (let j = 0; j < TIMED; j++) if (starts[j * 2]! < gcSpans[s + 1]! && starts[j * 2 + 1]! > gcSpans[s]!) traceEvents[j]! |= EVENT_GC;
  }
  const order = Array.from({ length: TIMED }, (_, j) => j).sort((a, b) => each[b]! - each[a]!);
  const total = each.reduce((a, b) => a + b, 0);
  const describe = (js: number[]): object => {
    let time = 0;
    const sum = new Float64Array(7);
    const events = { bandWrite: 0, indexRuns: 0, gc: 0, none: 0 };
    const eventTime = { bandWrite: 0, indexRuns: 0, gc: 0, none: 0 };
    for (const j of js) {
      time += each[j]!;
      for (let b = 0; b < 3; b++) sum[b]! += traceReads[j * 3 + b]!;
      sum[3]! += traceBytes[j]!;
      sum[4]! += traceBandCands[j]!;
      sum[5]! += traceTableCands[j]!;
      const e = traceEvents[j]!;
      if (e & EVENT_BAND_WRITE) (events.bandWrite++, (eventTime.bandWrite += each[j]!));
      if (e & EVENT_INDEX_RUNS) (events.indexRuns++, (eventTime.indexRuns += each[j]!));
      if (e & EVENT_GC) (events.gc++, (eventTime.gc += each[j]!));
      if (e === 0) (events.none++, (eventTime.none += each[j]!));
    }
    const n = Math.max(1, js.length);
    const r = (x: number): number => Number(x.toFixed(2));
    return {
      decisions: js.length,
      shareOfTime: r(time / total),
      meanMicros: r(time / n),
      perDecision: { recordReads: r(sum[0]! / n), nameReads: r(sum[1]! / n), bandRunReads: r(sum[2]! / n), bytesRead: r(sum[3]! / n), bandCandidates: r(sum[4]! / n), tableCandidates: r(sum[5]! / n) },
      events,
      eventShareOfTime: Object.fromEntries(Object.entries(eventTime).map(([k, t]) => [k, r(t / total)])),
    };
  };
  trace = {
    all: describe(order),
    slowestTenthPercent: describe(order.slice(0, Math.ceil(TIMED / 1000))),
    slowestPercent: describe(order.slice(0, Math.ceil(TIMED / 100))),
    rest: describe(order.slice(Math.ceil(TIMED / 100))),
    /** Mean wall time of one read of the tier, by blob, over the timed decisions. */
    readMicros: Object.fromEntries(['records', 'names', 'bandRuns'].map((name, b) => [name, Number(((tierReads[b + 6]! - readsAtStart[b + 6]!) / Math.max(1, tierReads[b]! - readsAtStart[b]!) / 1e3).toFixed(2))])),
    gcCount: gcSpans.length / 2,
    gcMillis: Number(gcSpans.reduce((a, x, s) => (s % 2 === 1 ? a + x - gcSpans[s - 1]! : a), 0).toFixed(1)),
  };
}
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
  /** DEDUP_MEMORY_BUDGET_BYTES the plan was made within; 0 = none (the defaults). */
  memoryBudgetBytes: config.memoryBudgetBytes,
  bands: config.secondStageBands,
  /** The bands' sorted runs in the tier when the timing began, and their reads per decision (pread with a file tier). */
  bandRuns,
  bandReadsPerDecision: Number(bandReads.toFixed(2)),
  duplicateShare: Number((duplicates / TIMED).toFixed(3)),
  /** FNV-1a of the timed verdicts (duplicateOf, distance): the same stream with the same defaults gives the same digest unless a verdict changed. */
  verdictDigest: (digest >>> 0).toString(16).padStart(8, '0'),
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
if (trace !== null) process.stdout.write(`${JSON.stringify({ trace }, null, 2)}\n`);
if (process.env.MEMORY_BENCH_NO_WRITE !== '1' && profilePath === undefined && trace === null) {
  mkdirSync(dirname(path), { recursive: true });
  const old = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { runs: (typeof run)[] }) : { runs: [] };
  const runs = old.runs.filter((r) => !(r.pagesHeld === run.pagesHeld && r.tier === run.tier && (r.fill ?? 'decide') === run.fill));
  runs.push(run);
  runs.sort((a, b) => a.pagesHeld - b.pagesHeld || a.tier.localeCompare(b.tier));
  writeFileSync(path, `${JSON.stringify({ generatedBy: 'bench/dedup/memory.ts', runs }, null, 2)}\n`);
}
