#!/usr/bin/env bash
# The CI slice of the differential suite (issue 30): a fixed seed range per
# engine, run on the real controllers, compared with a reviewed baseline of
# known findings per engine (e2e/testdata/differential/ci-known-ENGINE.txt).
#
#   hack/differential-ci.sh            check (make differential-ci)
#   hack/differential-ci.sh baseline   regenerate the baselines
#                                      (make differential-ci-baseline)
#   hack/differential-ci.sh --self-test  prove the comparison catches a new
#                                      finding and a stale line
#
# Both engines run in parallel, each on API server ports and a lock of its
# own: Flux on the differential lab's (16493/12431,
# /tmp/drift-differential.lock), Argo CD on the CI slice's (16583/12521,
# /tmp/drift-differential-argo-ci.lock), so the slice runs beside a
# developer's `make differential ENGINE=argocd` (ARGO_CI_PORTS=API/ETCD
# moves it). ENGINES="flux" runs one.
#
# check fails (exit 1) on a counted finding (wrong, missed, noise: the
# summary line's) that the baseline does not list, and on a baseline line
# that did not occur (stale: the defect is fixed, drop the line), and
# prints each engine's summary line and the comparison. A line marked
# `flaky` may or may not occur (a run is not bit-for-bit deterministic
# under load: controllers' timing); how many of them occurred is shown.
#
# A baseline line: SEED MODE PATH FINDING CLASS [flaky], e.g.
#   20007 file /spec/replicas wrong R7
# CLASS names the failure class of docs/verdicts.md ("unclassified" until
# reviewed; shown, never hidden). baseline runs the slice RUNS times
# (default 2): a finding of every run is a plain line, one of some runs a
# flaky line; the class of a line already in the baseline is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

first_seed=20000
count=${CI_COUNT:-120}
engines=${ENGINES:-flux argocd}
dir=e2e/testdata/differential

