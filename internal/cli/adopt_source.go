package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubectl-drift/kubectl-drift/internal/adopt"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// sourceLocator is adopt's --source hook: the engine object that applies
// the live object (by its ownership labels, or --kustomization /
// --helmrelease) says where its manifests are in the checkout, and that
// location becomes the locator -k, -f or --chart would have given.
func (o *AdoptOptions) sourceLocator(ctx context.Context, ex *explained) (adopt.Locator, error) {
	var reader model.Reader
	if ex.client != nil {
		reader = ex.client
	}
	env, err := o.renderEnv(o.GlobalOptions, reader, ex.client)
	if err != nil {
		return nil, err
	}
	defer func() { _ = env.Close() }()
	ref, loc, err := render.LocateForLive(ctx, env, engine.Renderers(ex.engineFlags), ex.live, o.owner())
	if err != nil {
		return nil, err
	}
	return locatorFor(ref, loc)
}

// locatorFor turns an engine-neutral location into adopt's locator.
func locatorFor(ref render.Ref, loc *render.Location) (adopt.Locator, error) {
	switch loc.Kind {
	case render.LocateKustomize:
		return adopt.KustomizeLocator{Dir: loc.Dir}, nil
	case render.LocateFiles:
		var ls adopt.FirstLocator
		if len(loc.Files) > 0 {
			ls = append(ls, adopt.FilesLocator{Files: loc.Files})
		}
		for _, d := range loc.KustomizeDirs {
			ls = append(ls, adopt.KustomizeLocator{Dir: d})
		}
		if len(ls) == 0 {
			return nil, fmt.Errorf("%s: %s holds no manifest", ref, loc.Dir)
		}
		return ls, nil
	case render.LocateHelm:
		l := adopt.LayeredHelmLocator{Helm: adopt.HelmLocator{Chart: loc.Dir}}
		for _, v := range loc.Values {
			layer := adopt.ValuesLayer{File: v.File, Prefix: v.Prefix}
			if v.Object != nil {
				id := render.RefOf(v.Object)
				layer.Object = &adopt.Object{Group: id.GVK.Group, Kind: id.GVK.Kind, Namespace: id.Namespace, Name: id.Name}
			}
			l.Layers = append(l.Layers, layer)
		}
		return l, nil
	}
	return nil, errors.New(ref.String() + ": its sources cannot be edited (" + string(loc.Kind) + ")")
}
