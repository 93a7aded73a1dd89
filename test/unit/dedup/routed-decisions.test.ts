/**
 * The routed index decides as one index would (docs/architecture.md,
 * "Sharded mode, routed by table prefix"): pages of several input partitions
 * cut into chunks, the chunks interleaved in one order log, each new page's
 * table and band entries routed to index partitions (routing.ts), each
 * partition held by an owner and a warm standby that apply the chunks in
 * order (index-partition.ts), re-sent ids answered from their input
 * partition's id store, and the partitions' answers joined: page by page,
 * the verdict of the single-index Decider over the pages in the order log's
 * order. A property over many seeded streams, with the second stage on and
 * off: near-duplicates within and beyond k, exact copies, short pages, ids
 * sent again, clusters of hundreds of pages under one band key (far more
 * than a probe looks at: CHAIN_LIMIT), failovers in mid-stream, where a
 * holder loses its state and is rebuilt from its partition's log, and the
 * second round that confirms candidates at their homes, where alone a
 * page's whole sketch is kept. The owner keeps its page tier in memory and
 * the standby in scratch files (as the service does): the two must answer
 * alike at every step.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decider, type SecondStage, type Verdict } from '../../../src/dedup/decider.js';
import { PageStore } from '../../../src/dedup/page-store.js';
import { IndexRouting } from '../../../src/dedup/routing.js';
import { IndexPartition, decideJoined, joinReplies, sketchTail, type PartitionAnswer, type PartitionReply, type RoutedPage } from '../../../src/dedup/index-partition.js';
import { RoundTwo } from '../../../src/dedup/round-two.js';
import { homeShard } from '../../../src/dedup/shard-state.js';
import { CHAIN_LIMIT } from '../../../src/dedup/sketch-bands.js';
import { SKETCH_BINS } from '../../../src/fingerprint/index.js';
import { FingerprintIndex, planFromBlocks, type TablePlan } from '../../../src/index/index.js';
import { shareBand } from '../../support/sketch-bands-oracle.js';
import { mulberry32 } from '../../support/rng.js';
import { flip, randomWord, stream, type Page } from '../../support/routed-stream.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryPageTier, type PageTier } from '../../../src/dedup/blob-store.js';
import { filePageTier } from '../../../src/storage/file-blob-store.js';

const scratch = mkdtempSync(join(tmpdir(), 'routed-decisions-test-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

const rng = mulberry32;

const PLAN_3 = planFromBlocks(3, [16, 16, 16, 16]);
const PLAN_6 = planFromBlocks(6, [8, 8, 8, 8, 8, 8, 8, 8]);

interface Layout {
  inputPartitions: number;
  indexPartitions: number;
  chunkMax: number;
  /** Chance, per order record, that one holder of a partition loses its state and is rebuilt. */
  failover: number;
}

type Decided = Pick<Verdict, 'verdict' | 'duplicateOf' | 'distance' | 'repeated'>;

/** A partition's holder and what rebuilds it: the pages it applied, in order (its log). */
interface Holder {
  state: IndexPartition;
  /** Closes the state's page tier (scratch files for a standby). */
  close: () => void;
  /** What the holder applied, in order, and the reply it gave. */
  readonly log: { page: RoutedPage; sequence: number; reply: PartitionReply }[];
}

/** A holder's state: the owner's (h = 0) page tier in memory, the standby's in scratch files. */
function holderState(q: number, h: number, plan: TablePlan, stage: SecondStage | null, routing: IndexRouting): { state: IndexPartition; close: () => void } {
  const files = h === 0 ? null : filePageTier(join(scratch, `partition-${q}`));
  const tier: PageTier = files ?? memoryPageTier();
  return { state: new IndexPartition(q, plan, 3, stage, routing, tier), close: () => files?.close() };
}