# compare BASELINE FINDINGS: prints the comparison, exit 1 on a new
# finding or a stale line.
compare() {
  awk -v base="$1" '
    FNR == NR {
      if ($0 ~ /^[ \t]*(#|$)/) next
      key = $1 " " $2 " " $3 " " $4
      known[key] = $5; flaky[key] = ($6 == "flaky")
      next
    }
    { seen[$1 " " $2 " " $3 " " $4] = 1 }
    END {
      bad = 0
      for (k in seen) if (!(k in known)) { print "  new:   " k; nnew++; bad = 1 }
      for (k in known) {
        if (flaky[k]) { nflaky++; if (k in seen) fseen++; continue }
        if (!(k in seen)) { print "  stale: " k " " known[k] " (listed, did not occur: drop the line)"; nstale++; bad = 1 }
        else nknown++
        if (known[k] == "unclassified") nun++
      }
      printf "  known %d (unclassified %d), flaky %d (occurred %d), new %d, stale %d\n", nknown, nun, nflaky, fseen, nnew, nstale
      exit bad
    }' "$1" "$2"
}

# merge OLD RUN...: the baseline lines of the runs' findings (see above).
merge() {
  local old=$1; shift
  awk -v runs=$# '
    FILENAME == ARGV[1] {
      if ($0 !~ /^[ \t]*(#|$)/) class[$1 " " $2 " " $3 " " $4] = $5
      next
    }
    FNR == 1 { run++ }
    !((run, $0) in got) { got[run, $0] = 1; n[$0]++ }
    END {
      for (k in n) {
        c = (k in class) ? class[k] : "unclassified"
        print k " " c (n[k] < runs ? " flaky" : "")
      }
    }' "$old" "$@" | sort -n -k1,1 -k2
}

# unfinished LOG: what the failed attempts of `go test -v` LOG printed
# (lines under their "=== RUN/CONT/NAME" headers, then their "--- FAIL").
unfinished() {
  awk '
    FNR == NR { if (match($0, /--- FAIL: [^ ]*\/attempt-[0-9]+/)) failed[substr($0, RSTART + 10, RLENGTH - 10)] = 1; next }
    /^=== (RUN|CONT|NAME|PAUSE)/ { cur = $3; next }
    /--- (FAIL|PASS|SKIP):/ { cur = ""; if (match($0, /--- FAIL: [^ ]*\/attempt-[0-9]+/)) print; next }
    cur in failed { print cur ": " $0 }' "$1" "$1"
}

# run ENGINE OUTDIR TAG: one slice run of ENGINE; its findings in
# OUTDIR/ENGINE-TAG.findings, its summary line in OUTDIR/ENGINE-TAG.line.
run() {
  local engine=$1 out=$2 tag=$3 extra=() rc=0
  if [ "$engine" = argocd ]; then
    extra=(PORTS="${ARGO_CI_PORTS:-16583/12521}" LOCK=/tmp/drift-differential-argo-ci.lock)
  fi
  env "${extra[@]}" ENGINE="$engine" SEED=$first_seed COUNT="$count" \
    FINDINGS="$out/$engine-$tag.findings" LOG="/tmp/differential-ci-$engine-$tag.log" \
    hack/differential.sh >"$out/$engine-$tag.line" 2>"$out/$engine-$tag.err" || rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "differential-ci: $engine: the harness failed (exit $rc):" >&2
    tail -20 "$out/$engine-$tag.err" >&2
    return 2
  fi
  touch "$out/$engine-$tag.findings"
  # A case the harness could not judge (a controller that did not answer
  # in time on a loaded machine) has no findings: it must not pass as one
  # that agreed.
  if ! grep -q "cases $count," "$out/$engine-$tag.line"; then
    echo "differential-ci: $engine: not every case was judged: $(cat "$out/$engine-$tag.line") (want cases $count; log /tmp/differential-ci-$engine-$tag.log)" >&2
    # The log stays on the machine that ran it: say here why each case
    # was not finished (its harness failure and the test's failure lines).
    unfinished "/tmp/differential-ci-$engine-$tag.log" | head -60 >&2
    return 2
  fi
}

self_test() {
  local t; t=$(mktemp -d); trap 'rm -rf "$t"' RETURN
  printf '# c\n1 file /a wrong R1\n2 file /b noise R2 flaky\n' >"$t/base"
  printf '1 file /a wrong\n' >"$t/f1"
  compare "$t/base" "$t/f1" >/dev/null || { echo "self-test: a matching run failed" >&2; return 1; }
  printf '1 file /a wrong\n3 server-dry-run /c missed\n' >"$t/f2"
  if compare "$t/base" "$t/f2" >/dev/null; then echo "self-test: a new finding passed" >&2; return 1; fi
  : >"$t/f3"
  if compare "$t/base" "$t/f3" >/dev/null; then echo "self-test: a stale line passed" >&2; return 1; fi
  printf '1 file /a wrong\n2 file /b noise\n' >"$t/r1"
  printf '1 file /a wrong\n' >"$t/r2"
  local got; got=$(merge "$t/base" "$t/r1" "$t/r2")
  [ "$got" = $'1 file /a wrong R1\n2 file /b noise R2 flaky' ] || { echo "self-test: merge gave:"$'\n'"$got" >&2; return 1; }
  echo "differential-ci self-test: ok"
}

case ${1:-check} in
  --self-test) self_test; exit ;;
  check|baseline) ;;
  *) echo "usage: hack/differential-ci.sh [check|baseline|--self-test]" >&2; exit 2 ;;
esac
case $count in ''|*[!0-9]*) echo "differential-ci: CI_COUNT must be a number (got '$count')" >&2; exit 2;; esac

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)
pids=()
for e in $engines; do
  case $e in flux|argocd) ;; *) echo "differential-ci: engine $e: want flux or argocd" >&2; exit 2;; esac
  if [ "${1:-check}" = baseline ]; then
    ( for i in $(seq 1 "${RUNS:-2}"); do run "$e" "$out" "$i" || exit $?; done ) &
  else
    run "$e" "$out" 1 &
  fi
  pids+=($!)
done
harness=0
for p in "${pids[@]}"; do wait "$p" || harness=1; done
[ "$harness" = 0 ] || exit 2

status=0
for e in $engines; do
  base=$dir/ci-known-$e.txt
  if [ "${1:-check}" = baseline ]; then
    [ -f "$base" ] || : >"$base"
    merged=$(merge "$base" "$out/$e"-*.findings)
    {
      echo "# Known findings of the differential CI slice (make differential-ci), engine $e,"
      echo "# seeds $first_seed-$((first_seed + count - 1)); regenerated by make differential-ci-baseline"
      echo "# (${RUNS:-2} runs; docs/verdicts.md). SEED MODE PATH FINDING CLASS [flaky]: review"
      echo "# each line and name its class (docs/verdicts.md) in place of \"unclassified\"."
      [ -z "$merged" ] || echo "$merged"
    } >"$base"
    cat "$out/$e"-*.line
    echo "  wrote $base: $(grep -vc '^#' "$base" || true) lines, $(grep -c ' flaky$' "$base" || true) flaky"
  else
    cat "$out/$e-1.line"
    if [ ! -f "$base" ]; then
      echo "differential-ci: $base missing: make differential-ci-baseline" >&2
      status=1
      continue
    fi
    compare "$base" "$out/$e-1.findings" || status=1
  fi
done
echo "differential-ci: $engines, $count cases each, in $(( $(date +%s) - start )) s"
exit $status
