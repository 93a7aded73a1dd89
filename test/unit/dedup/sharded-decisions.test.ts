/**
 * The sharded index decides as one index would: S shards (pages by id hash,
 * every shard probed "as of" the page's sequence number) joined by watermarks
 * give, page by page, the verdict of the single-index Decider over the same
 * order. A property over many seeded streams: near-duplicates planted within
 * and beyond k, exact copies, short pages, ids sent again with the same or
 * another fingerprint, and answers delivered in batches.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Decider, type SecondStage } from '../../../src/dedup/decider.js';
import { PageStore } from '../../../src/dedup/page-store.js';
import { SKETCH_BINS } from '../../../src/fingerprint/index.js';
import { sketchFromWire, sketchToWire } from '../../../src/wire/sketch-wire.js';
import { ShardState, applySequenced, homeShard, type SequencedPage } from '../../../src/dedup/shard-state.js';
import { AnswerJoin, sourceKey, type JoinedVerdict } from '../../../src/dedup/answer-join.js';
import type { AnswerRecord } from '../../../src/dedup/shard-protocol.js';
import { FingerprintIndex, planFromBlocks } from '../../../src/index/index.js';
import { mulberry32 } from '../../support/rng.js';

const rng = mulberry32;

interface Page { id: string; hi: number; lo: number; short: boolean; fetchedAt: number; sketch: Uint8Array }

function randomSketch(r: () => number): Uint8Array {
  return Uint8Array.from({ length: SKETCH_BINS }, () => Math.floor(r() * 256));
}

/** The base's sketch with a drawn share of its bins changed: near-duplicates keep most, others few. */
function relatedSketch(r: () => number, base: Uint8Array): Uint8Array {
  const out = base.slice();
  const changed = r() < 0.6 ? Math.floor(r() * 8) : Math.floor(r() * SKETCH_BINS);
  for (let b = 0; b < changed; b++) out[Math.floor(r() * SKETCH_BINS)] = Math.floor(r() * 256);
  return out;
}

function stream(seed: number, n: number): Page[] {
  const r = rng(seed);
  const pages: Page[] = [];
  for (let i = 0; i < n; i++) {
    const roll = r();
    if (roll < 0.45 || pages.length === 0) {
      pages.push({ id: `p${i}`, hi: (r() * 2 ** 32) >>> 0, lo: (r() * 2 ** 32) >>> 0, short: r() < 0.05, fetchedAt: 1_700_000_000_000 + i, sketch: randomSketch(r) });
      continue;
    }
    const base = pages[Math.floor(r() * pages.length)]!;
    if (roll < 0.55) {
      // an id sent again: the same fingerprint, or another one
      pages.push(r() < 0.5 ? { ...base } : { ...base, hi: (r() * 2 ** 32) >>> 0, sketch: relatedSketch(r, base.sketch) });
      continue;
    }
    let { hi, lo } = base;
    const flips = Math.floor(r() * 9); // 0..8 bits: within and beyond k = 3, and beyond a second stage's radius of 6
    for (let f = 0; f < flips; f++) {
      const bit = Math.floor(r() * 64);
      if (bit < 32) hi = (hi ^ (1 << bit)) >>> 0;
      else lo = (lo ^ (1 << (bit - 32))) >>> 0;
    }
    pages.push({ id: `p${i}`, hi, lo, short: r() < 0.05 ? !base.short : base.short, fetchedAt: 1_700_000_000_000 + i, sketch: relatedSketch(r, base.sketch) });
  }
  return pages;
}

/** Runs the protocol in memory: one sequence log, S shards, one joiner; answers delivered `batch` records at a time. */
const PLAN_3 = planFromBlocks(3, [16, 16, 16, 16]);
const PLAN_6 = planFromBlocks(6, [8, 8, 8, 8, 8, 8, 8, 8]);

