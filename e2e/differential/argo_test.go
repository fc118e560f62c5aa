package differential

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDrawArgoKeepsTheFluxScenarioAndCoversSettings(t *testing.T) {
	names, tracking := map[string]bool{}, map[string]bool{}
	for seed := uint64(0); seed < 1000; seed++ {
		a, f := DrawArgo(seed), Draw(seed)
		if !reflect.DeepEqual(a, DrawArgo(seed)) {
			t.Fatalf("seed %d drew two Argo CD scenarios", seed)
		}
		// The object, Git commits and writers are the engine-neutral part.
		if a.Object.ID != f.Object.ID || a.WithDefaults != f.WithDefaults || !reflect.DeepEqual(a.Changes, f.Changes) {
			t.Fatalf("seed %d: the Argo CD scenario changed the Flux one's object or changes:\n%s\n%s", seed, a, f)
		}
		for _, s := range a.Settings {
			names[s.Name] = true
			if s.Spec != nil || s.Annotation[0] != "" || s.Label[0] != "" {
				t.Fatalf("seed %d: Flux setting %s in an Argo CD scenario", seed, s.Name)
			}
		}
		tracking[a.Tracking] = true
	}
	for _, n := range []string{"ignore-pointer", "ignore-jq", "ignore-managers", "respect-ignore", "server-side-apply", "server-side-diff", "self-heal"} {
		if !names[n] {
			t.Errorf("setting %s never drawn", n)
		}
	}
	for _, tr := range argoTracking {
		if !tracking[tr] {
			t.Errorf("tracking %s never drawn", tr)
		}
	}
}

func TestJQPath(t *testing.T) {
	for ptr, want := range map[string]string{
		"/spec/replicas": ".spec.replicas",
		"/metadata/labels/app.kubernetes.io~1part-of": `.metadata.labels["app.kubernetes.io/part-of"]`,
		"/data/LOG_LEVEL": ".data.LOG_LEVEL",
	} {
		if got := JQPath(ptr); got != want {
			t.Errorf("JQPath(%s) = %s, want %s", ptr, got, want)
		}
	}
}

