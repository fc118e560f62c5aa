package argocd

import (
	"context"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// BenchmarkJudge measures one object's Argo CD verdicts with the cluster
// schema: normalization (managers via structured-merge-diff, pointers,
// jq), the 3-way diff and the why-not notes. scan runs this per object.
func BenchmarkJudge(b *testing.B) {
	for _, name := range []string{"mgr-set-image", "merged-app-and-cm", "ssa-scale"} {
		b.Run(name, func(b *testing.B) {
			t := &testing.T{}
			dir := "testdata/parity/cases/" + name
			var inputs []Input
			for _, f := range []string{"application.yaml", "argocd-cm.yaml"} {
				if u := readTestObject(t, dir+"/"+f); u != nil {
					inputs = append(inputs, Input{Object: u})
				}
			}
			parser, err := parityParser()
			if err != nil {
				b.Fatal(err)
			}
			a, err := New(Options{Inputs: inputs, GVKParser: parser})
			if err != nil {
				b.Fatal(err)
			}
			live, desired := readTestObject(t, dir+"/live.json"), readTestObject(t, dir+"/desired.yaml")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rep := model.NewReport(model.ResourceID{}, model.SourceFile)
				rep.Drifts = []model.FieldDrift{replicas}
				if err := a.Judge(context.Background(), model.JudgeInput{Live: live, Desired: desired, Report: rep}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
