package flux

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// BenchmarkJudge measures one Judge call on a Deployment with 50 drifted
// labels under a Kustomization with four ignore rules (owner cached, as
// in a scan after the first object).
func BenchmarkJudge(b *testing.B) {
	ks := obj(b, kustomization)
	a, _ := newAdapter(&testutil.Reader{Objects: []*unstructured.Unstructured{ks}}, nil, nil, false)
	live := liveDeployment(b, "web-1", "", "", fluxApplyAll)
	drifts := make([]model.FieldDrift, 50)
	for i := range drifts {
		drifts[i] = drift(fmt.Sprintf("/metadata/labels/l%d", i), model.Added, "x", "kubectl-label/Update")
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rep := model.NewReport(model.ResourceID{Kind: "Deployment", Name: "web-1"}, model.SourceManagedFields)
		rep.Drifts = append([]model.FieldDrift(nil), drifts...)
		if err := a.Judge(ctx, model.JudgeInput{Live: live, Report: rep}); err != nil {
			b.Fatal(err)
		}
	}
}
