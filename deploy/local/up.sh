#!/usr/bin/env bash
# Start a throwaway local stack on 127.0.0.1 (no Docker):
#   Kafka 3.9.x, single-node KRaft (jars from Maven Central, cached)
#   Apicurio Registry 3.0.9, in memory, Confluent-compatible API at /apis/ccompat/v7   (WITH_REGISTRY=1, default)
#   Prometheus from Debian's `prometheus` package                                    (WITH_PROMETHEUS=1, default 0)
# Writes "$STATE/env" (export KEY=value lines; `source` it). Stop with deploy/local/down.sh.
#
# Always fresh: an old stack recorded in $STATE is stopped first (by PID, via down.sh), then
# everything restarts with new ports and an empty Kafka data dir. Nothing is reused but the caches.
#
# Env: INFRA_STATE_DIR (default <repo>/.infra)   INFRA_CACHE_DIR (default ~/.cache/simhash-dedup-infra)
#      WITH_REGISTRY=0|1 (1)   WITH_PROMETHEUS=0|1 (0)   KAFKA_VERSION (3.9.2)   APICURIO_VERSION (3.0.9)
#      WITH_CHECK_TOOLS=0|1 (1)  install what the test suite's deploy checks run (check-tools.sh: promtool, kustomize)
#      PROMETHEUS_RULES  space-separated globs of rule files to load, e.g. "/abs/deploy/prometheus/*.yml"
#      PROMETHEUS_JOB    job label of the METRICS_PORT scrape target (simhash-dedup)
#      KAFKA_HEAP_OPTS   (-Xms256m -Xmx512m)   INFRA_TIMEOUT  readiness timeout per service, s (180)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
STATE=${INFRA_STATE_DIR:-$ROOT/.infra}
CACHE=${INFRA_CACHE_DIR:-$HOME/.cache/simhash-dedup-infra}
KAFKA_VERSION=${KAFKA_VERSION:-3.9.2}
APICURIO_VERSION=${APICURIO_VERSION:-3.0.9}   # 3.3.x needs Java 21 (see README)
WITH_REGISTRY=${WITH_REGISTRY:-1}
WITH_PROMETHEUS=${WITH_PROMETHEUS:-0}
WITH_CHECK_TOOLS=${WITH_CHECK_TOOLS:-1}
PROMETHEUS_JOB=${PROMETHEUS_JOB:-simhash-dedup}
TIMEOUT=${INFRA_TIMEOUT:-180}
read -r -a KAFKA_HEAP <<< "${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
CLUSTER_ID=MkU3OEVBNTcwNTJENDM2Qk   # fixed 22-char base64url id (16 bytes); the data dir is new every run

log() { printf '[up.sh %3ds] %s\n' "$SECONDS" "$*" >&2; }
die() { printf 'up.sh: ERROR: %s\n' "$*" >&2; exit 1; }
show_log() { printf -- '---- last 60 lines of %s ----\n' "$1" >&2; tail -n 60 "$1" >&2 2>/dev/null || true; printf -- '----\n' >&2; }

# ---- prerequisites ----------------------------------------------------------------------------
for tool in java node curl; do command -v "$tool" >/dev/null || die "'$tool' is not on PATH"; done
java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
[ "${java_major:-0}" -ge 17 ] 2>/dev/null || die "Java 17+ is required (found '${java_major:-?}')"
(cd "$ROOT" && node -e 'import("kafkajs")' 2>/dev/null) || die "kafkajs not found in $ROOT/node_modules (run 'npm ci')"
if [ "$WITH_REGISTRY" = 1 ] && [ "$java_major" -lt 21 ] \
   && [ "$(printf '%s\n' 3.3.0 "$APICURIO_VERSION" | sort -V | head -n 1)" = 3.3.0 ]; then
  die "Apicurio $APICURIO_VERSION is compiled for Java 21 (class file 65), java here is $java_major; use APICURIO_VERSION=3.0.9"
fi
case "$KAFKA_VERSION" in
  3.*) ;;
  *) die "KAFKA_VERSION=$KAFKA_VERSION: only 3.x is supported here (4.x uses log4j2 and different internal-topic settings)";;
esac

# ---- stop any previous stack in this state dir (by recorded PID only), reset state -----------
mkdir -p "$STATE" "$CACHE"
STATE=$(cd "$STATE" && pwd)
CACHE=$(cd "$CACHE" && pwd)
INFRA_STATE_DIR="$STATE" bash "$HERE/down.sh" >&2
rm -rf "$STATE/env" "$STATE/logs" "$STATE/kafka-data" "$STATE/prom-data"
mkdir -p "$STATE/logs"

