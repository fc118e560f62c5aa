package model

import (
	"reflect"
	"testing"
)

func TestOriginCompare(t *testing.T) {
	// In reading order: file, line, column, then object and field.
	ordered := []Origin{
		{Object: "ConfigMap argocd/argocd-cm", Field: "data[a]"},
		{Object: "ConfigMap argocd/argocd-cm", Field: "data[b]"},
		{File: "a.yaml", Line: 2, Column: 9},
		{File: "a.yaml", Line: 10, Column: 1},
		{File: "a.yaml", Line: 10, Column: 3, Object: "Application x/a"},
		{File: "a.yaml", Line: 10, Column: 3, Object: "Application x/b"},
		{File: "b.yaml", Line: 1},
	}
	for i := range ordered {
		for j := range ordered {
			got := ordered[i].Compare(ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestSortRules(t *testing.T) {
	rs := []Rule{
		{Engine: "flux", Origin: Origin{File: "a.yaml", Line: 1}},
		{Engine: "argocd", Origin: Origin{File: "b.yaml", Line: 5}},
		{Engine: "argocd", Origin: Origin{File: "b.yaml", Line: 2}},
	}
	SortRules(rs)
	var got []string
	for _, r := range rs {
		got = append(got, string(r.Engine)+" "+r.Origin.String())
	}
	want := []string{"argocd b.yaml:2", "argocd b.yaml:5", "flux a.yaml:1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SortRules = %q, want %q", got, want)
	}
}
