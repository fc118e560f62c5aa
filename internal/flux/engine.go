package flux

import (
	"context"
	"errors"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	fluxrender "github.com/kubectl-drift/kubectl-drift/internal/flux/render"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Flux's entry in the engine registry: everything commands need to know
// about Flux, so that none of them names it.
func init() { engine.Register(Descriptor()) }

// Descriptor describes Flux to the engine registry.
func Descriptor() engine.Descriptor {
	return engine.Descriptor{
		Name:               Engine,
		Title:              "Flux",
		RuleObjects:        "Flux Kustomization/HelmRelease",
		OwnershipRules:     "Flux field ownership",
		IsManager:          IsManager,
		APIGroups:          []string{KustomizeGroup, HelmGroup, SourceGroup},
		IsEngineObject:     isEngineObject,
		OwnerLabels:        []string{KustomizeNameLabel, KustomizeNamespaceLabel, HelmNameLabel, HelmNamespaceLabel},
		RulesFromDocuments: RulesFromDocuments,
		Compare:            CompareSemantics(),
		Suggest:            SuggestSemantics(),
		Host:               "flux",
		Audit:              AuditSemantics(),
		New:                newForCommand,
		Renderer:           fluxrender.New(),
		// The order render has always listed them in (kustomizations
		// first); a name alone is in flux-system, where `flux bootstrap`
		// puts its objects.
		OwnerKinds: []engine.OwnerKind{
			{GVK: kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind), Flag: "kustomization",
				Usage: "Flux Kustomization to render, NAMESPACE/NAME (NAME alone: " + DefaultNamespace + "); may be repeated", Namespace: DefaultNamespace},
			{GVK: helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind), Flag: "helmrelease",
				Usage: "Flux HelmRelease to render, NAMESPACE/NAME (NAME alone: " + DefaultNamespace + "); may be repeated", Namespace: DefaultNamespace},
		},
		Example: example,
	}
}

// DefaultNamespace is the namespace of a default install's objects
// (`flux bootstrap`'s flux-system).
const DefaultNamespace = "flux-system"

// example is Flux's part of a command's example text.
func example(command, bin string) string {
	if command != "render" {
		return ""
	}
	return `  # Render every Flux Kustomization of a checkout
  ` + bin + ` render --source .

  # Render one, with postBuild.substituteFrom read from the cluster
  ` + bin + ` render --source . --kustomization ` + DefaultNamespace + `/apps --from-cluster`
}

// Engine is Flux's name: the --engine value and the engine of its
// verdicts, rules and notes.
const Engine model.Engine = "flux"

// The API groups whose kinds hold Flux's rules.
const (
	KustomizeGroup = "kustomize.toolkit.fluxcd.io"
	HelmGroup      = "helm.toolkit.fluxcd.io"
	// SourceGroup holds the sources (GitRepository, OCIRepository...)
	// whose ref a render reads: listed once per kind like the rule
	// objects, never fetched one GET per owner.
	SourceGroup = "source.toolkit.fluxcd.io"
)

// IsManager reports Flux's field managers: the controllers apply as
// "kustomize-controller" and "helm-controller" (ssa.Owner{Field:
// controllerName} in each controller's main.go), patch status as
// "gotk-<controller>", and the flux CLI writes as "flux-client-side-apply"
// (kustomize-controller docs/spec/v1/kustomizations.md, ssa Override).
// manager is lower-case.
func IsManager(manager string) bool {
	switch manager {
	case "kustomize-controller", "helm-controller", "flux-client-side-apply":
		return true
	}
	return strings.HasPrefix(manager, "gotk-")
}

// isEngineObject: every *.toolkit.fluxcd.io object is Flux's own.
func isEngineObject(o *unstructured.Unstructured) bool {
	return strings.HasSuffix(o.GroupVersionKind().Group, ".toolkit.fluxcd.io")
}

// newForCommand builds the adapter a command needs: Kustomizations and
// HelmReleases from the rule files (which win over the cluster's copies
// and give rules a file:line origin) and from the cluster, plus explain's
// -f documents (read once by the command) so that ssa/reconcile marks on
// the manifest get their file and document line.
func newForCommand(ctx context.Context, cfg engine.Config) (model.Adapter, []model.Note, error) {
	if cfg.Purpose == engine.ForOwner {
		a, err := New(Options{})
		return a, nil, err
	}
	docs := append(append([]source.Document(nil), cfg.Documents...), cfg.Manifests...)
	opts := Options{Reader: cfg.Reader, Documents: docs}
	if cfg.ServerDryRun {
		if cfg.Offline {
			return nil, nil, errors.New("--server-dry-run needs the cluster: it cannot be used with --live-file")
		}
		rc, err := cfg.RESTConfig()
		if err != nil {
			return nil, nil, err
		}
		opts.RESTConfig, opts.ServerDryRun, opts.RESTMapper = rc, true, cfg.RESTMapper
	}
	a, err := New(opts)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Purpose == engine.ForRules {
		return ruleReader{a}, nil, nil
	}
	if cfg.Remote != nil && cfg.Purpose == engine.ForExplain {
		// Management and remote cluster: the owner must apply here.
		return a, remoteNotes(ctx, cfg.Reader, a.Owner(cfg.Live), cfg.Remote), nil
	}
	return a, nil, nil
}

// ruleReader reads rules for rules and compare. Errors in files are on the
// rules themselves (Rule.Error); the cluster's are returned, one per kind.
type ruleReader struct{ *Adapter }

func (r ruleReader) ReadRules(ctx context.Context) ([]model.Rule, int, []error) {
	rules, err := r.Rules(ctx)
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	return rules, r.Listed(), errs
}
