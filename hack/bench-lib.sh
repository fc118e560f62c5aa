# shellcheck shell=bash
# Shared by the hack/bench-*.sh scripts (sourced, not run):
#
#   bench_namespaces             bench-1..bench-$NSCOUNT
#   bench_gen NS COUNT WHICH     COUNT/2 Deployments + COUNT/2 ConfigMaps (YAML)
#   bench_objects NS N           N/2 ConfigMaps and N/2 Deployments in NS (YAML),
#                                the reconcile-load benchmarks' Git content
#   bench_load N                 load N objects with real server-side applies
#                                (kustomize-controller / argocd-controller /
#                                kubectl) into bench_namespaces, then drift ~10%
#                                with real kubectl commands
#   bench_private_cluster start|stop|env DIR PORT ETCD_PORT [POLICY LOG]
#                                a private control plane (hack/cluster.sh with
#                                its own directory and ports), with the API
#                                server's audit log when POLICY and LOG are given
#   bench_audit_policy FILE [USER...]
#                                audit policy: Metadata level (no bodies), one
#                                event per stage past RequestReceived; only
#                                USERs' requests when given
#   bench_audit_count LOG FROM TO
#                                requests received in [FROM, TO) (RFC 3339 UTC
#                                timestamps with microseconds, bench_now), one
#                                per audit ID: "AGENT VERB RESOURCE COUNT" lines,
#                                AGENT being the user agent's product (what
#                                precedes the first "/")
#   bench_audit_table LOG FROM TO SECONDS COUNT WHAT AGENTS
#                                the span's requests of the agents matching the
#                                regexp AGENTS by agent and verb (and "all"):
#                                count, per second over SECONDS, and per WHAT
#                                (COUNT of them; none when COUNT is 0)
#   bench_audit_sum LOG FROM TO AGENTS
#                                the span's requests of the agents matching AGENTS
#   bench_now                    the current time in the audit log's format
#   bench_workdir NAME           WORK (a new directory under $TMPDIR named after
#                                NAME), RUN, POLICY and AUDIT in it, PIDS; at exit
#                                the PIDS are stopped, the private cluster of
#                                RUN/$PORT/$ETCD_PORT too, and WORK is removed
#
# Callers set KUBECTL (the admin kubectl of the cluster they load), NSCOUNT
# and a log function.

bench_namespaces() { seq 1 "$NSCOUNT" | sed 's/^/bench-/'; }

# bench_gen NS COUNT: COUNT/2 Deployments and COUNT/2 ConfigMaps of realistic size.
# Object i is owned by Flux, except every 20th (Argo CD) and every 25th (no
# engine). Drift marks (label bench/drift) pick ~10% for the kubectl steps.
bench_gen() {
  awk -v ns="$1" -v n="$2" -v which="$3" '
  function owner(i) {
    if (i % 25 == 0) return "none"
    if (i % 20 == 0) return "argocd"
    return "flux"
  }
  function meta(kind, name, i, group,   o, d) {
    o = owner(i)
    printf "---\napiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n    app.kubernetes.io/name: %s\n    app.kubernetes.io/part-of: bench\n", group, kind, name, ns, name
    if (o == "flux") printf "    kustomize.toolkit.fluxcd.io/name: apps\n    kustomize.toolkit.fluxcd.io/namespace: flux-system\n"
    d = ""
    if (i % 10 == 1) d = (kind == "Deployment") ? "scale" : "label"
    if (i % 10 == 3 && i % 30 == 3) d = (kind == "Deployment") ? "image" : "annotate"
    if (d != "") printf "    bench/drift: %s\n", d
    if (o == "argocd") printf "  annotations:\n    argocd.argoproj.io/tracking-id: \"bench:%s/%s:%s/%s\"\n", (group == "v1" ? "" : "apps"), kind, ns, name
  }
  BEGIN {
    half = int(n / 2)
    for (i = 1; i <= half; i++) {
      if (which != "none" && owner(i) != which) continue
      if (which == "none" && owner(i) != "none") continue
      meta("Deployment", sprintf("web-%05d", i), i, "apps/v1")
      printf "spec:\n  replicas: 2\n  selector:\n    matchLabels: {app.kubernetes.io/name: web-%05d}\n", i
      printf "  template:\n    metadata:\n      labels: {app.kubernetes.io/name: web-%05d}\n    spec:\n      containers:\n", i
      printf "      - name: app\n        image: registry.example.com/shop/web:1.%d.0\n        ports: [{containerPort: 8080, name: http}]\n", i % 7
      printf "        env: [{name: LOG_LEVEL, value: info}, {name: REGION, value: eu-west-1}, {name: FEATURE_FLAGS, value: \"checkout,search\"}]\n"
      printf "        resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {cpu: 500m, memory: 256Mi}}\n"
      printf "        readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 10}\n"
      printf "      - name: sidecar\n        image: registry.example.com/infra/proxy:2.3.1\n        args: [--listen=:9000, --upstream=127.0.0.1:8080]\n"
      meta("ConfigMap", sprintf("cfg-%05d", i), i, "v1")
      printf "data:\n  app.properties: |\n    server.port=8080\n    cache.ttl=300\n    feature.checkout=true\n    feature.search=true\n  LOG_LEVEL: info\n  REGION: eu-west-1\n"
    }
  }'
}

# bench_apply YAML [FLAGS]: server-side apply of YAML, if there is any (small
# sizes leave some owners without objects).
bench_apply() {
  [ -n "$1" ] || return 0
  local y=$1; shift
  "$KUBECTL" apply --server-side "$@" -f - >/dev/null <<<"$y"
}

