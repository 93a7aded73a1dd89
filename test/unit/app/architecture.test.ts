/**
 * The pure core (fingerprint, index, dedup) imports nothing from Kafka, HTTP,
 * prom-client, the file system or process.env: it is a library first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'src');
const FORBIDDEN = [/from 'kafkajs'/, /@kafkajs\//, /prom-client/, /from 'node:http'/, /from 'node:fs/, /process\.env/, /\.\.\/(consumers|producers|app|metrics|cli|wire|kafka)\//];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

test('core modules stay pure', () => {
  const core = ['fingerprint', 'index', 'dedup'].flatMap((d) => files(join(SRC, d)));
  assert.ok(core.length > 10);
  const crossings: string[] = [];
  for (const file of core) {
    const text = readFileSync(file, 'utf8');
    // The worker pool is the fingerprinter's own I/O edge (worker_threads), allowed to read its module path.
    for (const pattern of FORBIDDEN) if (pattern.test(text) && !file.endsWith('fingerprint-pool.ts')) crossings.push(`${file}: ${pattern}`);
  }
  assert.deepEqual(crossings, []);
});

test('nothing but the entry point imports app/: the flow reads consume, core, produce', () => {
  const importers: string[] = [];
  for (const file of files(SRC)) {
    if (file.includes(`${join('src', 'app')}`) || file.endsWith(join('cli', 'main.ts'))) continue;
    if (/from '[^']*\/app\/[^']*'/.test(readFileSync(file, 'utf8'))) importers.push(file);
  }
  assert.deepEqual(importers, []);
});

test('every error code is documented in docs/operations.md', () => {
  const errors = readFileSync(join(SRC, 'errors.ts'), 'utf8');
  const codes = [...errors.matchAll(/^  ([A-Z_]+): '/gm)].map((m) => m[1]!);
  assert.ok(codes.length >= 10);
  const doc = readFileSync(join(SRC, '..', 'docs', 'operations.md'), 'utf8');
  const missing = codes.filter((c) => !doc.includes(c));
  assert.deepEqual(missing, [], 'codes missing from docs/operations.md');
});
