#!/usr/bin/env bash
# Single mode latency, two builds alternated run by run on one broker: the latency
# phase of run.sh (single mode, each of BENCH_LATENCY_PARTITIONS) for the build in
# BENCH_AB_BASE (a tree with its own dist/, e.g. `git archive <commit>` built there)
# and for this tree (or BENCH_AB_THIS), at each rate in BENCH_AB_RATES (pages/s paced = half of each),
# BENCH_AB_RUNS times. The order of the two builds flips every run, so neither
# always runs first. Each run's JSON goes to BENCH_AB_DIR; the table is printed
# at the end (bench/scale/latency-ab-summary.mjs).
#
#   source <stack>/env   # KAFKA_BROKERS, SCHEMA_REGISTRY_URL of a stack already up
#   BENCH_AB_BASE=/tmp/base BENCH_AB_RATES=448,759 BENCH_AB_RUNS=3 bash bench/scale/latency-ab.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${BENCH_AB_BASE:?a tree with the base build in dist/}"
: "${KAFKA_BROKERS:?source the stack env first}"
RATES=${BENCH_AB_RATES:-448}
RUNS=${BENCH_AB_RUNS:-3}
DIR=${BENCH_AB_DIR:-/tmp/latency-ab-$(date +%s)}
mkdir -p "$DIR"
export BENCH_PHASES=latency BENCH_LATENCY_CASES=single
export BENCH_LATENCY_PARTITIONS=${BENCH_LATENCY_PARTITIONS:-1,6} BENCH_PAGES=${BENCH_PAGES:-4000}
for run in $(seq 1 "$RUNS"); do
  for rate in ${RATES//,/ }; do
    if [ $((run % 2)) = 1 ]; then order="base this"; else order="this base"; fi
    for build in $order; do
      tree=${BENCH_AB_THIS:-$PWD}
      [ "$build" = base ] && tree=$BENCH_AB_BASE
      echo "latency-ab: run $run, rate $rate/2, build $build ($(cat /proc/loadavg | cut -d' ' -f1-3))" >&2
      (cd "$tree" && BENCH_LATENCY_MAX_RATE=$rate BENCH_OUTPUT="$DIR/$build-$rate-$run.json" node dist/bench/scale/run.js) 2>&1 | grep -E 'latency of single on .*p50' >&2 || true
    done
  done
done
node bench/scale/latency-ab-summary.mjs "$DIR"
