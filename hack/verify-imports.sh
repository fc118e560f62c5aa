#!/usr/bin/env bash
# The package rules of docs/architecture.md (issue 14), checked with
# `go list` (no tool beyond Go), run by `make verify`:
#
#   1. internal/cli never imports an engine package (it reaches engines only
#      through the engine-neutral pipeline and the registry);
#   2. engines never import each other, directly or through another package;
#   3. internal/model imports no engine, directly or transitively;
#   4. nothing imports internal/cli except plugins/ (the binaries' mains).
#
# Engines are the packages under the ENGINES roots below (a new engine adds
# its directory there; a missing root is skipped). Test files count (an
# engine's test importing another engine couples them just the same), and so
# do the e2e files (-tags e2e).
#
# Exceptions live in hack/verify-imports.allow, one "IMPORTER IMPORTED" pair
# a line (paths relative to the module, # comments). An allowed pair that no
# longer occurs is an error too, so the file can only shrink.
#
#   hack/verify-imports.sh [MODULE_DIR]   check (default: this repository)
#   hack/verify-imports.sh --self-test    prove each rule fails on a fake
#                                         module that breaks it
set -euo pipefail

ENGINES=(internal/argocd internal/flux internal/enginetest)

here=$(cd "$(dirname "$0")" && pwd)

