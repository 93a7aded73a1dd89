#!/usr/bin/env bash
# Pipeline benchmark: end-to-end throughput against a passthrough baseline, latency at a
# fixed pace, restart cost (snapshot load, changelog replay, spawn to /readyz). Starts its
# own local stack (deploy/local/up.sh, in $INFRA_STATE_DIR, default .infra/bench), builds,
# runs, writes bench/results/pipeline.json, renders docs/performance.md, stops the stack.
#
#   bash bench/pipeline/run.sh
#
# Sizes (environment; defaults keep the whole run near 15 minutes on 2 cores):
#   BENCH_PAGES=10000            pages pre-loaded for each throughput run (5-50 KB HTML each)
#   BENCH_MIN_KB=5 BENCH_MAX_KB=50 BENCH_SEED=42
#   BENCH_PARTITIONS=1,3         input topic partition counts
#   BENCH_RUNS=3                 repetitions of each throughput case (medians reported)
#   BENCH_COMPARE_THREADS=-1     extra pipeline runs (at the first BENCH_LATENCY_PARTITIONS) with these
#                                DEDUP_FINGERPRINT_THREADS values ('' = none)
#   BENCH_LATENCY_FRACTIONS=0.5,0.65,0.8  paces, as shares of the measured 1-partition rate
#   BENCH_LATENCY_SECONDS=20 BENCH_LATENCY_WARMUP_SECONDS=3 BENCH_LATENCY_PARTITIONS=1,6
#   BENCH_LATENCY_MAX_RATE=0     the rate the paces are shares of (0 = the measured 1-partition rate)
#   BENCH_SNAPSHOT_SIZES=1000000,10000000 BENCH_SNAPSHOT_RUNS=3
#   BENCH_REPLAY_SIZES=1000000 BENCH_REPLAY_RUNS=2 BENCH_CHANGELOG_TXN_RECORDS=500
#   BENCH_STARTUP_PAGES=1000000 BENCH_STARTUP_RUNS=3
#   BENCH_PHASES=throughput,latency,snapshot,replay,startup
#   BENCH_OUTPUT=<file>          write elsewhere (the doc is rendered only for the default file)
#   BENCH_REUSE_STACK=1          use the stack already up in $INFRA_STATE_DIR, leave it running
# Any DEDUP_* variable reaches every pipeline process and is recorded in the results.
set -euo pipefail
cd "$(dirname "$0")/../.."
export INFRA_STATE_DIR=${INFRA_STATE_DIR:-$PWD/.infra/bench}

npx tsc -p tsconfig.json >/dev/null || echo "run.sh: tsc reported errors (other folders?); using what it emitted" >&2
test -f dist/bench/pipeline/run.js && test -f dist/src/cli/main.js

if [ "${BENCH_REUSE_STACK:-0}" = 1 ] && [ -f "$INFRA_STATE_DIR/env" ]; then
  echo "run.sh: reusing the stack in $INFRA_STATE_DIR" >&2
else
  trap 'bash deploy/local/down.sh >&2' EXIT
  WITH_PROMETHEUS=0 bash deploy/local/up.sh
fi
# shellcheck disable=SC1091
source "$INFRA_STATE_DIR/env"

node dist/bench/pipeline/run.js
if [ -z "${BENCH_OUTPUT:-}" ]; then
  node dist/bench/pipeline/render-doc.js
  echo "run.sh: wrote bench/results/pipeline.json and docs/performance.md" >&2
fi
