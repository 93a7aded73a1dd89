#!/usr/bin/env bash
# Whether this tree's fingerprint code gives every result the base commit gives (same-results.mjs):
# builds BASE (default: HEAD~1) into a temporary directory and compares. Needs the eval caches
# (bash eval/run.sh, bash eval/heldout.sh). Usage: bench/fingerprint/same-results.sh [base-commit]
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:-HEAD~1}
source bench/fingerprint/build-base.sh
build_base "$BASE"
node bench/fingerprint/same-results.mjs "$BASE_DIR"
