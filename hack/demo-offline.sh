#!/usr/bin/env bash
# make demo-offline: the demo's answer in a minute, with no cluster. It
# explains the objects hack/record-demo.sh recorded from make demo's real
# API server (internal/cli/testdata/demo/: the drifted Deployment with the
# managedFields the real kubectl writes left, the Flux Kustomization its
# labels name, and the manifest from "Git"), read with --live-file and
# --rules, so nothing contacts an API server. The verdicts are the live
# demo's (TestRecordedDemo); only WHEN moves, counted from the recording.
set -euo pipefail

cd "$(dirname "$0")/.."
rec=internal/cli/testdata/demo
make --no-print-directory build PLUGINS=kubectl-drift >/dev/null
export PATH="$PWD/bin:$PATH"
# No kubeconfig: proof that nothing here reaches a cluster.
export KUBECONFIG=/dev/null

if [ -t 2 ] && [ -z "${NO_COLOR:-}" ]; then bold=$'\033[1m' reset=$'\033[0m'; else bold='' reset=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$reset" >&2; }

recorded=$(sed -n 's/^recorded: //p' "$rec/recorded.yaml")
server=$(sed -n 's/^server: //p' "$rec/recorded.yaml")
cat >&2 <<TXT
RECORDED, no cluster: the objects below were recorded from make demo's live
$server API server at $recorded by hack/record-demo.sh (a Deployment
applied as kustomize-controller, then changed with kubectl scale, set image,
annotate, label and edit). \`make demo\` runs the same on a live cluster.
TXT

# explain exits 1 when it finds drift (like kubectl diff); that is the
# point of the demo, not a failure.
cd "$rec"
step "cd $rec"
step "kubectl drift explain deploy/web --live-file live.yaml --rules kustomization.yaml"
kubectl drift explain deploy/web --live-file live.yaml --rules kustomization.yaml || [ $? -eq 1 ]
step "kubectl drift explain deploy/web --live-file live.yaml --rules kustomization.yaml -f web.yaml"
kubectl drift explain deploy/web --live-file live.yaml --rules kustomization.yaml -f web.yaml || [ $? -eq 1 ]
