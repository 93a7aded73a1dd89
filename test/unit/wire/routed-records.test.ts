/**
 * The routed design's records (src/wire/routed-records.ts) read back as
 * written, over generated chunks: entries with and without ids, whole
 * sketches at the home and tails elsewhere, band keys, order records over
 * any partition count, replies with settled and unsettled answers and the
 * mark that more were left out, and round two's requests for them. A record
 * cut short or of another version is refused, never misread.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { chunkName, decodeConfirm, decodeConfirmed, decodeEntries, decodeIdStore, decodeMore, decodeMoreReply, decodeOrder, decodeReply, encodeConfirm, encodeConfirmed, encodeEntries, encodeIdStore, encodeMore, encodeMoreReply, encodeOrder, encodeReply, pairAnswers, recordChunk, replyHead, routedRecordKind, type ChunkKey } from '../../../src/wire/routed-records.js';
import { sketchTail, type PartitionAnswer } from '../../../src/dedup/index-partition.js';
import { SKETCH_BINS } from '../../../src/fingerprint/index.js';
import { DedupError } from '../../../src/errors.js';

/** Records as plain objects (fast-check makes them without a prototype by default). */
const rec = <T,>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<T> => fc.record(model, { noNullPrototype: true });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const chunk: fc.Arbitrary<ChunkKey> = rec({ inputPartition: fc.integer({ min: 0, max: 0xffff }), firstOffset: fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), attempt: fc.integer({ min: 0, max: 0xffff }) });
const sketch = fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS });
const id = fc.string({ unit: 'grapheme', maxLength: 40 });

/** A sketch of one of a few templates, some of its bytes changed: what a chunk's confirmations mostly carry. */
const templates = [0, 1, 2].map((t) => Uint8Array.from({ length: SKETCH_BINS }, (_, i) => (i * 37 + t * 101) & 0xff));
const templated = fc.tuple(fc.integer({ min: 0, max: templates.length - 1 }), fc.uniqueArray(fc.integer({ min: 0, max: SKETCH_BINS - 1 }), { maxLength: SKETCH_BINS }), fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS })).map(([t, changed, bytes]) => {
  const out = Uint8Array.from(templates[t]!);
  for (const i of changed) out[i] = bytes[i]!;
  return out;
});

const page = rec({
  slot: fc.integer({ min: 0, max: 0xffff }),
  tables: fc.integer({ min: 0, max: 0xff }),
  withId: fc.boolean(),
  id,
  hi: u32,
  lo: u32,
  short: fc.boolean(),
  sketch: fc.option(fc.oneof(sketch, templated)),
  bandKeys: fc.array(u32, { maxLength: 28 }),
});

const answer: fc.Arbitrary<PartitionAnswer> = rec({ id: fc.option(id), distance: fc.integer({ min: 0, max: 64 }), sequence: fc.integer({ min: 0, max: 2 ** 48 - 1 }), hi: u32, lo: u32 });
/** An unsettled candidate as a reply names it: by sequence and home, no id; its fingerprint does not travel (read back as 0, 0). */
const candidate: fc.Arbitrary<PartitionAnswer> = rec({ id: fc.constant(null), distance: fc.integer({ min: 0, max: 64 }), sequence: fc.integer({ min: 0, max: 2 ** 48 - 1 }), hi: fc.constant(0), lo: fc.constant(0), home: fc.integer({ min: 0, max: 0xffff }) });
const confirmedAnswer = fc.option(rec({ id: fc.string({ maxLength: 60 }), hi: u32, lo: u32 }));

test('entries read back as written: ids, whole sketches at the home (of templates: written as differences), tails elsewhere', () => {
  fc.assert(
    fc.property(chunk, fc.array(page, { maxLength: 30 }), (key, pages) => {
      const slotted = pages.map((p) => {
        const home = (p.tables & 1) !== 0;
        const s = p.sketch === null ? null : home ? p.sketch : sketchTail(p.sketch);
        return { slot: p.slot, page: { id: p.withId ? p.id : null, hi: p.hi, lo: p.lo, short: p.short, fetchedAt: 0, sketch: s, tables: p.tables, bandKeys: p.bandKeys } };
      });
      const back = decodeEntries(encodeEntries({ chunk: key, pages: slotted }));
      assert.deepEqual(back.chunk, key);
      assert.deepEqual(
        back.pages.map(({ slot, page: q }) => ({ slot, page: { ...q, sketch: q.sketch === null ? null : [...q.sketch] } })),
        slotted.map(({ slot, page: q }) => ({ slot, page: { ...q, sketch: q.sketch === null ? null : [...q.sketch] } })),
      );
    }),
    { numRuns: 300 },
  );
});

