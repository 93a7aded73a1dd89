/**
 * The scale-out model of docs/architecture.md, checked by running the real
 * code in one process: the routed design's routing (src/dedup/routing.ts),
 * index partitions (index-partition.ts, both rounds), join and wire records
 * (src/wire/routed-records.ts) over a generated stream, and today's
 * id-sharded design's sequence records and shard probes (shard-state.ts,
 * shard-records.ts) over the same stream. It measures, per page, the CPU each
 * part spends and the bytes each record takes, then derives the throughput
 * of I instances of 2 cores each, with fingerprinting and a passthrough's
 * Kafka I/O charged at the figures measured on the real broker
 * (bench/results/scale.json: the single case's worker CPU per page, the
 * passthrough's main-thread CPU per page).
 *
 *   npx tsc -p tsconfig.json && node dist/bench/scale/model.js [pages=200000] [partitions=64]
 *
 * Writes "model", "singleInstancePagesPerSecond" and "modelDetail" into
 * bench/results/scale.json, keeping its other keys. These are the model's
 * figures for I instances, not a cluster's: routed mode as built runs on the
 * real broker in bench/scale/coordination.ts, which this machine can run with
 * up to 3 instances.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { IndexRouting } from '../../src/dedup/routing.js';
import { IndexPartition, decideJoined, joinReplies, sketchTail, type PartitionAnswer, type PartitionReply, type RoutedPage } from '../../src/dedup/index-partition.js';
import { encodeEntries, decodeEntries, encodeOrder, decodeOrder, encodeReply, decodeReply, encodeMore, decodeMore, type SlottedPage } from '../../src/wire/routed-records.js';
import { ShardState, applySequenced } from '../../src/dedup/shard-state.js';
import { encodeShardRecord, decodeSequenceRecord } from '../../src/wire/shard-records.js';
import { sketchToWire, sketchFromWire } from '../../src/wire/sketch-wire.js';
import { planFromBlocks } from '../../src/index/index.js';
import type { SecondStage } from '../../src/dedup/decider.js';
import { SKETCH_BINS } from '../../src/fingerprint/index.js';
import { mulberry32 } from '../../src/mulberry32.js';

const PAGES = Number(process.argv[2] ?? 200_000);
const PARTITIONS = Number(process.argv[3] ?? 64);
const CHUNK = 200;
const INPUTS = 64;
const CORES = 2;
/** Kafka's cost of one record in a produce or fetch: a record batch header (61 B) and the record's own framing, for one record per partition per request. */
const RECORD_OVERHEAD = 80;
/** 1 GbE, what a broker's link carries. */
const LINK_BYTES_PER_SECOND = 125_000_000;
const STAGE: SecondStage = { radius: 3, minSimilarity: 0.85, bands: 14 };
const PLAN = planFromBlocks(3, [16, 16, 16, 16]);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RESULTS = join(ROOT, 'bench', 'results', 'scale.json');

const rand = mulberry32(0x2545f491);
const word = (): number => (rand() * 2 ** 32) >>> 0;

interface Page { id: string; hi: number; lo: number; short: boolean; sketch: Uint8Array }

/** 70% new pages, 20% near copies (0-6 bits, most of the sketch kept), 5% exact copies under new ids, 5% pages of one template. */
function stream(n: number): Page[] {
  const template = Uint8Array.from({ length: SKETCH_BINS }, () => (rand() * 256) | 0);
  const out: Page[] = [];
  for (let i = 0; i < n; i++) {
    const r = rand();
    const id = `https://example.org/site-${(rand() * 5000) | 0}/page-${i}`;
    if (out.length === 0 || r < 0.7) {
      out.push({ id, hi: word(), lo: word(), short: rand() < 0.03, sketch: Uint8Array.from({ length: SKETCH_BINS }, () => (rand() * 256) | 0) });
    } else if (r < 0.9) {
      const base = out[(rand() * out.length) | 0]!;
      let { hi, lo } = base;
      for (let f = (rand() * 7) | 0; f > 0; f--) {
        const bit = (rand() * 64) | 0;
        if (bit < 32) hi = (hi ^ (1 << bit)) >>> 0;
        else lo = (lo ^ (1 << (bit - 32))) >>> 0;
      }
      const sketch = base.sketch.slice();
      for (let c = (rand() * 6) | 0; c > 0; c--) sketch[(rand() * SKETCH_BINS) | 0] = (rand() * 256) | 0;
      out.push({ id, hi, lo, short: base.short, sketch });
    } else if (r < 0.95) {
      out.push({ ...out[(rand() * out.length) | 0]!, id });
    } else {
      const sketch = template.slice();
      sketch[(rand() * SKETCH_BINS) | 0] = (rand() * 256) | 0;
      out.push({ id, hi: word(), lo: word(), short: false, sketch });
    }
  }
  return out;
}

