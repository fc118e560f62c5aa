#!/usr/bin/env bash
# Build the install-test tools from the Go module proxy into the user cache
# and print their paths (one per line, in the order asked; logs go to stderr).
#
#   hack/build-tools.sh krew                    -> .../krew-v0.4.3/kubectl-krew
#   hack/build-tools.sh validate-krew-manifest  -> .../krew-v0.4.3/validate-krew-manifest
#   hack/build-tools.sh argocd                  -> .../argocd-v3.2.11/argocd
#   hack/build-tools.sh kustomize-controller    -> .../kustomize-controller-v1.9.6/kustomize-controller
#   hack/build-tools.sh helm-controller         -> .../helm-controller-v1.6.0/helm-controller
#   hack/build-tools.sh flux-crds               -> .../flux-crds-.../ (Kustomization, HelmRelease
#                                                  and source-controller v1.9.0 CRDs, one dir)
#   hack/build-tools.sh golangci-lint           -> .../golangci-lint-v2.15.0/golangci-lint
#   hack/build-tools.sh argocd-kustomize        -> .../argocd-kustomize-v5.7.1/kustomize
#   hack/build-tools.sh argocd-helm             -> .../argocd-helm-v3.18.4/helm
#   hack/build-tools.sh helm                    -> .../helm-v4.3.2/helm (go.mod's helm.sh/helm/v4)
#   hack/build-tools.sh flux                    -> .../flux-v2.9.5/flux (hack/build-flux.sh)
#   hack/build-tools.sh all
#
# Binaries are reused when present (CI's fresh clone on the same machine
# finds them in ${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-drift/bin); a flock
# per tool makes concurrent callers wait for one build instead of starting a
# second one on the shared cores.
#
# The flux CLI is built by hack/build-flux.sh (owned by the Flux work); the
# name flux runs it, so that one script serves every tool the e2e tests ask for.
# kustomize-controller and helm-controller are the ground truth of the Flux
# conformance suite (e2e/flux_conformance_test.go): their module zips carry
# `replace .../api => ./api`, which a module build cannot follow, so the
# module is copied, that line dropped (the api module of the same tag comes
# from the proxy instead) and built with its own go.mod/go.sum pins.
# Measured here (cold, module cache empty for them, the 2 cores shared with
# kube-apiserver and two other builds): kustomize-controller 900 s,
# helm-controller 875 s, one after the other (an idle machine should be far
# faster; not measured). flux-crds only copies files from the module zips.
#
# Measured here: golangci-lint v2.15.0 78 s (its modules not yet downloaded,
# the 2 cores nearly idle; 42 MB binary); a lint run of the tree ~2.5 min
# with a cold analysis cache on a loaded machine.
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
KUSTOMIZE_CONTROLLER_VERSION=${KUSTOMIZE_CONTROLLER_VERSION:-v1.9.6}
HELM_CONTROLLER_VERSION=${HELM_CONTROLLER_VERSION:-v1.6.0}
SOURCE_CONTROLLER_VERSION=${SOURCE_CONTROLLER_VERSION:-v1.9.0}
# `make verify`'s linter (.golangci.yml, v2 format). v2.15.0 is the newest
# release the module proxy serves that builds with Go 1.26; it must be built
# with a Go at least as new as go.mod's, which `go install` here does.
GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}
# The kustomize and helm CLIs Argo CD's repo-server runs (it execs
# `kustomize build` and `helm template`): the versions of argo-cd v3.2.11's
# hack/tool-versions.sh (helm 3.18.4, kustomize 5.7.0; the module proxy
# serves no kustomize/v5 v5.7.0, v5.7.1 is its patch release). The real
# Argo CD of e2e/argoreal_test.go finds them on its PATH.
ARGOCD_KUSTOMIZE_VERSION=${ARGOCD_KUSTOMIZE_VERSION:-v5.7.1}
ARGOCD_HELM_VERSION=${ARGOCD_HELM_VERSION:-v3.18.4}
# The helm v4 CLI at go.mod's helm.sh/helm/v4 version: the library our
# HelmRelease render templates with is the CLI's, so `helm template` is the
# ground truth for the same chart and values (e2e
# TestRenderHelmTemplateGroundTruth, hack/bench-render.sh). Measured cold
# here: 1272 s wall on a heavily loaded machine, 199 s of CPU.
HELM_VERSION=${HELM_VERSION:-$(awk '$1 == "helm.sh/helm/v4" {print $2}' "$(dirname "$0")/../go.mod")}
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

