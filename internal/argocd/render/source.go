package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// application is the part of argoproj.io/v1alpha1 Application that
// rendering reads (pkg/apis/application/v1alpha1/types.go).
type application struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Source      *appSource  `json:"source,omitempty"`
		Sources     []appSource `json:"sources,omitempty"`
		Destination struct {
			Server    string `json:"server,omitempty"`
			Name      string `json:"name,omitempty"`
			Namespace string `json:"namespace,omitempty"`
		} `json:"destination"`
		Project string `json:"project,omitempty"`
	} `json:"spec"`
}

// instanceName mirrors Application.InstanceName: the plain name in the
// control-plane namespace, "<namespace>_<name>" elsewhere.
func (a *application) instanceName(controlNS string) string {
	if a.Metadata.Namespace == "" || a.Metadata.Namespace == controlNS {
		return a.Metadata.Name
	}
	return a.Metadata.Namespace + "_" + a.Metadata.Name
}

// appSource is ApplicationSource.
type appSource struct {
	RepoURL        string           `json:"repoURL"`
	Path           string           `json:"path,omitempty"`
	TargetRevision string           `json:"targetRevision,omitempty"`
	Chart          string           `json:"chart,omitempty"`
	Ref            string           `json:"ref,omitempty"`
	Helm           *helmSource      `json:"helm,omitempty"`
	Kustomize      *kustomizeSource `json:"kustomize,omitempty"`
	Directory      *directorySource `json:"directory,omitempty"`
	Plugin         map[string]any   `json:"plugin,omitempty"`

	// ReadDir is the directory a Git source is read from when render read
	// it at targetRevision (readAt): the tree of that commit, or the
	// working tree; "" for the checkout as it is (env.SourceRoot).
	// Revision is the commit targetRevision resolved to,
	// $ARGOCD_APP_REVISION. Not Application fields: exported only because
	// runtime's converter sets every field (the tags keep it and
	// encoding/json off them).
	ReadDir  string `json:"-"`
	Revision string `json:"-"`
}

// helmSource is ApplicationSourceHelm.
type helmSource struct {
	ValueFiles              []string         `json:"valueFiles,omitempty"`
	Parameters              []helmParameter  `json:"parameters,omitempty"`
	FileParameters          []helmFileParam  `json:"fileParameters,omitempty"`
	ReleaseName             string           `json:"releaseName,omitempty"`
	Values                  string           `json:"values,omitempty"`
	ValuesObject            *json.RawMessage `json:"valuesObject,omitempty"`
	IgnoreMissingValueFiles bool             `json:"ignoreMissingValueFiles,omitempty"`
	PassCredentials         bool             `json:"passCredentials,omitempty"`
	SkipCrds                bool             `json:"skipCrds,omitempty"`
	SkipSchemaValidation    bool             `json:"skipSchemaValidation,omitempty"`
	SkipTests               bool             `json:"skipTests,omitempty"`
	Version                 string           `json:"version,omitempty"`
	Namespace               string           `json:"namespace,omitempty"`
	KubeVersion             string           `json:"kubeVersion,omitempty"`
	APIVersions             []string         `json:"apiVersions,omitempty"`
}

type helmParameter struct {
	Name        string `json:"name,omitempty"`
	Value       string `json:"value,omitempty"`
	ForceString bool   `json:"forceString,omitempty"`
}

type helmFileParam struct {
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
}

// kustomizeSource is ApplicationSourceKustomize.
type kustomizeSource struct {
	NamePrefix                string             `json:"namePrefix,omitempty"`
	NameSuffix                string             `json:"nameSuffix,omitempty"`
	Images                    []string           `json:"images,omitempty"`
	CommonLabels              map[string]string  `json:"commonLabels,omitempty"`
	CommonAnnotations         map[string]string  `json:"commonAnnotations,omitempty"`
	CommonAnnotationsEnvsubst bool               `json:"commonAnnotationsEnvsubst,omitempty"`
	ForceCommonLabels         bool               `json:"forceCommonLabels,omitempty"`
	ForceCommonAnnotations    bool               `json:"forceCommonAnnotations,omitempty"`
	LabelWithoutSelector      bool               `json:"labelWithoutSelector,omitempty"`
	LabelIncludeTemplates     bool               `json:"labelIncludeTemplates,omitempty"`
	Namespace                 string             `json:"namespace,omitempty"`
	Replicas                  []kustomizeReplica `json:"replicas,omitempty"`
	Patches                   []json.RawMessage  `json:"patches,omitempty"`
	Components                []string           `json:"components,omitempty"`
	IgnoreMissingComponents   bool               `json:"ignoreMissingComponents,omitempty"`
	Version                   string             `json:"version,omitempty"`
	KubeVersion               string             `json:"kubeVersion,omitempty"`
	APIVersions               []string           `json:"apiVersions,omitempty"`
}

