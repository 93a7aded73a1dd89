#!/usr/bin/env bash
# Fingerprint benchmark: installs the page sources and the bench-only peers if missing,
# builds, runs, writes bench/results/fingerprint.json. Usage: bench/fingerprint/run.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ ! -d /usr/share/doc/python3.11/html/library ] || [ ! -f /usr/share/debian-reference/index.zh-cn.html ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3-doc debian-reference-en debian-reference-zh-cn
fi

# Bench-only peers, outside package.json (gitignored folders).
if [ ! -d bench/.peers/fp/node_modules/simhash-js ] || [ ! -d bench/.peers/fp/node_modules/xxhash-wasm ]; then
  npm install --prefix bench/.peers/fp --no-save --no-package-lock simhash-js@1.0.0 xxhash-wasm@1.1.0
fi
# The two PyPI peers both install a module named "simhash": one venv each.
if [ ! -x bench/.venv/fp/1e0ng/bin/python ]; then
  python3 -m venv bench/.venv/fp/1e0ng && bench/.venv/fp/1e0ng/bin/pip install -q simhash==2.1.2
fi
if [ ! -x bench/.venv/fp/pybind/bin/python ]; then
  python3 -m venv bench/.venv/fp/pybind && bench/.venv/fp/pybind/bin/pip install -q simhash-pybind==0.0.3
fi

mkdir -p bench/.build/fp
gcc -O3 -march=native -o bench/.build/fp/baseline bench/fingerprint/baseline.c
npx tsc -p tsconfig.json >/dev/null || true   # other folders may not compile yet; dist/src/fingerprint is what we need
test -f dist/src/fingerprint/index.js
node bench/fingerprint/run.mjs "${1:-7}"
