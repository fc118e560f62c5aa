#!/usr/bin/env bash
# Reconcile load profile of the real Argo CD application-controller
# (v3.2.11, the Argo harness's, built by hack/build-tools.sh argocd): what it
# asks of the API server per refresh and per sync, against the number of
# objects of an Application, and what that means per reconcile timeout;
# `kubectl drift serve` beside it. The sibling of
# hack/bench-reconcile-load.sh (kustomize-controller), same audit method.
#
# It starts its own control plane (hack/cluster.sh, private directory under
# $TMPDIR, ports 16533/12471, never the shared cluster) with the API
# server's audit log (Metadata level: no bodies), installs Argo CD's CRDs,
# ConfigMaps, Secret and default AppProject as e2e/argoreal_test.go's
# bootstrap does, starts redis (:16534), the repo-server (:16535, metrics
# :16536) and the application-controller (metrics :16537) as its
# startArgoCD does (no API server: nothing here needs it), a local git
# repository read as file://, and `kubectl drift serve -A` (:16538). For
# each size N (BENCH_SIZES, default 50 and 500; half ConfigMaps, half
# Deployments) it commits N objects to apps/load-N and:
#   1. creates an Application (automated sync, prune, CreateNamespace) and
#      waits for Synced with the sync operation Succeeded (requests of this
#      first sync by agent and verb) (Healthy is not
#      reachable: the private control plane runs no kube-controller-manager,
#      so Deployments stay Progressing; health does not gate the sync);
#   2. idle window (BENCH_IDLE seconds, default 60): the controller runs
#      with --app-resync 3600 so that no periodic refresh falls into it,
#      only watches: requests by user agent;
#   3. forced refreshes (BENCH_REFRESHES, default 5, of each kind normal and
#      hard; the argocd.argoproj.io/refresh annotation, as `argocd app get
#      --refresh` does), each waited for (status.reconciledAt changes);
#   4. forced syncs (BENCH_SYNCS, default 3; an operation as `argocd app
#      sync` writes it), each waited for (operationState.finishedAt changes);
#   5. requests/s at the reconcile timeouts 3m (Argo's default
#      timeout.reconciliation), 1m, 30s, 10s = per normal refresh / timeout
#      (plus the idle rate): a periodic reconcile is a normal refresh; a sync
#      only follows when Git or the cluster changed, the worst case (every
#      reconcile syncs) is printed too.
# Needs jq, git, redis-server (hack/install-deps.sh). Nothing is written
# inside the checkout; everything is stopped and removed at exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZES=${BENCH_SIZES:-50 500}
IDLE=${BENCH_IDLE:-60}
REFRESHES=${BENCH_REFRESHES:-5}
SYNCS=${BENCH_SYNCS:-3}
ARGOCD_VERSION=v3.2.11 # e2e/argoreal_test.go's ArgoCDVersion
PORT=16533
ETCD_PORT=12471
REDIS_PORT=16534
REPO_PORT=16535
REPO_METRICS_PORT=16536
CONTROLLER_METRICS_PORT=16537
METRICS=127.0.0.1:16538
NS=argocd
# The agents the tables show (the user agent's product, bench_audit_count).
# The controller speaks as two: its own clients set
# argocd-application-controller; gitops-engine's (the cluster cache's lists
# and watches, the kubectl library it applies with) keep client-go's
# default, the binary's name: argocd. The repo-server has no kubeconfig.
CONTROLLER='^(argocd-application-controller|argocd)$'
AGENTS=${BENCH_AGENTS:-'^(argocd-application-controller|argocd|kubectl-drift)$'}

log() { printf '[bench-reconcile-load-argocd] %s\n' "$*" >&2; }

# shellcheck source=hack/bench-lib.sh
. "$ROOT/hack/bench-lib.sh"
for c in jq git redis-server go; do
  command -v "$c" >/dev/null || { echo "bench-reconcile-load-argocd: $c is needed" >&2; exit 2; }
done

