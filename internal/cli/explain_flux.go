package cli

import (
	"errors"
	"slices"

	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// fluxAdapter builds explain's Flux adapter: Kustomizations and
// HelmReleases from --rules files (which win over the cluster's copies and
// give rules a file:line origin) and from the cluster, plus the -f files so
// that ssa/reconcile marks on the manifest get their file position. A
// stdin manifest ("-") was already consumed for the desired state; its
// marks are still read from the object, without a position.
func fluxAdapter(o *ExplainOptions, ruleDocs []source.Document) (model.Adapter, error) {
	docs := append([]source.Document(nil), ruleDocs...)
	if len(o.Filenames) > 0 && !slices.Contains(o.Filenames, "-") {
		if more, err := source.LoadFiles(o.Filenames, nil, source.Options{}); err == nil {
			docs = append(docs, more...)
		}
	}
	opts := flux.Options{Documents: docs}
	if o.client != nil {
		opts.Reader = o.client
	}
	if o.ServerDryRun {
		if o.LiveFile != "" {
			return nil, errors.New("--server-dry-run needs the cluster: it cannot be used with --live-file")
		}
		cfg, err := o.ConfigFlags.ToRESTConfig()
		if err != nil {
			return nil, err
		}
		opts.RESTConfig, opts.ServerDryRun = cfg, true
	}
	return flux.New(opts)
}
