/**
 * Generates the labelled corpus: `node dist/eval/corpus/build-corpus.js
 * [--stream tuning|heldout] [--out eval/.cache] [--seed simhash-eval-v1]
 * [--manifest eval/results/corpus.json]` (streams.ts: which doc sets, which
 * seed by default).
 *
 * Writes pages.jsonl (one page per line, stream order) and labels.jsonl to
 * --out, and a manifest (seed, Debian package versions, counts per kind, site
 * and language, rejected originals by reason, SHA-256 of both files) that is
 * committed, so a changed corpus is a visible diff.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { compose } from './compose.js';
import { pickOriginals } from './originals.js';
import { ensurePackages, packageVersion } from './sources.js';
import { streamNamed } from './streams.js';
import type { Label, Page } from '../labels.js';

function countBy(labels: readonly Label[], key: (l: Label) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of labels) out[key(l)] = (out[key(l)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function writeJsonl(path: string, rows: readonly object[]): string {
  const hash = createHash('sha256');
  const chunks: string[] = [];
  for (const row of rows) {
    const line = `${JSON.stringify(row)}\n`;
    hash.update(line);
    chunks.push(line);
  }
  writeFileSync(path, chunks.join(''));
  return hash.digest('hex');
}

export function main(argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      stream: { type: 'string', default: 'tuning' },
      out: { type: 'string', default: 'eval/.cache' },
      seed: { type: 'string' },
      manifest: { type: 'string', default: 'eval/results/corpus.json' },
    },
  });
  const stream = streamNamed(values.stream);
  const docSets = stream.docSets;
  const seed = values.seed ?? stream.compose.seed;
  const log = (line: string): void => void process.stderr.write(`corpus: ${line}\n`);
  const started = Date.now();
  ensurePackages(docSets.map((s) => s.pkg), log);
  const { originals, rejected } = pickOriginals(seed, docSets);
  log(`${originals.length} originals picked (${Date.now() - started} ms)`);
  const { pages, labels } = compose(originals, { ...stream.compose, seed });
  mkdirSync(values.out, { recursive: true });
  const pagesSha = writeJsonl(join(values.out, 'pages.jsonl'), pages satisfies Page[]);
  const labelsSha = writeJsonl(join(values.out, 'labels.jsonl'), labels);
  const bytes = pages.reduce((n, p) => n + p.html.length, 0);
  const manifest = {
    // The tuning stream's manifest keeps its original shape, so its committed file only changes with the corpus.
    ...(values.stream === 'tuning' ? {} : { stream: values.stream, docSetPackages: Object.fromEntries(docSets.map((s) => [s.key, s.pkg])) }),
    seed,
    pages: pages.length,
    htmlChars: bytes,
    packages: Object.fromEntries([...new Set(docSets.map((s) => s.pkg))].sort().map((p) => [p, packageVersion(p)])),
    sitePackages: Object.fromEntries([...new Set(docSets.map((s) => s.site))].map((site) => [site, [...new Set(docSets.filter((s) => s.site === site).map((s) => s.pkg))].sort()])),
    originalsPerDocSet: Object.fromEntries(docSets.map((s) => [s.key, originals.filter((o) => o.set.key === s.key).length])),
    rejectedOriginals: rejected,
    perKind: countBy(labels, (l) => l.kind),
    perDetail: countBy(labels, (l) => `${l.kind}/${l.detail ?? '-'}`),
    perSite: countBy(labels, (l) => l.site),
    perLanguage: countBy(labels, (l) => l.language),
    perSiteKind: countBy(labels, (l) => `${l.site}/${l.kind === 'original' || l.kind === 'substantive-edit' || l.kind === 'hard-negative' || l.kind === 'hostile' ? l.kind : 'near-duplicate'}`),
    sha256: { 'pages.jsonl': pagesSha, 'labels.jsonl': labelsSha },
  };
  mkdirSync(dirname(values.manifest), { recursive: true });
  writeFileSync(values.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
  log(`${pages.length} pages, ${(bytes / 1e6).toFixed(1)} M chars of HTML, in ${Date.now() - started} ms`);
}

main(process.argv.slice(2));