build_golangci_lint() {
  local dir=$1
  log "building golangci-lint $GOLANGCI_LINT_VERSION (go install; first time: ~1.5 min, 42 MB)"
  # go install MODULE@VERSION builds with the module's own go.mod/go.sum pins,
  # outside this module (GOFLAGS cleared: -mod=... does not apply there); the
  # binary's version comes from the module's build info.
  GOFLAGS= GOWORK=off GOBIN="$dir/.tmp" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
    github.com/golangci/golangci-lint/v2/cmd/golangci-lint@"$GOLANGCI_LINT_VERSION"
  mv "$dir/.tmp/golangci-lint" "$dir/golangci-lint"
  rmdir "$dir/.tmp"
  log "built $dir/golangci-lint"
}

# gobin DIR PKG@VERSION NAME: go install a CLI with its module's own pins.
gobin() {
  local dir=$1 pkg=$2 name=$3
  log "building $pkg (go install)"
  GOFLAGS= GOWORK=off GOBIN="$dir/.tmp" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "$pkg"
  mv "$dir/.tmp/$name" "$dir/$name"
  rmdir "$dir/.tmp"
  log "built $dir/$name"
}

build_argocd_kustomize() {
  gobin "$1" sigs.k8s.io/kustomize/kustomize/v5@"$ARGOCD_KUSTOMIZE_VERSION" kustomize
}

# build_helm_cli DIR MODULE VERSION: `go install MODULE/cmd/helm@VERSION`
# with helm's own go.mod and go.sum (not ours), as helm's release does, and
# the ldflags of its Makefile for a tagged build; `helm version` prints it
# (Argo CD reads it).
build_helm_cli() {
  GOFLAGS= GOWORK=off GOBIN="$1/.tmp" CGO_ENABLED=0 go install -trimpath \
    -ldflags "-s -w -X $2/internal/version.version=$3 -X $2/internal/version.metadata=" \
    "$2/cmd/helm@$3"
  mv "$1/.tmp/helm" "$1/helm"
  rmdir "$1/.tmp"
  log "built $1/helm"
}

build_argocd_helm() { build_helm_cli "$1" helm.sh/helm/v3 "$ARGOCD_HELM_VERSION"; }

build_helm() {
  [ -n "$HELM_VERSION" ] || { log "helm.sh/helm/v4 is not in go.mod"; exit 1; }
  build_helm_cli "$1" helm.sh/helm/v4 "$HELM_VERSION"
}

# moddir MODULE@VERSION: the module's extracted (read-only) directory.
moddir() {
  GOFLAGS=-mod=mod GOWORK=off go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)",/\1/p'
}

# build_flux_controller NAME VERSION DIR [go mod edit args...]
build_flux_controller() {
  local name=$1 version=$2 dir=$3 work src
  shift 3
  work=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "chmod -R u+w '$work' 2>/dev/null; rm -rf '$work'" EXIT
  log "building $name $version"
  src=$(moddir "github.com/fluxcd/$name@$version")
  [ -n "$src" ] || { log "cannot download github.com/fluxcd/$name@$version"; exit 1; }
  cp -r "$src" "$work/$name"
  chmod -R u+w "$work/$name"
  (
    cd "$work/$name"
    sed -i "\\#^replace github.com/fluxcd/$name/api => ./api#d" go.mod
    for edit in "$@"; do go mod edit "$edit"; done
    GOFLAGS=-mod=mod GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/$name.tmp" .
  )
  mv "$dir/$name.tmp" "$dir/$name"
  log "built $dir/$name"
}

