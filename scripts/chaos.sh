#!/usr/bin/env bash
# The chaos run: the real local stack (deploy/local/up.sh, with the registry),
# the pipeline as operators run it, kcat as an independent producer and
# reader, and faults: SIGKILLs of the pipeline at random moments, a broker
# SIGKILL and restart, a registry SIGKILL and restart, a registry frozen with
# SIGSTOP. Then every input record is looked for in the output topics
# (read_committed); lost or duplicated records make it exit 1.
#
#   bash scripts/chaos.sh                         # the full run (about 10 minutes on 2 cores)
#   CHAOS_KILLS=3 CHAOS_PAGES=500 CHAOS_PUBLISH_SECONDS=30 bash scripts/chaos.sh   # a quick one
#   CHAOS_MODE=sharded bash scripts/chaos.sh      # 3 instances, standbys: scripts/chaos/chaos-sharded.ts
#   bash scripts/chaos.sh --record                # write the tracked bench/results/chaos.json
#
# The report goes to $INFRA_STATE_DIR/chaos.json (not tracked) unless --record or
# CHAOS_RESULTS names another file, so a trial run never overwrites the recorded one.
#
# Parameters (env): CHAOS_PAGES CHAOS_KILLS CHAOS_SEED CHAOS_PARTITIONS CHAOS_PUBLISH_SECONDS
# CHAOS_HANG_SECONDS CHAOS_BROKER CHAOS_REGISTRY CHAOS_DRAIN_SECONDS CHAOS_STARTUP_SECONDS CHAOS_RESULTS: see
# scripts/chaos/chaos-run.ts. The stack lives in INFRA_STATE_DIR (default .infra/chaos) and is
# stopped on exit, whatever happens; its logs stay there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v kcat >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "chaos.sh: installing kcat (Debian package)" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kcat; } >/dev/null \
      || { echo "chaos.sh: apt-get install kcat failed" >&2; exit 2; }
  else
    echo "chaos.sh: kcat is not installed; install it with: sudo apt-get update && sudo apt-get install -y kcat" >&2
    exit 2
  fi
fi

RECORD=0
for arg in "$@"; do
  case "$arg" in
    --record) RECORD=1 ;;
    *) echo "chaos.sh: unknown argument $arg (only --record)" >&2; exit 2 ;;
  esac
done

npx tsc -p tsconfig.json
export INFRA_STATE_DIR="${INFRA_STATE_DIR:-$PWD/.infra/chaos}"
if [ "$RECORD" = 1 ]; then
  export CHAOS_RESULTS="${CHAOS_RESULTS:-$PWD/bench/results/chaos.json}"
else
  export CHAOS_RESULTS="${CHAOS_RESULTS:-$INFRA_STATE_DIR/chaos.json}"
fi
DRIVER_PID=""
cleanup() {
  set +e
  trap - EXIT INT TERM
  if [ -n "$DRIVER_PID" ] && kill -0 "$DRIVER_PID" 2>/dev/null; then
    kill -TERM "$DRIVER_PID" 2>/dev/null   # it stops the pipeline and thaws the registry
    wait "$DRIVER_PID" 2>/dev/null
  fi
  # A registry left frozen by an interrupted run would not stop on SIGTERM.
  [ -f "$INFRA_STATE_DIR/registry.pid" ] && kill -CONT "$(cat "$INFRA_STATE_DIR/registry.pid")" 2>/dev/null
  bash deploy/local/down.sh >/dev/null 2>&1
  echo "chaos.sh: stack stopped; logs in $INFRA_STATE_DIR/logs" >&2
}
trap cleanup EXIT INT TERM

WITH_REGISTRY=1 WITH_PROMETHEUS=0 bash deploy/local/up.sh
# shellcheck disable=SC1091
source "$INFRA_STATE_DIR/env"
rm -rf "$INFRA_STATE_DIR/chaos"

set +e
if [ "${CHAOS_MODE:-single}" = sharded ]; then DRIVER=chaos-sharded; else DRIVER=chaos-run; fi
node "dist/scripts/chaos/$DRIVER.js" &
DRIVER_PID=$!
wait "$DRIVER_PID"
status=$?
DRIVER_PID=""
set -e
exit "$status"