function sharded(pages: Page[], shardCount: number, batch: number, stage: SecondStage | null = null): JoinedVerdict[] {
  const plan = stage === null ? PLAN_3 : PLAN_6;
  const shards = Array.from({ length: shardCount }, (_, s) => new ShardState(s, plan, 3, undefined, stage));
  const join = new AnswerJoin(shardCount);
  const log: { page: SequencedPage; origin: number; sketch: Uint8Array | null }[] = [];
  const verdicts: JoinedVerdict[] = new Array(pages.length);
  let applied = 0;
  let outbox: AnswerRecord[] = [];
  /** Appends are acknowledged late: shards may answer before the emitter knows the sequence. */
  let pendingAcks: [string, number][] = [];
  const ack = (): void => {
    for (const [key, sequence] of pendingAcks) join.sequenced(key, sequence);
    pendingAcks = [];
  };
  const flush = (): void => {
    for (const record of outbox) join.apply(record);
    outbox = [];
    for (const done of join.drain()) {
      const origin = log[done.sequence]!.origin;
      if (done.verdict) {
        verdicts[origin] = done.verdict;
        continue;
      }
      const source = log[done.sequence]!.page;
      join.rewatch(done.key, { hi: done.repeatOf.hi, lo: done.repeatOf.lo, firstSequence: done.repeatOf.first });
      const sequence = log.length;
      // The sketch goes through the wire form, as between instances.
      log.push({ page: { type: 'reprobe', id: source.id, hi: done.repeatOf.hi, lo: done.repeatOf.lo, short: done.repeatOf.short, asOf: done.repeatOf.first }, origin, sketch: sketchFromWire(done.repeatOf.sketch) });
      pendingAcks.push([done.key, sequence]);
    }
  };
  const applyUpTo = (end: number): void => {
    for (; applied < end; applied++) {
      const out = applySequenced(shards, shardCount, log[applied]!.page, applied, log[applied]!.sketch);
      const source = { partition: 0, offset: String(log[applied]!.origin) };
      for (const h of out.hits) outbox.push({ type: 'hit', sequence: applied, ...source, ...h });
      if (out.repeat) {
        const { sketch, ...repeat } = out.repeat;
        outbox.push({ type: 'repeat', sequence: applied, ...source, ...repeat, ...(sketch === null ? {} : { sketch: sketchToWire(sketch)! }) });
      }
      if (outbox.length >= batch) {
        if (applied % 2 === 0) ack();
        outbox.push({ type: 'watermark', instance: 'sim', shards: shards.map((s) => s.shard), upTo: shards.map((s) => s.position) });
        flush();
      }
    }
    ack();
    outbox.push({ type: 'watermark', instance: 'sim', shards: shards.map((s) => s.shard), upTo: shards.map((s) => s.position) });
    flush();
  };
  pages.forEach((page, origin) => {
    const sequence = log.length;
    const key = sourceKey(0, String(origin));
    join.watch(key, { hi: page.hi, lo: page.lo });
    log.push({ page: { type: 'probe', ...page }, origin, sketch: stage === null ? null : page.sketch });
    pendingAcks.push([key, sequence]);
    if (log.length % batch === 0) applyUpTo(log.length);
  });
  while (applied < log.length) applyUpTo(log.length);
  return verdicts;
}

function single(pages: Page[], stage: SecondStage | null = null) {
  const decider = new Decider({
    index: FingerprintIndex.create({ plan: stage === null ? PLAN_3 : PLAN_6 }),
    store: new PageStore(1024, stage === null ? 0 : SKETCH_BINS),
    k: 3,
    secondStage: stage,
  });
  return pages.map((p) => decider.decide(p));
}

test('S shards joined by watermarks decide every page as one index does', () => {
  let duplicates = 0;
  let repeats = 0;
  for (let seed = 1; seed <= 60; seed++) {
    const pages = stream(seed, 400);
    const shardCount = 1 + (seed % 7);
    const expected = single(pages);
    const actual = sharded(pages, shardCount, 1 + (seed % 13));
    for (let i = 0; i < pages.length; i++) {
      const e = expected[i]!;
      const a = actual[i];
      assert.ok(a, `seed ${seed}: page ${i} got no verdict`);
      const want = { verdict: e.verdict, duplicateOf: e.duplicateOf, distance: e.distance, hi: e.hi, lo: e.lo, repeated: e.repeated };
      const got = { verdict: a.verdict, duplicateOf: a.duplicateOf, distance: a.distance, hi: a.hi, lo: a.lo, repeated: a.repeated };
      assert.deepEqual(got, want, `seed ${seed}, ${shardCount} shards, page ${i} (${pages[i]!.id})`);
      if (e.verdict === 'duplicate') duplicates++;
      if (e.repeated) repeats++;
    }
  }
  // The streams exercise what they claim to.
  assert.ok(duplicates > 3000, `only ${duplicates} duplicates`);
  assert.ok(repeats > 1000, `only ${repeats} repeats`);
});

