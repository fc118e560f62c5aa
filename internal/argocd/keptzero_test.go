package argocd

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// A ServiceAccount another manager's server-side apply created, Argo CD's
// through its tracking annotation, without automountServiceAccountToken.
const saByOperator = `
apiVersion: v1
kind: ServiceAccount
metadata:
  name: web
  namespace: ns
  annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::1:role/admin", argocd.argoproj.io/tracking-id: "app:/ServiceAccount:ns/web"}
  managedFields:
  - manager: platform-operator
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:metadata: {f:annotations: {f:eks.amazonaws.com/role-arn: {}}}
`

const saGit = `
apiVersion: v1
kind: ServiceAccount
automountServiceAccountToken: false
metadata:
  name: web
  namespace: ns
  annotations: {eks.amazonaws.com/role-arn: "arn:aws:iam::1:role/app"}
`

// TestSyncWritesKeptZero (issue 32, A24; differential seed 54144): Git
// sets automountServiceAccountToken: false, a *bool the API server stores
// as sent, and live lacks it; a jsonPointers rule hides it from Argo CD's
// diff, which is OutOfSync on an annotation. Self-heal's sync applies
// Git's manifest and writes the field (Argo CD v3.2.11: self-heal changed
// /automountServiceAccountToken). The generic comparison drops a false
// Git sets (omitempty), so the field was not named at all.
func TestSyncWritesKeptZero(t *testing.T) {
	rep := explainSSDWith(t, "", saByOperator, saGit,
		"    argocd.argoproj.io/compare-options: ServerSideDiff=true\n", "", "spec:\n", `spec:
  syncPolicy: {automated: {selfHeal: true}}
  ignoreDifferences:
  - {kind: ServiceAccount, jsonPointers: [/automountServiceAccountToken]}
`)
	v := argoVerdict(t, rep, "/automountServiceAccountToken")
	if v.Kind != model.Ignored || !strings.Contains(v.Reason, SyncReappliesPhrase) {
		t.Errorf("/automountServiceAccountToken: %s (%s), want ignored saying %q", v.Kind, v.Reason, SyncReappliesPhrase)
	}

	// Without the rule Argo CD's diff shows it, and a sync writes it.
	rep = explainSSDWith(t, "", saByOperator, saGit,
		"    argocd.argoproj.io/compare-options: ServerSideDiff=true\n", "", "spec:\n", "spec:\n  syncPolicy: {automated: {selfHeal: true}}\n")
	if v := argoVerdict(t, rep, "/automountServiceAccountToken"); v.Kind != model.Reverted {
		t.Errorf("no rule: /automountServiceAccountToken: %s (%s), want reverted", v.Kind, v.Reason)
	}
}

// TestKeptZeroPointers: only a zero the kind's Go type encodes again is
// one the API server keeps; a plain bool with omitempty (a Deployment's
// paused) is dropped, as a custom resource's are not computed at all.
func TestKeptZeroPointers(t *testing.T) {
	dep := objectOf(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  paused: false
  progressDeadlineSeconds: 0
  template:
    spec:
      hostNetwork: false
      automountServiceAccountToken: false
`)
	live := objectOf(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: ns}\n")
	var got []string
	for _, d := range keptZeroDrifts(nil, dep, live) {
		got = append(got, d.Path)
	}
	want := "/spec/progressDeadlineSeconds /spec/template/spec/automountServiceAccountToken"
	if strings.Join(got, " ") != want {
		t.Errorf("kept zeros %q, want %q", strings.Join(got, " "), want)
	}
	cr := objectOf(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {on: false}\n")
	if d := keptZeroDrifts(nil, cr, objectOf(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n")); d != nil {
		t.Errorf("custom resource: %+v, want none computed", d)
	}
}