// TestScoreArgoClasses: every class can be reached, from each side.
func TestScoreArgoClasses(t *testing.T) {
	classes := func(fs []Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Path+" "+f.Class)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name    string
		fields  []ArgoField
		truth   ArgoTruth
		touched []string
		exit    int
		want    string
	}{
		{"agreed drift", []ArgoField{{Field: Field{Path: "/spec/replicas", Verdict: "reported"}}}, ArgoTruth{Diff: []string{"/spec/replicas"}, OutOfSync: true},
			[]string{"/spec/replicas"}, 1, "/spec/replicas agreed"},
		{"false drift", []ArgoField{{Field: Field{Path: "/metadata/labels/x", Verdict: "reported"}}}, ArgoTruth{}, []string{"/metadata/labels/x"}, 1,
			"/metadata/labels/x wrong,exit wrong"},
		{"drift kept", []ArgoField{{Field: Field{Path: "/spec/replicas", Verdict: "ignored"}}}, ArgoTruth{Diff: []string{"/spec/replicas"}, OutOfSync: true},
			[]string{"/spec/replicas"}, 1, "/spec/replicas wrong"},
		{"missed field and exit", nil, ArgoTruth{Diff: []string{"/spec/replicas"}, OutOfSync: true}, nil, 0,
			"/spec/replicas missed,exit missed"},
		{"unknown shown", []ArgoField{{Field: Field{Path: "/spec/replicas", Verdict: "unknown"}}}, ArgoTruth{Diff: []string{"/spec/replicas"}, OutOfSync: true},
			nil, 1, "/spec/replicas missed"},
		{"noise", []ArgoField{{Field: Field{Path: "/metadata/labels/app.kubernetes.io~1instance", Verdict: "left-alone"}}}, ArgoTruth{}, nil, 0,
			"/metadata/labels/app.kubernetes.io~1instance noise"},
		{"self-heal changed a kept field", []ArgoField{{Field: Field{Path: "/metadata/labels/x", Verdict: "left-alone"}}},
			ArgoTruth{SelfHeal: true, Healed: []string{"/metadata/labels/x"}}, []string{"/metadata/labels/x"}, 0, "/metadata/labels/x wrong"},
		{"self-heal kept a drift field", []ArgoField{{Field: Field{Path: "/spec/replicas", Verdict: "reverted"}}},
			ArgoTruth{Diff: []string{"/spec/replicas"}, OutOfSync: true, SelfHeal: true}, []string{"/spec/replicas"}, 1, "/spec/replicas wrong"},
		{"self-heal cannot change a reported field", []ArgoField{{Field: Field{Path: "/spec/selector/app", Verdict: "reported"}}},
			ArgoTruth{Diff: []string{"/spec/selector"}, OutOfSync: true, SelfHeal: true}, []string{"/spec/selector/app"}, 1, "/spec/selector/app agreed"},
		{"self-heal changed a reported field", []ArgoField{{Field: Field{Path: "/spec/selector/app", Verdict: "reported"}}},
			ArgoTruth{Diff: []string{"/spec/selector"}, OutOfSync: true, SelfHeal: true, Healed: []string{"/spec/selector"}}, []string{"/spec/selector/app"}, 1, "/spec/selector/app wrong"},
		{"self-heal reapplies an ignored field", []ArgoField{{Field: Field{Path: "/spec/replicas", Verdict: "ignored"}, Resync: true}},
			ArgoTruth{SelfHeal: true, Healed: []string{"/spec/replicas"}}, []string{"/spec/replicas"}, 0, "/spec/replicas agreed"},
		{"self-heal deletes a field the diff hides", []ArgoField{{Field: Field{Path: "/metadata/labels/audited", Verdict: "left-alone"}, Resync: true}},
			ArgoTruth{Diff: []string{"/spec/x"}, OutOfSync: true, SelfHeal: true, Healed: []string{"/spec/x", "/metadata/labels/audited"}},
			[]string{"/metadata/labels/audited"}, 1, "/metadata/labels/audited agreed,/spec/x missed"},
		{"self-heal keeps a shown field the tool says a sync keeps", []ArgoField{{Field: Field{Path: "/metadata/labels/quota", Verdict: "reported"}, Kept: true}},
			ArgoTruth{Diff: []string{"/metadata/labels/quota"}, OutOfSync: true, SelfHeal: true}, []string{"/metadata/labels/quota"}, 1, "/metadata/labels/quota agreed"},
		{"self-heal changed a shown field the tool says a sync keeps", []ArgoField{{Field: Field{Path: "/metadata/labels/quota", Verdict: "reported"}, Kept: true}},
			ArgoTruth{Diff: []string{"/metadata/labels/quota"}, OutOfSync: true, SelfHeal: true, Healed: []string{"/metadata/labels/quota"}}, []string{"/metadata/labels/quota"}, 1, "/metadata/labels/quota wrong"},
		{"self-heal sync failed", []ArgoField{{Field: Field{Path: "/spec/replicas", Verdict: "reverted"}}},
			ArgoTruth{Diff: []string{"/spec/replicas"}, OutOfSync: true, SelfHeal: true, SyncFailed: "Invalid"}, []string{"/spec/replicas"}, 1, "/spec/replicas wrong"},
		{"no verdict", []ArgoField{{Field: Field{Path: "/data/token", Verdict: "none"}}}, ArgoTruth{Diff: []string{"/data/token"}, OutOfSync: true},
			[]string{"/data/token"}, 1, "/data/token missed"},
		{"shown on a Synced Secret, said", []ArgoField{{Field: Field{Path: "/data/token", Verdict: "left-alone"}, ShownSynced: true}},
			ArgoTruth{Diff: []string{"/data/token"}, SecretShownSynced: true}, []string{"/data/token"}, 0, "/data/token agreed"},
		{"shown on a Synced Secret, not said", []ArgoField{{Field: Field{Path: "/data/token", Verdict: "left-alone"}}},
			ArgoTruth{Diff: []string{"/data/token"}, SecretShownSynced: true}, []string{"/data/token"}, 0, "/data/token missed"},
		{"shown on a Synced Secret, called drift", []ArgoField{{Field: Field{Path: "/data/token", Verdict: "reported"}}},
			ArgoTruth{Diff: []string{"/data/token"}, SecretShownSynced: true}, []string{"/data/token"}, 1, "/data/token wrong,exit wrong"},
		{"shown on a Synced Secret, not named", nil,
			ArgoTruth{Diff: []string{"/data/token"}, SecretShownSynced: true}, []string{"/data/token"}, 0, "/data/token missed"},
		{"self-heal missed", nil, ArgoTruth{SelfHeal: true, Healed: []string{"/spec/paused"}}, nil, 0, "/spec/paused missed"},
	} {
		got := strings.Join(classes(ScoreArgo(tc.fields, tc.truth, tc.touched, tc.exit)), ",")
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
