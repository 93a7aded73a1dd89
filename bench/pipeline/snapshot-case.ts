/**
 * One snapshot case, in its own process (config from DEDUP_* as for `dedup run`):
 *
 *   node dist/bench/pipeline/snapshot-case.js build <pages> <dir> [seed] [clusterId]
 *     fills a decider with <pages> synthetic pages (ids p0..pN-1, seeded random
 *     fingerprints, 10% of them 1-3 bits from an earlier page and recorded as
 *     its duplicate) and writes the snapshot the pipeline would load.
 *     Pages go in through Decider.restore (what changelog replay does: insert
 *     without probing). The pipeline accepts a snapshot only for its own
 *     Kafka cluster, so give the cluster id when `dedup run` is to load it.
 *   node --expose-gc dist/bench/pipeline/snapshot-case.js load <dir>
 *     times readSnapshot, reports the file size and the process RSS.
 *
 * Prints one JSON line on stdout.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createDecider, fingerprintVersionOf, planFromConfig } from '../../src/dedup/create-decider.js';
import { syntheticPages } from './synthetic.js';
import { readSnapshot, writeSnapshot, SNAPSHOT_FILE } from '../../src/storage/state-snapshot.js';

async function build(pages: number, dir: string, seed: number, clusterId: string): Promise<Record<string, unknown>> {
  const config = loadConfig(process.env);
  const plan = planFromConfig(config);
  const decider = createDecider(config, plan);
  const started = performance.now();
  let duplicates = 0;
  for (const p of syntheticPages(pages, seed)) {
    if (p.duplicateOf) duplicates++;
    decider.restore({ id: p.id, hi: p.hi, lo: p.lo, short: false, fetchedAt: p.fetchedAt, sketch: p.sketch }, p.duplicateOf, p.distance, p.sequence);
  }
  const built = performance.now();
  const bytes = await writeSnapshot(
    dir,
    {
      createdAt: new Date().toISOString(),
      clusterId,
      changelogTopic: config.fingerprintsTopic,
      offsets: {},
      k: config.k,
      plan,
      pages: decider.store.size,
      // The pipeline rebuilds from the changelog a snapshot of another (or no) fingerprint definition.
      fingerprintVersion: fingerprintVersionOf(config),
    },
    decider.index,
    decider.store,
  );
  const written = performance.now();
  return {
    pages,
    duplicates,
    buildSeconds: (built - started) / 1000,
    writeSeconds: (written - built) / 1000,
    fileBytes: bytes,
    deciderBytes: decider.byteLength,
    plan: { blockWidths: plan.blockWidths, tables: plan.tables.length },
  };
}

async function load(dir: string): Promise<Record<string, unknown>> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const loaded = await readSnapshot(dir);
  const seconds = (performance.now() - started) / 1000;
  if (!loaded) throw new Error(`no snapshot in ${dir}`);
  gc?.();
  const memory = process.memoryUsage();
  return {
    pages: loaded.header.pages,
    fingerprints: loaded.index.size,
    deciderBytes: loaded.index.byteLength + loaded.store.byteLength,
    loadSeconds: seconds,
    fileBytes: (await stat(join(dir, SNAPSHOT_FILE))).size,
    rssBeforeBytes: rssBefore,
    rssAfterBytes: memory.rss,
    arrayBuffersBytes: memory.arrayBuffers,
  };
}

const [mode, a, b, c, d] = process.argv.slice(2);
const job = mode === 'build' ? build(Number(a), b!, Number(c ?? 7), d ?? 'bench-synthetic') : mode === 'load' ? load(a!) : Promise.reject(new Error('usage: snapshot-case.js build <pages> <dir> [seed] [clusterId] | load <dir>'));
job.then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`snapshot-case: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
