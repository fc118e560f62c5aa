package adopt

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// Pick returns the fields to adopt from r, the report of the live object
// live: those want names (--field: a field path of a drift, or a JSON
// pointer into live), else every drift an engine would revert or reports
// (what makes the object out of sync). Values are the live object's own.
func Pick(r *model.Report, live map[string]any, want []string) ([]Field, error) {
	var out []Field
	add := func(d model.FieldDrift) {
		f := Field{Pointer: d.Path, Remove: d.Change == model.Removed}
		if !f.Remove {
			v, ok := jsonpointer.Get(live, d.Path)
			if !ok {
				return
			}
			f.Value = v
		}
		out = append(out, f)
	}
	if len(want) == 0 {
		for _, d := range r.Drifts {
			for _, v := range d.Verdicts {
				if v.Kind == model.Reverted || v.Kind == model.Reported {
					add(d)
					break
				}
			}
		}
		return out, nil
	}
	for _, w := range want {
		found := false
		for _, d := range r.Drifts {
			if d.Path == w || d.FieldPath == w || strings.TrimPrefix(d.FieldPath, ".") == strings.TrimPrefix(w, ".") {
				add(d)
				found = true
			}
		}
		if found {
			continue
		}
		if !strings.HasPrefix(w, "/") {
			return nil, fmt.Errorf("--field %s: no drifted field has this path (drifted: %s)", w, driftedPaths(r))
		}
		v, ok := jsonpointer.Get(live, w)
		if !ok {
			return nil, fmt.Errorf("--field %s: the live object has no such field", w)
		}
		out = append(out, Field{Pointer: w, Value: v})
	}
	return out, nil
}

// driftedPaths lists the drifted field paths, for an error.
func driftedPaths(r *model.Report) string {
	var ps []string
	for _, d := range r.Drifts {
		ps = append(ps, d.FieldPath)
	}
	sort.Strings(ps)
	if len(ps) == 0 {
		return "none"
	}
	return strings.Join(ps, ", ")
}
