#!/usr/bin/env bash
# Record make demo's objects for `make demo-offline`: runs hack/demo.sh on
# the local real cluster (real kubectl writes, so real managedFields) and
# keeps what its explains read, as the API server returned it, in
# internal/cli/testdata/demo/ (the drifted Deployment, the Kustomization
# its labels name, the manifest, and when and from which API server it was
# recorded). Re-run it when the demo changes; TestRecordedDemo and the
# README's offline output are then updated from the new recording.
set -euo pipefail

cd "$(dirname "$0")/.."
out=internal/cli/testdata/demo
rm -rf "$out"
DEMO_RECORD="$out" hack/demo.sh
echo "recorded into $out:" >&2
ls -l "$out" >&2
