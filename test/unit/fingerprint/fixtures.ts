import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: the nearest ancestor of this file with a package.json (works from src and from dist). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('repository root not found');
    dir = up;
  }
  return dir;
}

export const PAGES_DIR = join(repoRoot(), 'test', 'fixtures', 'pages');

export function fixtureNames(): string[] {
  return readdirSync(PAGES_DIR).filter((f) => f.endsWith('.html')).sort();
}

export function readFixture(name: string): string {
  return readFileSync(join(PAGES_DIR, name), 'utf8');
}

/** The text of a page's HTML, roughly: scripts and styles dropped, every tag a space (for tests that work on text). */
export function htmlToText(html: string): string {
  return html.replace(/<(script|style)[^]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ');
}

/** A version (digits '.' digits) in a page's text, outside tags. */
const VERSION_IN_TEXT = />[^<]*?\b(\d+)\.(\d+)\b/g;

/** The fixture pages with a version in their text. */
export function pagesWithVersions(): string[] {
  return fixtureNames()
    .map(readFixture)
    .filter((html) => html.match(VERSION_IN_TEXT) !== null);
}

/**
 * A sibling of `html` as a site's generator makes one (the release notes of the next version):
 * its pick-th version in the text raised by delta in the minor part, everywhere it occurs in text.
 */
export function withOtherVersion(html: string, pick: number, delta: number): { html: string; from: string; to: string } {
  const found = [...html.matchAll(VERSION_IN_TEXT)];
  const m = found[pick % found.length]!;
  const from = `${m[1]}.${m[2]}`;
  const to = `${m[1]}.${Number(m[2]) + delta}`;
  const re = new RegExp(`\\b${m[1]}\\.${m[2]}\\b`, 'g');
  return { html: html.replace(/>[^<]*/g, (t) => t.replace(re, to)), from, to };
}

/** Deterministic PRNG (mulberry32) for seeded random tests. */
export { mulberry32 as seeded } from '../../support/rng.js';
