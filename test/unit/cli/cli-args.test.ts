/**
 * Command-line flags follow node:util parseArgs: `--name value` and
 * `--name=value` mean the same, and what does not parse is a usage error
 * (exit 2) naming the problem, never a silent default or a silent stdin.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { CONFIG_OPTIONS, loadConfig, parseFlags } from '../../../src/config.js';
import { ConfigError } from '../../../src/errors.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src', 'cli', 'main.js');

function runCli(args: string[], input = '') {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('DEDUP_') && v !== undefined) env[k] = v;
  const result = spawnSync(process.execPath, [CLI, ...args], { input, env: { ...env, DEDUP_LOG_LEVEL: 'error' }, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const PAGE = `${JSON.stringify({ id: 'p1', text: 'the quick brown fox jumps over the lazy dog near the river bank' })}\n`;

test('a flag followed by another flag is missing its value: usage error, not "true"', () => {
  const r = runCli(['plan', '--brokers', '--k=2']);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /--brokers needs a value, got the flag-like "--k=2" \(write --brokers=--k=2 if that is the value\)/);
  const last = runCli(['plan', '--k']);
  assert.equal(last.status, 2);
  assert.match(last.stderr, /--k needs a value/);
});

test('batch: a stray argument is a usage error, not a silent read of stdin', () => {
  const r = runCli(['batch', '--progress', 'pages.jsonl'], PAGE);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.equal(r.stdout, '', 'nothing was decided');
  assert.match(r.stderr, /dedup: USAGE: unexpected argument "pages.jsonl" \(read a file with --input FILE\)/);
  const fingerprint = runCli(['fingerprint', 'page.html'], '<p>x</p>');
  assert.equal(fingerprint.status, 2);
  assert.match(fingerprint.stderr, /unexpected argument "page.html" \(read a file with --html FILE\)/);
  const switchWithValue = runCli(['batch', '--progress=yes'], PAGE);
  assert.equal(switchWithValue.status, 2);
  assert.match(switchWithValue.stderr, /--progress takes no value, got "yes"/);
});

test('unknown flags are usage errors, all problems reported at once', () => {
  const r = runCli(['plan', '--nope', '3', '--kk=2', '--table-plan']);
  assert.equal(r.status, 2);
  for (const problem of [/unknown flag --nope/, /unknown flag --kk/, /unexpected argument "3"/, /--table-plan needs a value/]) assert.match(r.stderr, problem);
});

test('--name value and --name=value both work, for config and command flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dedup-cli-args-'));
  try {
    const file = join(dir, 'pages.jsonl');
    writeFileSync(file, PAGE);
    for (const args of [['--input', file, '--progress', '-k', '2'], [`--input=${file}`, '--k=2', '--progress']]) {
      const r = runCli(['batch', ...args]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).id, 'p1');
      assert.match(r.stderr, /1 lines/);
    }
    const spaced = runCli(['plan', '--k', '2', '--table-plan', '16,16,16,16', '--expected-fingerprints', '1000']);
    const joined = runCli(['plan', '--k=2', '--table-plan=16,16,16,16', '--expected-fingerprints=1000']);
    assert.equal(spaced.status, 0, spaced.stderr);
    assert.equal(spaced.stdout, joined.stdout);
    assert.deepEqual(JSON.parse(spaced.stdout).blockWidths, [16, 16, 16, 16]);
    const negative = runCli(['plan', '--fingerprint-threads=-1']);
    assert.equal(negative.status, 0, 'a value starting with a dash is given with =');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const stringOptions = CONFIG_OPTIONS.filter((o) => o.kind === 'string' || o.kind === 'list');
const valueArb = fc.string({ minLength: 1, maxLength: 12 }).filter((v) => !v.startsWith('-'));

test('property: --name value and --name=value parse to the same flags, with no problems', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom(...stringOptions.map((o) => o.flag)), valueArb, fc.boolean()), { maxLength: 8 }), (pairs) => {
      const spaced = pairs.flatMap(([flag, value]) => [flag, value]);
      const mixed = pairs.flatMap(([flag, value, inline]) => (inline ? [`${flag}=${value}`] : [flag, value]));
      const a = parseFlags(spaced);
      const b = parseFlags(mixed);
      assert.deepEqual(a.problems, []);
      assert.deepEqual(b.problems, []);
      assert.deepEqual([...a.flags], [...b.flags]);
      assert.deepEqual(a.rest, []);
      const last = new Map(pairs.map(([flag, value]) => [flag, value]));
      assert.deepEqual(new Map(a.flags), last, 'the last of a repeated flag wins');
    }),
    { numRuns: 300 },
  );
});

test('property: dropping the value of any string flag is reported, whatever follows', () => {
  fc.assert(
    fc.property(fc.constantFrom(...CONFIG_OPTIONS.map((o) => o.flag)), fc.constantFrom([], ['--k=2'], ['--brokers', 'a:1']), (flag, after) => {
      const { flags, problems } = parseFlags([flag, ...after]);
      assert.ok(problems.some((p) => p.startsWith(`${flag} needs a value`)), `${flag} ${after.join(' ')}: ${problems.join('; ')}`);
      if (!after.some((a) => a === flag || a.startsWith(`${flag}=`))) assert.equal(flags.has(flag), false);
      assert.throws(() => loadConfig({}, [flag, ...after]), (e: unknown) => e instanceof ConfigError && e.problems.some((p) => p.startsWith(`${flag} needs a value`)));
    }),
    { numRuns: 200 },
  );
});
