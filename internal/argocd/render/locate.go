package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

var _ render.SourceLocator = (*Renderer)(nil)

// Locate implements render.SourceLocator: where the manifests of an
// Application are in the checkout, found the way Render finds them (the
// same source roots, path checks, .argocd-source overrides and type
// detection): the kustomize directory of a Kustomize source, the files
// findManifests reads for a Directory source, the chart and the values
// layered over it for a Helm source.
//
// Only what the checkout decides is located. An Application with more
// than one source that gives manifests, a chart from a Helm repository or
// an OCI source, a kustomize source whose Application settings rewrite
// values (images, replicas, patches...), and Helm parameters or a values
// string (which win over every file) are refused with the reason: a value
// written in the checkout would not be the one Argo CD applies.
func (r *Renderer) Locate(ctx context.Context, env *render.Env, obj *unstructured.Unstructured) (*render.Location, error) {
	app, err := parseApplication(obj)
	if err != nil {
		return nil, err
	}
	sources, refs, err := app.manifestSources(env)
	if err != nil {
		return nil, err
	}
	if len(sources) != 1 {
		fields := make([]string, len(sources))
		for i, ms := range sources {
			fields[i] = ms.field
		}
		return nil, fmt.Errorf("%d sources give manifests (%s): name the file with -f, -k or --chart", len(sources), strings.Join(fields, ", "))
	}
	ms := sources[0]
	s := ms.source
	switch {
	case s.Chart != "":
		return nil, fmt.Errorf("%s: chart %q comes from the Helm repository %s, not from the checkout", ms.field, s.Chart, s.RepoURL)
	case strings.HasPrefix(s.RepoURL, "oci://"):
		return nil, fmt.Errorf("%s: %s is an OCI artifact, not a checkout", ms.field, s.RepoURL)
	}
	root := env.SourceRoot(s.RepoURL)
	appPath, t, err := sourcePath(app, &s, root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ms.field, err)
	}
	switch t {
	case typeKustomize:
		if set := s.Kustomize.rewrites(); len(set) > 0 {
			return nil, fmt.Errorf("%s.kustomize sets %s, which Argo CD applies over the kustomization in the checkout: adopt with -k %s and check the Application's settings", ms.field, strings.Join(set, ", "), appPath)
		}
		return &render.Location{Kind: render.LocateKustomize, Dir: appPath}, nil
	case typeHelm:
		return r.locateHelm(ctx, env, obj, app, &s, ms, appPath, root, refs)
	case typePlugin:
		return nil, fmt.Errorf("%s: a config management plugin builds the manifests: %w", ms.field, ErrUnsupported)
	}
	d := s.Directory
	if d == nil {
		d = &directorySource{}
	}
	files, err := manifestFiles(appPath, root, d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ms.field, err)
	}
	loc := &render.Location{Kind: render.LocateFiles, Dir: appPath}
	for _, f := range files {
		// Jsonnet is a program, not a manifest to edit; the
		// .argocd-source files are the source's settings.
		name := filepath.Base(f)
		if !strings.HasSuffix(name, ".jsonnet") && name != repoSourceFile && name != fmt.Sprintf(appSourceFile, app.Metadata.Name) {
			loc.Files = append(loc.Files, f)
		}
	}
	sort.Strings(loc.Files)
	return loc, nil
}

// rewrites are the settings of a kustomize source that Argo CD applies
// over the kustomization (util/kustomize Build: `kustomize edit set
// image`, `edit set replicas`, patches, components, name prefix/suffix,
// namespace): a value the kustomization holds may not be the one built.
func (k *kustomizeSource) rewrites() []string {
	if k == nil {
		return nil
	}
	var set []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"images", len(k.Images) > 0},
		{"replicas", len(k.Replicas) > 0},
		{"patches", len(k.Patches) > 0},
		{"components", len(k.Components) > 0},
		{"namePrefix", k.NamePrefix != ""},
		{"nameSuffix", k.NameSuffix != ""},
		{"namespace", k.Namespace != ""},
	} {
		if f.on {
			set = append(set, f.name)
		}
	}
	return set
}

// locateHelm is the chart of a Helm source in the checkout and the values
// over its values.yaml, highest precedence first. Argo CD hands `helm
// template` the valueFiles in order, then values/valuesObject, then the
// parameters (renderHelm): valuesObject, edited in the Application's
// manifest in the checkout, comes first, then the value files from the
// last. Parameters and a values string are refused: adopt cannot tell
// which keys they set.
func (r *Renderer) locateHelm(ctx context.Context, env *render.Env, obj *unstructured.Unstructured, app *application, s *appSource, ms manifestSource, chartDir, root string, refs map[string]string) (*render.Location, error) {
	loc := &render.Location{Kind: render.LocateHelm, Dir: chartDir}
	h := s.Helm
	if h == nil {
		return loc, nil
	}
	hasObject := h.ValuesObject != nil && len(*h.ValuesObject) > 0 && string(*h.ValuesObject) != "null"
	switch {
	case len(h.Parameters) > 0 || len(h.FileParameters) > 0:
		return nil, fmt.Errorf("%s.helm.parameters set values over every values file: adopt with --chart %s --values FILE and check the parameters", ms.field, chartDir)
	case h.Values != "" && !hasObject:
		return nil, fmt.Errorf("%s.helm.values is a YAML string that adopt cannot edit: move it to helm.valuesObject, or adopt with --chart %s --values FILE", ms.field, chartDir)
	}
	if hasObject {
		manifest, file := env.CheckoutCopy(ctx, obj)
		if file == "" {
			return nil, fmt.Errorf("%s.helm.valuesObject is not in a file of the checkout: it cannot be edited", ms.field)
		}
		loc.Values = append(loc.Values, render.ValuesLayer{File: file, Prefix: ms.pointer + "/helm/valuesObject", Object: manifest})
	}
	vars := r.appEnv(app, s)
	for i := len(h.ValueFiles) - 1; i >= 0; i-- {
		p, err := resolveValueFile(h.ValueFiles[i], chartDir, root, refs, vars)
		if err != nil {
			return nil, fmt.Errorf("%s.helm.valueFiles: %w", ms.field, err)
		}
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if h.IgnoreMissingValueFiles {
				continue
			}
			return nil, fmt.Errorf("%s.helm.valueFiles: %s does not exist", ms.field, h.ValueFiles[i])
		}
		loc.Values = append(loc.Values, render.ValuesLayer{File: p})
	}
	return loc, nil
}
