/**
 * Regenerates the figures (eval/results/*.svg) and the generated parts of
 * docs/quality.md from eval/results/{corpus,cli-defaults,sweep}.json and the
 * held-out stream's heldout-{corpus,cli-defaults}.json when present. Text
 * outside the `<!-- eval:begin NAME -->` / `<!-- eval:end NAME -->` markers is
 * left alone; a marker the generator does not know, or a section without its
 * marker, is an error. test/unit/eval/report.test.ts checks that the
 * committed doc and figures are what this writes.
 *
 *   node dist/eval/report/write-report.js [--results eval/results] [--doc docs/quality.md]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readResults, renderDoc, renderFigures } from './render-doc.js';

export function main(argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      results: { type: 'string', default: 'eval/results' },
      doc: { type: 'string', default: 'docs/quality.md' },
    },
  });
  const inputs = readResults(values.results);
  const written: string[] = [];
  for (const [name, svg] of Object.entries(renderFigures(inputs))) {
    writeFileSync(join(values.results, name), svg);
    written.push(join(values.results, name));
  }
  writeFileSync(values.doc, renderDoc(readFileSync(values.doc, 'utf8'), inputs));
  process.stderr.write(`report: wrote ${values.doc}, ${written.join(', ')}\n`);
}

main(process.argv.slice(2));
