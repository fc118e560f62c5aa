package argocd

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ssaSelfHealApp syncs with ServerSideApply=true and selfHeal, compared
// by the structured-merge diff (no ServerSideDiff).
const ssaSelfHealApp = testAppHead + `  syncPolicy:
    automated: {selfHeal: true}
    syncOptions: [ServerSideApply=true]
`

// TestServerSideSyncKeepsWhatTheServerSetsAgain (issue 32, W6; seeds
// 50336, 50389, 50562): a CronJob whose container's resources: {}
// argocd-controller applied last time and Git leaves out, and a changed
// schedule. Argo CD's structured-merge diff shows both (its apply would
// prune resources), and its self-heal sync, a server-side apply as
// argocd-controller, prunes resources, but the API server decodes the
// object into its Go type and encodes it again, resources: {} with it
// (localApply, serverRoundTrip): the field is as it was, the object stays
// OutOfSync. resources is reported (the sync leaves it), schedule
// reverted (the sync writes Git's value).
func TestServerSideSyncKeepsWhatTheServerSetsAgain(t *testing.T) {
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	rep := explainFile(t, Options{Inputs: []Input{{Object: objectOf(t, ssaSelfHealApp)}}, GVKParser: parser}, cronJobMigrated, `
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj, namespace: ns}
spec:
  schedule: "*/10 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - {name: app, image: busybox}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	if v := argoVerdict(t, rep, "/spec/schedule"); v.Kind != model.Reverted {
		t.Errorf("/spec/schedule: %s (%s), want reverted", v.Kind, v.Reason)
	}
	v := argoVerdict(t, rep, "/spec/jobTemplate/spec/template/spec/containers/0/resources")
	if v.Kind != model.Reported || !strings.Contains(v.Reason, ServerSetsAgainPhrase) {
		t.Errorf("resources: %s (%s), want reported saying %q", v.Kind, v.Reason, ServerSetsAgainPhrase)
	}
}

// A ConfigMap the first sync created client-side (argocd-controller an
// Update manager owning last-applied-configuration, the label tier and
// the data), as Argo CD v3.2.11 creates the objects of a
// ServerSideApply=true Application (differential seed 50880).
const cmCreatedClientSide = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
  namespace: ns
  labels: {tier: web}
  annotations:
    argocd.argoproj.io/tracking-id: app:/ConfigMap:ns/cm
    kubectl.kubernetes.io/last-applied-configuration: '{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"annotations":{"argocd.argoproj.io/tracking-id":"app:/ConfigMap:ns/cm"},"labels":{"tier":"web"},"name":"cm","namespace":"ns"}}'
  managedFields:
  - manager: argocd-controller
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:data: {.: {}, f:a: {}, f:b: {}}
      f:metadata:
        f:annotations:
          .: {}
          f:argocd.argoproj.io/tracking-id: {}
          f:kubectl.kubernetes.io/last-applied-configuration: {}
        f:labels: {.: {}, f:tier: {}}
data: {a: "1", b: "2"}
`

// TestServerSideSyncPrunesMigratedFields (issue 32, A16; seed 50880): Git
// drops the label tier and changes b. Argo CD's structured-merge diff does
// not show tier (argocd-controller applied nothing yet), but its
// server-side apply sync is kubectl apply --server-side, which hands the
// fields of the Update managers owning last-applied-configuration to
// argocd-controller (k8s.io/kubectl pkg/cmd/apply/apply.go
// migrateToSSAIfNecessary, client-go util/csaupgrade) and applies again:
// the apply prunes tier. Left alone, the reason saying a sync deletes it.
func TestServerSideSyncPrunesMigratedFields(t *testing.T) {
	parser, err := parityParser()
	if err != nil {
		t.Fatal(err)
	}
	rep := explainFile(t, Options{Inputs: []Input{{Object: objectOf(t, ssaSelfHealApp)}}, GVKParser: parser}, cmCreatedClientSide, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cm, namespace: ns}
data: {a: "1", b: "3"}
`)
	if st := statusOf(t, rep); !st.Drift {
		t.Fatalf("status %+v, want OutOfSync", st)
	}
	v := argoVerdict(t, rep, "/metadata/labels/tier")
	if (v.Kind != model.LeftAlone && v.Kind != model.Ignored) || !strings.Contains(v.Reason, SyncDeletesPhrase) {
		t.Errorf("tier: %s (%s), want left alone saying %q", v.Kind, v.Reason, SyncDeletesPhrase)
	}
}
