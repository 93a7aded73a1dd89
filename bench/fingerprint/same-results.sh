#!/usr/bin/env bash
# Whether this tree's fingerprint code gives every result the base commit gives (same-results.mjs):
# builds BASE (default: HEAD~1) into a temporary directory and compares. Needs the eval caches
# (bash eval/run.sh, bash eval/heldout.sh). Usage: bench/fingerprint/same-results.sh [base-commit]
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:-HEAD~1}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
git archive "$BASE" | tar -x -C "$DIR"
ln -s "$PWD/node_modules" "$DIR/node_modules"
(cd "$DIR" && npx tsc -p tsconfig.json >/dev/null)
npx tsc -p tsconfig.json >/dev/null
node bench/fingerprint/same-results.mjs "$DIR"