# check DIR ALLOWFILE: print violations, exit 1 when there is any.
check() {
  local dir=$1 allow=$2 mod edges deps engines_present=() e
  cd "$dir"
  mod=$(GOFLAGS= go list -m)
  for e in "${ENGINES[@]}"; do
    [ -d "$e" ] && engines_present+=("$e")
  done

  # Direct imports, production and test: "IMPORTER IMPORTED", module-relative.
  edges=$(GOFLAGS= go list -e -tags e2e \
    -f '{{$p := .ImportPath}}{{range .Imports}}{{$p}} {{.}}{{"\n"}}{{end}}{{range .TestImports}}{{$p}} {{.}}{{"\n"}}{{end}}{{range .XTestImports}}{{$p}} {{.}}{{"\n"}}{{end}}' ./... |
    awk -v m="$mod/" 'index($1, m) == 1 && index($2, m) == 1 { print substr($1, length(m) + 1), substr($2, length(m) + 1) }' |
    sort -u)
  # Transitive production imports of the model and of each engine.
  deps=""
  local roots=()
  [ -d internal/model ] && roots+=(./internal/model/...)
  for e in "${engines_present[@]}"; do roots+=("./$e/..."); done
  if [ ${#roots[@]} -gt 0 ]; then
    deps=$(GOFLAGS= go list -e -tags e2e -f '{{$p := .ImportPath}}{{range .Deps}}{{$p}} {{.}}{{"\n"}}{{end}}' "${roots[@]}" |
      awk -v m="$mod/" 'index($1, m) == 1 && index($2, m) == 1 { print substr($1, length(m) + 1), substr($2, length(m) + 1) }' |
      sort -u)
  fi

  # engine_of PKG: the engine root PKG lies under, or nothing.
  engine_of() {
    local p=$1 e
    for e in "${engines_present[@]}"; do
      if [ "$p" = "$e" ] || [[ $p == "$e"/* ]]; then echo "$e"; return; fi
    done
  }
  under() { [ "$1" = "$2" ] || [[ $1 == "$2"/* ]]; }

  local violations=() from to ef et how
  while read -r from to how; do
    [ -n "$from" ] || continue
    how=${how:+ $how}
    et=$(engine_of "$to")
    ef=$(engine_of "$from")
    if under "$from" internal/cli && [ -n "$et" ]; then
      violations+=("$from $to|rule 1: internal/cli imports engine $et$how")
    fi
    if [ -n "$ef" ] && [ -n "$et" ] && [ "$ef" != "$et" ]; then
      violations+=("$from $to|rule 2: engine $ef imports engine $et$how")
    fi
    if under "$from" internal/model && [ -n "$et" ]; then
      violations+=("$from $to|rule 3: internal/model imports engine $et$how")
    fi
    if under "$to" internal/cli && ! under "$from" internal/cli && ! under "$from" plugins; then
      violations+=("$from $to|rule 4: only plugins/ may import internal/cli$how")
    fi
  done < <(
    printf '%s\n' "$edges"
    # The transitive pairs (their roots are the model and the engines) add
    # the indirect imports of rules 2 and 3.
    [ -z "$deps" ] || printf '%s\n' "$deps" | while read -r f t; do
      grep -qxF "$f $t" <<<"$edges" || echo "$f $t (indirect)"
    done
  )

  local allowed=() line
  if [ -f "$allow" ]; then
    while IFS= read -r line; do
      line=${line%%#*}
      read -r from to _ <<<"$line" || true
      [ -n "${from:-}" ] && [ -n "${to:-}" ] && allowed+=("$from $to")
    done <"$allow"
  fi

  local bad=0 v pair used=()
  for v in "${violations[@]}"; do
    pair=${v%%|*}
    if printf '%s\n' "${allowed[@]}" | grep -qxF "$pair"; then
      used+=("$pair")
      continue
    fi
    echo "verify-imports: $(printf '%s' "$pair" | sed 's/ / -> /'): ${v#*|}" >&2
    bad=1
  done
  local a
  for a in "${allowed[@]}"; do
    if ! printf '%s\n' "${used[@]}" | grep -qxF "$a"; then
      echo "verify-imports: $allow allows \"$a\", which no longer occurs: delete the line" >&2
      bad=1
    fi
  done
  return $bad
}

# self_test: a fake module with the real module path, first clean, then
# broken one rule at a time; check must pass on the first and fail on each.
self_test() {
  local tmp mod
  mod=$(cd "$here/.." && GOFLAGS= go list -m)
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  pkg() { # pkg DIR [IMPORT...]: a package in DIR importing the others.
    local d=$1 i
    shift
    mkdir -p "$tmp/$d"
    {
      echo "package $(basename "$d" | tr -d -)"
      for i in "$@"; do echo "import _ \"$mod/$i\""; done
    } >"$tmp/$d/x.go"
  }
  printf 'module %s\n\ngo 1.22\n' "$mod" >"$tmp/go.mod"
  pkg internal/model
  pkg internal/argocd internal/model
  pkg internal/flux internal/model
  pkg internal/drift internal/model
  pkg internal/cli internal/drift
  pkg plugins/kubectl-drift internal/cli internal/argocd internal/flux
  : >"$tmp/allow"

  if ! (check "$tmp" "$tmp/allow") 2>"$tmp/log"; then
    cat "$tmp/log" >&2
    echo "verify-imports self-test: the clean fake module failed" >&2
    return 1
  fi
  # expect_fail NAME RULE: check must fail and name RULE.
  expect_fail() {
    if (check "$tmp" "$tmp/allow") 2>"$tmp/log"; then
      echo "verify-imports self-test: $1 passed; it must fail" >&2
      return 1
    fi
    if ! grep -q "$2" "$tmp/log"; then
      cat "$tmp/log" >&2
      echo "verify-imports self-test: $1 failed without naming $2" >&2
      return 1
    fi
  }
  pkg internal/cli internal/drift internal/argocd
  expect_fail "cli importing an engine" "rule 1"
  echo "internal/cli internal/argocd # the pipeline moves out" >"$tmp/allow"
  (check "$tmp" "$tmp/allow") 2>"$tmp/log" || {
    cat "$tmp/log" >&2
    echo "verify-imports self-test: an allowed import failed" >&2
    return 1
  }
  pkg internal/cli internal/drift
  expect_fail "a stale allowlist line" "no longer occurs"
  : >"$tmp/allow"
  mkdir -p "$tmp/internal/flux"
  printf 'package flux\n\nimport (\n\t"testing"\n\n\t_ "%s/internal/argocd/sub"\n)\n\nfunc TestX(t *testing.T) {}\n' "$mod" >"$tmp/internal/flux/x_test.go"
  pkg internal/argocd/sub internal/model
  expect_fail "an engine's test importing another engine's subpackage" "rule 2"
  rm "$tmp/internal/flux/x_test.go"
  pkg internal/flux internal/model internal/drift
  pkg internal/drift internal/model internal/argocd
  expect_fail "an engine importing another through a neutral package" "rule 2"
  pkg internal/drift internal/model
  pkg internal/flux internal/model
  pkg internal/model internal/redact
  pkg internal/redact internal/flux
  expect_fail "the model importing an engine indirectly" "rule 3"
  pkg internal/redact
  pkg internal/model
  pkg internal/scan internal/cli
  expect_fail "a non-plugin package importing internal/cli" "rule 4"
  rm -r "$tmp/internal/scan"
  (check "$tmp" "$tmp/allow") 2>"$tmp/log" || {
    cat "$tmp/log" >&2
    echo "verify-imports self-test: the repaired fake module failed" >&2
    return 1
  }
  echo "verify-imports self-test: 6 violations caught, clean and allowed cases pass"
}

case ${1:-} in
--self-test) self_test ;;
*)
  dir=${1:-$here/..}
  if check "$dir" "$here/verify-imports.allow"; then
    echo "verify-imports: ok"
  else
    echo "verify-imports: package rules broken (see hack/verify-imports.sh's header)" >&2
    exit 1
  fi
  ;;
esac
