#!/usr/bin/env bash
# Detection quality, end to end (docs/quality.md):
#   1. build; 2. generate the labelled corpus (installs Debian doc packages if
#   missing); 3. run the product's batch CLI over it at its defaults; 4. score
#   and print; 5. sweep k and the feature options through the library;
#   6. regenerate eval/results/*.svg and docs/quality.md.
# Environment: EVAL_STREAM (tuning, the default, or heldout: other Debian
# packages and another seed, never swept; eval/heldout.sh), EVAL_SEED (corpus
# seed; default the stream's own), EVAL_CONFIGS (comma list of sweep
# configurations, default all), EVAL_THREADS (fingerprint threads, default 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

STREAM=${EVAL_STREAM:-tuning}
RESULTS=eval/results
case "$STREAM" in
  tuning)
    CACHE=eval/.cache
    CORPUS_JSON=$RESULTS/corpus.json
    CLI_JSON=$RESULTS/cli-defaults.json
    SCORE_OPTIONS=()
    SWEEP=1
    ;;
  heldout)
    # Its own cache, so it never overwrites the tuning corpus; no sweep, so
    # nothing is ever chosen on it (docs/quality.md, "Held-out stream").
    CACHE=eval/.cache/heldout
    CORPUS_JSON=$RESULTS/heldout-corpus.json
    CLI_JSON=$RESULTS/heldout-cli-defaults.json
    SCORE_OPTIONS=(--targets)
    SWEEP=0
    ;;
  *)
    echo "eval/run.sh: EVAL_STREAM must be tuning or heldout, not \"$STREAM\"" >&2
    exit 2
    ;;
esac
SEED_OPTIONS=()
if [[ -n "${EVAL_SEED:-}" ]]; then SEED_OPTIONS=(--seed "$EVAL_SEED"); fi
mkdir -p "$CACHE" "$RESULTS"

step() { printf '\n== %s\n' "$*" >&2; }
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }

step "build"
npx tsc -p tsconfig.json

step "corpus ($STREAM stream)"
started=$EPOCHREALTIME
node dist/eval/corpus/build-corpus.js --stream "$STREAM" --out "$CACHE" "${SEED_OPTIONS[@]}" --manifest "$CORPUS_JSON"
corpus_seconds=$(seconds_since "$started")

step "batch CLI at its defaults"
if [[ ! -f dist/src/cli/main.js ]]; then
  echo "eval/run.sh: the product's batch CLI (dist/src/cli/main.js, from src/cli/main.ts) is missing; cannot score the product." >&2
  exit 2
fi
CLI_CMD="node dist/src/cli/main.js batch < $CACHE/pages.jsonl > $CACHE/verdicts.jsonl"
started=$EPOCHREALTIME
node dist/src/cli/main.js batch < "$CACHE/pages.jsonl" > "$CACHE/verdicts.jsonl"
seconds=$(seconds_since "$started")

step "scores"
node dist/eval/score-verdicts.js --verdicts "$CACHE/verdicts.jsonl" --labels "$CACHE/labels.jsonl" \
  --out "$CLI_JSON" --command "$CLI_CMD" --seconds "$seconds" --corpus-seconds "$corpus_seconds" "${SCORE_OPTIONS[@]}"

if [[ $SWEEP == 1 ]]; then
  step "sweep (k = 0..10 per feature configuration)"
  node dist/eval/sweep/run-sweep.js --pages "$CACHE/pages.jsonl" --labels "$CACHE/labels.jsonl" \
    --out "$RESULTS/sweep.json" --threads "${EVAL_THREADS:-2}" --configs "${EVAL_CONFIGS:-}" \
    --compare "$CACHE/verdicts.jsonl"
fi

step "report"
node dist/eval/report/write-report.js --results "$RESULTS" --doc docs/quality.md
