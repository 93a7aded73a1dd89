/**
 * Scores a verdicts file (the batch CLI's output) against the labels, prints
 * the scores and writes them as JSON:
 *
 *   node dist/eval/score-verdicts.js --verdicts eval/.cache/verdicts.jsonl
 *        --labels eval/.cache/labels.jsonl --out eval/results/cli-defaults.json
 *        [--command "how the verdicts were made"] [--seconds S] [--corpus-seconds S]
 *        [--targets]   (also evaluate the product's targets, eval/targets.ts)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { consoleReport, targetsTable } from './report/score-tables.js';
import { parseVerdictLine, scoreVerdicts } from './score.js';
import { readLabels } from './sweep/load-corpus.js';
import { evaluateTargets } from './targets.js';

export function main(argv: readonly string[]): void {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      verdicts: { type: 'string', default: 'eval/.cache/verdicts.jsonl' },
      labels: { type: 'string', default: 'eval/.cache/labels.jsonl' },
      out: { type: 'string', default: 'eval/results/cli-defaults.json' },
      command: { type: 'string', default: '' },
      seconds: { type: 'string', default: '' },
      'corpus-seconds': { type: 'string', default: '' },
      targets: { type: 'boolean', default: false },
    },
  });
  const labels = readLabels(values.labels);
  const verdicts = readFileSync(values.verdicts, 'utf8')
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map(parseVerdictLine);
  const scores = scoreVerdicts(labels, verdicts);
  process.stdout.write(consoleReport(`Batch CLI at its defaults (${labels.length} pages)`, scores));
  const targets = values.targets ? evaluateTargets(scores) : null;
  if (targets !== null) process.stdout.write(`\n## Targets\n\n${targetsTable(targets)}\n`);
  const out = {
    generatedBy: 'eval/score-verdicts.ts',
    command: values.command,
    seconds: values.seconds === '' ? null : Number(values.seconds),
    ...(values['corpus-seconds'] === '' ? {} : { corpusSeconds: Number(values['corpus-seconds']) }),
    pages: labels.length,
    verdictLines: verdicts.length,
    scores,
    ...(targets === null ? {} : { targets }),
  };
  writeFileSync(values.out, `${JSON.stringify(out, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1e5) / 1e5 : v), 1)}\n`);
}

main(process.argv.slice(2));