ok=0
FETCH_PID=""
on_exit() {
  [ "$ok" = 1 ] && return 0
  if [ -n "$FETCH_PID" ] && kill -0 "$FETCH_PID" 2>/dev/null; then
    pkill -TERM -P "$FETCH_PID" 2>/dev/null || true   # curl/tar child of our own fetch subshell (by parent PID)
    kill -TERM "$FETCH_PID" 2>/dev/null || true
  fi
  INFRA_STATE_DIR="$STATE" bash "$HERE/down.sh" >/dev/null 2>&1 || true
  printf 'up.sh: FAILED; stack stopped; logs are in %s/logs\n' "$STATE" >&2
}
trap on_exit EXIT

# ---- free ports, all distinct, chosen up front -------------------------------------------------
read -r KAFKA_PORT CONTROLLER_PORT SR_PORT SR_MGMT_PORT PROM_PORT METRICS_PORT < <(node -e '
  const net = require("net");
  const servers = Array.from({ length: 6 }, () => net.createServer());
  Promise.all(servers.map((s) => new Promise((ok, ko) => { s.once("error", ko); s.listen(0, "127.0.0.1", ok); })))
    .then(() => { console.log(servers.map((s) => s.address().port).join(" ")); servers.forEach((s) => s.close()); });
') || true
[ -n "${METRICS_PORT:-}" ] || die "could not allocate free ports"

# Apicurio: fetched with curl straight from Maven Central (sha1-checked), not with mvn: the 3.0.9
# artifact's parent pom (io.apicurio:apicurio-registry:3.0.9) is missing on Central, so
# `mvn dependency:copy/get` fail with "Failed to read artifact descriptor".
APDIR="$CACHE/apicurio-$APICURIO_VERSION"
fetch_apicurio() {
  set -e
  local base="${MAVEN_CENTRAL_URL:-https://repo.maven.apache.org/maven2}/io/apicurio/apicurio-registry-app/$APICURIO_VERSION"
  local file="apicurio-registry-app-$APICURIO_VERSION-all.tar.gz" want got
  rm -rf "$APDIR"; mkdir -p "$APDIR"
  echo "GET $base/$file"
  curl -fsSL --retry 3 -o "$APDIR/$file" "$base/$file"
  want=$(curl -fsSL --retry 3 "$base/$file.sha1" | cut -c1-40)
  got=$(sha1sum "$APDIR/$file" | cut -c1-40)
  [ "$want" = "$got" ] || { echo "sha1 mismatch for $file: got $got, Central says $want"; exit 1; }
  tar -xzf "$APDIR/$file" -C "$APDIR"
  rm -f "$APDIR/$file"
  apicurio_jar >/dev/null || { echo "no quarkus-run.jar or *-runner.jar in $file"; exit 1; }
  touch "$APDIR/.complete"
}
# 3.0.x ships the Quarkus legacy-jar layout (*-runner.jar + lib/), 3.3.x the fast-jar (quarkus-app/quarkus-run.jar).
apicurio_jar() {
  local jar; jar=$(find "$APDIR" \( -name quarkus-run.jar -o -name 'apicurio-registry-app-*-runner.jar' \) | head -n 1)
  [ -n "$jar" ] && echo "$jar"
}

start_registry() {
  local jar; jar=$(apicurio_jar)
  # The -Dsimhash.infra.state marker lets down.sh check the PID is still ours.
  nohup java -Xms64m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "-Dsimhash.infra.state=$STATE" \
    -Dquarkus.http.host=127.0.0.1 "-Dquarkus.http.port=$SR_PORT" \
    -Dquarkus.management.host=127.0.0.1 "-Dquarkus.management.port=$SR_MGMT_PORT" \
    -Dquarkus.http.access-log.enabled=false \
    -Dapicurio.rules.global.compatibility=BACKWARD \
    -jar "$jar" > "$STATE/logs/registry.out" 2>&1 < /dev/null &
  echo $! > "$STATE/registry.pid"
  log "registry (Apicurio $APICURIO_VERSION) starting (pid $!, port $SR_PORT)"
}

if [ "$WITH_REGISTRY" = 1 ]; then
  if [ -f "$APDIR/.complete" ]; then
    start_registry
  else
    log "fetching Apicurio Registry $APICURIO_VERSION (~110-160 MB) from Maven Central in the background"
    fetch_apicurio > "$STATE/logs/fetch-apicurio.log" 2>&1 &
    FETCH_PID=$!
  fi
fi

# ---- artifacts (cached per version; Maven's local repo also lives in the cache dir) ------------
M2=${INFRA_MAVEN_REPO:-$CACHE/m2}
MVN=(mvn -B -ntp -q "-Dmaven.repo.local=$M2" -f "$HERE/kafka/pom.xml")
KLIB="$CACHE/kafka-$KAFKA_VERSION/libs"
if [ ! -f "$KLIB/.complete" ]; then
  command -v mvn >/dev/null || die "'mvn' is not on PATH (needed once to fetch the Kafka jars)"
  log "fetching Kafka $KAFKA_VERSION jars from Maven Central into $KLIB"
  rm -rf "$KLIB"; mkdir -p "$KLIB"
  if ! "${MVN[@]}" "-Dkafka.version=$KAFKA_VERSION" dependency:copy-dependencies -DincludeScope=runtime \
       "-DoutputDirectory=$KLIB" > "$STATE/logs/mvn-kafka.log" 2>&1; then
    show_log "$STATE/logs/mvn-kafka.log"
    die "could not fetch kafka_2.13:$KAFKA_VERSION (try KAFKA_VERSION=3.9.1)"
  fi
  touch "$KLIB/.complete"
fi

# ---- tools of the deploy checks (promtool, kustomize): the tests fail, never skip, without them ---
if [ "$WITH_CHECK_TOOLS" = 1 ]; then
  INFRA_CACHE_DIR="$CACHE" bash "$HERE/check-tools.sh" > "$STATE/logs/check-tools.log" 2>&1 \
    || { show_log "$STATE/logs/check-tools.log"; die "deploy/local/check-tools.sh failed"; }
fi

# ---- Prometheus: install if missing (Debian package), config, start -------------------------
if [ "$WITH_PROMETHEUS" = 1 ]; then
  if ! command -v prometheus >/dev/null; then
    log "installing Debian package 'prometheus'"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; } \
      > "$STATE/logs/apt-prometheus.log" 2>&1 || { show_log "$STATE/logs/apt-prometheus.log"; die "apt-get install prometheus failed"; }
  fi
  rules=()
  if [ -n "${PROMETHEUS_RULES:-}" ]; then
    read -r -a rule_globs <<< "$PROMETHEUS_RULES"
    for g in "${rule_globs[@]}"; do
      for f in $g; do [ -f "$f" ] && rules+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); done
    done
    [ "${#rules[@]}" -gt 0 ] || log "warning: PROMETHEUS_RULES='$PROMETHEUS_RULES' matches no files; no rule_files"
  fi
  echo '[]' > "$STATE/prometheus-targets.json"
  {
    echo "# generated by deploy/local/up.sh"
    echo "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}"
    if [ "${#rules[@]}" -gt 0 ]; then
      echo "rule_files:"
      for f in "${rules[@]}"; do printf "  - '%s'\n" "$f"; done
    fi
    echo "scrape_configs:"
    echo "  - job_name: '$PROMETHEUS_JOB'"
    echo "    static_configs: [{targets: ['127.0.0.1:$METRICS_PORT']}]"
    echo "  - job_name: 'file-sd'   # entries may set their own 'job' label"
    echo "    file_sd_configs: [{files: ['$STATE/prometheus-targets.json'], refresh_interval: 1s}]"
  } > "$STATE/prometheus.yml"
  if command -v promtool >/dev/null && ! promtool check config "$STATE/prometheus.yml" > "$STATE/logs/promtool.log" 2>&1; then
    show_log "$STATE/logs/promtool.log"; die "promtool rejects $STATE/prometheus.yml (or one of its rule files)"
  fi
  nohup prometheus "--config.file=$STATE/prometheus.yml" "--storage.tsdb.path=$STATE/prom-data" \
    "--web.listen-address=127.0.0.1:$PROM_PORT" --storage.tsdb.retention.time=1h --web.enable-lifecycle \
    > "$STATE/logs/prometheus.out" 2>&1 < /dev/null &
  echo $! > "$STATE/prometheus.pid"
  log "prometheus starting (pid $!, port $PROM_PORT, scrapes 127.0.0.1:$METRICS_PORT)"
