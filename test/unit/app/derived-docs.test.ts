/**
 * Figures in the docs are rendered from the committed benchmark results, never
 * typed by hand: each renderer's --check fails when its doc and its JSON
 * disagree.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

for (const [doc, renderer] of [
  ['docs/index.md', 'bench/index/render-doc.js'],
  ['docs/performance.md', 'bench/pipeline/render-doc.js'],
  ['docs/performance.md', 'bench/scale/render-doc.js'],
] as const) {
  test(`${doc} matches its benchmark results`, () => {
    const result = spawnSync(process.execPath, [join(DIST, renderer), '--check'], { cwd: join(DIST, '..'), encoding: 'utf8' });
    assert.equal(result.status, 0, `${renderer} --check:\n${result.stdout}${result.stderr}`);
  });
}