bench_workdir bench-reconcile-argocd
REPO=$WORK/repo

log "building kubectl-drift; Argo CD and the kustomize/helm it ships from hack/build-tools.sh"
(cd "$ROOT" && go build -o "$WORK/kubectl-drift" ./plugins/kubectl-drift)
ARGOCD=$("$ROOT/hack/build-tools.sh" argocd | tail -1)
TOOLS=$("$ROOT/hack/build-tools.sh" argocd-kustomize argocd-helm)
TOOL_PATH=$(dirname "$(sed -n 1p <<<"$TOOLS")"):$(dirname "$(sed -n 2p <<<"$TOOLS")")
MOD=$(go mod download -json "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" | jq -r .Dir)
bench_audit_policy "$POLICY"
bench_private_cluster start "$RUN" "$PORT" "$ETCD_PORT" "$POLICY" "$AUDIT" >&2
eval "$(bench_private_cluster env "$RUN" "$PORT" "$ETCD_PORT")"
KUBECTL="$DRIFT_BIN_DIR/kubectl"

# bootstrap as e2e/argoreal_test.go's: CRDs server-side (too big for the
# last-applied annotation), namespace, ConfigMaps, Secret, default project.
for f in application-crd.yaml applicationset-crd.yaml appproject-crd.yaml; do
  "$KUBECTL" apply --server-side --force-conflicts --field-manager=bench -f "$MOD/manifests/crds/$f" >/dev/null
done
until "$KUBECTL" wait --for=condition=Established --timeout=30s crd/applications.argoproj.io crd/appprojects.argoproj.io >/dev/null 2>&1; do
  sleep 0.5
done
"$KUBECTL" apply --server-side --field-manager=bench -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $NS}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: $NS, labels: {app.kubernetes.io/part-of: argocd}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: $NS, labels: {app.kubernetes.io/part-of: argocd}}
data: {policy.default: "role:admin"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cmd-params-cm, namespace: $NS, labels: {app.kubernetes.io/part-of: argocd}}
---
apiVersion: v1
kind: Secret
metadata: {name: argocd-secret, namespace: $NS, labels: {app.kubernetes.io/part-of: argocd}}
stringData: {server.secretkey: "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"}
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: $NS}
spec:
  sourceRepos: ["*"]
  destinations: [{server: "*", namespace: "*"}]
  clusterResourceWhitelist: [{group: "*", kind: "*"}]
YAML

# The git repository, read as file:// like the harness's.
gitc() {
  git -C "$REPO" -c user.name=bench -c user.email=bench@example.com "$@"
}
mkdir -p "$REPO" "$WORK/home" "$WORK/tmp"
git init -q -b main "$REPO"
echo "kubectl-drift reconcile load" >"$REPO/README"
gitc add -A; gitc commit -q -m init

# Argo CD as the harness starts it (e2e/argoreal_test.go startArgoCD and
# startController), KUBECONFIG admin, ports fixed above.
argo_env=(env HOME="$WORK/home" TMPDIR="$WORK/tmp" KUBECONFIG="$KUBECONFIG"
  ARGOCD_FAKE_IN_CLUSTER=true ARGOCD_GPG_ENABLED=false ARGOCD_LOG_FORMAT=text PATH="$TOOL_PATH:$PATH")
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
"${argo_env[@]}" ARGOCD_BINARY_NAME=argocd-repo-server "$ARGOCD" \
  --address 127.0.0.1 --port "$REPO_PORT" --metrics-address 127.0.0.1 --metrics-port "$REPO_METRICS_PORT" \
  --redis "127.0.0.1:$REDIS_PORT" --disable-tls >"$WORK/repo-server.log" 2>&1 &
