#!/usr/bin/env bash
# The quick start: a local Kafka broker, schema registry and Prometheus, the
# pipeline, and a demo crawler feeding it pages with planted near-duplicates.
# Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[ -f dist/src/cli/main.js ] || npx tsc -p tsconfig.json
export INFRA_STATE_DIR="${INFRA_STATE_DIR:-$PWD/.infra/demo}"
# Stops the crawler (it stops after the batch in flight and disconnects) and
# the pipeline (commit, snapshot), waits for both, and only then the stack
# they talk to. Ctrl-C also reaches both processes directly, so either may
# have stopped already; `wait` still collects it. A stop signal ends the
# script here: the trap must not return into the status loop below, which
# would take the stopped pipeline for a crashed one and print its log.
cleanup() {
  set +e  # a failing wait must not skip the rest of the clean-up
  trap - EXIT INT TERM
  if [ -n "${PIPELINE_PID:-}" ] && kill -0 "$PIPELINE_PID" 2>/dev/null; then
    echo "stopping the pipeline (commit, snapshot)..."
  fi
  for pid in ${FEED_PID:-} ${PIPELINE_PID:-}; do
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  bash deploy/local/down.sh >/dev/null 2>&1
  echo "stopped."
}
trap cleanup EXIT
# Ctrl-C is how the demo is meant to stop: exit 0, so npm does not report a failure.
trap 'cleanup; exit 0' INT
trap 'cleanup; exit 143' TERM
WITH_REGISTRY=1 WITH_PROMETHEUS=1 WITH_CHECK_TOOLS=0 PROMETHEUS_RULES="$PWD/deploy/prometheus/*.rules.yml" bash deploy/local/up.sh
# shellcheck disable=SC1091
source "$INFRA_STATE_DIR/env"
# The broker is new on every start, so the pipeline's state starts empty too.
rm -rf "$INFRA_STATE_DIR/pipeline-state"

export DEDUP_BROKERS="$KAFKA_BROKERS" DEDUP_SCHEMA_REGISTRY_URL="$SCHEMA_REGISTRY_URL"
export DEDUP_METRICS_HOST=127.0.0.1 DEDUP_METRICS_PORT="$METRICS_PORT" DEDUP_STATE_DIR="$INFRA_STATE_DIR/pipeline-state"
export DEDUP_SNAPSHOT_INTERVAL_SECONDS=30 DEDUP_EXPECTED_FINGERPRINTS=1000000
LOG="$INFRA_STATE_DIR/logs/pipeline.log"
node dist/src/cli/main.js run > "$LOG" 2>&1 &
PIPELINE_PID=$!
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$METRICS_PORT/readyz" >/dev/null 2>&1 && break
  kill -0 "$PIPELINE_PID" 2>/dev/null || { echo "pipeline exited:"; tail -n 40 "$LOG"; exit 1; }
  sleep 0.5
done
node dist/src/cli/main.js demo-feed --count "${DEMO_PAGES:-20000}" --rate "${DEMO_RATE:-50}" --bad > "$INFRA_STATE_DIR/logs/demo-feed.log" 2>&1 &
FEED_PID=$!

cat <<MSG

simhash-dedup is running.
  pipeline metrics   http://127.0.0.1:$METRICS_PORT/metrics   (ready: /readyz)
  Prometheus         $PROMETHEUS_URL   (try: sum by (verdict) (rate(dedup_verdicts_total[1m])))
  schema registry    $SCHEMA_REGISTRY_URL
  Kafka              $KAFKA_BROKERS   topics crawl.pages -> pages.novel | pages.duplicate | crawl.pages.dlq, changelog simhash.fingerprints
  logs               $LOG
The demo crawler publishes ${DEMO_RATE:-50} pages/s (some refetched with new ads, counters and session ids, some copied, a few broken).
Verdict counts below every 5 s; Ctrl-C stops everything.

MSG
while kill -0 "$PIPELINE_PID" 2>/dev/null; do
  sleep 5
  metrics=$(curl -sf "http://127.0.0.1:$METRICS_PORT/metrics") || continue  # stopping, or not answering this once
  printf '%s\n' "$metrics" | awk '
    /^dedup_verdicts_total\{verdict="novel"\}/ {n=$2}
    /^dedup_verdicts_total\{verdict="duplicate"\}/ {d=$2}
    /^dedup_dead_letters_total/ {q+=$2}
    /^dedup_index_fingerprints / {i=$2}
    END {printf "novel %d  duplicate %d  dead letters %d  index %d fingerprints\n", n, d, q, i}'
done
# Only a pipeline that stopped on its own gets here.
echo "the pipeline exited; its last log lines ($LOG):"
tail -n 20 "$LOG"
exit 1