/** The routed protocol in memory. Returns the verdicts by stream position, and the pages in decision order. */
function routed(pages: Page[], plan: TablePlan, stage: SecondStage | null, layout: Layout, seed: number): { verdicts: Decided[]; order: Page[]; failovers: number; unsettledPages: number; moreAsked: number; roundTrips: number; decideJoinedAsks: number; fingerprintsSent: number; standbyRunBytes: number } {
  const routing = new IndexRouting(plan, layout.indexPartitions, stage?.bands ?? 0);
  const holders = Array.from({ length: layout.indexPartitions }, (_, q) => Array.from({ length: 2 }, (_, h): Holder => ({ ...holderState(q, h, plan, stage, routing), log: [] })));
  try {
    return routedWith(holders, pages, plan, stage, layout, seed, routing);
  } finally {
    for (const pair of holders) for (const h of pair) h.close();
  }
}

function routedWith(holders: Holder[][], pages: Page[], plan: TablePlan, stage: SecondStage | null, layout: Layout, seed: number, routing: IndexRouting): ReturnType<typeof routed> {
  const r = rng(seed);
  // Input partitions by page id (a crawler keys pages by id), each cut into chunks.
  const queues: number[][] = Array.from({ length: layout.inputPartitions }, () => []);
  pages.forEach((p, i) => queues[homeShard(p.id, layout.inputPartitions)]!.push(i));
  const idStores = Array.from({ length: layout.inputPartitions }, () => new Map<string, Decided>());
  const verdicts: Decided[] = new Array(pages.length);
  const order: Page[] = [];
  let sequence = 0;
  let failovers = 0;
  let unsettledPages = 0;
  let moreAsked = 0;
  let roundTrips = 0;
  let confirmsAsked = 0;
  let fingerprintsSent = 0;
  // Its own stream: how round-two.ts's answers are batched does not move the layout's choices.
  const r2 = rng(seed + 104729);
  const rAsOf = rng(seed + 15485863);
  for (;;) {
    const open = queues.map((q, p) => (q.length > 0 ? p : -1)).filter((p) => p >= 0);
    if (open.length === 0) break;
    // The next order record: a chunk of some input partition, in that partition's order.
    const input = open[Math.floor(r() * open.length)]!;
    const chunk = queues[input]!.splice(0, 1 + Math.floor(r() * layout.chunkMax));
    for (const i of chunk) {
      const page = pages[i]!;
      order.push(page);
      const recorded = idStores[input]!.get(page.id);
      if (recorded) {
        verdicts[i] = { ...recorded, repeated: true };
        continue;
      }
      const seq = sequence++;
      const replies: { partition: number; reply: PartitionReply }[] = [];
      const sent = new Map<number, RoutedPage>();
      for (const share of routing.route(page.hi, page.lo, stage === null ? null : page.sketch)) {
        // What the entry record carries: the id with table entries, the whole sketch at the home (table 0's partition), the tail elsewhere.
        const sketch = stage === null ? null : (share.tableMask & 1) !== 0 ? page.sketch : sketchTail(page.sketch);
        const routedPage: RoutedPage = { id: share.tableMask !== 0 ? page.id : null, hi: page.hi, lo: page.lo, short: page.short, fetchedAt: page.fetchedAt, sketch, tables: share.tableMask, bandKeys: share.bandKeys };
        // Owner and standby apply alike; the first reply wins, and the second must be the same.
        const both = holders[share.partition]!.map((h) => {
          const reply = h.state.apply(routedPage, seq);
          h.log.push({ page: routedPage, sequence: seq, reply });
          return reply;
        });
        assert.deepEqual(both[1], both[0], `partition ${share.partition}: the standby answers as the owner`);
        replies.push({ partition: share.partition, reply: both[Math.floor(r() * 2)]! });
        sent.set(share.partition, routedPage);
      }
      // Round two: the unsettled candidates, closest first, asked at their homes.
      const joined = joinReplies(replies);
      // decideJoined moves the cursors it is given: round-two.ts's driver gets the replies' own.
      const untouched = { ...joined, open: joined.open.map((o) => ({ ...o })) };
      if (joined.unsettled.length > 0) unsettledPages++;
      const best = decideJoined(joined, (c) => {
        // The partition that found the candidate names its home, as a reply over Kafka does.
        assert.equal(c.home, routing.tablePartition(0, c.hi, c.lo), `candidate ${c.sequence}: its home is its table-0 partition`);
        const home = holders[c.home!]!;
        confirmsAsked++;
        // Over Kafka the candidate came by sequence and home: the home sends its fingerprint back with its id.
        const fingerprints = [new Uint32Array(2), new Uint32Array(2)];
        const [a, b] = home.map((h, i) => h.state.confirm(c.sequence, page.sketch, fingerprints[i]));
        assert.equal(b, a, 'the standby confirms as the owner');
        if (a !== null) {
          for (const fingerprint of fingerprints) assert.deepEqual([fingerprint[0], fingerprint[1]], [c.hi, c.lo], 'the home gives the fingerprint the partition that found the candidate had');
          fingerprintsSent++;
        }
        return a ?? null;
      }, (partition, after) => {
        // Round two's cursor: both holders give the same next candidates, as of the page's sequence.
        const [a, b] = holders[partition]!.map((h) => h.state.more(sent.get(partition)!, seq, after));
        assert.deepEqual(b, a, `partition ${partition}: the standby gives the same next candidates`);
        moreAsked++;
        return a!;
      });
      // Round two in round trips, as the Kafka owner runs it (round-two.ts): confirmations asked
      // in batches, answers for more carrying several pages of the cursor. Same verdict.
      const trips = new RoundTwo([untouched], (c) => routing.tablePartition(0, c.hi, c.lo));
      for (;;) {
        const step = trips.step();
        if (step.done) {
          assert.deepEqual(step.best[0], best, `round two in round trips decides page ${page.id} as decideJoined does`);
          break;
        }
        for (const [home, bySlot] of step.asks.confirms) {
          for (const [slot, sequences] of bySlot) for (const s of sequences) trips.confirm(slot, s, holders[home]![Math.floor(r2() * 2)]!.state.confirm(s, page.sketch));
        }
        for (const { slot, partition, after } of step.asks.mores) {
          const holder = holders[partition]![Math.floor(r2() * 2)]!.state;
          const unsettled: PartitionAnswer[] = [];
          let cursor = after;
          let more = false;
          const steps = 1 + Math.floor(r2() * 8);
          for (let n = steps; n > 0; n--) {
            const got = holder.more(sent.get(partition)!, seq, cursor);
            unsettled.push(...got.unsettled);
            more = got.more && got.unsettled.length > 0;
            if (!more) break;
            cursor = got.unsettled[got.unsettled.length - 1]!;
          }
          // The holder asks for the steps at once (one probe): the same as the calls in a row.
          assert.deepEqual(holder.more(sent.get(partition)!, seq, after, steps), { unsettled, more }, `partition ${partition}: ${steps} steps of more at once`);
          trips.moreAnswered(slot, partition, after.sequence, { unsettled, more });
        }
        roundTrips++;
      }
      const decided: Decided = { verdict: best === null ? 'novel' : 'duplicate', duplicateOf: best?.id ?? null, distance: best?.distance ?? null, repeated: false };
      verdicts[i] = decided;
      idStores[input]!.set(page.id, decided);
    }
    if (r() < layout.failover) {
      // One holder loses everything and is rebuilt from its partition's log (dedup.index and
      // dedup.order): the rebuilt state must answer as the survivor does from here on. The
      // restore records the pages of committed chunks without probing them (replay), and
      // applies the rest: any prefix of the log may be committed.
      const q = Math.floor(r() * layout.indexPartitions);
      const which = Math.floor(r() * 2);
      const h = holders[q]![which]!;
      h.close();
      Object.assign(h, holderState(q, which, plan, stage, routing));
      const committed = r() < 0.5 ? h.log.length : Math.floor(r() * (h.log.length + 1));
      h.log.forEach(({ page, sequence: s }, i) => {
        if (i < committed) h.state.replay(page, s);
        else h.state.apply(page, s);
      });
      // A partition restored from a snapshot answers again, as of their sequences, the chunks
      // applied before it whose owners may still wait: the replies they had then.
      for (let n = 0; n < 8 && h.log.length > 0; n++) {
        const { page, sequence: s, reply } = h.log[Math.floor(rAsOf() * h.log.length)]!;
        assert.deepEqual(h.state.replyAsOf(page, s), reply, `partition ${q}: the reply to sequence ${s} as of it, after later pages`);
      }
      failovers++;
    }
  }
  // Band runs the standbys wrote to their scratch files (the long streams merge band keys into runs).
  let standbyRunBytes = 0;
  for (const pair of holders) standbyRunBytes += pair[1]!.state.bands?.bands.bytesOnDisk ?? 0;
  return { verdicts, order, failovers, unsettledPages, moreAsked, roundTrips, decideJoinedAsks: moreAsked + confirmsAsked, fingerprintsSent, standbyRunBytes };
}