PIDS+=($!)
# --app-resync 3600: no periodic refresh in the windows measured; the rates
# per timeout are computed from the forced refreshes.
"${argo_env[@]}" ARGOCD_BINARY_NAME=argocd-application-controller "$ARGOCD" \
  --kubeconfig "$KUBECONFIG" --namespace "$NS" --redis "127.0.0.1:$REDIS_PORT" \
  --repo-server "127.0.0.1:$REPO_PORT" --repo-server-plaintext --metrics-port "$CONTROLLER_METRICS_PORT" \
  --app-resync 3600 --status-processors 4 --operation-processors 4 >"$WORK/controller.log" 2>&1 &
PIDS+=($!)
"$WORK/kubectl-drift" serve -A --metrics-bind-address "$METRICS" --kubeconfig "$DRIFT_READER_KUBECONFIG" 2>"$WORK/serve.log" &
PIDS+=($!)

# commit_objects NS N: N/2 ConfigMaps and N/2 Deployments under apps/NS.
commit_objects() {
  local ns=$1 n=$2 d="$REPO/apps/$1"
  mkdir -p "$d"
  bench_objects "$ns" "$n" >"$d/objects.yaml"
  gitc add -A; gitc commit -q -m "$ns: $n objects"
}

app_json() { "$KUBECTL" -n "$NS" get application "$1" -o json; }

# wait_app APP JQ-CONDITION: until the Application's JSON satisfies it.
wait_app() {
  local t0=$SECONDS
  until app_json "$1" | jq -e "$2" >/dev/null; do
    [ $((SECONDS - t0)) -lt 600 ] || {
      log "Application $1: timed out waiting for $2"
      app_json "$1" | jq -c '.status | {sync, health, reconciledAt, operationState: (.operationState | {phase, message, finishedAt})}' >&2 || true
      tail -20 "$WORK/controller.log" >&2
      return 1
    }
    sleep 0.5
  done
}

# table FROM TO SECONDS COUNT WHAT: requests by agent and verb in the span.
table() { bench_audit_table "$AUDIT" "$1" "$2" "$3" "$4" "$5" "$AGENTS"; }

# per AGENTS FROM TO: the requests of the agents matching AGENTS in the span.
per() { bench_audit_sum "$AUDIT" "$2" "$3" "$1"; }

# forced KIND APP COUNT: COUNT refreshes (normal|hard) or syncs, each waited
# for; sets FROM, TO, SECS.
forced() {
  local kind=$1 app=$2 count=$3 i before s0 s1
  FROM=$(bench_now); s0=$(date +%s.%N)
  for i in $(seq 1 "$count"); do
    if [ "$kind" = sync ]; then
      before=$(app_json "$app" | jq -r '.status.operationState.finishedAt // ""')
      "$KUBECTL" -n "$NS" patch application "$app" --type=merge \
        -p '{"operation": {"initiatedBy": {"username": "bench"}, "sync": {"revision": "HEAD"}}}' >/dev/null
      wait_app "$app" ".operation == null and .status.operationState.finishedAt != \"$before\" and .status.operationState.phase == \"Succeeded\""
    else
      before=$(app_json "$app" | jq -r '.status.reconciledAt // ""')
      "$KUBECTL" -n "$NS" annotate application "$app" --overwrite "argocd.argoproj.io/refresh=$kind" >/dev/null
      wait_app "$app" ".status.reconciledAt != \"$before\" and (.metadata.annotations[\"argocd.argoproj.io/refresh\"] == null)"
    fi
    # reconciledAt has a resolution of one second: the next refresh must
    # not finish within the same second to be seen.
    sleep 1
  done
  sleep 3 # serve's re-explains of the last round's events
  TO=$(bench_now); s1=$(date +%s.%N)
  SECS=$(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.1f", b - a}')
}

echo "kubectl-drift reconcile load profile (Argo CD): $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, kube-apiserver v1.37.2 (private, :$PORT), argocd-application-controller $ARGOCD_VERSION, go $(go env GOVERSION)"
SUMMARY=()
for n in $SIZES; do
  ns=load-$n app=load-$n
  commit_objects "$ns" "$n"
  from=$(bench_now); s0=$(date +%s.%N)
  "$KUBECTL" apply --server-side --field-manager=bench -f - >/dev/null <<YAML
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: $app, namespace: $NS}
spec:
  project: default
  source: {repoURL: "file://$REPO", path: apps/$ns, targetRevision: HEAD}
  destination: {server: "https://kubernetes.default.svc", namespace: $ns}
  syncPolicy:
    automated: {prune: true}
    syncOptions: [CreateNamespace=true]
