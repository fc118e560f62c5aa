#!/usr/bin/env bash
# Regenerate the Argo CD parity goldens: build hack/argoparity (Argo CD
# v3.2.12's own diff code, a nested module) once into the user cache, then
# run it over internal/argocd/testdata/parity. With --capture, first
# re-capture the live objects from the local real API server
# (hack/argoparity/capture.sh). Review the golden changes before committing.
#
#   hack/argoparity/run.sh [--capture] [CASE...]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${DRIFT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-drift}
BIN=$CACHE/argoparity/argoparity
capture=
if [ "${1:-}" = "--capture" ]; then capture=1; shift; fi

# Rebuild only when the tool's sources changed: the first build compiles
# ~1,300 packages (~8 min, 2.5 GB RAM on 2 cores); the Go build cache makes
# later ones take about a minute.
stamp=$(cat "$ROOT/hack/argoparity/go.mod" "$ROOT/hack/argoparity/go.sum" "$ROOT/hack/argoparity/main.go" | sha256sum | cut -c1-16)
if [ ! -x "$BIN" ] || [ "$(cat "$BIN.stamp" 2>/dev/null)" != "$stamp" ]; then
  mkdir -p "$(dirname "$BIN")"
  echo "building hack/argoparity (argo-cd v3.2.12)" >&2
  (cd "$ROOT/hack/argoparity" && GOFLAGS=-mod=mod go build -o "$BIN.tmp" .)
  mv "$BIN.tmp" "$BIN"
  echo "$stamp" >"$BIN.stamp"
fi
if [ -n "$capture" ]; then
  "$ROOT/hack/argoparity/capture.sh" "$@"
fi
args=(-corpus "$ROOT/internal/argocd/testdata/parity")
if [ $# -eq 0 ]; then
  "$BIN" "${args[@]}"
fi
for c in "$@"; do
  "$BIN" "${args[@]}" -case "$c"
done