function single(order: Page[], plan: TablePlan, stage: SecondStage | null): Map<Page, Decided> {
  const decider = new Decider({ index: FingerprintIndex.create({ plan }), store: new PageStore(1024, stage === null ? 0 : SKETCH_BINS), k: 3, secondStage: stage });
  const out = new Map<Page, Decided>();
  for (const p of order) {
    const v = decider.decide(p);
    out.set(p, { verdict: v.verdict, duplicateOf: v.duplicateOf, distance: v.distance, repeated: v.repeated });
  }
  return out;
}

function check(name: string, plan: TablePlan, stage: SecondStage | null, seeds: number, n: number, templated: number, partitionCounts: readonly number[] = [1, 3, 8, 16, 64]): { duplicates: number; repeats: number; beyondK: number; failovers: number; unsettledPages: number; moreAsked: number; roundTrips: number; decideJoinedAsks: number; fingerprintsSent: number; standbyRunBytes: number } {
  const totals = { duplicates: 0, repeats: 0, beyondK: 0, failovers: 0, unsettledPages: 0, moreAsked: 0, roundTrips: 0, decideJoinedAsks: 0, fingerprintsSent: 0, standbyRunBytes: 0 };
  for (let seed = 1; seed <= seeds; seed++) {
    const pages = stream(seed * 7919, n, templated);
    const layout: Layout = { inputPartitions: 1 + (seed % 6), indexPartitions: partitionCounts[seed % partitionCounts.length]!, chunkMax: 1 + (seed % 40), failover: 0.1 };
    const { verdicts, order, failovers, unsettledPages, moreAsked, roundTrips, decideJoinedAsks, fingerprintsSent, standbyRunBytes } = routed(pages, plan, stage, layout, seed);
    totals.standbyRunBytes += standbyRunBytes;
    totals.roundTrips += roundTrips;
    totals.fingerprintsSent += fingerprintsSent;
    totals.decideJoinedAsks += decideJoinedAsks;
    const expected = single(order, plan, stage);
    totals.failovers += failovers;
    totals.unsettledPages += unsettledPages;
    totals.moreAsked += moreAsked;
    pages.forEach((p, i) => {
      const e = expected.get(p)!;
      assert.deepEqual(verdicts[i], e, `${name}, seed ${seed}, ${layout.indexPartitions} partitions, page ${i} (${p.id})`);
      if (e.verdict === 'duplicate') totals.duplicates++;
      if (e.repeated) totals.repeats++;
      if (e.distance !== null && e.distance > 3) totals.beyondK++;
    });
  }
  return totals;
}