test('with the second stage, S shards decide every page as one index with the second stage does', () => {
  checkSecondStage({ radius: 6, minSimilarity: 0.85 }, (beyondK, differs) => beyondK > 300 && differs > 300);
});

test('with the second stage and sketch bands, S shards decide every page as one index does', () => {
  // Each shard keeps the bands of its own pages, and every shard is asked about every page.
  checkSecondStage({ radius: 6, minSimilarity: 0.85, bands: 7 }, (_, __, beyondRadius) => beyondRadius > 100);
});

function checkSecondStage(stage: SecondStage, enough: (beyondK: number, differsFromFirstStage: number, beyondRadius: number) => boolean): void {
  let beyondK = 0;
  let beyondRadius = 0;
  let differsFromFirstStage = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const pages = stream(1000 + seed, 300);
    const shardCount = 1 + (seed % 5);
    const expected = single(pages, stage);
    const firstStageOnly = single(pages);
    const actual = sharded(pages, shardCount, 1 + (seed % 11), stage);
    for (let i = 0; i < pages.length; i++) {
      const e = expected[i]!;
      const a = actual[i];
      assert.ok(a, `seed ${seed}: page ${i} got no verdict`);
      assert.deepEqual(
        { verdict: a.verdict, duplicateOf: a.duplicateOf, distance: a.distance, repeated: a.repeated },
        { verdict: e.verdict, duplicateOf: e.duplicateOf, distance: e.distance, repeated: e.repeated },
        `seed ${seed}, ${shardCount} shards, page ${i} (${pages[i]!.id})`,
      );
      if (e.distance !== null && e.distance > 3) beyondK++;
      if (e.distance !== null && e.distance > stage.radius) beyondRadius++;
      if (e.verdict !== firstStageOnly[i]!.verdict) differsFromFirstStage++;
    }
  }
  // The streams exercise the second stage: duplicates beyond k (and beyond the radius, with bands), confirmed by sketches.
  assert.ok(enough(beyondK, differsFromFirstStage, beyondRadius), `beyond k ${beyondK}, beyond the radius ${beyondRadius}, differing ${differsFromFirstStage}`);
}

test('home shards spread ids evenly', () => {
  const counts = new Array(16).fill(0);
  for (let i = 0; i < 160_000; i++) counts[homeShard(`https://example.org/page/${i}`, 16)]++;
  for (const c of counts) assert.ok(Math.abs(c - 10_000) < 500, `shard count ${c}`);
});

test('a shard restored in bulk from its recorded pages answers as the shard that recorded them', () => {
  const plan = planFromBlocks(3, [16, 16, 16, 16]);
  for (let seed = 1; seed <= 10; seed++) {
    const pages = stream(100 + seed, 600);
    const shardCount = 3;
    const live = Array.from({ length: shardCount }, (_, s) => new ShardState(s, plan, 3));
    const recorded: { shard: number; id: string; hi: number; lo: number; short: boolean; fetchedAt: number; sequence: number }[] = [];
    const half = 400;
    pages.slice(0, half).forEach((p, sequence) => {
      const out = applySequenced(live, shardCount, { type: 'probe', ...p }, sequence);
      if (out.inserted) recorded.push({ shard: out.inserted.shard, ...p, sequence });
    });
    // Restore each shard from what it recorded (its changelog), in bulk.
    const restored = Array.from({ length: shardCount }, (_, s) => new ShardState(s, plan, 3));
    for (const shard of restored) shard.restoreBatch(recorded.filter((r) => r.shard === shard.shard));
    for (const s of restored) s.position = half;
    assert.deepEqual(restored.map((s) => s.size), live.map((s) => s.size));
    pages.slice(half).forEach((p, i) => {
      const a = applySequenced(live, shardCount, { type: 'probe', ...p }, half + i);
      const b = applySequenced(restored, shardCount, { type: 'probe', ...p }, half + i);
      assert.deepEqual(b, a, `seed ${seed}, page ${half + i}`);
    });
  }
});

