#!/usr/bin/env bash
# Build the install-test tools from the Go module proxy into the user cache
# and print their paths (one per line, in the order asked; logs go to stderr).
#
#   hack/build-tools.sh krew                    -> .../krew-v0.4.3/kubectl-krew
#   hack/build-tools.sh validate-krew-manifest  -> .../krew-v0.4.3/validate-krew-manifest
#   hack/build-tools.sh argocd                  -> .../argocd-v3.2.11/argocd
#   hack/build-tools.sh all
#
# Binaries are reused when present (CI's fresh clone on the same machine
# finds them in ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-drift/bin); a flock
# per tool makes concurrent callers wait for one build instead of starting a
# second one on the shared cores.
#
# The flux CLI is built by hack/build-flux.sh (owned by the Flux work).
#
# Measured here: krew + validate-krew-manifest ~25 s; argocd v3.2.11 builds
# (148 MB binary, `argocd version --client` = v3.2.11): DESIGN.md says ~6 min
# on an idle 2-core machine; here it took 68 min with the cores shared by three
# other heavy builds. e2e/install_test.go runs `argocd drift` through it.
set -euo pipefail

KREW_VERSION=${KREW_VERSION:-v0.4.3}
# v3.2.11, not v3.2.12: the later tag's cmd does not compile
# (undefined: settings.ValidateExternalURL); v3.3+ cannot resolve
# gitops-engine from the module proxy (see shared DESIGN.md).
ARGOCD_VERSION=${ARGOCD_VERSION:-v3.2.11}
CACHE=${DRIFT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-drift}

log() { printf '[build-tools] %s\n' "$*" >&2; }

# locked DIR BIN BUILDFN: run BUILDFN once under DIR/.lock unless BIN exists.
locked() {
  local dir=$1 bin=$2 fn=$3
  if [ ! -x "$bin" ]; then
    mkdir -p "$dir"
    (
      exec 9>"$dir/.lock"
      flock 9
      [ -x "$bin" ] || "$fn" "$dir"
    )
  fi
  echo "$bin"
}

build_krew() {
  local dir=$1
  log "building krew $KREW_VERSION and validate-krew-manifest (go install)"
  GOFLAGS= GOBIN="$dir" CGO_ENABLED=0 go install -trimpath \
    sigs.k8s.io/krew/cmd/krew@"$KREW_VERSION" \
    sigs.k8s.io/krew/cmd/validate-krew-manifest@"$KREW_VERSION"
  # kubectl finds plugins by file name: krew runs as `kubectl krew`.
  mv "$dir/krew" "$dir/kubectl-krew"
}

build_argocd() {
  local dir=$1 work
  work=$(mktemp -d)
  # build_argocd runs in locked's subshell: its EXIT is the build's end.
  # shellcheck disable=SC2064
  trap "chmod -R u+w '$work' 2>/dev/null; rm -rf '$work'" EXIT
  log "building argocd $ARGOCD_VERSION (first time: ~6 min, ~2.5 GB RSS)"
  (
    cd "$work"
    go mod init drift-argocd-build >/dev/null 2>&1
    go mod edit -require=github.com/argoproj/argo-cd/v3@"$ARGOCD_VERSION"
    # Argo CD pins k8s.io/* (and a few others) through its own replace
    # block, which a consumer module must repeat; local-path replaces
    # (=> ./...) point inside Argo's repository and are skipped.
    local gomod
    gomod=$(GOFLAGS=-mod=mod go mod download -json github.com/argoproj/argo-cd/v3@"$ARGOCD_VERSION" |
      sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
    [ -n "$gomod" ] || { log "cannot download argo-cd $ARGOCD_VERSION"; exit 1; }
    {
      sed -n '/^replace (/,/^)/p' "$gomod" | sed '1d;$d'
      sed -n 's/^replace \(.*=>.*\)/\1/p' "$gomod"
    } | sed 's://.*$::' | awk 'NF >= 3 && $0 !~ /=> *\./' | while read -r line; do
      local from to
      from=$(echo "$line" | sed 's/ *=>.*//' | awk '{ if (NF == 2) print $1 "@" $2; else print $1 }')
      to=$(echo "$line" | sed 's/.*=> *//' | awk '{ if (NF == 2) print $1 "@" $2; else print $1 }')
      go mod edit -replace="$from=$to"
    done
    cat >tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/argoproj/argo-cd/v3/cmd"
GO
    # The binary picks its personality from argv[0]; "argocd" is the CLI.
    GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/argoproj/argo-cd/v3/common.version=${ARGOCD_VERSION#v}" \
      -o "$dir/argocd.tmp" github.com/argoproj/argo-cd/v3/cmd
  )
  mv "$dir/argocd.tmp" "$dir/argocd"
  log "built $dir/argocd"
}

krew_dir=$CACHE/bin/krew-$KREW_VERSION
argocd_dir=$CACHE/bin/argocd-$ARGOCD_VERSION

[ $# -gt 0 ] || set -- all
for tool in "$@"; do
  case $tool in
  krew) locked "$krew_dir" "$krew_dir/kubectl-krew" build_krew ;;
  validate-krew-manifest) locked "$krew_dir" "$krew_dir/validate-krew-manifest" build_krew ;;
  argocd) locked "$argocd_dir" "$argocd_dir/argocd" build_argocd ;;
  all)
    locked "$krew_dir" "$krew_dir/kubectl-krew" build_krew
    locked "$krew_dir" "$krew_dir/validate-krew-manifest" build_krew
    locked "$argocd_dir" "$argocd_dir/argocd" build_argocd
    ;;
  *) log "unknown tool $tool"; exit 2 ;;
  esac
done