YAML
  t0=$SECONDS
  wait_app "$app" '.status.sync.status == "Synced" and .status.operationState.phase == "Succeeded"'
  to=$(bench_now); s1=$(date +%s.%N)
  secs=$(awk -v a="$s0" -v b="$s1" 'BEGIN {printf "%.1f", b - a}')
  log "N=$n: first sync done in $((SECONDS - t0))s (health $(app_json "$app" | jq -r .status.health.status)); idle window ${IDLE}s"
  echo "== N=$n objects, Application created, first automated sync (creates the namespace and objects) in ${secs}s: requests by agent and verb"
  table "$from" "$to" "$secs" 0 -
  sleep 5
  from=$(bench_now); sleep "$IDLE"; to=$(bench_now)
  echo "== N=$n objects, idle (--app-resync 3600, no refresh) for ${IDLE}s: requests by agent and verb"
  idle_t=$(table "$from" "$to" "$IDLE" 0 -); echo "${idle_t:-    none}"
  idle_ac=$(per "$CONTROLLER" "$from" "$to")
  idle_kd=$(per '^kubectl-drift$' "$from" "$to")

  row="$n $idle_ac $idle_kd"
  for kind in normal hard sync; do
    count=$REFRESHES what=refresh label="$kind refreshes"
    [ "$kind" != sync ] || { count=$SYNCS what=sync label=syncs; }
    log "N=$n: $count forced $label"
    forced "$kind" "$app" "$count"
    echo "== N=$n objects, $count forced $label in ${SECS}s: requests by agent and verb"
    table "$FROM" "$TO" "$SECS" "$count" "$what"
    row="$row $(per "$CONTROLLER" "$FROM" "$TO") $(per '^kubectl-drift$' "$FROM" "$TO") $count"
  done
  SUMMARY+=("$row")
done

echo "== requests per forced refresh / sync, and requests/s at steady state by reconcile timeout (per normal refresh, or refresh + sync, / timeout + idle rate; idle window ${IDLE}s)"
printf '  %-6s %-32s %8s %8s %8s %8s %8s %8s %8s\n' N agent normal hard sync 3m 1m 30s 10s
for r in "${SUMMARY[@]}"; do
  read -r n iac ikd nac nkd nc hac hkd hc sac skd sc <<<"$r"
  awk -v n="$n" -v idle="$IDLE" \
    -v iac="$iac" -v nac="$nac" -v nc="$nc" -v hac="$hac" -v hc="$hc" -v sac="$sac" -v sc="$sc" \
    -v ikd="$ikd" -v nkd="$nkd" -v hkd="$hkd" -v skd="$skd" 'BEGIN {
    split("180 60 30 10", iv, " ")
    line("argocd-application-controller", nac / nc, hac / hc, sac / sc, iac / idle, nac / nc)
    line("kubectl-drift serve", nkd / nc, hkd / hc, skd / sc, ikd / idle, nkd / nc)
    # When every reconcile finds drift (self-heal against a fight, or a
    # new commit each time), each one is also a sync.
    line("  ...if every reconcile syncs", "", "", "", iac / idle, nac / nc + sac / sc)
  }
  function line(who, pn, ph, ps, base, each,   i, s) {
    s = sprintf("  %-6d %-32s %8s %8s %8s", n, who, fmt(pn), fmt(ph), fmt(ps))
    for (i = 1; i <= 4; i++) s = s sprintf(" %8.2f", each / iv[i] + base)
    print s
  }
  function fmt(v) { return v == "" ? "" : sprintf("%.1f", v) }'
done
