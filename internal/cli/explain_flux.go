package cli

import (
	"errors"

	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// fluxAdapter builds explain's Flux adapter: Kustomizations and
// HelmReleases from --rules files (which win over the cluster's copies and
// give rules a file:line origin) and from the cluster, plus the -f
// documents (read once, for the desired state) so that ssa/reconcile marks
// on the manifest get their file and document line.
func fluxAdapter(o *ExplainOptions, ruleDocs []source.Document) (model.Adapter, error) {
	docs := append(append([]source.Document(nil), ruleDocs...), o.fileDocs...)
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