test('the routed index decides every page as one index does (first stage)', () => {
  const t = check('first stage', PLAN_3, null, 40, 400, 0);
  assert.ok(t.duplicates > 2000 && t.repeats > 500 && t.failovers > 100, JSON.stringify(t));
});

test('with the second stage and 14 bands, the routed index decides as one index does, clusters over the chain limit included', () => {
  const stage: SecondStage = { radius: 3, minSimilarity: 0.85, bands: 14 };
  const t = check('bands 14', PLAN_3, stage, 30, 500, 0.4);
  // moreAsked: round two asked partitions for candidates their replies left out.
  // roundTrips: round-two.ts's driver got its answers in round trips, far fewer than decideJoined's asks one by one
  // (a third: the partitions a page's walk would ask for more if its confirmations fail are asked with them).
  assert.ok(t.beyondK > 1000 && t.repeats > 300 && t.failovers > 50 && t.unsettledPages > 1000 && t.moreAsked > 1000 && t.roundTrips > 500 && t.roundTrips < t.decideJoinedAsks / 3 && t.fingerprintsSent > 100, JSON.stringify(t));
});

test('over a stream long enough that each partition merges its band keys into sorted runs, the routed index decides as one index does', () => {
  // A partition holds many pages by one band key alone; past a few thousand keys its band
  // entries leave the insertion buffer for the sorted run (sketch-bands.ts), and the rule must
  // hold across both.
  const stage: SecondStage = { radius: 3, minSimilarity: 0.85, bands: 14 };
  const t = check('bands 14, long stream', PLAN_3, stage, 2, 4000, 0.1, [2, 3]);
  // standbyRunBytes: the standbys' band runs were in their scratch files, and answered as the owners' in memory.
  assert.ok(t.beyondK > 500 && t.unsettledPages > 500 && t.moreAsked > 100 && t.standbyRunBytes > 0, JSON.stringify(t));
});