// kustomizeReplica is KustomizeReplica: count is an int or a string.
type kustomizeReplica struct {
	Name  string          `json:"name"`
	Count json.RawMessage `json:"count"`
}

// directorySource is ApplicationSourceDirectory.
type directorySource struct {
	Recurse bool           `json:"recurse,omitempty"`
	Include string         `json:"include,omitempty"`
	Exclude string         `json:"exclude,omitempty"`
	Jsonnet map[string]any `json:"jsonnet,omitempty"`
}

// Source types, as ApplicationSourceType spells them.
const (
	typeHelm      = "Helm"
	typeKustomize = "Kustomize"
	typeDirectory = "Directory"
	typePlugin    = "Plugin"
)

// explicitType mirrors ApplicationSource.ExplicitType.
func (s *appSource) explicitType() (string, error) {
	var types []string
	if s.Kustomize != nil {
		types = append(types, typeKustomize)
	}
	if s.Helm != nil {
		types = append(types, typeHelm)
	}
	if s.Directory != nil {
		types = append(types, typeDirectory)
	}
	if s.Plugin != nil {
		types = append(types, typePlugin)
	}
	switch len(types) {
	case 0:
		return "", nil
	case 1:
		return types[0], nil
	}
	return "", fmt.Errorf("multiple application sources defined: %s", strings.Join(types, ","))
}

// kustomizationNames is util/kustomize KustomizationNames, in its order.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// discoverType mirrors util/app/discovery AppType for the application
// path itself: a file ending in Chart.yaml makes it Helm, a kustomization
// file Kustomize (the later file of the walk wins, so a kustomization
// beats Chart.yaml), else Directory. Config management plugins are not
// discovered: Argo CD only finds one when a plugin sidecar runs.
func discoverType(appPath string) (string, error) {
	entries, err := os.ReadDir(appPath)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names) // filepath.Walk's lexical order
	t := typeDirectory
	for _, n := range names {
		if strings.HasSuffix(n, "Chart.yaml") {
			t = typeHelm
		}
		for _, k := range kustomizationNames {
			if n == k {
				t = typeKustomize
			}
		}
	}
	return t, nil
}

// renderSource generates the manifests of one source, as GenerateManifests
// does after GetAppSourceType.
func (r *Renderer) renderSource(ctx context.Context, app *application, s *appSource, env *render.Env, refs, cm map[string]string) ([]*unstructured.Unstructured, error) {
	root := s.root(env)
	if s.Chart != "" {
		// A chart from a Helm repository: local only when --source-map
		// maps the repository URL to a directory of unpacked charts.
		d, ok := env.SourceMap[s.RepoURL]
		if !ok {
			return nil, fmt.Errorf("chart %q from Helm repository %s: not available offline (map the repository URL with --source-map URL=DIR holding DIR/%s)", s.Chart, s.RepoURL, s.Chart)
		}
		dir, err := render.Join(d, s.Chart)
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		return r.renderHelm(ctx, app, s, env, dir, d, refs)
	}
	if strings.HasPrefix(s.RepoURL, "oci://") {
		if _, ok := env.SourceMap[s.RepoURL]; !ok {
			return nil, fmt.Errorf("OCI source %s: not available offline (map it with --source-map %s=DIR)", s.RepoURL, s.RepoURL)
		}
	}
	warnOtherRepository(env, app, s)
	appPath, t, err := sourcePath(app, s, root)
	if err != nil {
		return nil, err
	}
	switch t {
	case typeHelm:
		return r.renderHelm(ctx, app, s, env, appPath, root, refs)
	case typeKustomize:
		vars := r.appEnv(app, s)
		return renderKustomize(ctx, env, s, appPath, root, vars, buildOptions(cm, s))
	case typePlugin:
		name, _ := s.Plugin["name"].(string)
		if name == "" {
			name = "(discovered)"
		}
		return nil, fmt.Errorf("config management plugin %s: %w (plugins run in Argo CD's sidecars)", name, ErrUnsupported)
	}
	d := s.Directory
	if d == nil {
		d = &directorySource{}
	}
	return findManifests(appPath, root, d)
}

