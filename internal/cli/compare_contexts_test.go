package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// cmRule is an argocd-cm ignoreDifferences rule as the Argo CD adapter
// reads it from a cluster.
func cmRule(kind, ptr string) model.Rule {
	return model.Rule{Engine: model.Engine("argocd"), Type: "argocd.ignoreDifferences", Scope: model.ScopeDiff,
		Origin: model.Origin{Object: "ConfigMap argocd/argocd-cm", Field: "data[resource.customizations.ignoreDifferences.apps_" + kind + "]"},
		Target: model.Selector{Group: "apps", Kind: kind, Syntax: model.MatchGlob}, JSONPointers: []string{ptr}}
}

// perContext is a fake loader: each context's cluster holds the given
// rules; a context missing from the map is unreachable. It counts the
// reads per context.
func perContext(rules map[string][]model.Rule, reads map[string]int) inputLoader {
	return func(_ context.Context, g *GlobalOptions, f *RuleSourceFlags) (*ruleInputs, error) {
		if !f.FromCluster || len(f.Paths) > 0 {
			return nil, errors.New("a context is read from its cluster only")
		}
		c := *g.ConfigFlags.Context
		reads[c]++
		rs, ok := rules[c]
		if !ok {
			return nil, &cluster.UnreachableError{Host: c + ".example:6443", Err: errors.New("connection refused")}
		}
		return &ruleInputs{Rules: append([]model.Rule(nil), rs...), Read: 1}, nil
	}
}

func TestCompareContextsSideBySide(t *testing.T) {
	hubs := map[string][]model.Rule{
		"hub-a": {cmRule("Deployment", "/spec/replicas"), cmRule("StatefulSet", "/spec/replicas")},
		"hub-b": {cmRule("Deployment", "/spec/replicas")},
	}
	g, out, errOut := testGlobals()
	o := NewCompareOptions(g)
	reads := map[string]int{}
	o.load = perContext(hubs, reads)
	cmd := newCompareCmd(o)
	cmd.SetArgs([]string{"--contexts", "hub-a,hub-b,gone", "-o", "json"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if reads["hub-a"] != 1 || reads["hub-b"] != 1 || reads["gone"] != 1 {
		t.Errorf("reads per context %v; want one each", reads)
	}
	if !strings.Contains(errOut.String(), "warning: skipped context gone: ") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("stderr %q; want one warning for the unreachable context", errOut)
	}
	var c compare.Comparison
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, r := range c.Results {
		var cps []string
		for _, cp := range r.Counterparts {
			cps = append(cps, cp.Origin.Context)
		}
		got[r.Rule.Origin.Context+" "+r.Rule.Target.Kind] = string(r.Status) + " " + strings.Join(cps, ",")
	}
	want := map[string]string{
		"hub-a Deployment":  "equivalent hub-b",
		"hub-a StatefulSet": "only-argocd@hub-a ",
		"hub-b Deployment":  "equivalent hub-a",
	}
	if len(got) != len(want) {
		t.Errorf("results %v; want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}

	// The table has a context column and names the other side's context.
	g, out, _ = testGlobals()
	o = NewCompareOptions(g)
	o.load = perContext(hubs, map[string]int{})
	cmd = newCompareCmd(o)
	cmd.SetArgs([]string{"--contexts", "hub-a,hub-b"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"ENGINE  CONTEXT", "argocd  hub-a", "in context hub-b", "3 rule(s): 2 equivalent, 1 only-argocd@hub-a"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
}

func TestCompareContextsAllUnreachable(t *testing.T) {
	g, _, errOut := testGlobals()
	o := NewCompareOptions(g)
	o.load = perContext(nil, map[string]int{})
	cmd := newCompareCmd(o)
	cmd.SetArgs([]string{"--contexts", "a,b"})
	err := cmd.ExecuteContext(context.Background())
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitFailure || strings.Count(errOut.String(), "warning: skipped context ") != 2 {
		t.Errorf("err %v, stderr %q; want exit 2 after one warning per context", err, errOut)
	}
}

func TestCompareContextsFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--contexts", "a,b", "--from-cluster"},
		{"--contexts", "a,b", "--to", "flux"},
		{"--contexts", "a,a"},
		{"--contexts", "a,b", "--context", "c"},
	} {
		g, _, _ := testGlobals()
		o := NewCompareOptions(g)
		o.load = perContext(nil, map[string]int{})
		cmd := newCompareCmd(o)
		g.ConfigFlags.AddFlags(cmd.PersistentFlags())
		cmd.SetArgs(args)
		err := cmd.ExecuteContext(context.Background())
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != ExitFailure {
			t.Errorf("%v: err %v; want a usage error (exit 2)", args, err)
		}
	}
}
