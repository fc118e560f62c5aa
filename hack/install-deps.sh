#!/usr/bin/env bash
# Debian packages the e2e suite needs beyond Go and git, installed only when
# missing (idempotent; CI calls it on every run):
#
#   redis-server   the cache every Argo CD component talks to
#                  (e2e TestArgoConformance runs a real Argo CD)
#   gcc, libc6-dev `go test -race` (make unit) needs cgo
#   prometheus     promtool (deploy/prometheus rule tests) and the
#                  Prometheus e2e TestServe* scrapes serve with (2.42.0)
#   jq             hack/bench-serve.sh counts the API server's audit log
set -euo pipefail

log() { printf '[install-deps] %s\n' "$*" >&2; }

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v jq >/dev/null 2>&1 || missing+=(jq)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
log "installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