fi

# ---- Kafka: render config, format a fresh data dir, start --------------------------------------
sed -e "s#@KAFKA_PORT@#$KAFKA_PORT#g" -e "s#@CONTROLLER_PORT@#$CONTROLLER_PORT#g" -e "s#@DATA_DIR@#$STATE/kafka-data#g" \
  "$HERE/kafka/server.properties.tmpl" > "$STATE/server.properties"
LOG4J="-Dlog4j.configuration=file:$HERE/kafka/log4j.properties"
if ! java -Xms32m -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "$LOG4J" -cp "$KLIB/*" \
     kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$STATE/server.properties" \
     > "$STATE/logs/kafka-format.log" 2>&1; then
  show_log "$STATE/logs/kafka-format.log"; die "kafka-storage format failed"
fi
nohup java "${KAFKA_HEAP[@]}" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
  -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true "$LOG4J" "-Dkafka.logs.dir=$STATE/logs" \
  -cp "$KLIB/*" kafka.Kafka "$STATE/server.properties" > "$STATE/logs/kafka.out" 2>&1 < /dev/null &
echo $! > "$STATE/kafka.pid"
log "kafka $KAFKA_VERSION starting (pid $!, port $KAFKA_PORT)"

if [ -n "$FETCH_PID" ]; then
  if ! wait "$FETCH_PID"; then
    FETCH_PID=""; show_log "$STATE/logs/fetch-apicurio.log"
    die "could not fetch io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all"
  fi
  FETCH_PID=""
  start_registry