build_kustomize_controller() {
  build_flux_controller kustomize-controller "$KUSTOMIZE_CONTROLLER_VERSION" "$1"
}

build_helm_controller() {
  # v1.6.0's go.mod asks for fluxcd/pkg/chartutil v1.27.0, which the module
  # proxy does not serve; v1.27.1 is the next patch.
  build_flux_controller helm-controller "$HELM_CONTROLLER_VERSION" "$1" \
    -require=github.com/fluxcd/pkg/chartutil@v1.27.1
}

build_flux_crds() {
  local dir=$1 m src
  for m in kustomize-controller@"$KUSTOMIZE_CONTROLLER_VERSION" helm-controller@"$HELM_CONTROLLER_VERSION" source-controller@"$SOURCE_CONTROLLER_VERSION"; do
    src=$(moddir "github.com/fluxcd/$m")
    [ -n "$src" ] || { log "cannot download github.com/fluxcd/$m"; exit 1; }
    cp "$src"/config/crd/bases/*.yaml "$dir/"
  done
  chmod u+w "$dir"/*.yaml
  touch "$dir/.done"
}

krew_dir=$CACHE/bin/krew-$KREW_VERSION
kc_dir=$CACHE/bin/kustomize-controller-$KUSTOMIZE_CONTROLLER_VERSION
hc_dir=$CACHE/bin/helm-controller-$HELM_CONTROLLER_VERSION
crd_dir=$CACHE/bin/flux-crds-$KUSTOMIZE_CONTROLLER_VERSION-$HELM_CONTROLLER_VERSION-$SOURCE_CONTROLLER_VERSION
argocd_dir=$CACHE/bin/argocd-$ARGOCD_VERSION
lint_dir=$CACHE/bin/golangci-lint-$GOLANGCI_LINT_VERSION
akust_dir=$CACHE/bin/argocd-kustomize-$ARGOCD_KUSTOMIZE_VERSION
ahelm_dir=$CACHE/bin/argocd-helm-$ARGOCD_HELM_VERSION
helm_dir=$CACHE/bin/helm-$HELM_VERSION

[ $# -gt 0 ] || set -- all
for tool in "$@"; do
  case $tool in
  krew) locked "$krew_dir" "$krew_dir/kubectl-krew" build_krew ;;
  validate-krew-manifest) locked "$krew_dir" "$krew_dir/validate-krew-manifest" build_krew ;;
  argocd) locked "$argocd_dir" "$argocd_dir/argocd" build_argocd ;;
  golangci-lint) locked "$lint_dir" "$lint_dir/golangci-lint" build_golangci_lint ;;
  argocd-kustomize) locked "$akust_dir" "$akust_dir/kustomize" build_argocd_kustomize ;;
  argocd-helm) locked "$ahelm_dir" "$ahelm_dir/helm" build_argocd_helm ;;
  helm) locked "$helm_dir" "$helm_dir/helm" build_helm ;;
  kustomize-controller) locked "$kc_dir" "$kc_dir/kustomize-controller" build_kustomize_controller ;;
  helm-controller) locked "$hc_dir" "$hc_dir/helm-controller" build_helm_controller ;;
  flux) "$(dirname "$0")/build-flux.sh" ;;
  flux-crds)
    if [ ! -e "$crd_dir/.done" ]; then
      mkdir -p "$crd_dir"
      (exec 9>"$crd_dir/.lock"; flock 9; [ -e "$crd_dir/.done" ] || build_flux_crds "$crd_dir")
    fi
    echo "$crd_dir"
    ;;
  all)
    locked "$krew_dir" "$krew_dir/kubectl-krew" build_krew
    locked "$krew_dir" "$krew_dir/validate-krew-manifest" build_krew
    locked "$argocd_dir" "$argocd_dir/argocd" build_argocd
    locked "$kc_dir" "$kc_dir/kustomize-controller" build_kustomize_controller
    locked "$hc_dir" "$hc_dir/helm-controller" build_helm_controller
    ;;
  *) log "unknown tool $tool"; exit 2 ;;
  esac
done
