package flux

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// releaseSecret is a deployed Helm release Secret as Helm's Secret driver
// stores it (base64 of gzip of the release JSON rel, whose "name" is the
// release's), at the given version.
func releaseSecret(t *testing.T, ns, version string, rel map[string]any) *unstructured.Unstructured {
	t.Helper()
	js, err := json.Marshal(rel)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(js)
	_ = zw.Close()
	helmB64 := base64.StdEncoding.EncodeToString(gz.Bytes())
	name, _ := rel["name"].(string)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "sh.helm.release.v1." + name + ".v" + version, "namespace": ns,
			"labels": map[string]any{"owner": "helm", "name": name, "status": "deployed", "version": version}},
		"data": map[string]any{"release": base64.StdEncoding.EncodeToString([]byte(helmB64))},
	}}
}

// Inferred mode on a Helm object whose labels a person's second
// client-side apply deleted (its manifest dropped the labels map, so the
// 3-way patch removed the whole map, helm-controller's ownership labels
// with it): the fields the release sets and live lacks leave no trace in
// managedFields, yet helm-controller's drift detection sees them (make
// differential ENGINE=flux-helm seed 48839, helm-controller v1.6.0,
// driftDetection warn: Drifted=True; inferred named nothing and exited 0).
func TestHelmInferredNamesWhatTheReleaseSetsAndLiveLacks(t *testing.T) {
	const manifest = `---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: web
  namespace: apps
  labels: {app.kubernetes.io/managed-by: Helm, helm.toolkit.fluxcd.io/name: app, helm.toolkit.fluxcd.io/namespace: apps}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: web, namespace: apps}]
`
	hr := obj(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: app, namespace: apps}, spec: {interval: 1h, driftDetection: {mode: warn}, chart: {spec: {chart: app, sourceRef: {kind: HelmRepository, name: r}}}}}`)
	a := newTestAdapter(t, &testutil.Reader{Objects: []*unstructured.Unstructured{hr, releaseSecret(t, "apps", "1", map[string]any{"name": "app", "manifest": manifest})}})
	live := obj(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: web
  namespace: apps
  annotations: {meta.helm.sh/release-name: app, meta.helm.sh/release-namespace: apps, ticket: OPS-1}
  labels: {app.kubernetes.io/part-of: manual}
  managedFields:
  - {manager: helm-controller, operation: Apply, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {f:annotations: {f:meta.helm.sh/release-name: {}, f:meta.helm.sh/release-namespace: {}}}, f:roleRef: {}, f:subjects: {}}}
  - {manager: kubectl-client-side-apply, operation: Update, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {f:annotations: {f:ticket: {}}}}}
  - {manager: kubectl-label, operation: Update, apiVersion: rbac.authorization.k8s.io/v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {f:labels: {.: {}, f:app.kubernetes.io/part-of: {}}}}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: web, namespace: apps}]
`)
	rep := judge(t, a, live, nil,
		drift("/metadata/annotations/ticket", model.Added, "OPS-1", "kubectl-client-side-apply/Update"),
		drift("/metadata/labels/app.kubernetes.io~1part-of", model.Added, "manual", "kubectl-label/Update"))
	for _, p := range []string{"/metadata/labels/helm.toolkit.fluxcd.io~1name", "/metadata/labels/app.kubernetes.io~1managed-by"} {
		if v := verdictAt(t, rep, p); v.Kind != model.Reported {
			t.Errorf("%s: %s %q, want reported (drift detection warn)", p, v.Kind, v.Reason)
		}
	}
	if rep.ExitCode() != 1 {
		t.Errorf("exit %d, want 1", rep.ExitCode())
	}
}
