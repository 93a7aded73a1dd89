/**
 * `npm run demo`, for real (its own local stack in a temporary state dir),
 * stopped the way a person stops it: SIGINT to the whole process group, as
 * Ctrl-C in a terminal does. The stop must read as a stop: the crawler and
 * the pipeline shut down in order, the script ends with "stopped.", exits 0,
 * and prints nothing after that (no "pipeline exited", no log lines).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './observability-artifacts.js';

const FIRST_COUNTS = /^novel [1-9]\d*  duplicate \d+/m;

test('npm run demo: Ctrl-C stops the crawler, then the pipeline, then the stack, and says so last', { timeout: 400_000 }, async () => {
  const state = mkdtempSync(join(tmpdir(), 'dedup-demo-'));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('DEDUP_') && !k.startsWith('npm_')) env[k] = v;
  const child = spawn('npm', ['run', '--silent', 'demo'], {
    cwd: REPO_ROOT,
    detached: true, // its own process group, like a terminal's foreground job
    env: { ...env, INFRA_STATE_DIR: state, DEMO_RATE: '100' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let outcome: { code: number | null; signal: NodeJS.Signals | null } | 'timeout';
  let atSignal = -1;
  try {
    const deadline = Date.now() + 300_000;
    while (!FIRST_COUNTS.test(output)) {
      assert.ok(Date.now() < deadline, `the demo printed no verdict counts within 300 s:\n${output}`);
      assert.equal(child.exitCode, null, `the demo exited before it ran:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    atSignal = output.length;
    process.kill(-child.pid!, 'SIGINT');
    outcome = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 90_000).unref())]);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    spawnSync('bash', [join(REPO_ROOT, 'deploy', 'local', 'down.sh')], { env: { ...env, INFRA_STATE_DIR: state }, stdio: 'ignore' });
  }
  try {
    if (outcome === 'timeout') assert.fail(`the demo did not stop within 90 s of SIGINT:\n${output.slice(atSignal)}`);
    const after = output.slice(atSignal);
    const lines = after.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
    assert.deepEqual(lines.slice(-2), ['stopping the pipeline (commit, snapshot)...', 'stopped.'], `what the demo printed after SIGINT:\n${after}`);
    assert.ok(!/pipeline exited|npm error|"level"|KafkaJS/i.test(after), `no crash-like output after SIGINT:\n${after}`);
    // npm got the SIGINT too: after its script ends it re-raises the signal on
    // itself, as it does in a terminal; any other end is the script's own code.
    assert.ok(outcome.code === 0 || (outcome.code === null && outcome.signal === 'SIGINT'), `exit ${JSON.stringify(outcome)} after SIGINT:\n${after}`);
    const pipelineLog = readFileSync(join(state, 'logs', 'pipeline.log'), 'utf8').trim().split('\n');
    assert.match(pipelineLog.at(-1)!, /"msg":"stopped"/, 'the pipeline finished its shutdown (commit, snapshot)');
    assert.match(readFileSync(join(state, 'logs', 'demo-feed.log'), 'utf8'), /"msg":"demo feed stopped"/, 'the crawler stopped after its batch in flight');
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
});