test('order records read back with the partitions they touched', () => {
  fc.assert(
    fc.property(chunk, fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 1, max: 4096 }).chain((q) => fc.tuple(fc.constant(q), fc.uniqueArray(fc.integer({ min: 0, max: q - 1 }), { maxLength: 64 }))), (key, pages, span, [partitions, touched]) => {
      const back = decodeOrder(encodeOrder({ chunk: key, pages, span, touched, partitions }));
      assert.deepEqual(back, { chunk: key, pages, span, touched: [...touched].sort((a, b) => a - b), partitions });
    }),
    { numRuns: 300 },
  );
});

test('replies read back with their settled and unsettled answers', () => {
  fc.assert(
    fc.property(chunk, fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.array(rec({ slot: fc.integer({ min: 0, max: 0xffff }), reply: rec({ settled: fc.option(answer), unsettled: fc.array(candidate, { maxLength: 8 }), more: fc.boolean() }) }), { maxLength: 30 }), (key, indexPartition, base, replies) => {
      assert.deepEqual(decodeReply(encodeReply({ chunk: key, indexPartition, base, replies })), { chunk: key, indexPartition, base, replies });
    }),
    { numRuns: 300 },
  );
});

test('requests for more unsettled candidates read back as written, with the page or without it', () => {
  const ask = rec({ sequence: fc.integer({ min: 0, max: 2 ** 48 - 1 }), after: candidate, page, carried: fc.boolean() });
  fc.assert(
    fc.property(chunk, fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff }), fc.array(ask, { maxLength: 12 }), (key, indexPartition, trip, list) => {
      const asks = list.map(({ sequence, after, page: p, carried }) => {
        const home = (p.tables & 1) !== 0;
        const s = p.sketch === null ? null : home ? p.sketch : sketchTail(p.sketch);
        const routed = { id: p.withId ? p.id : null, hi: p.hi, lo: p.lo, short: p.short, fetchedAt: 0, sketch: s, tables: p.tables, bandKeys: p.bandKeys };
        return { slot: p.slot, sequence, after, page: carried ? routed : null };
      });
      const plain = (r: ReturnType<typeof decodeMore>) => ({ ...r, asks: r.asks.map((a) => ({ ...a, page: a.page === null ? null : { ...a.page, sketch: a.page.sketch === null ? null : [...a.page.sketch] } })) });
      const record = { chunk: key, indexPartition, trip, asks };
      assert.deepEqual(plain(decodeMore(encodeMore(record))), plain(record));
    }),
    { numRuns: 300 },
  );
});

test('id-store records read back as written: verdicts, duplicates of ids, positions', () => {
  const verdict = rec({
    duplicate: fc.boolean(),
    duplicateOf: fc.option(id),
    distance: fc.option(fc.integer({ min: 0, max: 64 })),
    hi: u32,
    lo: u32,
    of: fc.option(fc.tuple(u32, u32)),
    sequence: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
  });
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 53 - 1 }),
      fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
      fc.bigInt({ min: -1n, max: 2n ** 63n - 2n }),
      fc.array(rec({ id, v: verdict }), { maxLength: 30 }),
      (order, replies, spanEnd, list) => {
        const entries = list.map(({ id: pageId, v }) => ({
          id: pageId,
          verdict: { verdict: v.duplicate ? ('duplicate' as const) : ('novel' as const), duplicateOf: v.duplicateOf, distance: v.distance, hi: v.hi, lo: v.lo, duplicateOfHi: v.of?.[0] ?? null, duplicateOfLo: v.of?.[1] ?? null, sequence: v.sequence },
        }));
        const record = { position: { order, replies, spanEnd }, entries };
        const value = encodeIdStore(record);
        assert.deepEqual(decodeIdStore(value), record);
        assert.equal(routedRecordKind(value), 'id-store');
        for (let cut = 0; cut < value.length; cut++) assert.throws(() => decodeIdStore(value.subarray(0, cut)), DedupError);
      },
    ),
    { numRuns: 200 },
  );
  // The store of version 1 was JSON, one record per id: refused by name, not misread.
  assert.throws(() => decodeIdStore(Buffer.from(JSON.stringify({ verdict: 'novel', sequence: 1 }))), /version 123; this build reads version 3/);
});

