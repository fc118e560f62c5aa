#!/usr/bin/env bash
# A real, local Kubernetes control plane for tests and demos: etcd and
# kube-apiserver (plus kubectl) built from the Go module proxy, started on
# loopback, with no controllers, so every managedFields entry is one the
# caller made.
#
#   hack/cluster.sh build    build binaries into the cache (reused when present)
#   hack/cluster.sh start    start etcd + kube-apiserver, write a kubeconfig
#   hack/cluster.sh stop     stop both by PID
#   hack/cluster.sh env      print shell exports (PATH, KUBECONFIG, ...)
#   hack/cluster.sh status   exit 0 when the API server answers /readyz
#
# DRIFT_CLUSTER_DIR, DRIFT_APISERVER_PORT and DRIFT_ETCD_PORT start a private
# control plane beside the shared one; DRIFT_APISERVER_ARGS adds flags to
# kube-apiserver (the hack/bench-*.sh scripts turn on its audit log).
#
# Binaries live in the user cache dir (outside the checkout) so a fresh clone
# on the same machine reuses them; the Go build cache makes a rebuild cheap.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.2}
STAGING_VERSION=${STAGING_VERSION:-v0.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.6.5}

CACHE=${DRIFT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-drift}
BIN=$CACHE/bin/k8s-$K8S_VERSION
RUN=${DRIFT_CLUSTER_DIR:-$CACHE/cluster}
PORT=${DRIFT_APISERVER_PORT:-16443}
ETCD_PORT=${DRIFT_ETCD_PORT:-12379}
ETCD_PEER_PORT=$((ETCD_PORT + 1))
read -ra APISERVER_ARGS <<<"${DRIFT_APISERVER_ARGS:-}"

log() { printf '[cluster] %s\n' "$*" >&2; }

build_etcd() {
  [ -x "$BIN/etcd" ] && return 0
  local work; work=$(mktemp -d)
  log "building etcd $ETCD_VERSION"
  (
    cd "$work"
    go mod init drift-etcd-build >/dev/null 2>&1
    go mod edit -require=go.etcd.io/etcd/server/v3@"$ETCD_VERSION"
    GOFLAGS=-mod=mod go mod download go.etcd.io/etcd/server/v3
    cat >tools.go <<'EOF'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
EOF
    GOFLAGS=-mod=mod go build -trimpath -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3
  )
  mv "$BIN/etcd.tmp" "$BIN/etcd"
  rm -rf "$work"
}

