#!/usr/bin/env bash
# Bench-only Python venv with simhash-pybind (the all-pairs peer). Not used by tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -m venv bench/.venv/index
bench/.venv/index/bin/pip install --quiet 'simhash-pybind==0.0.3'
