#!/usr/bin/env bash
# Build the release: cross-compiled binaries, deterministic archives, sha256
# files, and the krew and Flux plugin manifests rendered with the real
# checksums. `make dist` runs it.
#
#   hack/release.sh [all]      build + archive + manifests + verify (default)
#   hack/release.sh build      cross-compile into $DIST_DIR/build/<os>_<arch>/
#   hack/release.sh archive    archives + .sha256 files from the build dir
#   hack/release.sh manifests  render krew-manifests/* into $DIST_DIR/{krew,flux}/
#   hack/release.sh verify     recompute every archive's sha256 and check the
#                              .sha256 files and both manifests against it
#
# Environment:
#   VERSION           vX.Y.Z; default: the exact tag of HEAD, else a Go-style
#                     pseudo-version v0.0.0-<commit time>-<commit> (semver,
#                     as krew requires)
#   DIST_DIR          output directory (default: dist)
#   PLATFORMS         default: linux/amd64 linux/arm64 darwin/amd64
#                     darwin/arm64 windows/amd64 windows/arm64
#   PARTIAL_MANIFESTS 1: PLATFORMS may be a subset of the templates'
#                     platforms; the manifests then list only those built
#                     (e2e's TestInstall builds two by default). Unset, a
#                     template platform missing from PLATFORMS is an error,
#                     so a real release cannot ship a short manifest.
#   RELEASE_BASE_URL  where the archives will be downloaded from (default:
#                     the GitHub release of VERSION)
#
# One program, three names: plugins/{kubectl,argocd,flux}-drift are the same
# code (internal/cli picks the door from argv[0], cli.FrontendFor), so each
# platform is compiled once, from plugins/kubectl-drift, and the archive
# carries it as kubectl-drift, argocd-drift and flux-drift. They are
# separate regular files, not links: krew (internal/download) and flux
# (internal/plugin/install.go) extract regular files only.
#
# Determinism: the same commit gives byte-identical archives. Inputs are the
# commit (version, commit id and build date come from git, never the clock),
# -trimpath -buildvcs=false, CGO_ENABLED=0; archives have sorted entries,
# owner 0:0, fixed modes, mtime = the commit time, gzip -n; zip entries are
# written in sorted order with -X (no uid/gid or extended times) under TZ=UTC.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODULE=github.com/kubectl-drift/kubectl-drift
DIST_DIR=${DIST_DIR:-dist}
case $DIST_DIR in /*) ;; *) DIST_DIR=$ROOT/$DIST_DIR ;; esac
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
DOORS="kubectl-drift argocd-drift flux-drift"

log() { printf '[release] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

COMMIT=$(git rev-parse HEAD)
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}
BUILD_DATE=$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)
if [ -z "${VERSION:-}" ]; then
  VERSION=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null || true)
  if [ -z "$VERSION" ]; then
    VERSION=v0.0.0-$(date -u -d "@$EPOCH" +%Y%m%d%H%M%S)-${COMMIT:0:12}
  fi
fi
[[ $VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  die "VERSION $VERSION is not vMAJOR.MINOR.PATCH[-PRERELEASE] (krew and flux need semver)"
RELEASE_BASE_URL=${RELEASE_BASE_URL:-https://github.com/kubectl-drift/kubectl-drift/releases/download/$VERSION}
RELEASE_BASE_URL=${RELEASE_BASE_URL%/}

archive_name() { # os arch
  local ext=tar.gz
  [ "$1" = windows ] && ext=zip
  echo "kubectl-drift_${VERSION}_$1_$2.$ext"
}

build() {
  local ld="-s -w"
  ld+=" -X $MODULE/internal/version.gitVersion=$VERSION"
  ld+=" -X $MODULE/internal/version.gitCommit=$COMMIT"
  ld+=" -X $MODULE/internal/version.buildDate=$BUILD_DATE"
  local p os arch exe out start
  for p in $PLATFORMS; do
    os=${p%/*} arch=${p#*/} exe=
    [ "$os" = windows ] && exe=.exe
    out=$DIST_DIR/build/${os}_$arch
    rm -rf "$out" && mkdir -p "$out"
    start=$SECONDS
    GOOS=$os GOARCH=$arch CGO_ENABLED=0 GOFLAGS=${GOFLAGS:-} \
      go build -trimpath -buildvcs=false -ldflags "$ld" -o "$out/kubectl-drift$exe" ./plugins/kubectl-drift
    log "built $os/$arch in $((SECONDS - start))s ($(stat -c %s "$out/kubectl-drift$exe") bytes)"
  done
}

# stage OS ARCH DIR: lay out one archive's files with fixed metadata.
stage() {
  local os=$1 arch=$2 dir=$3 exe= door
  [ "$os" = windows ] && exe=.exe
  local bin=$DIST_DIR/build/${os}_$arch/kubectl-drift$exe
  [ -f "$bin" ] || die "missing $bin: run '$0 build' first"
  [ -f LICENSE ] || die "LICENSE is missing (krew's validation requires one in the archive)"
  rm -rf "$dir" && mkdir -p "$dir"
  for door in $DOORS; do
    cp "$bin" "$dir/$door$exe"
    chmod 0755 "$dir/$door$exe"
  done
  install -m 0644 LICENSE "$dir/LICENSE"
  install -m 0755 plugins/kubectl-drift/kubectl_complete-drift "$dir/kubectl_complete-drift"
  if [ "$os" = windows ]; then
    install -m 0644 plugins/kubectl-drift/kubectl_complete-drift.cmd "$dir/kubectl_complete-drift.cmd"
  fi
  find "$dir" -exec touch -h -d "@$EPOCH" {} +
}