/** Figures measured on the real broker that the model charges per page. */
function measured(): { fingerprintMs: number; ioMainMs: number; from: string } {
  try {
    const scale = JSON.parse(readFileSync(RESULTS, 'utf8'));
    const summary = scale.throughput.summary as { case: string; cpuMsPerPage: { mainThreads: number; otherThreads: number } }[];
    const single = summary.find((s) => s.case === 'single')!;
    const passthrough = summary.find((s) => s.case === 'passthrough')!;
    return { fingerprintMs: single.cpuMsPerPage.otherThreads, ioMainMs: passthrough.cpuMsPerPage.mainThreads, from: `bench/results/scale.json of ${scale.date} (commit ${String(scale.commit).slice(0, 7)})` };
  } catch {
    return { fingerprintMs: 1.06, ioMainMs: 0.165, from: 'the figures of docs/performance.md (no bench/results/scale.json)' };
  }
}

function routedRun(pages: Page[]) {
  const routing = new IndexRouting(PLAN, PARTITIONS, STAGE.bands!);
  // Partitions that name each unsettled candidate's home, as the holder's do (routed-holder.ts).
  const parts = Array.from({ length: PARTITIONS }, (_, q) => new IndexPartition(q, PLAN, 3, STAGE, routing));
  const partMs = new Float64Array(PARTITIONS);
  const partBytesIn = new Float64Array(PARTITIONS);
  const partBytesOut = new Float64Array(PARTITIONS);
  let ownerMs = 0;
  let orderBytes = 0;
  let orderDecodeMs = 0;
  let orderRecords = 0;
  let confirmBytes = 0;
  let confirmed = 0;
  let moreBytes = 0;
  let moreAsked = 0;
  let duplicates = 0;
  let sequence = 0;
  const inputs = Array.from({ length: INPUTS }, () => [] as Page[]);
  pages.forEach((p, i) => inputs[i % INPUTS]!.push(p));
  const cursor = new Array<number>(INPUTS).fill(0);
  let left = pages.length;
  let attempt = 0;
  while (left > 0) {
    for (let p = 0; p < INPUTS; p++) {
      const chunk = inputs[p]!.slice(cursor[p]!, cursor[p]! + CHUNK);
      if (chunk.length === 0) continue;
      const firstOffset = BigInt(cursor[p]!);
      cursor[p]! += chunk.length;
      left -= chunk.length;
      const key = { inputPartition: p, firstOffset, attempt };
      // Owner: route and encode one entries record per touched partition, then the order record.
      let t = performance.now();
      const byPartition = new Map<number, SlottedPage[]>();
      // What each partition got, by slot: round two's requests for more candidates carry it again.
      const sentTo = new Map<number, RoutedPage[]>();
      chunk.forEach((page, slot) => {
        for (const share of routing.route(page.hi, page.lo, page.sketch)) {
          const sketch = (share.tableMask & 1) !== 0 ? page.sketch : sketchTail(page.sketch);
          const routed: RoutedPage = { id: share.tableMask !== 0 ? page.id : null, hi: page.hi, lo: page.lo, short: page.short, fetchedAt: 0, sketch, tables: share.tableMask, bandKeys: share.bandKeys };
          let list = byPartition.get(share.partition);
          if (!list) byPartition.set(share.partition, (list = []));
          list.push({ slot, page: routed });
          let got = sentTo.get(share.partition);
          if (!got) sentTo.set(share.partition, (got = []));
          got[slot] = routed;
        }
      });
      const records = new Map<number, Buffer>();
      for (const [q, list] of byPartition) records.set(q, encodeEntries({ chunk: key, pages: list }));
      const order = encodeOrder({ chunk: key, pages: chunk.length, span: chunk.length, touched: [...byPartition.keys()], partitions: PARTITIONS });
      ownerMs += performance.now() - t;
      orderBytes += order.length + RECORD_OVERHEAD;
      orderRecords++;
      t = performance.now();
      decodeOrder(order);
      orderDecodeMs += performance.now() - t;
      // Each touched partition: decode, apply page by page, reply.
      const replies = new Map<number, Buffer>();
      const base = sequence;
      for (const [q, value] of records) {
        t = performance.now();
        const entries = decodeEntries(value);
        const out: { slot: number; reply: PartitionReply }[] = [];
        for (const { slot, page } of entries.pages) {
          const reply = parts[q]!.apply(page, base + slot);
          if (reply.settled !== null || reply.unsettled.length > 0) out.push({ slot, reply });
        }
        const encoded = encodeReply({ chunk: key, indexPartition: q, base, replies: out });
        partMs[q]! += performance.now() - t;
        replies.set(q, encoded);
        partBytesIn[q]! += value.length + RECORD_OVERHEAD;
        partBytesOut[q]! += encoded.length + RECORD_OVERHEAD;
      }
      sequence += chunk.length;
      // Owner: decode the replies, join, round two at the homes.
      t = performance.now();
      const bySlot: { partition: number; reply: PartitionReply }[][] = chunk.map(() => []);
      for (const [q, value] of replies) for (const { slot, reply } of decodeReply(value).replies) bySlot[slot]!.push({ partition: q, reply });
      let homeMs = 0;
      chunk.forEach((page, slot) => {
        const joined = joinReplies(bySlot[slot]!);
        if (joined.unsettled.length > 0) {
          // A confirm request (the sketch and the candidates' sequences) and its answer (an id), per home asked.
          confirmBytes += RECORD_OVERHEAD * 2 + 12 + SKETCH_BINS + joined.unsettled.length * 8 + 40;
          confirmed++;
        }
        const best = decideJoined(joined, (c) => {
          const h = performance.now();
          const id = parts[c.home!]!.confirm(c.sequence, page.sketch);
          homeMs += performance.now() - h;
          return id;
        }, (q, after) => {
          // A request for more (the page as q got it, and the cursor) and its reply, both real records.
          const h = performance.now();
          const request = encodeMore({ chunk: key, indexPartition: q, trip: 0, asks: [{ slot, sequence: base + slot, after, page: sentTo.get(q)![slot]! }] });
          const asked = decodeMore(request).asks[0]!;
          const got = parts[q]!.more(asked.page!, asked.sequence, asked.after);
          const reply = encodeReply({ chunk: key, indexPartition: q, base, replies: [{ slot, reply: { settled: null, unsettled: got.unsettled, more: got.more } }] });
          homeMs += performance.now() - h;
          moreBytes += request.length + reply.length + RECORD_OVERHEAD * 2;
          moreAsked++;
          return got;
        });
        if (best !== null) duplicates++;
      });
      ownerMs += performance.now() - t - homeMs;
      // Round two's work is the homes'; spread like the partitions' own.
      for (let q = 0; q < PARTITIONS; q++) partMs[q]! += homeMs / PARTITIONS;
    }
    attempt = 0;
  }
  const n = pages.length;
  const entriesBytes = partBytesIn.reduce((a, b) => a + b, 0);
  const replyBytes = partBytesOut.reduce((a, b) => a + b, 0);
  const partitionMsPerPage = [...partMs].map((ms) => ms / n);
  return {
    pages: n,
    partitions: PARTITIONS,
    chunkPages: CHUNK,
    duplicateShare: duplicates / n,
    confirmShare: confirmed / n,
    moreShare: moreAsked / n,
    ownerUsPerPage: (ownerMs / n) * 1000,
    partitionsUsPerPage: (partitionMsPerPage.reduce((a, b) => a + b, 0)) * 1000,
    busiestPartitionUsPerPage: Math.max(...partitionMsPerPage) * 1000,
    orderDecodeUsPerPage: (orderDecodeMs / n) * 1000,
    bytesPerPage: { entries: entriesBytes / n, order: orderBytes / n, replies: replyBytes / n, confirm: confirmBytes / n, more: moreBytes / n },
    busiestPartitionBytesPerPage: Math.max(...[...partBytesIn].map((b, q) => b + partBytesOut[q]!)) / n,
  };
}