// sourcePath is the directory of a Git source in its repository's
// checkout root and the source's type, as GenerateManifests finds them:
// the path must be a directory inside the repository; the
// .argocd-source files there are merged into s; the type is the explicit
// one, else discovered.
func sourcePath(app *application, s *appSource, root string) (appPath, typ string, err error) {
	if appPath, err = render.Join(root, s.Path); err != nil {
		return "", "", fmt.Errorf("path: %w", err)
	}
	if fi, err := os.Stat(appPath); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("path %q: app path does not exist or is not a directory", s.Path)
	}
	if err := mergeSourceParameters(s, appPath, app.Metadata.Name); err != nil {
		return "", "", err
	}
	if typ, err = s.explicitType(); err != nil {
		return "", "", err
	}
	if typ == "" {
		if typ, err = discoverType(appPath); err != nil {
			return "", "", err
		}
	}
	return appPath, typ, nil
}

// Repository files that override an Application's source parameters
// (repository.go repoSourceFile, appSourceFile).
const (
	repoSourceFile = ".argocd-source.yaml"
	appSourceFile  = ".argocd-source-%s.yaml"
)

// mergeSourceParameters mirrors repository.go mergeSourceParameters: the
// .argocd-source.yaml and .argocd-source-<app>.yaml files of the app path
// are JSON merge patches over the source; only the tools' settings may
// change.
func mergeSourceParameters(s *appSource, appPath, appName string) error {
	files := []string{filepath.Join(appPath, repoSourceFile), filepath.Join(appPath, fmt.Sprintf(appSourceFile, appName))}
	var found []string
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && !fi.IsDir() {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return nil
	}
	merged, err := json.Marshal(s)
	if err != nil {
		return err
	}
	for _, f := range found {
		if merged, err = mergePatchFile(merged, f); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	var out appSource
	if err := json.Unmarshal(merged, &out); err != nil {
		return fmt.Errorf("source parameter overrides: %w", err)
	}
	out.Chart, out.Path, out.RepoURL, out.TargetRevision = s.Chart, s.Path, s.RepoURL, s.TargetRevision
	out.ReadDir, out.Revision = s.ReadDir, s.Revision
	*s = out
	return nil
}

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
	// adopt edits the checkout: its files are located in the working
	// tree, whatever targetRevision says.
	app, sources, refs, err := parseSources(ctx, obj, env, false)
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
	warnOtherRepository(env, app, &s)
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

// root is the directory the source is read from: where readAt read it,
// else its --source-map entry or the checkout.
func (s *appSource) root(env *render.Env) string {
	if s.ReadDir != "" {
		return s.ReadDir
	}
	return env.SourceRoot(s.RepoURL)
}

// gitSource says the source is a Git repository, whose targetRevision
// is a branch, tag or commit (not a chart version, not an OCI tag).
func (s *appSource) gitSource() bool {
	return s.Chart == "" && !strings.HasPrefix(s.RepoURL, "oci://")
}

// readAt reads a Git source of the checkout's repository (or of its
// --source-map directory) at its targetRevision, as the repo-server
// checks it out (repository.go GenerateManifests on the resolved
// revision): the tree of that commit from the local git history, else
// the working tree with a warning (render.Env.ReadAt). A source of
// another repository rendered from the checkout is left as it is:
// warnOtherRepository says so.
func (s *appSource) readAt(ctx context.Context, env *render.Env, app *application, field string) {
	if !s.gitSource() || env.OtherRepository(s.RepoURL) {
		return
	}
	rev := env.ReadAt(ctx, env.SourceRoot(s.RepoURL), s.TargetRevision, fmt.Sprintf("Application %s: %s targetRevision", app.Metadata.Name, field))
	s.ReadDir, s.Revision = rev.Dir, rev.Commit
}

// warnOtherRepository says, in one line, that a source of another
// repository than the checkout is rendered from the checkout's path of
// the same name: what is printed may not be what Argo CD applies.
func warnOtherRepository(env *render.Env, app *application, s *appSource) {
	if env.Warn != nil && env.OtherRepository(s.RepoURL) {
		env.Warn(fmt.Sprintf("Application %s: source %s is not the checkout's repository: rendered from the checkout's path %q instead; map it with --source-map %s=DIR", app.Metadata.Name, s.RepoURL, s.Path, s.RepoURL))
	}
}
