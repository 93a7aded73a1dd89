/**
 * A check that cannot run fails, saying what to install; it never skips
 * itself and passes quietly. This reads every test source for node:test's
 * skip and todo forms.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './observability-artifacts.js';

const SKIPS = [/\bskip\s*:/, /\btodo\s*:/, /\b(?:test|it|describe|t)\.(?:skip|todo)\s*\(/, /\bt\.skip\s*\(/];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'fixtures' ? [] : sources(join(dir, e.name))) : /\.(ts|mjs|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

test('no test skips itself (a missing tool is a failure with an install hint)', () => {
  const files = sources(join(REPO_ROOT, 'test'));
  assert.ok(files.length > 20, `found only ${files.length} test sources`);
  const found: string[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (SKIPS.some((p) => p.test(line)) && !line.includes('SKIPS')) found.push(`${file.slice(REPO_ROOT.length + 1)}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
});
