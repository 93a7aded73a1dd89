#!/usr/bin/env bash
# Before/after fingerprint throughput in one run: builds BASE (default: the merge base with main) into
# a temporary directory and times it against this tree. Usage: bench/fingerprint/compare.sh [base-commit] [runs]
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:-$(git merge-base HEAD main 2>/dev/null || git rev-parse HEAD~1)}
if [ ! -d /usr/share/doc/python3.11/html/library ] || [ ! -f /usr/share/debian-reference/index.zh-cn.html ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3-doc debian-reference-en debian-reference-zh-cn
fi
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
git archive "$BASE" | tar -x -C "$DIR"
ln -s "$PWD/node_modules" "$DIR/node_modules"
(cd "$DIR" && npx tsc -p tsconfig.json >/dev/null)
npx tsc -p tsconfig.json >/dev/null
node bench/fingerprint/compare.mjs "$DIR" "$(git rev-parse "$BASE")" "${2:-7}"