test('a record cut short, with bytes left over, or of another version or type is refused', () => {
  const key: ChunkKey = { inputPartition: 3, firstOffset: 12345n, attempt: 1 };
  const order = encodeOrder({ chunk: key, pages: 7, span: 9, touched: [0, 5], partitions: 16 });
  for (let cut = 0; cut < order.length; cut++) assert.throws(() => decodeOrder(order.subarray(0, cut)), DedupError);
  assert.throws(() => decodeOrder(Buffer.concat([order, Buffer.from([0])])), DedupError);
  const otherVersion = Buffer.from(order);
  otherVersion[0] = 1;
  assert.throws(() => decodeOrder(otherVersion), /version 1; this build reads version 3/);
  assert.throws(() => routedRecordKind(otherVersion), /a routed record of version 1; this build reads version 3/);
  assert.throws(() => decodeReply(order), /type 2 where type 3/);
  const entries = encodeEntries({ chunk: key, pages: [{ slot: 0, page: { id: 'p1', hi: 1, lo: 2, short: false, fetchedAt: 0, sketch: null, tables: 1, bandKeys: [9] } }] });
  for (let cut = 0; cut < entries.length; cut++) assert.throws(() => decodeEntries(entries.subarray(0, cut)), DedupError);
});

test('round two\u2019s confirmations and their answers, and answers for more candidates, read back as written; every record names its kind', () => {
  const sketch = fc.option(fc.oneof(fc.uint8Array({ minLength: SKETCH_BINS, maxLength: SKETCH_BINS }), templated));
  const seq = fc.integer({ min: 0, max: 2 ** 48 - 1 });
  const slot = fc.integer({ min: 0, max: 0xffff });
  const moreAnswer = rec({ slot, afterSequence: seq, unsettled: fc.array(candidate, { maxLength: 8 }), more: fc.boolean() });
  fc.assert(
    fc.property(chunk, fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0, max: 0xffff }), fc.array(rec({ slot, sketch, sent: fc.boolean(), sequences: fc.array(seq, { maxLength: 12 }) }), { maxLength: 10 }), fc.array(confirmedAnswer, { maxLength: 40 }), fc.array(moreAnswer, { maxLength: 6 }), (key, indexPartition, trip, asks, answers, moreAnswers) => {
      const confirm = encodeConfirm({ chunk: key, indexPartition, trip, asks });
      const back = decodeConfirm(confirm);
      // A sketch sent before in the chunk is not written again: it reads back as null, marked sent.
      const plain = (a: readonly { slot: number; sketch: Uint8Array | null; sent?: boolean; sequences: readonly number[] }[]) => a.map((x) => ({ slot: x.slot, sent: x.sent === true, sketch: x.sent || x.sketch === null ? null : [...x.sketch], sequences: x.sequences }));
      assert.deepEqual({ ...back, asks: plain(back.asks) }, { chunk: key, indexPartition, trip, asks: plain(asks) });
      const confirmed = encodeConfirmed({ chunk: key, indexPartition, trip, answers });
      assert.deepEqual(decodeConfirmed(confirmed), { chunk: key, indexPartition, trip, answers });
      for (let cut = 0; cut < confirmed.length; cut++) assert.throws(() => decodeConfirmed(confirmed.subarray(0, cut)), DedupError);
      // Answers pair with the request's candidates in its order; a count that differs is refused.
      const candidates = asks.flatMap((a) => a.sequences.map((sequence) => ({ slot: a.slot, sequence })));
      const ids = candidates.map((c, i) => (i % 3 === 0 ? { id: `id-${c.sequence}`, hi: i, lo: c.sequence % 2 ** 32 } : null));
      assert.deepEqual(pairAnswers(back, decodeConfirmed(encodeConfirmed({ chunk: key, indexPartition, trip, answers: ids })).answers), candidates.map((c, i) => ({ ...c, agreed: ids[i] })));
      assert.throws(() => pairAnswers(back, [...ids, null]), DedupError);
      const moreReply = encodeMoreReply({ chunk: key, indexPartition, trip, answers: moreAnswers });
      assert.deepEqual(decodeMoreReply(moreReply), { chunk: key, indexPartition, trip, answers: moreAnswers });
      assert.deepEqual([confirm, confirmed, moreReply].map(routedRecordKind), ['confirm', 'confirmed', 'more-reply']);
      // The replies tail files answers by their head alone.
      assert.deepEqual(replyHead(confirmed), { kind: 'confirmed', chunk: key, indexPartition, trip });
      assert.deepEqual(replyHead(moreReply), { kind: 'more-reply', chunk: key, indexPartition, trip });
      assert.deepEqual(replyHead(encodeReply({ chunk: key, indexPartition, base: 7, replies: [] })), { kind: 'reply', chunk: key, indexPartition, trip: 0 });
      assert.throws(() => replyHead(confirm), /kind confirm where a reply belongs/);
      // A holder drops a request about a decided chunk by its head alone: every kind with a chunk names it there.
      const more = encodeMore({ chunk: key, indexPartition, trip, asks: [] });
      for (const value of [confirm, confirmed, moreReply, more, encodeReply({ chunk: key, indexPartition, base: 7, replies: [] }), encodeOrder({ chunk: key, pages: 1, span: 1, touched: [0], partitions: 16 })]) {
        assert.deepEqual(recordChunk(value), key);
      }
      assert.throws(() => recordChunk(encodeIdStore({ position: { order: 0, replies: 0n, spanEnd: 0n }, entries: [] })), /names no chunk/);
      assert.throws(() => recordChunk(confirm.subarray(0, 9)), DedupError);
      assert.throws(() => replyHead(confirmed.subarray(0, 9)), DedupError);
      assert.throws(() => decodeConfirmed(confirm), /type 5 where type 6/);
      for (let cut = 0; cut < confirm.length; cut++) assert.throws(() => decodeConfirm(confirm.subarray(0, cut)), DedupError);
      assert.match(chunkName(key), /^\d+:\d+:\d+$/);
    }),
    { numRuns: 300 },
  );
  assert.throws(() => routedRecordKind(Buffer.from([2, 99])), DedupError);
});