/** One index over the stream with a window of W sequence numbers: a page sees only the pages of the last W records. */
function windowedOracle(pages: Page[], window: number): { verdict: string; duplicateOf: string | null; distance: number | null }[] {
  // Records in sequence order: each page, plus a reprobe record after each repeat (as the protocol appends them).
  const seen: { id: string; hi: number; lo: number; short: boolean; seq: number }[] = [];
  const out: { verdict: string; duplicateOf: string | null; distance: number | null }[] = [];
  const popcount = (x: number) => {
    let c = 0;
    for (let v = x >>> 0; v; v &= v - 1) c++;
    return c;
  };
  const closest = (p: { hi: number; lo: number; short: boolean }, before: number) => {
    let best: (typeof seen)[number] | null = null;
    let bestDistance = 65;
    for (const q of seen) {
      if (q.seq >= before || q.seq < before - window) continue;
      const d = popcount(p.hi ^ q.hi) + popcount(p.lo ^ q.lo);
      if (d > 3 || (d > 0 && (p.short || q.short))) continue;
      if (d < bestDistance || (d === bestDistance && best !== null && q.seq < best.seq)) {
        best = q;
        bestDistance = d;
      }
    }
    return best ? { verdict: 'duplicate', duplicateOf: best.id, distance: bestDistance } : { verdict: 'novel', duplicateOf: null, distance: null };
  };
  let seq = 0;
  for (const p of pages) {
    const n = seq++;
    const known = [...seen].reverse().find((q) => q.id === p.id);
    if (known && known.seq >= n - window) {
      seq++; // the reprobe's record
      out.push(closest(known, known.seq));
      continue;
    }
    out.push(closest(p, n));
    if (known) seen.splice(seen.indexOf(known), 1);
    seen.push({ ...p, seq: n });
  }
  return out;
}

test('with a sequence window, S shards (evicting three windows behind) decide as one windowed index does', () => {
  const plan = planFromBlocks(3, [16, 16, 16, 16]);
  let checked = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const pages = stream(500 + seed, 300);
    const window = 20 + (seed % 5) * 15;
    const shardCount = 1 + (seed % 4);
    const shards = Array.from({ length: shardCount }, (_, s) => Object.assign(new ShardState(s, plan, 3), { window }));
    const join = new AnswerJoin(shardCount);
    const verdicts: JoinedVerdict[] = [];
    let sequence = 0;
    const apply = (page: SequencedPage, origin: number): void => {
      const n = sequence++;
      const out = applySequenced(shards, shardCount, page, n);
      const key = sourceKey(0, String(origin));
      for (const h of out.hits) join.apply({ type: 'hit', sequence: n, partition: 0, offset: String(origin), ...h });
      if (out.repeat) {
        const { sketch: _stageOff, ...repeat } = out.repeat;
        join.apply({ type: 'repeat', sequence: n, partition: 0, offset: String(origin), ...repeat });
      }
      for (const s of shards) s.evictBefore(s.position - 3 * window);
      join.sequenced(key, n);
      join.apply({ type: 'watermark', instance: 'sim', shards: shards.map((s) => s.shard), upTo: shards.map((s) => s.position) });
    };
    pages.forEach((p, origin) => {
      join.watch(sourceKey(0, String(origin)), { hi: p.hi, lo: p.lo });
      apply({ type: 'probe', ...p }, origin);
      for (const done of join.drain()) {
        if (done.verdict) {
          verdicts[origin] = done.verdict;
          continue;
        }
        join.rewatch(done.key, { hi: done.repeatOf.hi, lo: done.repeatOf.lo, firstSequence: done.repeatOf.first });
        apply({ type: 'reprobe', id: p.id, hi: done.repeatOf.hi, lo: done.repeatOf.lo, short: done.repeatOf.short, asOf: done.repeatOf.first }, origin);
        for (const again of join.drain()) verdicts[origin] = again.verdict!;
      }
    });
    const expected = windowedOracle(pages, window);
    for (let i = 0; i < pages.length; i++) {
      const a = verdicts[i]!;
      assert.deepEqual({ verdict: a.verdict, duplicateOf: a.duplicateOf, distance: a.distance }, expected[i], `seed ${seed}, window ${window}, page ${i}`);
      checked++;
    }
    // Memory is bounded: no shard holds pages more than three windows old.
    for (const s of shards) assert.ok(s.size <= 3 * window + 1, `shard ${s.shard} holds ${s.size} pages with a window of ${window}`);
  }
  assert.ok(checked >= 9000);
});
