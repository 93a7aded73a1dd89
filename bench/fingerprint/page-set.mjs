// Seeded page sets of real HTML from Debian documentation packages (installed by run.sh if missing).
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { HtmlTextExtractor } from '../../dist/src/fingerprint/html-text.js';
import { TextBuffer } from '../../dist/src/fingerprint/text-buffer.js';
import { mulberry32 as rng } from '../../dist/src/mulberry32.js';

const PY = '/usr/share/doc/python3.11/html/';
const PY_DIRS = ['library', 'howto', 'reference', 'tutorial', 'c-api', 'whatsnew', 'faq', 'using', 'extending', 'distributing', 'installing'];
const DEBREF = '/usr/share/debian-reference/';

function shuffle(xs, seed) {
  const r = rng(seed);
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

function readDir(dir, filter = () => true) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.html') && filter(f)).sort().map((f) => ({ name: dir + f, html: readFileSync(dir + f, 'utf8') }));
}

/** Collapsed-whitespace length of the boilerplate-free text: what "KB of text" means here. */
export function textChars(html) {
  const buf = new TextBuffer();
  new HtmlTextExtractor('remove').extract(html, buf);
  return buf.toString().replace(/\s+/g, ' ').trim().length;
}

/**
 * Sets (each seeded-shuffled with seed 20240506):
 *  - text10k: Python docs pages with 8,000-12,000 chars of content text (English, Sphinx)
 *  - python:  every Python docs page
 *  - zh:      Debian Reference, Simplified Chinese (DocBook)
 */
export function pageSets() {
  const python = PY_DIRS.flatMap((d) => readDir(PY + d + '/'));
  for (const p of python) p.textChars = textChars(p.html);
  const zh = readDir(DEBREF, (f) => f.endsWith('.zh-cn.html'));
  for (const p of zh) p.textChars = textChars(p.html);
  return {
    text10k: shuffle(python.filter((p) => p.textChars >= 8000 && p.textChars <= 12000), 20240506),
    python: shuffle(python, 20240506),
    zh: shuffle(zh, 20240506),
  };
}
