package cli

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// validateSource checks --source and its companions against -f/-k.
func (o *ExplainOptions) validateSource() error {
	if o.Source != "" && (len(o.Filenames) > 0 || o.Kustomize != "") {
		return errors.New("--source and -f/-k are mutually exclusive: give the desired state one way")
	}
	if len(o.refs()) > 1 {
		return errors.New("explain renders one owner: give --kustomization or --helmrelease once")
	}
	return o.validate()
}

// desiredFromSource is explain's --source hook: it renders the engine
// object that applies live (its owner by ownership labels, or
// --kustomization) from the checkout and picks live's document, which
// then goes the way of a -f document (the Flux adapter reads the ssa marks
// of the rendered objects as it reads those of -f files), so verdicts are
// those of -f with the rendered files.
func (o *ExplainOptions) desiredFromSource(ctx context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, model.DesiredSource, error) {
	src := model.SourceRendered
	env, err := o.env()
	if err != nil {
		return nil, src, err
	}
	env.Secrets = o.Secrets
	if o.client != nil {
		env.Reader = o.client
	}
	ref, objs, err := render.ForLive(ctx, env, engine.Renderers(), live, o.owner())
	if err != nil {
		return nil, src, err
	}
	o.remember(objs...)
	for _, obj := range objs {
		o.fileDocs = append(o.fileDocs, source.Document{Object: obj, File: ref.String()})
	}
	obj, err := drift.PickDocument(objs, live, o.namespace)
	if err != nil {
		return nil, src, fmt.Errorf("%s rendered from %s: %w", ref, o.Source, err)
	}
	return obj, src, nil
}