test('a confirmation\u2019s sequences cost a byte or two each when they are near one another', () => {
  const key: ChunkKey = { inputPartition: 0, firstOffset: 0n, attempt: 0 };
  const sequences = Array.from({ length: 100 }, (_, i) => 2 ** 40 + 3 * i);
  const bytes = encodeConfirm({ chunk: key, indexPartition: 0, trip: 0, asks: [{ slot: 0, sketch: null, sequences }] }).length;
  assert.ok(bytes < 30 + 8 + 100 * 1, `${bytes} bytes for 100 near sequences`);
  assert.deepEqual(decodeConfirm(encodeConfirm({ chunk: key, indexPartition: 0, trip: 0, asks: [{ slot: 0, sketch: null, sequences }] })).asks[0]!.sequences, sequences);
  // Pages of one template ask a home about the same candidates: each ask's first is a delta from
  // the previous ask's first, so 50 asks of 3 candidates far back cost about 5 bytes each.
  const same = Array.from({ length: 50 }, (_, slot) => ({ slot, sketch: null, sequences: [2 ** 40, 2 ** 40 + 9, 2 ** 40 + 20] }));
  const sameBytes = encodeConfirm({ chunk: key, indexPartition: 0, trip: 0, asks: same });
  assert.ok(sameBytes.length <= 20 + 8 + 50 * 5, `${sameBytes.length} bytes for 50 asks of the same 3 candidates`);
  assert.deepEqual(decodeConfirm(sameBytes).asks.map((a) => a.sequences), same.map((a) => a.sequences));
  assert.deepEqual(decodeConfirm(encodeConfirm({ chunk: key, indexPartition: 0, trip: 0, asks: [{ slot: 0, sketch: null, sequences: [5, 2 ** 48 - 1, 0, 7] }] })).asks[0]!.sequences, [5, 2 ** 48 - 1, 0, 7]);
});

