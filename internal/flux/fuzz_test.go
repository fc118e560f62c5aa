package flux

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// FuzzRules feeds arbitrary Flux objects (Kustomizations, HelmReleases,
// manifests with Flux marks) to the rule reader and to Judge with that
// object as the owner. Nothing may panic, Judge may not fail, and every
// rule must say where it came from.
func FuzzRules(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "rules", "*.yaml"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(kustomization))
	f.Add([]byte(strings.Replace(helmRelease, "%s", "warn", 1)))
	live := liveDeployment(f, "web-1", "    tier: db", "", fluxApplyAll)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(data, &m); err != nil {
			return
		}
		u := &unstructured.Unstructured{Object: m}
		rules, _ := rulesFromDocs([]doc{{obj: u, file: "f.yaml", pos: func(string) (int, int) { return 1, 1 }}})
		for _, r := range rules {
			if r.Engine != Engine || r.Origin.Field == "" || r.Origin.File != "f.yaml" || r.Type == "" {
				t.Fatalf("rule without origin or type: %+v", r)
			}
		}
		if !isKustomization(u) && !isHelmRelease(u) {
			return
		}
		// Make the fuzzed object the owner of the live Deployment.
		u.SetName("owner")
		u.SetNamespace("flux-system")
		l := live.DeepCopy()
		labels := l.GetLabels()
		if isHelmRelease(u) {
			labels[HelmNameLabel], labels[HelmNamespaceLabel] = "owner", "flux-system"
		} else {
			labels[KustomizeNameLabel], labels[KustomizeNamespaceLabel] = "owner", "flux-system"
		}
		l.SetLabels(labels)
		a, _ := newAdapter(nil, []doc{{obj: u}}, nil, false)
		rep := model.NewReport(model.ResourceID{Kind: "Deployment", Name: "web-1"}, model.SourceManagedFields)
		rep.Drifts = []model.FieldDrift{
			drift("/spec/replicas", model.Changed, 5, "kubectl-edit/Update"),
			drift("/spec/template/spec/containers/0/image", model.Changed, "x", "kustomize-controller/Apply"),
		}
		if err := a.Judge(context.Background(), model.JudgeInput{Live: l, Report: rep}); err != nil {
			t.Fatalf("Judge: %v", err)
		}
		for _, d := range rep.Drifts {
			if len(d.Verdicts) != 1 || d.Verdicts[0].Reason == "" {
				t.Fatalf("drift %s: verdicts %+v", d.Path, d.Verdicts)
			}
		}
	})
}
