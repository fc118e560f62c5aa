#!/usr/bin/env bash
# Differential conformance (issue 30): `make differential ENGINE=flux SEED=N
# COUNT=M` (ENGINE=flux-helm: HelmRelease scenarios, issue 31) draws M scenarios from seeds N..N+M-1, runs them on the real
# controllers (e2e/differential_flux_test.go; ENGINE=argocd:
# e2e/differential_argo_test.go on a real Argo CD) and ends with one line:
#   differential ENGINE seed N: cases M, wrong W, missed X, noise Y
# exit 1 when W, X or Y is not 0, 2 when the harness itself failed.
#
# The Flux lab of this run has its own API server ports (16493/12431), and
# so has the Argo CD of ENGINE=argocd (16543/12481; redis, repo-server and
# argocd-server take free ports), so each runs beside the e2e suites (Flux
# lab 16453/12391, Argo CD 16463/12401, fleet 16473/12411 and 16483/12421,
# bench-serve 16503/12441, bench-reconcile-load 16513/12451, serve settings
# 16523/12461, bench-reconcile-load-argocd 16533/12471) and beside each
# other (each holds its own lock).
#
# MINIMIZE=1 minimizes every failing case; SAVE_ISSUE=31 (with MINIMIZE)
# saves each minimized failing case under e2e/testdata/differential/ marked
# with that issue. `make differential-save ENGINE=flux SEED=N ISSUE=31`
# does both for one seed. PARALLEL (default 6) bounds concurrent cases;
# REPORT=path keeps the per-mode/object/writer tables; SHOW=1 logs the
# tool's output and the object before and after the reconciles (one seed).
# PORTS=API/ETCD and LOCK=path run on other API server ports under another
# lock (the CI slice, hack/differential-ci.sh, runs its Argo CD beside a
# developer's); FINDINGS=path keeps the counted findings, one
# "SEED MODE PATH CLASS" line each. SEEDS="20002 20028" (ENGINE=flux, flux-helm or argocd)
# runs those seeds in place of SEED..SEED+COUNT-1, on one Argo CD start.
set -euo pipefail
cd "$(dirname "$0")/.."

engine=${ENGINE:-flux}
seed=${SEED:-1}
count=${COUNT:-20}
for v in "$seed" "$count" "${PARALLEL:-6}"; do
  case $v in ''|*[!0-9]*) echo "differential: SEED, COUNT and PARALLEL must be non-negative integers (got '$v')" >&2; exit 2;; esac
done
case $engine in
  flux) run=TestDifferentialFlux file=differential_run_test.go lock=/tmp/drift-differential.lock
    ports=(DRIFT_E2E_FLUX_LAB_PORTS=16493/12431)
    timeout_min=$(( 20 + count / 4 )) ;;
  # The HelmRelease backend (issue 31): the same lab, helm-controller
  # releasing the object (e2e/differential_flux_helm_test.go).
  flux-helm) run=TestDifferentialFluxHelm file=differential_run_test.go lock=/tmp/drift-differential.lock
    ports=(DRIFT_E2E_FLUX_LAB_PORTS=16493/12431)
    timeout_min=$(( 20 + count / 4 )) ;;
  # Untouched objects of every corpus entry (KINDS=id,id: those only),
  # both Flux owners (COUNT and SEED unused): no drift, exit 0, every mode.
  untouched) run=TestDifferentialUntouched file=differential_flux_helm_test.go lock=/tmp/drift-differential.lock
    ports=(DRIFT_E2E_FLUX_LAB_PORTS=16493/12431)
    timeout_min=30 ;;
  # An Argo CD case takes longer (first sync, hard refreshes, self-heal).
  argocd) run=TestDifferentialArgo file=differential_run_test.go lock=/tmp/drift-differential-argo.lock
    ports=(DRIFT_E2E_ARGOCD_PORTS=16543/12481)
    timeout_min=$(( 20 + count / 2 )) ;;
  *) echo "differential: ENGINE=$engine: want flux, flux-helm, untouched or argocd" >&2; exit 2 ;;
esac
if [ -n "${PORTS:-}" ]; then
  case $PORTS in
    [0-9]*/[0-9]*) ports=("${ports[0]%%=*}=$PORTS") ;;
    *) echo "differential: PORTS=$PORTS: want API/ETCD (e.g. 16583/12521)" >&2; exit 2 ;;
  esac
fi
lock=${LOCK:-$lock}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=${LOG:-/tmp/differential-$engine-seed-$seed-count-$count.log}

set +e
env "${ports[@]}" \
DRIFT_DIFFERENTIAL_SEED=$seed DRIFT_DIFFERENTIAL_COUNT=$count DRIFT_DIFFERENTIAL_SHOW=${SHOW:-} \
DRIFT_DIFFERENTIAL_UNTOUCHED=$([ "$engine" = untouched ] && echo "${KINDS:-1}") \
"DRIFT_DIFFERENTIAL_SEEDS=${SEEDS:-}" \
DRIFT_DIFFERENTIAL_MINIMIZE=${MINIMIZE:-} DRIFT_DIFFERENTIAL_SAVE_ISSUE=${SAVE_ISSUE:-} \
DRIFT_DIFFERENTIAL_SUMMARY=$work/summary DRIFT_DIFFERENTIAL_REPORT=${REPORT:-$work/report} \
DRIFT_DIFFERENTIAL_FINDINGS=${FINDINGS:-$work/findings} \
  flock -o "$lock" \
  ${GO:-go} test -tags e2e -count=1 -timeout "${timeout_min}m" -parallel "${PARALLEL:-6}" -run "^$run\$" -v ./e2e/ >"$log" 2>&1
set -e

if [ ! -s "$work/summary" ]; then
  echo "differential: the run ended without a summary (harness failure); last lines of $log:" >&2
  tail -40 "$log" >&2
  exit 2
fi
# The failures, each with its seed, then the one summary line.
grep -E "$file"':[0-9]+: seed [0-9]+:' "$log" | sed 's/^ *//' >&2 || true
grep -E 'minimized:|saved ' "$log" | sed 's/^ *//' >&2 || true
echo "log: $log" >&2
line=$(cat "$work/summary")
echo "$line"
case $line in
  *"wrong 0, missed 0, noise 0") exit 0 ;;
  *) exit 1 ;;
esac
