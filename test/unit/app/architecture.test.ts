/**
 * The layers, read from the imports of src/ (static, dynamic and re-exports,
 * type-only ones included: a type import still ties a module to another).
 *
 * - The pure core (fingerprint, index, dedup) imports nothing from config,
 *   Kafka, HTTP, prom-client, the file system, the environment or the edges,
 *   through any chain of imports.
 * - producers/ never reaches consumers/.
 * - The chunk step (src/chunk/: decode, fingerprint, decide, outputs, and its
 *   worker pool) is Kafka-free: it reaches no kafkajs, kafka/, consumers/,
 *   producers/ or app/.
 * - Only src/kafka/ imports kafkajs, save the exceptions listed below.
 * - Config stops at start-up (app/, modes/, cli/): below it, components take
 *   narrow options.
 * - Each mode starts up on its own (src/modes/<mode>/): no mode's start-up
 *   imports another's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const SRC = join(ROOT, 'src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** A file under src/, as 'dedup/decider.ts'. */
const name = (file: string): string => relative(SRC, file).split(sep).join('/');

interface Imports {
  /** Files of src/ it imports, by name. */
  local: string[];
  /** Packages and node: modules it imports. */
  external: string[];
  readsEnvironment: boolean;
}

const IMPORT = /(?:^|[^.\w])(?:import|export)\s[^'";]*?from\s*'([^']+)'|(?:^|[^.\w])import\s*'([^']+)'|(?:^|[^.\w])import\s*\(\s*'([^']+)'\s*\)/gm;

function parse(file: string): Imports {
  // Comments may quote imports; they import nothing.
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const local: string[] = [];
  const external: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    if (spec.startsWith('.')) local.push(name(resolve(dirname(file), spec.replace(/\.js$/, '.ts'))));
    else external.push(spec);
  }
  return { local, external, readsEnvironment: /process\.env/.test(text) };
}

const GRAPH = new Map(files(SRC).map((f) => [name(f), parse(f)]));

/** Every file of src/ that `from` imports, directly or through others, with one chain that reaches it. */
function reachable(from: string): Map<string, string[]> {
  const chains = new Map<string, string[]>([[from, [from]]]);
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const next of GRAPH.get(at)?.local ?? []) {
      if (chains.has(next)) continue;
      chains.set(next, [...chains.get(at)!, next]);
      queue.push(next);
    }
  }
  return chains;
}

const CORE = ['fingerprint/', 'index/', 'dedup/'];
const inCore = (file: string): boolean => CORE.some((d) => file.startsWith(d));
/** What the core may import besides itself: the one error hierarchy. */
const CORE_MAY_IMPORT = new Set(['errors.ts']);
/** Packages and node: modules the core may import (a pure library, or a pure module of node). */
const CORE_PACKAGES = new Set(['@node-rs/jieba', '@node-rs/jieba/dict.js']);
/**
 * The fingerprinter's worker pool is its own I/O edge: it starts worker
 * threads, sized by the CPU count. Only these files may use these modules.
 */
const CORE_IO_EXCEPTIONS: Record<string, readonly string[]> = {
  'fingerprint/fingerprint-pool.ts': ['node:worker_threads', 'node:os'],
  'fingerprint/fingerprint-worker.ts': ['node:worker_threads'],
};

test('graph sanity: the import reader sees the imports it must see', () => {
  assert.ok(GRAPH.size > 80);
  assert.ok(GRAPH.get('app/pipeline.ts')!.local.includes('config.ts'), 'a type-only import is read');
  assert.ok(GRAPH.get('cli/main.ts')!.local.includes('app/pipeline.ts'), 'a dynamic import is read');
  assert.ok(GRAPH.get('fingerprint/index.ts')!.local.includes('fingerprint/fingerprint-pool.ts'), 'a re-export is read');
  assert.ok(GRAPH.get('kafka/client.ts')!.external.includes('kafkajs'));
  for (const [file, imports] of GRAPH) for (const dep of imports.local) assert.ok(GRAPH.has(dep), `${file} imports ${dep}, which is not a file of src/`);
});

test('the core imports nothing but itself and errors.ts, through any chain: no config, Kafka, HTTP, metrics, file system, environment or edge', () => {
  const core = [...GRAPH.keys()].filter(inCore);
  assert.ok(core.length > 30);
  const crossings = new Set<string>();
  for (const file of core) {
    for (const [dep, chain] of reachable(file)) {
      if (!inCore(dep) && !CORE_MAY_IMPORT.has(dep)) crossings.add(`${chain.join(' -> ')}`);
      const { external, readsEnvironment } = GRAPH.get(dep)!;
      for (const spec of external) {
        if (CORE_PACKAGES.has(spec) || CORE_IO_EXCEPTIONS[dep]?.includes(spec)) continue;
        crossings.add(`${chain.join(' -> ')} -> ${spec}`);
      }
      if (readsEnvironment) crossings.add(`${chain.join(' -> ')} reads process.env`);
    }
  }
  // One chain per forbidden end is enough to act on.
  const byEnd = new Map<string, string>();
  for (const c of crossings) {
    const end = c.split(' -> ').slice(-1)[0]!;
    if (!byEnd.has(end) || c.length < byEnd.get(end)!.length) byEnd.set(end, c);
  }
  assert.deepEqual([...byEnd.values()].sort(), []);
});

