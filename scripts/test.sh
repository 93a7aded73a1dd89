#!/usr/bin/env bash
# The whole test suite, as CI runs it: build, start a real local stack
# (Kafka KRaft broker, Apicurio schema registry, Prometheus; deploy/local/),
# run the unit and integration tests in one node:test run, tear the stack down.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

npx tsc -p tsconfig.json

export INFRA_STATE_DIR="${INFRA_STATE_DIR:-$PWD/.infra/test}"
trap 'bash deploy/local/down.sh >/dev/null 2>&1 || true' EXIT
WITH_REGISTRY=1 WITH_PROMETHEUS=1 PROMETHEUS_RULES="$PWD/deploy/prometheus/*.rules.yml" bash deploy/local/up.sh
# shellcheck disable=SC1091
source "$INFRA_STATE_DIR/env"

# One run, one summary. Files run one at a time: the machine has 2 cores and
# the integration tests share one broker.
node --test --test-force-exit --test-concurrency=1 --test-timeout=900000 dist/test/unit dist/test/integration
