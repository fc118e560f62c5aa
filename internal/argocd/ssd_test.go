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

// TestSecretFieldsOfTheUIDiff (issue 32, A9; differential seed 50046): a
// Secret of a ServerSideDiff Application to which a person's kubectl
// apply added an annotation (last-applied-configuration is the
// person's), OutOfSync on data.k. The server-side diff (the sync status) does not show the
// annotation, but the diff Argo CD shows for a Secret is computed again by
// controller/appcontroller.go hideSecretData as a client-side diff, whose
// 3-way patch from that last-applied-configuration deletes it: Argo CD
// v3.2.11 lists /metadata/annotations/vault. Reported, as Argo CD shows.
func TestSecretFieldsOfTheUIDiff(t *testing.T) {
	const live = `
apiVersion: v1
kind: Secret
metadata:
  name: s
  namespace: ns
  annotations:
    vault: "on"
    argocd.argoproj.io/tracking-id: app:/Secret:ns/s
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"k":"dg=="},"kind":"Secret","metadata":{"annotations":{"vault":"on"},"name":"s","namespace":"ns"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {f:k: {}}
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}}}
  - manager: kubectl-client-side-apply
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {f:vault: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}}
data: {k: dg==}
`
	rep := explainSSDWith(t, "", live, `
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: ns}
data: {k: dzI=}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (data.k)", st)
	}
	if v := argoVerdict(t, rep, "/metadata/annotations/vault"); v.Kind != model.Reported {
		t.Errorf("vault: %s (%s), want reported (Argo CD's Secret diff shows it)", v.Kind, v.Reason)
	}
}
