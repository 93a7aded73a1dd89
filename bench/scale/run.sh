#!/usr/bin/env bash
# Scale-out benchmark: on ONE pre-loaded input topic, interleaved, the passthrough, single
# mode, sharded with 1 and with 2 instances (throughput, CPU per page and per stage); then
# latency at half the sharded 1-instance rate (single, sharded 1 and 2); then restore after
# a SIGKILL (two sharded instances, one killed, the survivor takes its shards). Starts its
# own local stack (deploy/local/up.sh, in $INFRA_STATE_DIR, default .infra/bench-scale),
# builds, runs, writes bench/results/scale.json, renders the "Scale-out" section of
# docs/performance.md, stops the stack.
#
#   bash bench/scale/run.sh
#
# Sizes (environment; the defaults keep the whole run under 10 minutes on 2 cores):
#   BENCH_PAGES=10000            pages encoded once, loaded and decided in every run (5-50 KB HTML);
#                                the paced runs also draw on them (rate x seconds at most)
#   BENCH_MIN_KB=5 BENCH_MAX_KB=50 BENCH_SEED=42
#   BENCH_PARTITIONS=6           input topic partitions
#   BENCH_SHARDS=12              DEDUP_SHARDS of the sharded cases
#   BENCH_SCALE_INSTANCES=1,2    sharded cases, by instance count
#   BENCH_RUNS=2                 repetitions of every throughput case (medians reported)
#   BENCH_WARMUP_FRACTION=0.1    share of the pages decided before the window opens
#   BENCH_LATENCY_FRACTION=0.5   pace, as a share of the measured sharded-1 rate
#   BENCH_LATENCY_SECONDS=15 BENCH_LATENCY_WARMUP_SECONDS=3 BENCH_LATENCY_MAX_RATE=0
#   BENCH_LATENCY_CASES=single,sharded-1   latency cases (default: every case but the passthrough)
#   BENCH_LATENCY_PARTITIONS=1,6           input partitions of the paced topic, one run each (default BENCH_PARTITIONS)
#   BENCH_PHASES=throughput,latency,restore
#   BENCH_SMOKE=1                label the results as a smoke run (harness check, not figures)
#   BENCH_OUTPUT=<file>          write elsewhere (the doc is rendered only for the default file)
#   BENCH_REUSE_STACK=1          use the stack already up in $INFRA_STATE_DIR, leave it running
#   BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"  node flags of the measured processes (not the driver)
# Any DEDUP_* variable reaches every measured process and is recorded in the results.
set -euo pipefail
cd "$(dirname "$0")/../.."
export INFRA_STATE_DIR=${INFRA_STATE_DIR:-$PWD/.infra/bench-scale}

npx tsc -p tsconfig.json >/dev/null || echo "run.sh: tsc reported errors (other folders?); using what it emitted" >&2
test -f dist/bench/scale/run.js && test -f dist/src/cli/main.js && test -f dist/bench/pipeline/passthrough.js

if [ "${BENCH_REUSE_STACK:-0}" = 1 ] && [ -f "$INFRA_STATE_DIR/env" ]; then
  echo "run.sh: reusing the stack in $INFRA_STATE_DIR" >&2
else
  trap 'bash deploy/local/down.sh >&2' EXIT
  WITH_PROMETHEUS=0 bash deploy/local/up.sh
fi
# shellcheck disable=SC1091
source "$INFRA_STATE_DIR/env"

node dist/bench/scale/run.js
if [ -z "${BENCH_OUTPUT:-}" ]; then
  node dist/bench/scale/render-doc.js
  echo "run.sh: wrote bench/results/scale.json and docs/performance.md" >&2
fi
