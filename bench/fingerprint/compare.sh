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
source bench/fingerprint/build-base.sh
build_base "$BASE"
node bench/fingerprint/compare.mjs "$BASE_DIR" "$(git rev-parse "$BASE")" "${2:-7}"