bench_load() {
  local n=$1 per=$(( $1 / NSCOUNT )) ns pids=()
  log "loading $n objects into $NSCOUNT namespaces (server-side apply as kustomize-controller / argocd-controller / kubectl)"
  local t0=$SECONDS
  for ns in $(bench_namespaces); do
    (
      "$KUBECTL" create namespace "$ns" >/dev/null
      bench_apply "$(bench_gen "$ns" "$per" flux)" --field-manager=kustomize-controller
      bench_apply "$(bench_gen "$ns" "$per" argocd)" --field-manager=argocd-controller
      bench_apply "$(bench_gen "$ns" "$per" none)"
    ) &
    pids+=($!)
  done
  local p; for p in "${pids[@]}"; do wait "$p"; done
  log "drifting ~10% with kubectl scale / set image / label / annotate / patch"
  pids=()
  for ns in $(bench_namespaces); do
    (
      "$KUBECTL" -n "$ns" scale deployment -l bench/drift=scale --replicas=5 >/dev/null
      "$KUBECTL" -n "$ns" set image deployment -l bench/drift=image app=registry.example.com/shop/web:hotfix >/dev/null
      "$KUBECTL" -n "$ns" label configmap -l bench/drift=label team=oncall >/dev/null
      "$KUBECTL" -n "$ns" annotate configmap -l bench/drift=annotate incident=INC-4711 >/dev/null
      "$KUBECTL" -n "$ns" patch configmap cfg-00002 --type=merge -p '{"data":{"LOG_LEVEL":"debug"}}' >/dev/null
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  log "loaded in $(( SECONDS - t0 ))s"
}

bench_private_cluster() {
  local action=$1 dir=$2 port=$3 etcd=$4 policy=${5:-} log=${6:-} args=""
  if [ -n "$policy" ]; then
    # Batching off: each event is written when it happens, so a count
    # right after a window sees the window's requests.
    args="--audit-policy-file=$policy --audit-log-path=$log --audit-log-format=json --audit-log-mode=blocking --audit-log-maxsize=0"
  fi
  DRIFT_CLUSTER_DIR=$dir DRIFT_APISERVER_PORT=$port DRIFT_ETCD_PORT=$etcd DRIFT_APISERVER_ARGS=$args \
    "$ROOT/hack/cluster.sh" "$action"
}

bench_audit_policy() {
  local file=$1; shift
  {
    echo "apiVersion: audit.k8s.io/v1"
    echo "kind: Policy"
    echo "omitStages: [RequestReceived]"
    echo "rules:"
    if [ $# -gt 0 ]; then
      echo "- level: Metadata"
      printf '  users: [%s]\n' "$(IFS=,; echo "$*")"
      echo "- level: None"
    else
      echo "- level: Metadata"
    fi
  } >"$file"
}

bench_now() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }

bench_audit_count() {
  local log=$1 from=$2 to=$3
  [ -s "$log" ] || return 0
  jq -r --arg from "$from" --arg to "$to" '
    select(.requestReceivedTimestamp >= $from and .requestReceivedTimestamp < $to)
    | [.auditID, ((.userAgent // "-") | split("/")[0] | gsub(" "; "_")), .verb, (.objectRef.resource // ((.requestURI // "-") | split("?")[0]))]
    | @tsv' "$log" |
    sort -u -k1,1 | awk -F'\t' '{n[$2" "$3" "$4]++} END {for (k in n) print k, n[k]}' | sort
}

bench_audit_table() {
  bench_audit_count "$1" "$2" "$3" | awk -v s="$4" -v r="$5" -v what="$6" -v re="$7" '
    $1 ~ re { k = $1 " " $2; n[k] += $4; a[$1] += $4 }
    END {
      for (k in n) printf "    %-30s %-8s %6d  %8.2f/s%s\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1), n[k], n[k] / s, (r > 0 ? sprintf("  %7.1f per %s", n[k] / r, what) : "")
      for (g in a) printf "    %-30s %-8s %6d  %8.2f/s%s\n", g, "all", a[g], a[g] / s, (r > 0 ? sprintf("  %7.1f per %s", a[g] / r, what) : "")
    }' | sort
}

bench_audit_sum() {
  bench_audit_count "$1" "$2" "$3" | awk -v re="$4" '$1 ~ re {s += $4} END {print s + 0}'
}

bench_objects() {
  local ns=$1 n=$2 i
  for i in $(seq 1 $((n / 2))); do
    cat <<YAML
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg-$i, namespace: $ns}
data: {LOG_LEVEL: info, REGION: eu-west-1, app.properties: "server.port=8080\ncache.ttl=300\n"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web-$i, namespace: $ns, labels: {app: web-$i}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web-$i}}
  template:
    metadata: {labels: {app: web-$i}}
    spec:
      containers:
      - {name: app, image: "registry.example.com/shop/web:1.0.$i", ports: [{containerPort: 8080}], resources: {requests: {cpu: 100m, memory: 128Mi}}}
YAML
  done
}

bench_workdir() {
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  # shellcheck disable=SC2034 # the caller's
  RUN=$WORK/cluster POLICY=$WORK/audit-policy.yaml AUDIT=$WORK/audit.log
  PIDS=()
  trap 'bench_stop_all; rm -rf "$WORK"' EXIT
}

bench_stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  # shellcheck disable=SC2153 # PORT and ETCD_PORT are the caller's
  bench_private_cluster stop "$RUN" "$PORT" "$ETCD_PORT" >/dev/null 2>&1 || true
}
