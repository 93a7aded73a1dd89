/**
 * What one sequence record costs an instance that tails the sequence, for the
 * scale-out model in docs/architecture.md: decoding the probe record, and
 * applying it to the shards held (a probe "as of" its sequence in every held
 * shard, an insert in its home shard), with 1M pages spread over the
 * cluster's shards. Also the sizes of a probe, a hit and a watermark record.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/shard/apply-cost.js [pagesInCluster=1000000] [shards=64]
 *
 * Prints one JSON object; results in bench/results/shard-apply.json.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ShardState, applySequenced, homeShard } from '../../src/dedup/shard-state.js';
import { decodeSequenceRecord, encodeShardRecord } from '../../src/wire/shard-records.js';
import { planFromBlocks } from '../../src/index/index.js';
import { mulberry32Uint32 } from '../../src/mulberry32.js';

const pagesInCluster = Number(process.argv[2] ?? 1_000_000);
const shardCount = Number(process.argv[3] ?? 64);
const plan = planFromBlocks(3, [16, 16, 16, 16]);
const rand = mulberry32Uint32(12345);

function measure(heldShards: number): { applyMicros: number; decodeMicros: number } {
  // Every shard holds its share of the cluster's pages; this instance holds `heldShards` of them.
  const held = Array.from({ length: heldShards }, (_, s) => new ShardState(s, plan, 3));
  const perShard = Math.floor(pagesInCluster / shardCount);
  for (const shard of held) {
    const pages = Array.from({ length: perShard }, (_, i) => ({ id: `s${shard.shard}-p${i}`, hi: rand(), lo: rand(), short: false, fetchedAt: 1_700_000_000_000, sequence: i * shardCount + shard.shard }));
    shard.restoreBatch(pages);
  }
  let sequence = perShard * shardCount;
  for (const s of held) s.position = sequence;
  const records = Array.from({ length: 20_000 }, (_, i) => encodeShardRecord({ type: 'probe', id: `new-${i}`, hi: rand(), lo: rand(), short: false, fetchedAt: 1_700_000_000_000, partition: i % 12, offset: String(1_000_000 + i) }));
  let started = process.hrtime.bigint();
  const decoded = records.map((r) => decodeSequenceRecord(r));
  const decodeMicros = Number(process.hrtime.bigint() - started) / 1e3 / records.length;
  started = process.hrtime.bigint();
  for (const record of decoded) applySequenced(held, shardCount, record, sequence++);
  const applyMicros = Number(process.hrtime.bigint() - started) / 1e3 / decoded.length;
  return { applyMicros, decodeMicros };
}

const probe = encodeShardRecord({ type: 'probe', id: 'https://example.org/news/2026/11/23/a-typical-page-id', hi: 0xdeadbeef, lo: 0x12345678, short: false, fetchedAt: 1_763_890_000_000, partition: 17, offset: '123456789' });
const hit = encodeShardRecord({ type: 'hit', sequence: 123456789, partition: 17, offset: '123456789', shard: 5, id: 'https://example.org/news/2026/11/23/a-typical-page-id', distance: 2, candidateSequence: 12345678, hi: 0xdeadbeef, lo: 0x12345678 });
const results = {
  date: new Date().toISOString(),
  node: process.version,
  pagesInCluster,
  shards: shardCount,
  recordBytes: { probe: probe.length, hit: hit.length, watermark: encodeShardRecord({ type: 'watermark', instance: 'dedup-12', shards: [1, 2, 3, 4], upTo: [1e9, 1e9, 1e9, 1e9] }).length },
  homeShardOfAnId: homeShard('x', shardCount) >= 0,
  perRecord: [1, 4, 16, 64].filter((h) => h <= shardCount).map((held) => ({ shardsHeld: held, ...measure(held) })),
};
const out = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'results', 'shard-apply.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(results)}\n`);
