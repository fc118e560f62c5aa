package argocd

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// A ConfigMap a client-side sync created (argocd-controller an Update
// manager of last-applied-configuration), then written by a kubectl apply
// --server-side --field-manager=argocd-controller of /data/extra alone:
// kubectl's migrateToSSAIfNecessary moved the Update entry's fields, the
// annotation with them, into argocd-controller's Apply entry (k8s.io/kubectl
// pkg/cmd/apply/apply.go, client-go util/csaupgrade); a kubectl patch
// changed the label app.
const cmAppliedAsController = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
  labels: {app: agent2}
  annotations:
    argocd.argoproj.io/tracking-id: app:/ConfigMap:ns/cm
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"a":"1"},"kind":"ConfigMap","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/ConfigMap:ns/cm"},"labels":{"app":"agent"},"name":"cm","namespace":"ns"}}'
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {f:a: {}, f:extra: {}}
      f:metadata:
        f:annotations:
          f:argocd.argoproj.io/tracking-id: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
  - manager: kubectl-patch
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata:
        f:labels:
          f:app: {}
data: {a: "1", extra: "9"}
`

// TestServerSideDiffKeepsLastApplied (issue 32, A21; differential seed
// 52136): gitops-engine's serverSideDiff (pkg/diff/diff.go) removes only
// managedFields from the dry-run result and from live before comparing
// their bytes; last-applied-configuration stays (only structuredMergeDiff's
// normalizeTypedValue removes it). When argocd-controller's Apply entry
// owns the annotation, the dry-run of Git's manifest prunes it, so the
// states differ there and Argo CD is OutOfSync though every field its diff
// view shows is ignored (the annotation is no field anyone sees). The
// self-heal sync then re-applies the ignored label (Argo CD v3.2.11:
// OutOfSync, diff [], self-heal changed /metadata/labels/app).
func TestServerSideDiffKeepsLastApplied(t *testing.T) {
	rep := explainSSDWith(t, "", cmAppliedAsController, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns, labels: {app: agent}}
data: {a: "1"}
`, "spec:\n", `spec:
  syncPolicy: {automated: {selfHeal: true}}
  ignoreDifferences:
  - {kind: ConfigMap, jsonPointers: [/data/extra]}
  - {kind: ConfigMap, jqPathExpressions: [.metadata.labels.app]}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (the dry-run prunes last-applied-configuration)", st)
	}
	if !hasNote(rep, "outofsync-on-last-applied") {
		t.Errorf("no note outofsync-on-last-applied: %+v", rep.Notes)
	}
	if v := argoVerdict(t, rep, "/metadata/labels/app"); v.Kind != model.Ignored || !strings.Contains(v.Reason, SyncReappliesPhrase) {
		t.Errorf("label app: %s (%s), want ignored saying %q", v.Kind, v.Reason, SyncReappliesPhrase)
	}
}
