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

// TestSecretShownWhileSynced (A22, differential seed 53260): a
// ServerSideDiff Application synced client-side (argocd-controller's
// Update entry, Argo CD's last-applied-configuration); Git drops
// data.token. The server-side diff keeps it (a dry-run apply prunes only
// the applier's own Apply fields): Synced. The diff Argo CD shows for the
// Secret (hideSecretData, client-side 3-way from last-applied) lists
// /data/token. The object stays Synced, exit 0; the field is named, left
// alone, with the phrase that says Argo CD's diff shows it, and no value.
func TestSecretShownWhileSynced(t *testing.T) {
	const live = `
apiVersion: v1
kind: Secret
metadata:
  name: web
  namespace: ns
  annotations:
    argocd.argoproj.io/tracking-id: app:/Secret:ns/web
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"token":"dG9rZW4tZ2l0"},"kind":"Secret","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/Secret:ns/web"},"name":"web","namespace":"ns"},"stringData":{"password":"s3cr3t-git"},"type":"Opaque"}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {.: {}, f:password: {}, f:token: {}}
      f:metadata: {f:annotations: {.: {}, f:argocd.argoproj.io/tracking-id: {}, f:kubectl.kubernetes.io/last-applied-configuration: {}}}
      f:type: {}
data: {password: czNjcjN0LWdpdA==, token: dG9rZW4tZ2l0}
type: Opaque
`
	rep := explainSSDWith(t, "", live, `
apiVersion: v1
kind: Secret
metadata: {name: web, namespace: ns}
stringData: {password: s3cr3t-git}
type: Opaque
`)
	if st := statusOf(t, rep); st.Drift {
		t.Errorf("status %+v, want Synced (the server-side diff keeps data.token)", st)
	}
	v := argoVerdict(t, rep, "/data/token")
	if v.Kind != model.LeftAlone || !strings.Contains(v.Reason, ShownWhileSyncedPhrase) {
		t.Errorf("/data/token: %s (%s), want left-alone saying %q", v.Kind, v.Reason, ShownWhileSyncedPhrase)
	}
	if strings.Contains(v.Reason, "dG9rZW4") || strings.Contains(v.Reason, "token-git") {
		t.Errorf("the reason prints the Secret's value: %s", v.Reason)
	}
	if code := rep.ExitCode(); code != 0 {
		t.Errorf("exit %d, want 0 (Argo CD is Synced)", code)
	}
}

// TestSecretStatusOnlyFieldTheSyncKeeps (differential seed 62338): a
// Secret of a ServerSideDiff Application whose annotation vault (and
// tracking mark) a server-side apply as argocd-controller wrote, and which
// has no
// last-applied-configuration (that apply's migration pruned Argo CD's
// fields). The status diff, a dry-run apply as argocd-controller, prunes
// vault; the diff Argo CD shows for the Secret does not list it; the sync
// is a client-side kubectl apply, whose patch without an original deletes
// nothing: self-heal kept vault on Argo CD v3.2.11. Left alone, and the
// reason must not say that a sync deletes it.
func TestSecretStatusOnlyFieldTheSyncKeeps(t *testing.T) {
	const live = `
apiVersion: v1
kind: Secret
metadata:
  name: web
  namespace: ns
  annotations: {vault: synced, argocd.argoproj.io/tracking-id: "app:/Secret:ns/web"}
  managedFields:
  - manager: argocd-controller
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {f:vault: {}, f:argocd.argoproj.io/tracking-id: {}}}
type: Opaque
`
	rep := explainSSDWith(t, "", live, `
apiVersion: v1
kind: Secret
metadata: {name: web, namespace: ns}
data: {token: dG9rZW4tZ2l0}
type: Opaque
`, "spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}}\n")
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync (data)", st)
	}
	v := argoVerdict(t, rep, "/metadata/annotations/vault")
	if v.Kind != model.LeftAlone || strings.Contains(v.Reason, SyncDeletesPhrase) || !strings.Contains(v.Reason, "status diff") {
		t.Errorf("vault: %s (%s), want left alone, in the status diff only, not saying %q", v.Kind, v.Reason, SyncDeletesPhrase)
	}
}
