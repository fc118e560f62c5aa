package argocd

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ssaSelfHealApp syncs with ServerSideApply=true and selfHeal, compared
// by the structured-merge diff (no ServerSideDiff).
const ssaSelfHealApp = `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: app, namespace: argocd}
spec:
  destination: {server: https://kubernetes.default.svc, namespace: ns}
  source: {repoURL: https://example.test/repo.git, path: .}
  syncPolicy:
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
