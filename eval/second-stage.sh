#!/usr/bin/env bash
# The product's second stage (DEDUP_SECOND_STAGE_RADIUS, src/dedup/decider.ts) through the batch
# CLI on the harness corpus: one run per radius (radius+bands adds DEDUP_SECOND_STAGE_BANDS, else
# bands 0; "0" is the stage off, "0+14" the default: 14 bands, no wider probe) at one similarity
# threshold, scored like the defaults. Needs the corpus of `bash eval/run.sh` in
# eval/.cache (EVAL_STREAM=heldout: of `bash eval/heldout.sh`, in eval/.cache/heldout; measured
# there, never chosen there). Writes eval/results/cli-second-stage.json (held-out:
# eval/results/heldout-cli-second-stage.json).
# Usage: [EVAL_STREAM=heldout] bash eval/second-stage.sh [radii, e.g. 0,0+14,4,6,4+14] [similarity]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
case "${EVAL_STREAM:-tuning}" in
  tuning) CACHE=eval/.cache; OUT=eval/results/cli-second-stage.json ;;
  heldout) CACHE=eval/.cache/heldout; OUT=eval/results/heldout-cli-second-stage.json ;;
  *) echo "eval/second-stage.sh: EVAL_STREAM must be tuning or heldout, not \"$EVAL_STREAM\"" >&2; exit 2 ;;
esac
RADII=${1:-0,0+7,0+14,4,5,6,8,4+14}
if [[ ! -f $CACHE/pages.jsonl ]]; then
  echo "eval/second-stage.sh: no corpus in $CACHE; run bash eval/run.sh (held-out: bash eval/heldout.sh) first" >&2
  exit 2
fi
npx tsc -p tsconfig.json
# The product's default threshold unless one is given.
SIMILARITY=${2:-$(node --input-type=module -e 'import { loadConfig } from "./dist/src/config.js"; console.log(loadConfig({}).secondStageSimilarity)')}
runs=()
for run in ${RADII//,/ }; do
  radius=${run%%+*}
  bands=0
  [[ $run == *+* ]] && bands=${run#*+}
  started=$EPOCHREALTIME
  DEDUP_SECOND_STAGE_RADIUS=$radius DEDUP_SECOND_STAGE_BANDS=$bands DEDUP_SECOND_STAGE_SIMILARITY=$SIMILARITY \
    node dist/src/cli/main.js batch < "$CACHE/pages.jsonl" > "$CACHE/verdicts-second-stage-$run.jsonl"
  seconds=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
  node dist/eval/score-verdicts.js --verdicts "$CACHE/verdicts-second-stage-$run.jsonl" --labels "$CACHE/labels.jsonl" \
    --out "$CACHE/second-stage-$run.json" --seconds "$seconds" \
    --command "DEDUP_SECOND_STAGE_RADIUS=$radius DEDUP_SECOND_STAGE_BANDS=$bands DEDUP_SECOND_STAGE_SIMILARITY=$SIMILARITY node dist/src/cli/main.js batch < $CACHE/pages.jsonl"
  runs+=("$CACHE/second-stage-$run.json")
done
node -e '
const fs = require("node:fs");
const [out, similarity, ...files] = process.argv.slice(1);
const runs = files.map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
fs.writeFileSync(out, JSON.stringify({ generatedBy: "eval/second-stage.sh", similarity: Number(similarity), runs }, null, 2) + "\n");
const kinds = ["word-edit", "widget", "ad-banner", "mixed", "counter-timestamp", "damaged", "partly-untranslated", "hard-negative"].filter((k) => runs[0].scores.byKind[k] !== undefined);
for (const r of runs) {
  const o = r.scores.overall;
  const byKind = kinds.map((k) => {
    const s = r.scores.byKind[k];
    return `${k} ${(100 * (k === "hard-negative" ? s.falsePositives / s.pages : s.recall)).toFixed(1)}%`;
  });
  console.log(`${r.command.split(" ").slice(0, 2).join(" ")}: P ${o.precision.toFixed(3)} R ${o.recall.toFixed(3)} F1 ${o.f1.toFixed(3)}, substantive edits called duplicate ${(100 * o.duplicateRateSubstantive).toFixed(1)}%; ${byKind.join(", ")}; ${r.seconds} s`);
}' "$OUT" "$SIMILARITY" "${runs[@]}"
