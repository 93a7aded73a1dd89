#!/usr/bin/env bash
# Detection quality, end to end (docs/quality.md):
#   1. build; 2. generate the labelled corpus (installs Debian doc packages if
#   missing); 3. run the product's batch CLI over it at its defaults; 4. score
#   and print; 5. sweep k and the feature options through the library;
#   6. regenerate eval/results/*.svg and docs/quality.md.
# Environment: EVAL_SEED (corpus seed), EVAL_CONFIGS (comma list of sweep
# configurations, default all), EVAL_THREADS (fingerprint threads, default 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CACHE=eval/.cache
RESULTS=eval/results
mkdir -p "$CACHE" "$RESULTS"

step() { printf '\n== %s\n' "$*" >&2; }

step "build"
npx tsc -p tsconfig.json

step "corpus"
node dist/eval/corpus/build-corpus.js --out "$CACHE" --seed "${EVAL_SEED:-simhash-eval-v1}" --manifest "$RESULTS/corpus.json"

step "batch CLI at its defaults"
if [[ ! -f dist/src/cli/main.js ]]; then
  echo "eval/run.sh: the product's batch CLI (dist/src/cli/main.js, from src/cli/main.ts) is missing; cannot score the product." >&2
  exit 2
fi
CLI_CMD="node dist/src/cli/main.js batch < $CACHE/pages.jsonl > $CACHE/verdicts.jsonl"
started=$EPOCHREALTIME
node dist/src/cli/main.js batch < "$CACHE/pages.jsonl" > "$CACHE/verdicts.jsonl"
seconds=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')

step "scores"
node dist/eval/score-verdicts.js --verdicts "$CACHE/verdicts.jsonl" --labels "$CACHE/labels.jsonl" \
  --out "$RESULTS/cli-defaults.json" --command "$CLI_CMD" --seconds "$seconds"

step "sweep (k = 0..10 per feature configuration)"
node dist/eval/sweep/run-sweep.js --pages "$CACHE/pages.jsonl" --labels "$CACHE/labels.jsonl" \
  --out "$RESULTS/sweep.json" --threads "${EVAL_THREADS:-2}" --configs "${EVAL_CONFIGS:-}" \
  --compare "$CACHE/verdicts.jsonl"

step "report"
node dist/eval/report/write-report.js --results "$RESULTS" --doc docs/quality.md
