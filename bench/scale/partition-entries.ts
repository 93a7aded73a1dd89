/**
 * Entries as one partition of a 64-partition routed index gets them (for the
 * partition benches): per page, 4 table entries and 14 band keys spread over
 * the partitions, so about 22% of a partition's entries are table entries
 * (with the page's id; a quarter of them at the page's home, with the whole
 * sketch) and 78% a page's one band key (fingerprint and sketch tail only).
 */
import { sketchTail, type RoutedPage } from '../../src/dedup/index-partition.js';
import { SKETCH_BINS } from '../../src/fingerprint/index.js';
import { mulberry32 } from '../../src/mulberry32.js';
import { loadavg } from 'node:os';
import { median } from '../index/data.js';

const TABLE_SHARE = 4 / 18;

/** A generator of entries over `rand` (uniform in [0, 1)). */
export function partitionEntries(rand: () => number): (i: number, base: RoutedPage | null) => RoutedPage {
  const word = (): number => (rand() * 2 ** 32) >>> 0;
  const randomSketch = (): Uint8Array => {
    const s = new Uint8Array(SKETCH_BINS);
    for (let i = 0; i < SKETCH_BINS; i++) s[i] = (rand() * 256) | 0;
    return s;
  };
  /** Entry i; `base` makes it a near copy of that entry (1 to 6 bits and a few bins moved, the same band key). */
  return (i, base) => {
    let hi = word();
    let lo = word();
    let sketch = randomSketch();
    const table = base === null ? rand() < TABLE_SHARE : base.tables !== 0;
    if (base !== null) {
      ({ hi, lo } = base);
      for (let f = 1 + ((rand() * 6) | 0); f > 0; f--) {
        const bit = (rand() * 64) | 0;
        if (bit < 32) hi = (hi ^ (1 << bit)) >>> 0;
        else lo = (lo ^ (1 << (bit - 32))) >>> 0;
      }
      sketch = base.sketch!.slice();
      // Bins after the first band's: the band key stays, the overlap stays high.
      for (let c = (rand() * 4) | 0; c > 0; c--) sketch[4 + ((rand() * 40) | 0)] = (rand() * 256) | 0;
    }
    const home = table && (base === null ? rand() < 0.25 : (base.tables & 1) !== 0);
    const bandKey = base === null ? word() : base.bandKeys[0]!;
    return {
      id: table ? `https://example.org/site-${i % 5000}/page-${i}` : null,
      hi,
      lo,
      short: false,
      fetchedAt: 0,
      sketch: home ? sketch : sketchTail(sketch),
      tables: table ? (home ? 1 : 2) : 0,
      // A table entry here and a band key here are two different partitions' shares, most of the time.
      bandKeys: table ? [] : [bandKey],
    };
  };
}

/** `n` entries of the seeded stream partition-restore.ts and partition-snapshot.ts share: after the first 1,000, a quarter near copies of earlier ones. */
export function nearCopyEntries(n: number): RoutedPage[] {
  const rand = mulberry32(0x7e57);
  const entry = partitionEntries(rand);
  const entries: RoutedPage[] = [];
  for (let i = 0; i < n; i++) entries.push(entry(i, i > 1000 && rand() < 0.25 ? entries[(rand() * i) | 0]! : null));
  return entries;
}

/** One timed run of a partition bench, per entry of its N. */
export interface EntryTiming {
  wallUs: number;
  cpuUs: number;
  seconds: number;
}

/** The medians of a step's runs, as the partition benches' JSON gives them, to `digits` decimals. */
export function timingSummary(ts: readonly EntryTiming[], digits: number): { cpuMicrosPerEntry: number; wallMicrosPerEntry: number; seconds: number; runsCpuMicrosPerEntry: number[] } {
  const round = (x: number): number => Number(x.toFixed(digits));
  return {
    cpuMicrosPerEntry: round(median(ts.map((t) => t.cpuUs))),
    wallMicrosPerEntry: round(median(ts.map((t) => t.wallUs))),
    seconds: round(median(ts.map((t) => t.seconds))),
    runsCpuMicrosPerEntry: ts.map((t) => round(t.cpuUs)),
  };
}

/** The fields every partition bench's JSON starts with (4 tables of 16-bit blocks, a file tier). */
export function partitionBenchHead(generatedBy: string, command: string, entries: number, bands: number, loadAtStart: number[]): Record<string, unknown> {
  return {
    generatedBy,
    command,
    date: new Date().toISOString(),
    node: process.version,
    entries,
    plan: '4 tables, blocks 16/16/16/16',
    bands,
    tier: 'file',
    loadAverage: { start: loadAtStart, end: loadavg().map((x) => Number(x.toFixed(2))) },
  };
}