test('a confirmation writes a sketch as its differences from one before it when they share bytes, and reads it back whole', () => {
  const key: ChunkKey = { inputPartition: 0, firstOffset: 0n, attempt: 0 };
  fc.assert(
    fc.property(fc.array(templated, { minLength: 2, maxLength: 40 }), fc.integer({ min: 0, max: 16 }), (sketches, changedAtMost) => {
      // Each sketch after the first differs from its template in at most changedAtMost bytes.
      const near = sketches.map((s, n) => {
        const t = templates[n % templates.length]!;
        const out = Uint8Array.from(t);
        let changed = 0;
        for (let i = 0; i < SKETCH_BINS && changed < changedAtMost; i++) if (s[i] !== t[i]) ((out[i] = s[i]!), changed++);
        return out;
      });
      const asks = near.map((sketch, slot) => ({ slot, sketch, sequences: [slot] }));
      const value = encodeConfirm({ chunk: key, indexPartition: 0, trip: 0, asks });
      assert.deepEqual(decodeConfirm(value).asks.map((a) => [...a.sketch!]), near.map((x) => [...x]));
      // Whole, each sketch costs 64 bytes; one of a template seen before in the record costs
      // its flag, a distance, an 8-byte mask and the bytes that differ from the closest one.
      const whole = Math.min(templates.length, near.length);
      const bound = 20 + near.length * 5 + whole * (1 + SKETCH_BINS) + (near.length - whole) * (2 + SKETCH_BINS / 8 + 2 * changedAtMost);
      assert.ok(value.length <= bound, `${value.length} bytes for ${near.length} sketches of ${whole} templates, each at most ${changedAtMost} bytes off (at most ${bound})`);
    }),
    { numRuns: 200 },
  );
  // A difference that names a sketch before the record's first is refused, not misread.
  const one = encodeConfirm({ chunk: key, indexPartition: 0, trip: 0, asks: [{ slot: 0, sketch: templates[0]!, sequences: [1] }, { slot: 1, sketch: templates[0]!, sequences: [2] }] });
  assert.ok(one.length < 20 + 2 * 5 + 1 + SKETCH_BINS + 2 + SKETCH_BINS / 8, `${one.length} bytes for a sketch sent twice`);
  const damaged = Buffer.from(one);
  // The second ask's distance back (before its mask and its one sequence) set to 5: there is one sketch before it.
  const at = damaged.length - (1 + SKETCH_BINS / 8 + 1);
  assert.equal(damaged[at], 0);
  damaged[at] = 5;
  assert.throws(() => decodeConfirm(damaged), /differences from one 6 back, of 1/);
});

test('an entry for band keys alone costs its slot\u2019s delta, a head byte, the fingerprint, the keys and the tail', () => {
  const key: ChunkKey = { inputPartition: 0, firstOffset: 0n, attempt: 0 };
  const sketch = sketchTail(templates[0]!);
  const pages = Array.from({ length: 50 }, (_, i) => ({ slot: 3 * i, page: { id: null, hi: i, lo: 7 * i, short: false, fetchedAt: 0, sketch, tables: 0, bandKeys: [1000 + i] } }));
  const value = encodeEntries({ chunk: key, pages });
  // Version, type, chunk (12 bytes) and count: 16 bytes; then 1 + 1 + 8 + 4 + 8 per entry.
  assert.equal(value.length, 16 + 50 * 22);
  assert.deepEqual(decodeEntries(value).pages.map((e) => e.slot), pages.map((e) => e.slot));
});

test('an unsettled candidate travels by sequence and home: its fingerprint is not written, and one without a home or with an id is refused', () => {
  const key: ChunkKey = { inputPartition: 0, firstOffset: 0n, attempt: 0 };
  const unsettled = Array.from({ length: 40 }, (_, i) => ({ id: null, distance: 4 + (i % 5), sequence: 100_000 + 7 * i, hi: 0, lo: 0, home: i % 64 }));
  const value = encodeReply({ chunk: key, indexPartition: 3, base: 100_500, replies: [{ slot: 0, reply: { settled: null, unsettled, more: true } }] });
  // The head (24 bytes), the slot's delta and a byte of flags and count, then a distance byte, a
  // 3-byte sequence and a 1-byte home each (13 with the fingerprint).
  assert.equal(value.length, 24 + 2 + 40 * 5);
  assert.deepEqual(decodeReply(value).replies[0]!.reply.unsettled, unsettled);
  const reply = (c: PartitionAnswer) => () => encodeReply({ chunk: key, indexPartition: 3, base: 0, replies: [{ slot: 0, reply: { settled: null, unsettled: [c], more: false } }] });
  assert.throws(reply({ id: null, distance: 5, sequence: 1, hi: 1, lo: 2 }), /without an id and with its home/);
  assert.throws(reply({ id: 'p1', distance: 5, sequence: 1, hi: 1, lo: 2, home: 0 }), /without an id and with its home/);
});