fi

# ---- readiness ----------------------------------------------------------------------------------
# wait_for NAME LOGFILE CMD...: poll CMD until it succeeds; fail if the process dies or time runs out.
wait_for() {
  local name=$1 logf=$2; shift 2
  local end=$((SECONDS + TIMEOUT)) pid; pid=$(cat "$STATE/$name.pid")
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then
      show_log "$logf"
      ! grep -q UnsupportedClassVersionError "$logf" || echo "hint: $name needs a newer Java than $java_major" >&2
      die "$name (pid $pid) exited during startup"
    fi
    if [ "$SECONDS" -ge "$end" ]; then show_log "$logf"; die "$name not ready after ${TIMEOUT}s"; fi
    sleep 0.3
  done
}
wait_for kafka "$STATE/logs/kafka.out" grep -q "Kafka Server started" "$STATE/logs/kafka.out"
if ! KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT" KAFKA_WAIT_MS=$((TIMEOUT * 1000)) node "$HERE/wait-kafka.mjs" >&2; then
  show_log "$STATE/logs/kafka.out"; die "kafka does not answer describeCluster"
fi
log "kafka ready"
SR_URL="http://127.0.0.1:$SR_PORT/apis/ccompat/v7"
if [ "$WITH_REGISTRY" = 1 ]; then
  wait_for registry "$STATE/logs/registry.out" curl -sf --max-time 2 "$SR_URL/subjects"
  log "registry ready"
fi
if [ "$WITH_PROMETHEUS" = 1 ]; then
  wait_for prometheus "$STATE/logs/prometheus.out" curl -sf --max-time 2 "http://127.0.0.1:$PROM_PORT/-/ready"
  log "prometheus ready"
fi

# ---- env file ------------------------------------------------------------------------------------
{
  echo "# written by deploy/local/up.sh at $(date -u +%Y-%m-%dT%H:%M:%SZ); stop with deploy/local/down.sh"
  printf 'export INFRA_STATE_DIR=%q\n' "$STATE"
  echo "export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT"
  echo "export KAFKAJS_NO_PARTITIONER_WARNING=1"
  [ "$WITH_REGISTRY" != 1 ] || echo "export SCHEMA_REGISTRY_URL=$SR_URL"
  if [ "$WITH_PROMETHEUS" = 1 ]; then
    echo "export PROMETHEUS_URL=http://127.0.0.1:$PROM_PORT"
    printf 'export PROMETHEUS_CONFIG=%q\n' "$STATE/prometheus.yml"
    printf 'export PROMETHEUS_TARGETS_FILE=%q\n' "$STATE/prometheus-targets.json"
    echo "export METRICS_PORT=$METRICS_PORT"
  fi
} > "$STATE/env.tmp"
mv "$STATE/env.tmp" "$STATE/env"
ok=1
log "stack up in ${SECONDS}s; source $STATE/env"
grep '^export' "$STATE/env" >&2
