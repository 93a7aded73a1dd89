/**
 * Two day-one annoyances, kept fixed: a trial chaos run must not overwrite
 * the recorded results (bench/results/chaos.json is tracked), and the
 * operations guide must open with what runs today, both modes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** Where scripts/chaos.sh sends its report, run through bash with the script's own lines for it. */
function chaosResults(args: string[], env: Record<string, string>): string {
  const script = readFileSync(join(ROOT, 'scripts', 'chaos.sh'), 'utf8');
  // The argument loop and the results block, as the script has them (no stack is started).
  const args0 = script.slice(script.indexOf('RECORD=0'), script.indexOf('npx tsc'));
  const results = script.slice(script.indexOf('export INFRA_STATE_DIR='), script.indexOf('DRIVER_PID=""'));
  assert.ok(args0.length > 0 && results.length > 0, 'scripts/chaos.sh no longer has the blocks this test reads');
  return execFileSync('bash', ['-c', `set -euo pipefail\n${args0}\n${results}\nprintf %s "$CHAOS_RESULTS"`, 'chaos.sh', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } }).toString();
}

test('a chaos run writes the tracked results only when asked (--record or CHAOS_RESULTS)', () => {
  const tracked = join(ROOT, 'bench', 'results', 'chaos.json');
  assert.equal(chaosResults([], { INFRA_STATE_DIR: '/tmp/chaos-state' }), '/tmp/chaos-state/chaos.json');
  assert.equal(chaosResults(['--record'], { INFRA_STATE_DIR: '/tmp/chaos-state' }), tracked);
  assert.equal(chaosResults([], { INFRA_STATE_DIR: '/tmp/chaos-state', CHAOS_RESULTS: '/tmp/elsewhere.json' }), '/tmp/elsewhere.json');
  assert.notEqual(chaosResults([], {}), tracked);
});

test('the operations guide opens with both modes, not with "the index is not sharded"', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const opening = doc.slice(0, doc.indexOf('## Quick start'));
  assert.doesNotMatch(opening, /index is not sharded|One instance owns everything/);
  assert.match(opening, /single mode/i);
  assert.match(opening, /sharded mode/i);
});
