#!/usr/bin/env bash
# Issue 35's serve sync ratio measured in one session: the initial sync CPU
# of `kubectl drift serve` at 100k objects against that at 10k, the two
# sizes interleaved (10k, 100k, 10k, 100k, ...) so that both see the same
# contention. Each size has its own kept control plane (hack/bench-serve.sh
# with BENCH_KEEP=1): BENCH_SMALL (default 10000@16573/12501) and
# BENCH_LARGE (default 100000@16683/12621), SIZE@API_PORT/ETCD_PORT. A size
# not loaded yet is loaded first (a 100k load takes ~15-25 minutes; load it
# ahead with BENCH_KEEP=1 BENCH_LOAD_ONLY=1 BENCH_SIZES=100000
# BENCH_SERVE_PORTS=... hack/bench-serve.sh). BENCH_ROUNDS (default 3)
# rounds; BENCH_WINDOW (default 70) seconds at rest after each sync, over
# which bench-serve.sh counts serve's requests (audit log) and reads its
# RSS. The first round also measures serve over an empty namespace (the
# floor of bytes per object).
#
# Prints every run's RESULT line (hack/bench-serve.sh), each round's ratio
# and the median ratio against the target (<= 11). The control planes stay
# up: stop them with `DRIFT_CLUSTER_DIR=$TMPDIR/bench-serve-keep-PORT/cluster
# DRIFT_APISERVER_PORT=PORT DRIFT_ETCD_PORT=ETCD hack/cluster.sh stop`.
# Run it under `flock -o /tmp/drift-bench.lock` when others share the
# machine.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SMALL=${BENCH_SMALL:-10000@16573/12501}
LARGE=${BENCH_LARGE:-100000@16683/12621}
ROUNDS=${BENCH_ROUNDS:-3}
export BENCH_WINDOW=${BENCH_WINDOW:-70}

log() { printf '[bench-serve-sync] %s\n' "$*" >&2; }

OUT=$(mktemp "${TMPDIR:-/tmp}/bench-serve-sync.XXXXXX")
trap 'rm -f "$OUT"' EXIT

# run SIZE@PORTS FLOOR: one bench-serve.sh run on the kept load; its
# output goes to stdout and its RESULT lines to $OUT.
run() {
  local n=${1%@*} ports=${1#*@} floor=$2
  BENCH_KEEP=1 BENCH_SIZES=$n BENCH_SERVE_PORTS=$ports BENCH_FLOOR=$floor BENCH_INPROCESS=0 \
    "$ROOT/hack/bench-serve.sh" | tee -a "$OUT"
}

echo "serve sync ratio: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, kubectl-drift $(git -C "$ROOT" rev-parse --short HEAD), $ROUNDS rounds of $SMALL then $LARGE"
for r in $(seq 1 "$ROUNDS"); do
  floor=0
  [ "$r" -gt 1 ] || floor=1
  log "round $r: ${SMALL%@*} objects"
  run "$SMALL" "$floor"
  log "round $r: ${LARGE%@*} objects"
  run "$LARGE" 0
done

echo "== sync CPU by round (s; load average at sync), ratio large/small"
awk -v s="${SMALL%@*}" -v l="${LARGE%@*}" '
  $1 == "RESULT" && $3 == s { sc[++i] = $10; sl[i] = $12 }
  $1 == "RESULT" && $3 == l { lc[++j] = $10; ll[j] = $12; hwm[j] = $5; rss[j] = $6; rpm[j] = $11 }
  END {
    for (k = 1; k <= j && k <= i; k++) {
      r[k] = lc[k] / sc[k]
      printf "  round %d: %s: %.2f s (load %s), %s: %.2f s (load %s; peak RSS %.1f MiB, RSS %.1f MiB, %s req/min at rest): ratio %.2f\n", k, s, sc[k], sl[k], l, lc[k], ll[k], hwm[k] / 1024, rss[k] / 1024, rpm[k], r[k]
    }
    n = k - 1
    for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) if (r[b] < r[a]) { t = r[a]; r[a] = r[b]; r[b] = t }
    m = (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
    printf "  median ratio over %d rounds: %.2f (target <= 11: %s)\n", n, m, (m <= 11) ? "met" : "MISSED"
  }' "$OUT"
