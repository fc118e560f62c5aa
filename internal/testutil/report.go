package testutil

import (
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Verdict is engine's verdict on the drift at path (a JSON pointer) in rep;
// the test fails when rep has no such drift or no such verdict.
// (Tests of package model itself cannot use it: testutil imports model.)
func Verdict(t testing.TB, rep *model.Report, path string, engine model.Engine) model.Verdict {
	t.Helper()
	found := false
	for _, d := range rep.Drifts {
		if d.Path != path {
			continue
		}
		found = true
		for _, v := range d.Verdicts {
			if v.Engine == engine {
				return v
			}
		}
	}
	if found {
		t.Fatalf("no %s verdict at %s in %+v", engine, path, rep.Drifts)
	} else {
		t.Fatalf("no drift at %s in %+v", path, rep.Drifts)
	}
	return model.Verdict{}
}

// Note is rep's first note with reason, or nil.
func Note(rep *model.Report, reason string) *model.Note {
	for i := range rep.Notes {
		if rep.Notes[i].Reason == reason {
			return &rep.Notes[i]
		}
	}
	return nil
}