function idShardedRun(pages: Page[], shards: number) {
  const states = Array.from({ length: shards }, (_, s) => new ShardState(s, PLAN, 3, undefined, STAGE));
  let decodeMs = 0;
  let applyMs = 0;
  let sequenceBytes = 0;
  let answerBytes = 0;
  pages.forEach((page, i) => {
    const record = encodeShardRecord({ type: 'probe', id: page.id, hi: page.hi, lo: page.lo, short: page.short, fetchedAt: 0, sketch: sketchToWire(page.sketch)!, partition: i % INPUTS, offset: String(i) });
    sequenceBytes += record.length + 53 + RECORD_OVERHEAD / 4;
    let t = performance.now();
    const decoded = decodeSequenceRecord(record);
    const sketch = sketchFromWire(decoded.sketch);
    decodeMs += performance.now() - t;
    t = performance.now();
    const out = applySequenced(states, shards, decoded, i, sketch);
    applyMs += performance.now() - t;
    for (const hit of out.hits) answerBytes += encodeShardRecord({ type: 'hit', sequence: i, partition: 0, offset: String(i), ...hit }).length + RECORD_OVERHEAD / 4;
  });
  const n = pages.length;
  return { shards, decodeUsPerPage: (decodeMs / n) * 1000, probeUsPerPagePerShard: (applyMs / n / shards) * 1000, sequenceBytesPerPage: sequenceBytes / n, answerBytesPerPage: answerBytes / n };
}

