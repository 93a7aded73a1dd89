/**
 * Reads the corpus (pages.jsonl + labels.jsonl) and validates every page the
 * way the product does (src/wire/crawled-page.ts, the configured page-size
 * limit), so the sweep sees the same errors the batch CLI reports.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { CONFIG_OPTIONS } from '../../src/config.js';
import { errorCode } from '../../src/errors.js';
import type { PageContent } from '../../src/fingerprint/index.js';
import { toCrawledPage } from '../../src/wire/crawled-page.js';
import type { Label } from '../labels.js';

export interface LoadedCorpus {
  readonly labels: Label[];
  readonly ids: string[];
  /** Content to fingerprint, or null when validation failed. */
  readonly contents: (PageContent | null)[];
  /** Validation error ("CODE: message"), or null. */
  readonly errors: (string | null)[];
}

export function defaultMaxPageBytes(): number {
  const spec = CONFIG_OPTIONS.find((o) => o.key === 'maxPageBytes');
  return spec === undefined ? Number.POSITIVE_INFINITY : Number(spec.default);
}

export function readLabels(path: string): Label[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Label);
}

export async function loadCorpus(pagesPath: string, labelsPath: string, maxPageBytes = defaultMaxPageBytes()): Promise<LoadedCorpus> {
  const labels = readLabels(labelsPath);
  const ids: string[] = [];
  const contents: (PageContent | null)[] = [];
  const errors: (string | null)[] = [];
  const lines = createInterface({ input: createReadStream(pagesPath, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.length === 0) continue;
    const record = JSON.parse(line) as { id: string };
    ids.push(record.id);
    try {
      const page = toCrawledPage(record, { maxPageBytes, fallbackFetchedAt: 0 });
      contents.push(page.html !== null ? { html: page.html } : { text: page.text ?? '' });
      errors.push(null);
    } catch (error) {
      contents.push(null);
      errors.push(`${errorCode(error)}: ${(error as Error).message}`);
    }
  }
  if (ids.length !== labels.length || ids.some((id, i) => labels[i]!.id !== id)) {
    throw new Error(`${pagesPath} and ${labelsPath} do not list the same pages in the same order`);
  }
  return { labels, ids, contents, errors };
}