test('producers/ never imports consumers/, through any chain', () => {
  const producers = [...GRAPH.keys()].filter((f) => f.startsWith('producers/'));
  assert.ok(producers.length > 0);
  const crossings: string[] = [];
  for (const file of producers) {
    for (const [dep, chain] of reachable(file)) if (dep.startsWith('consumers/')) crossings.push(chain.join(' -> '));
  }
  assert.deepEqual(crossings, []);
});

test('the chunk step is Kafka-free, through any chain', () => {
  const step = [...GRAPH.keys()].filter((f) => f.startsWith('chunk/'));
  assert.ok(step.length >= 3);
  const crossings = new Set<string>();
  for (const file of step) {
    for (const [dep, chain] of reachable(file)) {
      if (['kafka/', 'consumers/', 'producers/', 'app/'].some((d) => dep.startsWith(d))) crossings.add(chain.join(' -> '));
      for (const spec of GRAPH.get(dep)!.external) if (spec === 'kafkajs' || spec.startsWith('kafkajs/')) crossings.add(`${chain.join(' -> ')} -> ${spec}`);
    }
  }
  assert.deepEqual([...crossings].sort(), []);
});

/** Files below start-up that still take the whole config, each with its reason. */
const CONFIG_EXCEPTIONS: Record<string, string> = {};

test('config stops at start-up: only app/, modes/, cli/ and the library entry import config.ts, save the exceptions listed', () => {
  const importers = [...GRAPH]
    .filter(([file, { local }]) => local.includes('config.ts') && !file.startsWith('app/') && !file.startsWith('modes/') && !file.startsWith('cli/') && file !== 'lib.ts')
    .map(([file]) => file)
    .sort();
  assert.deepEqual(importers, Object.keys(CONFIG_EXCEPTIONS).sort());
});

test('each mode has its own start-up: src/modes/<mode>/ never reaches another mode\u2019s, through any chain', () => {
  const modeOf = (file: string): string | null => /^modes\/([^/]+)\//.exec(file)?.[1] ?? null;
  const starts = [...GRAPH.keys()].filter((f) => modeOf(f) !== null);
  assert.deepEqual([...new Set(starts.map(modeOf))].sort(), ['routed', 'sharded', 'single']);
  const crossings: string[] = [];
  for (const file of starts) {
    for (const [dep, chain] of reachable(file)) {
      const other = modeOf(dep);
      if (other !== null && other !== modeOf(file)) crossings.push(chain.join(' -> '));
    }
  }
  assert.deepEqual(crossings, []);
});

/**
 * Files outside src/kafka/ that still import kafkajs, each with its reason.
 * The list must be exact: a file that stops importing kafkajs leaves it.
 * (@kafkajs/confluent-schema-registry is the registry's HTTP client, not
 * Kafka; it lives in src/wire/registry.ts and src/wire/record-codec.ts.)
 */
const KAFKAJS_EXCEPTIONS: Record<string, string> = {
  'consumers/crawled-pages.consumer.ts': 'the group consumer and chunk loop: to move into src/kafka/ with the redesign of the consumers',
  'consumers/sharded-pages.consumer.ts': 'the sharded group consumer: to move into src/kafka/ and src/modes/sharded/ with the redesign',
  'consumers/consumer-health.ts': 'reads the group consumer\'s events: moves with the group consumer',
  'consumers/answers.consumer.ts': 'tails the answers log: moves with the sharded consumer redesign',
  'consumers/sequence.consumer.ts': 'tails the sequence log for the held shards: moves with the sharded consumer redesign',
};

test('only src/kafka/ imports kafkajs, save the exceptions listed with their reasons', () => {
  const importers = [...GRAPH]
    .filter(([file, { external }]) => !file.startsWith('kafka/') && external.some((spec) => spec === 'kafkajs' || spec.startsWith('kafkajs/')))
    .map(([file]) => file)
    .sort();
  assert.deepEqual(importers, Object.keys(KAFKAJS_EXCEPTIONS).sort());
});

test('nothing but the entry point imports app/: the flow reads consume, core, produce', () => {
  const importers = [...GRAPH]
    .filter(([file, { local }]) => !file.startsWith('app/') && file !== 'cli/main.ts' && local.some((dep) => dep.startsWith('app/')))
    .map(([file]) => file);
  assert.deepEqual(importers, []);
});

test('every error code is documented in docs/operations.md', () => {
  const errors = readFileSync(join(SRC, 'errors.ts'), 'utf8');
  const codes = [...errors.matchAll(/^  ([A-Z_]+): '/gm)].map((m) => m[1]!);
  assert.ok(codes.length >= 10);
  const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const missing = codes.filter((c) => !doc.includes(c));
  assert.deepEqual(missing, [], 'codes missing from docs/operations.md');
});
