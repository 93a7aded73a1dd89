#!/usr/bin/env bash
# Stop the local stack started by deploy/local/up.sh: SIGTERM each recorded PID, wait up to 30 s,
# then SIGKILL. Only PIDs from $STATE/*.pid whose command line still mentions $STATE are signalled
# (guards against PID reuse); nothing is ever killed by name. Logs and the env file's directory stay.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${INFRA_STATE_DIR:-$(cd "$HERE/../.." && pwd)/.infra}
[ -d "$STATE" ] || exit 0
STATE=$(cd "$STATE" && pwd)
GRACE=${INFRA_STOP_GRACE:-30}

ours() { # ours PID: the process exists and its command line contains the state dir
  [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' < "/proc/$1/cmdline" | grep -qF -- "$STATE"
}

alive() { # alive PID: exists and is not a zombie (zombies wait for a reaper; they hold no ports)
  kill -0 "$1" 2>/dev/null || return 1
  local st; st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
  [ "$st" != Z ]
}

pids=() names=()
for svc in prometheus registry kafka; do
  f="$STATE/$svc.pid"
  [ -f "$f" ] || continue
  pid=$(cat "$f")
  if [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid"; then
    if ours "$pid"; then
      kill -TERM "$pid" 2>/dev/null && { pids+=("$pid"); names+=("$svc"); echo "down.sh: SIGTERM $svc (pid $pid)"; }
    else
      echo "down.sh: pid $pid in $f is not a process of this stack any more; not signalled"
    fi
  fi
  rm -f "$f"
done

# All were signalled together (Kafka's controlled shutdown runs in parallel with the others).
end=$((SECONDS + GRACE))
for i in "${!pids[@]}"; do
  pid=${pids[$i]}
  while alive "$pid" && [ "$SECONDS" -lt "$end" ]; do sleep 0.2; done
  if alive "$pid"; then
    echo "down.sh: ${names[$i]} (pid $pid) still alive after ${GRACE}s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
done
rm -f "$STATE/env"
exit 0
