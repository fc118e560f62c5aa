#!/usr/bin/env bash
# docs/architecture.md's package map must be the code's: every Go package
# of the module has a row, every row names a package that exists, and the
# row's "Imports" column lists exactly the module packages the package's
# production files import (test files are left out: tests may reach
# further, e.g. the shipped engines). Run by `make verify`.
#
# The map is the table under "## Package map": column 1 holds one or more
# backticked package paths (module-relative, e.g. `internal/drift`),
# column 3 the imports as backticked paths relative to internal/ (`model`,
# `model/jsonpointer`; `cli` for internal/cli), or "—" for none. A row with
# several packages states the imports of each of them.
#
#   hack/verify-architecture.sh [MODULE_DIR]   check (default: this repository)
#   hack/verify-architecture.sh --self-test    prove each failure is caught
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

# table DOC: "PKG IMPORT,IMPORT,..." per package row of the map (imports as
# module-relative paths, sorted; "-" for none).
table() {
  awk '
    /^## Package map/ { inmap = 1; next }
    inmap && /^## / { inmap = 0 }
    inmap && /^\| *`/ {
      n = split($0, col, "|")
      pkgs = col[2]; imps = col[4]
      list = ""
      while (match(imps, /`[^`]+`/)) {
        p = substr(imps, RSTART + 1, RLENGTH - 2)
        imps = substr(imps, RSTART + RLENGTH)
        list = list (list == "" ? "" : ",") "internal/" p
      }
      while (match(pkgs, /`[^`]+`/)) {
        p = substr(pkgs, RSTART + 1, RLENGTH - 2)
        pkgs = substr(pkgs, RSTART + RLENGTH)
        print p "\t" list
      }
    }
  ' "$1" | while IFS=$'\t' read -r pkg list; do
    printf '%s %s\n' "$pkg" "$(tr , '\n' <<<"$list" | sort -u | paste -sd, -)"
  done | sed 's/ $/ -/' | sort
}

# code DIR: the same lines from `go list` (production imports only).
code() {
  local mod
  mod=$(cd "$1" && GOFLAGS= go list -m)
  (cd "$1" && GOFLAGS= go list -e -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' ./...) |
    awk -v m="$mod" '{
      list = ""
      for (i = 2; i <= NF; i++)
        if (index($i, m "/") == 1) list = list (list == "" ? "" : ",") substr($i, length(m) + 2)
      print substr($1, length(m) + 2), (list == "" ? "-" : list)
    }' | while read -r pkg list; do
      printf '%s %s\n' "$pkg" "$(tr , '\n' <<<"$list" | grep -v '^-$' | sort -u | paste -sd, -)"
    done | sed 's/ $/ -/' | sort
}

check() {
  local dir=$1 doc=$1/docs/architecture.md bad=0 pkg want got
  local documented actual
  documented=$(table "$doc")
  actual=$(code "$dir")
  while read -r pkg got; do
    want=$(awk -v p="$pkg" '$1 == p { print $2 }' <<<"$documented")
    if [ -z "$want" ]; then
      echo "verify-architecture: package $pkg has no row in docs/architecture.md's package map" >&2
      bad=1
    elif [ "$want" != "$got" ]; then
      echo "verify-architecture: $pkg imports $got; docs/architecture.md says $want" >&2
      bad=1
    fi
  done <<<"$actual"
  while read -r pkg _; do
    [ -n "$pkg" ] || continue
    if ! awk -v p="$pkg" '$1 == p { f = 1 } END { exit !f }' <<<"$actual"; then
      echo "verify-architecture: docs/architecture.md's package map names $pkg, which is not a package" >&2
      bad=1
    fi
  done <<<"$documented"
  return $bad
}

self_test() {
  local tmp mod
  mod=$(cd "$here/.." && GOFLAGS= go list -m)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  pkg() {
    local d=$1 i
    shift
    mkdir -p "$tmp/$d"
    {
      echo "package $(basename "$d" | tr -d -)"
      for i in "$@"; do echo "import _ \"$mod/$i\""; done
    } >"$tmp/$d/x.go"
  }
  doc() {
    mkdir -p "$tmp/docs"
    {
      echo "# Architecture"; echo; echo "## Package map"; echo
      echo "| Package | Role | Imports |"; echo "|---|---|---|"
      printf '%s\n' "$@"
      echo; echo "## Next"; echo "| \`internal/ghost\` | outside the map | — |"
    } >"$tmp/docs/architecture.md"
  }
  printf 'module %s\n\ngo 1.22\n' "$mod" >"$tmp/go.mod"
  pkg internal/model
  pkg internal/drift internal/model
  pkg plugins/a internal/drift
  pkg plugins/b internal/drift
  doc '| `internal/model` | vocabulary | — |' '| `internal/drift` | pipeline | `model` |' \
    '| `plugins/a`, `plugins/b` | mains | `drift` |'
  if ! (check "$tmp") 2>"$tmp/log"; then
    cat "$tmp/log" >&2
    echo "verify-architecture self-test: the true map failed" >&2
    return 1
  fi
  expect_fail() {
    if (check "$tmp") 2>"$tmp/log"; then
      echo "verify-architecture self-test: $1 passed; it must fail" >&2
      return 1
    fi
    if ! grep -q "$2" "$tmp/log"; then
      cat "$tmp/log" >&2
      echo "verify-architecture self-test: $1 failed without saying \"$2\"" >&2
      return 1
    fi
  }
  pkg internal/fresh internal/model
  expect_fail "a package missing from the map" "internal/fresh has no row"
  rm -r "$tmp/internal/fresh"
  pkg internal/drift internal/model plugins/a
  expect_fail "an import the map does not list" "internal/drift imports"
  pkg internal/drift
  expect_fail "an import the map lists that is gone" "docs/architecture.md says internal/model"
  pkg internal/drift internal/model
  rm -r "$tmp/plugins/b"
  expect_fail "a row naming no package" "names plugins/b, which is not a package"
  echo "verify-architecture self-test: 4 mismatches caught, the true map passes"
}

case ${1:-} in
--self-test) self_test ;;
*)
  self_test >/dev/null
  check "${1:-$here/..}"
  echo "verify-architecture: docs/architecture.md's package map matches the code"
  ;;
esac