test('with a wider radius and 7 bands, the routed index decides as one index does', () => {
  const stage: SecondStage = { radius: 6, minSimilarity: 0.85, bands: 7 };
  const t = check('radius 6, bands 7', PLAN_6, stage, 20, 400, 0.3);
  assert.ok(t.beyondK > 500, JSON.stringify(t));
});

test('the template streams put more pages under one band key than a probe looks at', () => {
  // What the second-stage property above rests on: without it, a cut at CHAIN_LIMIT per holder
  // would go unseen.
  const pages = stream(7919, 500, 0.4);
  const template = pages.filter((p) => p.sketch !== undefined);
  let most = 0;
  for (const probe of template.slice(-20)) most = Math.max(most, template.filter((p) => p !== probe && shareBand(probe.sketch, p.sketch, 14)).length);
  assert.ok(most > 4 * CHAIN_LIMIT, `at most ${most} pages share a band with a probe`);
});

test('routing: every pair within k meets in some partition through a table that holds both', () => {
  const r = rng(99);
  for (const [plan, partitions] of [[PLAN_3, 64], [PLAN_3, 7], [PLAN_6, 16], [PLAN_6, 1]] as const) {
    const routing = new IndexRouting(plan, partitions, 0);
    for (let i = 0; i < 2000; i++) {
      const hi = randomWord(r);
      const lo = randomWord(r);
      const [hi2, lo2] = flip(r, hi, lo, Math.floor(r() * (plan.k + 1)));
      const meet = Array.from({ length: routing.tableCount }, (_, t) => routing.tablePartition(t, hi, lo) === routing.tablePartition(t, hi2, lo2));
      assert.ok(meet.some(Boolean), `a pair within ${plan.k} bits met nowhere (${partitions} partitions)`);
    }
    // The entries spread: every partition gets some.
    const used = new Set<number>();
    for (let i = 0; i < 5000; i++) for (let t = 0; t < routing.tableCount; t++) used.add(routing.tablePartition(t, randomWord(r), randomWord(r)));
    assert.equal(used.size, partitions);
  }
});
