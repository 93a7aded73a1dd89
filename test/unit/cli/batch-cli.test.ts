/**
 * `dedup batch` end to end, through the real binary: stream order, one verdict
 * line per input line, error lines for bad input, never a crash.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoPages } from '../../../src/producers/demo-pages.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src', 'cli', 'main.js');

function runCli(args: string[], input: Buffer | string) {
  const result = spawnSync(process.execPath, [CLI, ...args], { input, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, DEDUP_LOG_LEVEL: 'error' } });
  return { status: result.status, stdout: result.stdout.toString('utf8'), stderr: result.stderr.toString('utf8') };
}

test('batch: one verdict per line, in order; planted copies and refetches are duplicates of earlier pages', () => {
  const feed = demoPages({ seed: 3 });
  const pages = Array.from({ length: 400 }, () => feed.next().value!);
  const input = pages.map((p) => JSON.stringify({ id: p.id, url: p.url, html: p.html, fetchedAt: new Date(p.fetchedAt).toISOString() })).join('\n') + '\n';
  const { status, stdout, stderr } = runCli(['batch'], input);
  assert.equal(status, 0, stderr);
  const verdicts = stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(verdicts.length, pages.length);
  const position = new Map(pages.map((p, i) => [p.id, i]));
  verdicts.forEach((v, i) => {
    assert.equal(v.id, pages[i]!.id, 'same order as the input');
    assert.match(v.fingerprint, /^[0-9a-f]{16}$/);
    if (v.verdict === 'duplicate') {
      assert.ok(position.get(v.duplicateOf)! < i, 'duplicateOf names an earlier page');
      assert.ok(v.distance >= 0 && v.distance <= 3);
    } else {
      assert.equal(v.verdict, 'novel');
      assert.equal(v.duplicateOf, null);
    }
  });
  for (const [i, p] of pages.entries()) {
    if (p.kind === 'exact-copy') {
      assert.equal(verdicts[i].verdict, 'duplicate', `exact copy ${p.id}`);
      assert.equal(verdicts[i].distance, 0);
    }
  }
  const refetches = pages.map((p, i) => [p, verdicts[i]] as const).filter(([p]) => p.kind === 'refetch');
  const caught = refetches.filter(([, v]) => v.verdict === 'duplicate').length;
  assert.ok(caught >= refetches.length * 0.9, `refetches with new ads, counters and session ids are caught (${caught}/${refetches.length})`);
  assert.match(stderr, /400 lines/);
});

test('batch: bad lines get error lines, never a crash or a silent drop; damaged pages are decided', () => {
  const fox = 'the quick brown fox jumps over the lazy dog near the river bank today';
  const lines = [
    Buffer.from(JSON.stringify({ id: 'ok-1', text: fox })),
    Buffer.from('{"id": "broken", "html": '),
    Buffer.concat([Buffer.from('{"id":"damaged-body","html":"<p>caf'), Buffer.from([0xc3, 0x28]), Buffer.from(' au lait and croissants at the corner bakery every morning</p>"}')]),
    Buffer.from(JSON.stringify({ id: 'empty', html: '<html><body><script>var a=1</script></body></html>' })),
    Buffer.from(JSON.stringify({ id: 'empty-2', html: '' })),
    Buffer.from(JSON.stringify({ html: '<p>no id here at all</p>' })),
    Buffer.from(JSON.stringify({ id: 'lone-surrogate', text: 'abc \ud800 def ghi jkl mno pqr stu vwx yz' })),
    Buffer.from(JSON.stringify({ id: 'huge', text: 'word '.repeat(1_100_000) })),
    Buffer.from(JSON.stringify([1, 2, 3])),
    Buffer.from(JSON.stringify({ id: 'nested', html: '<div>'.repeat(100_000) + 'deep text inside many divs here' })),
    Buffer.concat([Buffer.from('{"id":"bad-id-'), Buffer.from([0xc3, 0x28]), Buffer.from(`","text":"${fox}"}`)]),
    Buffer.from(JSON.stringify({ id: 'png', html: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 0)]).toString('latin1') })),
    Buffer.from(JSON.stringify({ id: 'ok-2', text: fox })),
  ];
  const { status, stdout, stderr } = runCli(['batch', '--max-page-bytes=4194304'], Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
  assert.equal(status, 0, stderr);
  const out = stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(out.length, lines.length, 'one output line per input line');
  const codes = out.map((o) => (o.error ? String(o.error).split(':')[0] : o.verdict));
  assert.deepEqual(codes, [
    'novel',
    'RECORD_UNDECODABLE',
    'novel',
    'PAGE_EMPTY',
    'PAGE_EMPTY',
    'PAGE_INVALID',
    'novel',
    'PAGE_TOO_LARGE',
    'PAGE_INVALID',
    'novel',
    'PAGE_INVALID_UTF8',
    'PAGE_BINARY',
    'duplicate',
  ]);
  assert.equal(out[1].line, 2);
  assert.equal(out[2].id, 'damaged-body');
  assert.equal(out[3].id, 'empty');
  assert.equal(out[7].id, 'huge', 'a line too large to parse still names its page');
  assert.equal(out[12].duplicateOf, 'ok-1');
});

test('batch: an over-long id or url, or an impossible fetchedAt, is an error line of its own, small, and the run goes on', () => {
  const text = 'the quick brown fox jumps over the lazy dog near the river bank today';
  const lines = [
    { id: 'x'.repeat(5000), text },
    { id: 'long-url', url: `https://example.com/${'a'.repeat(2 * 1024 * 1024)}`, text },
    { id: 'sixties', text, fetchedAt: '1960-01-01T00:00:00Z' },
    { id: 'seconds', text, fetchedAt: 1_700_000_000 },
    { id: 'ok', url: 'https://example.com/a', text, fetchedAt: 1_700_000_000_000 },
  ];
  const { status, stdout, stderr } = runCli(['batch'], lines.map((l) => JSON.stringify(l)).join('\n'));
  assert.equal(status, 0, stderr);
  const out = stdout.trim().split('\n');
  assert.equal(out.length, lines.length);
  const parsed = out.map((l) => JSON.parse(l));
  assert.deepEqual(parsed.map((o) => (o.error ? String(o.error).split(':')[0] : o.verdict)), ['PAGE_INVALID', 'PAGE_INVALID', 'PAGE_INVALID', 'PAGE_INVALID', 'novel']);
  assert.deepEqual(parsed.map((o) => o.id), [null, 'long-url', 'sixties', 'seconds', 'ok']);
  assert.match(parsed[0].error, /^PAGE_INVALID: id is 5000 bytes, over the 1024-byte limit$/);
  assert.match(parsed[1].error, /^PAGE_INVALID: url is \d+ bytes, over the 8192-byte limit$/);
  assert.match(parsed[2].error, /^PAGE_INVALID: fetchedAt 1960-01-01T00:00:00.000Z is outside/);
  for (const line of out) assert.ok(Buffer.byteLength(line) < 1024, `an error line stays small: ${line.length} bytes`);
});

test('batch: two empty pages are never duplicates of each other', () => {
  const input = ['<html></html>', '<html></html>', '<body>   </body>'].map((html, i) => JSON.stringify({ id: `e${i}`, html })).join('\n');
  const out = runCli(['batch'], input).stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(out.length, 3);
  for (const o of out) assert.match(o.error, /^PAGE_EMPTY/);
});

test('fingerprint, plan and usage errors', () => {
  const fp = runCli(['fingerprint', '--text', 'hello crawler world of near duplicate pages'], '');
  assert.equal(fp.status, 0, fp.stderr);
  assert.match(JSON.parse(fp.stdout).fingerprint, /^[0-9a-f]{16}$/);
  const plan = runCli(['plan', '--k=3', '--expected-fingerprints=1000000000'], '');
  assert.equal(plan.status, 0, plan.stderr);
  const p = JSON.parse(plan.stdout);
  assert.equal(p.k, 3);
  assert.ok(p.tableBlocks.length >= 4);
  const bad = runCli(['batch', '--k=banana'], '');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--k/);
  const unknown = runCli(['frobnicate'], '');
  assert.equal(unknown.status, 2);
});
