package argocd

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

const appSetYAML = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: guestbook
  namespace: argocd
spec:
  generators:
  - list:
      elements:
      - name: dev
        server: https://kubernetes.default.svc
  - clusters:
      selector:
        matchLabels:
          env: prod
  - git:
      repoURL: https://github.com/argoproj/argocd-example-apps
      directories:
      - path: '*'
  template:
    metadata:
      name: 'guestbook-{{name}}'
    spec:
      destination:
        server: '{{ server }}'
        namespace: guestbook
      ignoreDifferences:
      - group: apps
        kind: Deployment
        jsonPointers:
        - /spec/replicas
---
apiVersion: v1
kind: Secret
metadata:
  name: prod
  namespace: argocd
  labels:
    argocd.argoproj.io/secret-type: cluster
    env: prod
stringData:
  name: prod
  server: https://prod.example.com
`

func deployment(app string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "guestbook",
			"annotations": map[string]any{AnnotationTrackingID: app + ":apps/Deployment:guestbook/web"}},
		"spec": map[string]any{"replicas": int64(3)},
	}}
}

// normalize --rules applies an ApplicationSet template's rules to the
// objects of the Applications its list and cluster generators make, and
// says which generators it could not expand.
func TestApplicationSetListAndClusterGeneratorsAreExpanded(t *testing.T) {
	docs, err := source.Decode([]byte(appSetYAML), "appset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"guestbook-dev", "guestbook-prod"} {
		out, err := a.Normalize(context.Background(), deployment(app))
		if err != nil {
			t.Fatal(err)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(out.Object, "spec", "replicas"); found {
			t.Errorf("%s: /spec/replicas not removed: the generated Application's rule was not applied", app)
		}
	}
	// The local cluster is not generated: the generator has a selector.
	out, _ := a.Normalize(context.Background(), deployment("guestbook-in-cluster"))
	if _, found, _ := unstructured.NestedFieldNoCopy(out.Object, "spec", "replicas"); !found {
		t.Error("guestbook-in-cluster is not generated (selector), yet its rule was applied")
	}
	var notes []string
	for _, n := range a.FileNotes() {
		notes = append(notes, n.Message)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "generators[2] (git) needs a repository") || !strings.Contains(notes[0], "not expanded offline") {
		t.Errorf("notes %q, want one naming the git generator", notes)
	}
	rules, _ := RulesFromDocuments(docs)
	n := 0
	for _, r := range rules {
		if strings.HasPrefix(r.Origin.Object, "ApplicationSet") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d ApplicationSet rules, want the template's one (generated Applications are not listed again)", n)
	}
}

func TestFastTemplateLeavesUnknownTagsAlone(t *testing.T) {
	got := fastTemplate("{{ a }}-{{b}}-{{ c }}", map[string]any{"a": "x", "b": "y"})
	if got != "x-y-{{ c }}" {
		t.Errorf("got %q", got)
	}
}
