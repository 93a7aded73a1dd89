#!/usr/bin/env bash
# Installs the tools the deploy checks in test/unit/deploy run, when they are missing:
#   promtool    Debian's `prometheus` package (apt-get; the same package up.sh runs)
#   kustomize   `kubectl kustomize` when kubectl is on PATH, else the kustomize binary, built with
#               `go install sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION` into $INFRA_CACHE_DIR/bin
#               (Debian's kubernetes-client is kubectl 1.20, whose kustomize is too old for `labels:`)
# The tests never skip a check: they fail, naming this script, when a tool is missing.
# up.sh runs this script (WITH_CHECK_TOOLS=1, the default), so `npm test` installs them on a fresh machine.
#
# Env: INFRA_CACHE_DIR (default ~/.cache/simhash-dedup-infra)   KUSTOMIZE_VERSION (v5.5.0)
set -euo pipefail

CACHE=${INFRA_CACHE_DIR:-$HOME/.cache/simhash-dedup-infra}
KUSTOMIZE_VERSION=${KUSTOMIZE_VERSION:-v5.5.0}

log() { printf '[check-tools] %s\n' "$*" >&2; }
die() { printf 'check-tools.sh: ERROR: %s\n' "$*" >&2; exit 1; }

if ! command -v promtool >/dev/null; then
  command -v apt-get >/dev/null || die "promtool is missing and there is no apt-get: install Prometheus' promtool and put it on PATH"
  log "installing Debian package 'prometheus' (for promtool)"
  sudo=(); [ "$(id -u)" = 0 ] || sudo=(sudo)
  { "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends prometheus; } >&2 \
    || die "apt-get install prometheus failed"
  command -v promtool >/dev/null || die "the prometheus package installed no promtool"
fi

if command -v kubectl >/dev/null && kubectl kustomize --help >/dev/null 2>&1; then
  log "kustomize: kubectl kustomize ($(command -v kubectl))"
elif command -v kustomize >/dev/null; then
  log "kustomize: $(command -v kustomize)"
elif [ -x "$CACHE/bin/kustomize" ]; then
  log "kustomize: $CACHE/bin/kustomize"
else
  command -v go >/dev/null || die "kustomize is missing: install kubectl, or Go (to build kustomize from the Go module proxy)"
  log "building kustomize $KUSTOMIZE_VERSION with go install into $CACHE/bin (about 30 s, once)"
  mkdir -p "$CACHE/bin"
  GOBIN="$CACHE/bin" GOFLAGS=-mod=mod go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" >&2 \
    || die "go install sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION failed"
  "$CACHE/bin/kustomize" version >/dev/null || die "the kustomize just built does not run"
fi