const pages = stream(PAGES);
const charged = measured();
const routed = routedRun(pages);
const today = idShardedRun(pages, 48);
const routedBytes = routed.bytesPerPage.entries + routed.bytesPerPage.order + routed.bytesPerPage.replies + routed.bytesPerPage.confirm + routed.bytesPerPage.more;

/** Pages/s of I instances: the lowest of the instances' CPU (2 cores), main thread (1 core) and the broker links. */
function routedRate(instances: number): { pagesPerSecond: number; limitedBy: string } {
  const share = 1 / instances;
  const partitionsHeld = Math.max(1, Math.round(PARTITIONS / instances));
  // Per cluster page, on the busiest instance: its input share, its partitions (the busiest ones), every order record.
  const mainMs = (charged.ioMainMs + routed.ownerUsPerPage / 1000) * share + (routed.busiestPartitionUsPerPage / 1000) * Math.min(partitionsHeld, PARTITIONS) + routed.orderDecodeUsPerPage / 1000;
  const totalMs = mainMs + charged.fingerprintMs * share;
  const byCpu = CORES / totalMs * 1000;
  const byMain = 1 / mainMs * 1000;
  // Every instance reads the whole order log; each partition's bytes go to its holder.
  const byOrderLink = LINK_BYTES_PER_SECOND / (routed.bytesPerPage.order * instances);
  const byPartitionLink = LINK_BYTES_PER_SECOND / (routed.busiestPartitionBytesPerPage * partitionsHeld);
  const limits: [string, number][] = [['instance CPU', byCpu], ['main thread', byMain], ['order log fan-out', byOrderLink], ['partition bytes', byPartitionLink]];
  limits.sort((a, b) => a[1] - b[1]);
  return { pagesPerSecond: Math.round(limits[0]![1]), limitedBy: limits[0]![0] };
}

function todayRate(instances: number): { pagesPerSecond: number; limitedBy: string } {
  const share = 1 / instances;
  const shardsHeld = today.shards / instances;
  const mainMs = charged.ioMainMs * share + (today.decodeUsPerPage + today.probeUsPerPagePerShard * shardsHeld) / 1000;
  const totalMs = mainMs + charged.fingerprintMs * share;
  const byCpu = (CORES / totalMs) * 1000;
  const byMain = (1 / mainMs) * 1000;
  const byFanOut = LINK_BYTES_PER_SECOND / ((today.sequenceBytesPerPage + today.answerBytesPerPage) * instances);
  const limits: [string, number][] = [['instance CPU', byCpu], ['main thread (every page on every instance)', byMain], ['sequence and answers fan-out', byFanOut]];
  limits.sort((a, b) => a[1] - b[1]);
  return { pagesPerSecond: Math.round(limits[0]![1]), limitedBy: limits[0]![0] };
}

const single = routedRate(1);
const model = [1, 4, 16, 64].map((instances) => {
  const r = routedRate(instances);
  const t = todayRate(instances);
  return { instances, pagesPerSecond: r.pagesPerSecond, limitedBy: r.limitedBy, ofLinear: Number((r.pagesPerSecond / (instances * single.pagesPerSecond)).toFixed(3)), todayPagesPerSecond: t.pagesPerSecond, todayLimitedBy: t.limitedBy };
});
const detail = {
  generatedBy: 'bench/scale/model.ts',
  date: new Date().toISOString(),
  node: process.version,
  charged,
  routed: { ...routed, bytesPerPageTotal: routedBytes, readOnceBytesPerPage: routedBytes * 2, withStandbyBytesPerPage: routedBytes + (routed.bytesPerPage.entries + routed.bytesPerPage.order) * 2 + routed.bytesPerPage.replies * 2, busiestPartitionMBps22k: (routed.busiestPartitionBytesPerPage * 22_000) / 1e6 },
  today,
  note: 'Measured in one process on the real routing, partition, join and record code; Kafka I/O and fingerprinting charged from the real broker runs. A model of I instances; bench/scale/coordination.ts measures routed mode as built on the real broker.',
};
const scale = (() => {
  try {
    return JSON.parse(readFileSync(RESULTS, 'utf8'));
  } catch {
    return {};
  }
})();
scale.model = model;
scale.singleInstancePagesPerSecond = single.pagesPerSecond;
scale.modelDetail = detail;
writeFileSync(RESULTS, `${JSON.stringify(scale, null, 2)}\n`);
console.log(JSON.stringify({ model, singleInstancePagesPerSecond: single.pagesPerSecond, detail }, null, 2));
