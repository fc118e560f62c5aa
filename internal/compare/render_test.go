package compare

import (
	"path/filepath"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// golden compares got with testdata/<name>.golden (rewritten with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name+".golden"), got)
}

func inApp(b *ruleB, app string, i int) model.Rule {
	r := b.V()
	r.Origin = model.Origin{File: "apps/" + app + ".yaml", Line: 20 + 4*i, Object: "Application argocd/" + app, Field: ".spec.ignoreDifferences[" + string(rune('0'+i)) + "]"}
	return r
}

func inKS(b *ruleB, ks string, i int) model.Rule {
	r := b.V()
	r.Origin = model.Origin{File: "clusters/prod/" + ks + ".yaml", Line: 12 + 5*i, Object: "Kustomization flux-system/" + ks, Field: ".spec.ignore[" + string(rune('0'+i)) + "]"}
	return r
}

func argoSample() []model.Rule {
	return []model.Rule{
		inApp(argo("apps", "Deployment").ptr("/spec/replicas"), "shop", 0),
		inApp(argo("apps", "Deployment").managers("kube-controller-manager"), "shop", 1),
		inApp(argo("apps", "Deployment").jq(`.spec.template.spec.containers[] | select(.name == "istio-proxy") | .image`), "shop", 2),
		inApp(argo("", "Service").ptr("/spec/clusterIP"), "shop", 3),
		inApp(argo("apps", "Deployment").name("web").jq(`.metadata.labels["app.kubernetes.io/version"]`), "shop", 4),
		inApp(argo("admissionregistration.k8s.io", "MutatingWebhookConfiguration").jq(".webhooks[]?.clientConfig.caBundle"), "platform", 0),
		inApp(argo("*", "Secret").ptr("/data"), "platform", 1),
	}
}

func fluxSample() []model.Rule {
	return []model.Rule{
		inKS(flux("apps", "Deployment").ptr("/spec/replicas"), "shop", 0),
		inKS(flux("", "Service").ptr("/spec/clusterIP"), "shop", 1),
		inKS(flux("", "Deployment").labels("autoscaling.example.com/vpa=enabled").ptr("/spec/template/spec/containers/0/resources"), "shop", 2),
		inKS(flux("", "StatefulSet").name("cache-(a|b)").ptr("/spec/template/spec/containers/0/env"), "shop", 3),
		inKS(flux("networking.k8s.io", "Ingress").ptr("/metadata/annotations/x"), "infrastructure", 0),
		inKS(flux("^$", "Secret").name("tls").ptr(""), "infrastructure", 1),
	}
}

func TestRenderGoldens(t *testing.T) {
	cases := []struct {
		name  string
		rules []model.Rule
		to    model.Engine
		form  string
	}{
		{"translate-argocd-to-kustomization", argoSample(), model.Engine("flux"), "Kustomization"},
		{"translate-argocd-to-helmrelease", argoSample(), model.Engine("flux"), "HelmRelease"},
		{"translate-flux-to-application", fluxSample(), model.Engine("argocd"), "Application"},
		{"translate-flux-to-argocd-cm", fluxSample(), model.Engine("argocd"), "argocd-cm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Render(translateT(t, c.rules, c.to, nil), c.to, c.form, testEngines)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b)
		})
	}
}
