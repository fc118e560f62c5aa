package flux

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestReportGolden pins whole reports (owner, verdicts, reasons, rule
// origins, notes) for two representative objects, so that any change to
// what users read shows up in review.
func TestReportGolden(t *testing.T) {
	ks := obj(t, kustomization)
	hr := obj(t, fmt.Sprintf(helmRelease, "warn"))
	reader := &testutil.Reader{Objects: []*unstructured.Unstructured{ks, hr}}
	managed := fluxApplyAll + manualEdits
	desired := obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web-1, namespace: prod, labels: {app: web}, annotations: {keep: "1"}}, spec: {replicas: 2, template: {spec: {containers: [{name: app, image: "nginx:2"}]}}}}`)
	cases := map[string]*model.Report{
		"kustomization-deployment-report.golden.json": judge(t, newTestAdapter(t, reader), liveDeployment(t, "web-1", "    oncall: me", "    injected: x", managed), desired,
			drift("/spec/replicas", model.Changed, 5, "kubectl-edit/Update"),
			drift("/metadata/labels/oncall", model.Added, "me", "kubectl-label/Update"),
			drift("/metadata/annotations/injected", model.Added, "x", "my-operator/Update")),
		"helmrelease-warn-report.golden.json": judge(t, newTestAdapter(t, reader), helmLive(t, "Deployment", ""), nil,
			drift("/spec/replicas", model.Changed, 4, "kubectl-scale/Update"),
			drift("/spec/paused", model.Changed, true, "kubectl-edit/Update", "helm-controller/Apply")),
	}
	for name, rep := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			testutil.Golden(t, filepath.Join("testdata", name), got)
		})
	}
}