archive() {
  mkdir -p "$DIST_DIR"
  local p os arch name stagedir files
  for p in $PLATFORMS; do
    os=${p%/*} arch=${p#*/}
    name=$(archive_name "$os" "$arch")
    stagedir=$DIST_DIR/stage/${os}_$arch
    stage "$os" "$arch" "$stagedir"
    # Sorted in the C locale, the order krew/flux/zip readers see.
    mapfile -t files < <(cd "$stagedir" && LC_ALL=C ls -A | LC_ALL=C sort)
    rm -f "$DIST_DIR/$name"
    if [ "$os" = windows ]; then
      (cd "$stagedir" && TZ=UTC zip -q -X -D -6 "$DIST_DIR/$name" "${files[@]}")
    else
      (cd "$stagedir" && LC_ALL=C tar --format=ustar --owner=0 --group=0 --numeric-owner \
        --mtime="@$EPOCH" --hard-dereference -cf - "${files[@]}") | gzip -n -6 >"$DIST_DIR/$name"
    fi
    (cd "$DIST_DIR" && sha256sum "$name" >"$name.sha256")
    log "archived $name ($(stat -c %s "$DIST_DIR/$name") bytes)"
  done
  (cd "$DIST_DIR" && LC_ALL=C sort -k2 ./*.sha256 >checksums.txt)
  rm -rf "$DIST_DIR/stage"
}

sha_of() { # os arch -> hex sum of that archive, from its .sha256 file
  local f
  f=$DIST_DIR/$(archive_name "$1" "$2").sha256
  [ -f "$f" ] || die "missing $f: run '$0 archive' first"
  cut -d' ' -f1 "$f"
}

# render TEMPLATE OUT: fill the placeholders; fail on any left over.
render() {
  local tmpl=$1 out=$2 p os arch up
  local args=(-e "s|@VERSION@|$VERSION|g" -e "s|@SEMVER@|${VERSION#v}|g" -e "s|@BASE_URL@|$RELEASE_BASE_URL|g")
  for p in $PLATFORMS; do
    os=${p%/*} arch=${p#*/}
    up=$(echo "${os}_$arch" | tr '[:lower:]' '[:upper:]')
    args+=(-e "s|@SHA256_${up}@|$(sha_of "$os" "$arch")|g")
  done
  mkdir -p "$(dirname "$out")"
  # Drop the template's leading comment block (it says "TEMPLATE").
  sed "${args[@]}" "$tmpl" | sed '1,/^apiVersion:/{/^#/d}' | drop_unbuilt >"$out.tmp"
  if grep -n '@[A-Z0-9_]*@' "$out.tmp" >&2; then
    rm -f "$out.tmp"
    die "$tmpl: placeholders left (is every platform of the template in PLATFORMS?)"
  fi
  mv "$out.tmp" "$out"
  log "rendered $out"
}

# drop_unbuilt (a filter): with PARTIAL_MANIFESTS=1, drop each item of a
# `platforms:` list that still holds a checksum placeholder, i.e. a platform
# this run did not build. Items are told apart by indentation alone, which
# both templates' block style allows (krew: `  - selector:`, flux:
# `      - os:`; an item's own lines are indented deeper).
drop_unbuilt() {
  if [ "${PARTIAL_MANIFESTS:-}" != 1 ]; then
    cat
    return
  fi
  awk '
    function flush() { if (item !~ /@SHA256_[A-Z0-9_]+@/) printf "%s", item; item = "" }
    {
      match($0, /^ */); ind = RLENGTH
      if (inlist) {
        if ($0 ~ /^ *- / && (itemind < 0 || ind == itemind)) { flush(); itemind = ind; item = $0 "\n"; next }
        if ($0 ~ /^ *$/ || (itemind >= 0 && ind > itemind)) { item = item $0 "\n"; next }
        flush(); inlist = 0
      }
      print
      if ($0 ~ /^ *platforms: *$/) { inlist = 1; itemind = -1 }
    }
    END { flush() }'
}

manifests() {
  render krew-manifests/drift.yaml "$DIST_DIR/krew/drift.yaml"
  render krew-manifests/flux-plugin-drift.yaml "$DIST_DIR/flux/drift.yaml"
}

verify() {
  local p os arch name sum bad=0
  for p in $PLATFORMS; do
    os=${p%/*} arch=${p#*/}
    name=$(archive_name "$os" "$arch")
    sum=$(sha256sum "$DIST_DIR/$name" | cut -d' ' -f1)
    [ "$sum" = "$(sha_of "$os" "$arch")" ] || { log "$name.sha256 does not match the archive"; bad=1; }
    grep -q "^    sha256: $sum\$" "$DIST_DIR/krew/drift.yaml" || { log "krew manifest lacks $name's sha256 $sum"; bad=1; }
    grep -q "^        checksum: sha256:$sum\$" "$DIST_DIR/flux/drift.yaml" || { log "flux manifest lacks $name's sha256 $sum"; bad=1; }
  done
  [ $bad = 0 ] || die "verification failed"
  log "verified: $(echo "$PLATFORMS" | wc -w) archives match their .sha256 files and both manifests"
}

[ $# -gt 0 ] || set -- all
log "version $VERSION, commit $COMMIT, build date $BUILD_DATE, into $DIST_DIR"
for step in "$@"; do
  case $step in
  build | archive | manifests | verify) "$step" ;;
  all) build; archive; manifests; verify ;;
  *) die "unknown step $step (build, archive, manifests, verify, all)" ;;
  esac
done
