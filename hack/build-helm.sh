#!/usr/bin/env bash
# Build the real helm v4 CLI from the Go module proxy into the user cache and
# print the binary's path on stdout (logs go to stderr).
#
#   hack/build-helm.sh            build once (reused when present), print path
#   HELM_VERSION=v4.3.2 hack/build-helm.sh
#
# HELM_VERSION defaults to the helm.sh/helm/v4 version in go.mod: the
# library our HelmRelease render templates with is the CLI's, so `helm
# template` is the ground truth for the same chart and values (e2e
# TestRenderHelmTemplateGroundTruth, hack/bench-render.sh).
#
# `go install MODULE@VERSION` builds with helm's own go.mod and go.sum (not
# ours), as helm's release does; the ldflags are its Makefile's for a
# tagged build (version, empty metadata).
#
# Idempotent and safe to call concurrently: a flock serialises builds and the
# binary is moved into place atomically.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
HELM_VERSION=${HELM_VERSION:-$(awk '$1 == "helm.sh/helm/v4" {print $2}' "$ROOT/go.mod")}
[ -n "$HELM_VERSION" ] || { echo "[build-helm] helm.sh/helm/v4 is not in go.mod" >&2; exit 1; }
CACHE=${DRIFT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-drift}
BIN_DIR=$CACHE/bin/helm-$HELM_VERSION
BIN=$BIN_DIR/helm

log() { printf '[build-helm] %s\n' "$*" >&2; }

if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$BIN_DIR"
exec 9>"$BIN_DIR/.lock"
flock 9
if [ -x "$BIN" ]; then # another caller built it while we waited
  echo "$BIN"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

log "building helm $HELM_VERSION (first time: a few minutes)"
start=$(date +%s)
# GOBIN: go install writes the binary there; GOFLAGS/GOWORK cleared so that
# our module's settings do not leak into helm's build.
GOBIN="$work" GOFLAGS= GOWORK=off CGO_ENABLED=0 go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION -X helm.sh/helm/v4/internal/version.metadata=" \
  "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
mv "$work/helm" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
log "built $BIN in $(( $(date +%s) - start )) s"
echo "$BIN"