build_kube() {
  [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kubectl" ] && return 0
  local work; work=$(mktemp -d)
  log "building kube-apiserver and kubectl $K8S_VERSION (first time: ~7 min)"
  (
    cd "$work"
    go mod init drift-k8s-build >/dev/null 2>&1
    go mod edit -require=k8s.io/kubernetes@"$K8S_VERSION"
    # Kubernetes' own go.mod points every staging module at ./staging; a
    # consumer must point them at the published tags instead.
    local gomod
    gomod=$(go mod download -json k8s.io/kubernetes@"$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
    sed -n '/^replace (/,/^)/p' "$gomod" | awk '/=> \.\/staging/ {print $1}' | while read -r m; do
      go mod edit -replace="$m=$m@$STAGING_VERSION"
    done
    cat >tools.go <<'EOF'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
EOF
    local ld="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#v1.}"
    ld="${ld%.*}"
    GOFLAGS=-mod=mod go build -trimpath -ldflags "$ld" -o "$BIN/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
    GOFLAGS=-mod=mod go build -trimpath -ldflags "$ld" -o "$BIN/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl
  )
  mv "$BIN/kube-apiserver.tmp" "$BIN/kube-apiserver"
  mv "$BIN/kubectl.tmp" "$BIN/kubectl"
  rm -rf "$work"
}

cmd_build() {
  mkdir -p "$BIN"
  build_etcd
  build_kube
  log "binaries in $BIN"
}

healthy() {
  [ -f "$RUN/kubeconfig" ] && "$BIN/kubectl" --kubeconfig "$RUN/kubeconfig" get --raw /readyz >/dev/null 2>&1
}

# daemon CMD...: start CMD in the background holding no descriptor of ours
# but 0-2 (which the caller redirects). The daemons outlive this script: a
# descriptor they inherit stays open for hours, e.g. the caller's `flock`
# lock (a run holding /tmp/drift-e2e.lock for the cluster's life) or a CI
# runner's output pipe (the job never sees EOF).
daemon() {
  (
    local fd
    for fd in "/proc/$BASHPID/fd"/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    exec "$@"
  ) &
}

cmd_start() {
  cmd_build
  if healthy; then apply_rbac; log "already running"; return 0; fi
  cmd_stop >/dev/null 2>&1 || true
  rm -rf "$RUN"; mkdir -p "$RUN/certs" "$RUN/etcd"
  openssl genrsa -out "$RUN/certs/sa.key" 2048 2>/dev/null
  openssl rsa -in "$RUN/certs/sa.key" -pubout -out "$RUN/certs/sa.pub" 2>/dev/null
  # Two static tokens: an admin and a read-only user (get/list/watch only),
  # the RBAC the tool promises to work with.
  local admin_token reader_token
  admin_token=$(openssl rand -hex 16)
  reader_token=$(openssl rand -hex 16)
  cat >"$RUN/tokens.csv" <<EOF
$admin_token,admin,admin-uid,system:masters
$reader_token,reader,reader-uid,drift:readers
EOF
  daemon "$BIN/etcd" --data-dir "$RUN/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --log-level error \
    </dev/null >"$RUN/etcd.log" 2>&1
  echo $! >"$RUN/etcd.pid"
  daemon "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --endpoint-reconciler-type none \
    --secure-port "$PORT" --cert-dir "$RUN/certs" \
    --service-account-key-file "$RUN/certs/sa.pub" --service-account-signing-key-file "$RUN/certs/sa.key" \
    --service-account-issuer https://kubernetes.default.svc \
    --token-auth-file "$RUN/tokens.csv" --authorization-mode RBAC \
    --service-cluster-ip-range 10.96.0.0/16 --disable-admission-plugins ServiceAccount \
    ${APISERVER_ARGS[@]+"${APISERVER_ARGS[@]}"} \
    </dev/null >"$RUN/apiserver.log" 2>&1
  echo $! >"$RUN/apiserver.pid"
  write_kubeconfig admin "$admin_token" "$RUN/kubeconfig"
  write_kubeconfig reader "$reader_token" "$RUN/kubeconfig-reader"
  local i
  for i in $(seq 1 120); do
    if healthy; then break; fi
    if ! kill -0 "$(cat "$RUN/apiserver.pid")" 2>/dev/null; then
      log "kube-apiserver exited; log follows"; tail -30 "$RUN/apiserver.log" >&2; return 1
    fi
    sleep 0.5
  done
  healthy || { log "kube-apiserver not ready"; tail -30 "$RUN/apiserver.log" >&2; return 1; }
  apply_rbac
  log "ready: KUBECONFIG=$RUN/kubeconfig"
}

# Without kube-controller-manager the aggregated `view` role stays empty,
# so the read-only user gets its own ClusterRole. Applied on every start,
# also when the cluster was already up, so an interrupted start heals.
apply_rbac() {
  "$BIN/kubectl" --kubeconfig "$RUN/kubeconfig" apply -f - >/dev/null <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: drift-reader}
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: drift-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: drift-reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "drift:readers"}
EOF
}

write_kubeconfig() {
  cat >"$3" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: drift-local
  cluster:
    server: https://127.0.0.1:$PORT
    insecure-skip-tls-verify: true
users:
- name: $1
  user:
    token: $2
contexts:
- name: drift-local
  context: {cluster: drift-local, user: $1, namespace: default}
current-context: drift-local
EOF
}

cmd_stop() {
  local f pid
  for f in apiserver etcd; do
    [ -f "$RUN/$f.pid" ] || continue
    pid=$(cat "$RUN/$f.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$RUN/$f.pid"
  done
  log "stopped"
}

cmd_env() {
  echo "export PATH=\"$BIN:\$PATH\""
  echo "export KUBECONFIG=\"$RUN/kubeconfig\""
  echo "export DRIFT_READER_KUBECONFIG=\"$RUN/kubeconfig-reader\""
  echo "export DRIFT_BIN_DIR=\"$BIN\""
}

# Several engineers (and CI) share one cluster: two concurrent starts would
# each see "not healthy", kill the other's processes and rewrite its files.
# Serialise build/start/stop on a lock in the cache dir (the servers are
# started with fd 9 closed, so they do not hold the lock after we exit).
locked() {
  mkdir -p "$CACHE"
  exec 9>"$CACHE/cluster.lock"
  flock 9
  "$@"
}

case "${1:-}" in
  build) locked cmd_build ;;
  start) locked cmd_start ;;
  stop) locked cmd_stop ;;
  env) cmd_env ;;
  status) healthy ;;
  *) echo "usage: $0 build|start|stop|env|status" >&2; exit 2 ;;
esac
