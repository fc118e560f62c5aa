package testutil

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func TestVerdictAndNote(t *testing.T) {
	rep := &model.Report{
		Drifts: []model.FieldDrift{{Path: "/spec/replicas", Verdicts: []model.Verdict{
			{Engine: model.Engine("flux"), Kind: model.Reverted},
			{Engine: model.Engine("argocd"), Kind: model.Ignored},
		}}},
		Notes: []model.Note{{Reason: "a"}, {Reason: "b", Message: "first b"}, {Reason: "b"}},
	}
	if v := Verdict(t, rep, "/spec/replicas", model.Engine("argocd")); v.Kind != model.Ignored {
		t.Errorf("argocd verdict %v", v.Kind)
	}
	for _, c := range []struct {
		path   string
		engine model.Engine
		want   string
	}{
		{"/spec/replicas", model.Engine("toy"), "no %s verdict at %s in %+v"},
		{"/spec/paused", model.Engine("flux"), "no drift at %s in %+v"},
	} {
		r := &recorder{TB: t}
		Verdict(r, rep, c.path, c.engine)
		if len(r.errs) != 1 || r.errs[0] != c.want {
			t.Errorf("Verdict(%s, %s) failures %q, want %q", c.path, c.engine, r.errs, c.want)
		}
	}
	if n := Note(rep, "b"); n == nil || n.Message != "first b" {
		t.Errorf("Note(b) = %+v", n)
	}
	if n := Note(rep, "c"); n != nil {
		t.Errorf("Note(c) = %+v", n)
	}
}
