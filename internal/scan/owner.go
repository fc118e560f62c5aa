package scan

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// labelOwner is a minimal model.Adapter that only tells ownership from the
// engines' well-known marks, without reading the cluster, and has no rules
// (so no verdicts). It stands in while an engine's real adapter is not
// available to the CLI; one code path either way: the scan only ever talks
// to model.Adapter.
type labelOwner struct{ engine model.Engine }

// OwnershipOnly returns the stand-in adapter of an engine.
func OwnershipOnly(e model.Engine) model.Adapter { return labelOwner{engine: e} }

func (l labelOwner) Engine() model.Engine { return l.engine }

func (l labelOwner) Owner(obj *unstructured.Unstructured) *model.Owner {
	switch l.engine {
	case model.EngineArgoCD:
		// Argo CD 3's default tracking (docs/user-guide/resource_tracking.md):
		// "<app>:<group>/<Kind>:<ns>/<name>", app as "<ns>_<name>" outside
		// the control-plane namespace.
		id := obj.GetAnnotations()["argocd.argoproj.io/tracking-id"]
		app, _, ok := strings.Cut(id, ":")
		if !ok || app == "" {
			return nil
		}
		o := &model.Owner{Engine: model.EngineArgoCD, Kind: "Application", Name: app, Via: "annotation argocd.argoproj.io/tracking-id"}
		if ns, name, ok := strings.Cut(app, "_"); ok {
			o.Namespace, o.Name = ns, name
		}
		return o
	case model.EngineFlux:
		// fluxcd/pkg ssa GetOwnerLabels: <kind>.toolkit.fluxcd.io/name,namespace.
		labels := obj.GetLabels()
		for _, k := range []struct{ prefix, kind string }{
			{"kustomize.toolkit.fluxcd.io/", "Kustomization"},
			{"helm.toolkit.fluxcd.io/", "HelmRelease"},
		} {
			name, ns := labels[k.prefix+"name"], labels[k.prefix+"namespace"]
			if name != "" && ns != "" {
				return &model.Owner{Engine: model.EngineFlux, Kind: k.kind, Namespace: ns, Name: name,
					Via: "labels " + k.prefix + "name,namespace"}
			}
		}
	}
	return nil
}

func (l labelOwner) Judge(context.Context, model.JudgeInput) error { return nil }

func (l labelOwner) Rules(context.Context) ([]model.Rule, error) { return nil, nil }
