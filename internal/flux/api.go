package flux

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Options configure the Flux adapter.
type Options struct {
	// Reader reads Kustomizations and HelmReleases from the cluster; nil
	// means offline (files only).
	Reader model.Reader
	// Documents are objects read from files: Kustomizations, HelmReleases
	// and manifests carrying Flux marks. Their rules carry file:line:col.
	// A Flux object in the files wins over the cluster's copy.
	Documents []source.Document
	// RESTConfig is only used for ServerDryRun.
	RESTConfig *rest.Config
	// RESTMapper, when set, maps kinds for the dry-run client instead of
	// a discovery of its own: the command's disk-cached mapper, so that a
	// dry-run adds its PATCH and no /api, /apis request.
	RESTMapper func() (meta.RESTMapper, error)
	// ServerDryRun computes Flux's exact view with a server-side apply
	// dry-run as kustomize-controller or helm-controller (needs patch RBAC;
	// nothing is persisted).
	ServerDryRun bool
}

// New returns the Flux adapter.
func New(opts Options) (*Adapter, error) {
	a, err := newAdapter(opts.Reader, fromDocuments(opts.Documents), opts.RESTConfig, opts.ServerDryRun)
	if err != nil {
		return nil, err
	}
	a.restMapper = opts.RESTMapper
	return a, nil
}

// RulesFromDocuments returns every Flux rule in the documents: each
// Kustomization .spec.ignore[i], each HelmRelease
// .spec.driftDetection.ignore[i], and the ssa, reconcile, prune and
// driftDetection marks on manifests. Each rule's origin names the file
// position and the object and field path. A rule that cannot be evaluated
// (invalid regex, label selector or pointer, unknown ssa value) is returned
// with Rule.Error set and also as an error; the others are unaffected.
func RulesFromDocuments(docs []source.Document) ([]model.Rule, []error) {
	rules, errs := rulesFromDocs(fromDocuments(docs))
	model.SortRules(rules)
	return rules, errs
}

func fromDocuments(docs []source.Document) []doc {
	out := make([]doc, 0, len(docs))
	for _, d := range source.WithObject(docs) {
		out = append(out, doc{obj: d.Object, file: d.File, pos: d.Position})
	}
	return out
}
