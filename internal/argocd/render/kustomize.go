package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	securefs "github.com/fluxcd/pkg/kustomize/filesys"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// renderKustomize mirrors util/kustomize/kustomize.go Build: Argo CD edits
// the kustomization file of its checkout with `kustomize edit` (set
// nameprefix, namesuffix, image, replicas; add label, annotation; set
// namespace), appends spec.source.kustomize.patches to it, adds the
// components, then runs `kustomize build <path>`. Here the same edits are
// made, the way kustomize v5's edit commands make them
// (kustomize/v5 commands/edit/...), on a copy of the file held in memory,
// and the build runs kustomize's own library with the CLI's defaults
// (krusty: loads restricted to the kustomization root, plugins off,
// legacy order), bounded to the source's directory.
func renderKustomize(ctx context.Context, env *render.Env, s *appSource, appPath, root string, vars envVars, buildOpts string) ([]*unstructured.Unstructured, error) {
	kopts := krusty.MakeDefaultOptions()
	kopts.Reorder = krusty.ReorderOptionLegacy // kustomize build's --reorder default
	if err := applyBuildOptions(kopts, buildOpts); err != nil {
		return nil, err
	}
	kname := ""
	for _, n := range kustomizationNames {
		if fi, err := os.Stat(filepath.Join(appPath, n)); err == nil && !fi.IsDir() {
			kname = n
			break
		}
	}
	var edited []byte
	if opts := s.Kustomize; opts != nil && !opts.empty() {
		if kname == "" {
			// kustomize edit refuses a directory without one.
			return nil, errors.New("kustomize edit: missing kustomization file 'kustomization.yaml'")
		}
		var err error
		if edited, err = editKustomization(filepath.Join(appPath, kname), appPath, root, opts, vars); err != nil {
			return nil, err
		}
	}
	var disk filesys.FileSystem
	var err error
	if env.NoRemoteBases {
		disk, err = securefs.MakeFsOnDiskSecure(root)
	} else {
		disk, err = securefs.MakeFsOnDiskSecureBuild(root)
	}
	if err != nil {
		return nil, err
	}
	fs := editedFS{FileSystem: disk, root: root}
	if edited != nil {
		fs.file, fs.data = filepath.Join(appPath, kname), edited
	}
	// The repo-server fetches remote bases unless told otherwise; refused
	// here by --no-remote-bases before any git or DNS, else said and
	// bounded in time (render.BuildRemote).
	m, err := render.BuildRemote(ctx, env, fs, appPath, "", func(context.Context) (interface{ AsYaml() ([]byte, error) }, error) {
		return runKrusty(kopts, fs, appPath)
	})
	if errors.Is(err, render.ErrBound) || errors.Is(err, render.ErrRemoteRefused) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", relTo(root, appPath), err)
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	return splitYAML(out)
}

// buildOptions is argocd-cm's kustomize.buildOptions, or
// kustomize.buildOptions.<version> for a source that names a kustomize
// version (util/settings/settings.go GetKustomizeSettings).
func buildOptions(cm map[string]string, s *appSource) string {
	if s.Kustomize != nil && s.Kustomize.Version != "" {
		return cm["kustomize.buildOptions."+s.Kustomize.Version]
	}
	return cm["kustomize.buildOptions"]
}

// applyBuildOptions sets the `kustomize build` flags of
// kustomize.buildOptions that the library can honour; the ones that run
// programs (helm, plugins, exec functions) are not supported.
func applyBuildOptions(k *krusty.Options, opts string) error {
	f := strings.Fields(opts)
	for i := 0; i < len(f); i++ {
		name, val, hasVal := strings.Cut(f[i], "=")
		next := func() string {
			if hasVal {
				return val
			}
			if i+1 < len(f) {
				i++
				return f[i]
			}
			return ""
		}
		var err error
		switch name {
		case "--load-restrictor", "--load_restrictor":
			err = choice(&k.LoadRestrictions, "--load-restrictor", next(), "a load restrictor", map[string]kustypes.LoadRestrictions{
				"LoadRestrictionsNone":     kustypes.LoadRestrictionsNone,
				"LoadRestrictionsRootOnly": kustypes.LoadRestrictionsRootOnly,
			})
		case "--reorder":
			err = choice(&k.Reorder, "--reorder", next(), "legacy or none", map[string]krusty.ReorderOption{
				"legacy": krusty.ReorderOptionLegacy,
				"none":   krusty.ReorderOptionNone,
			})
		case "--enable-helm", "--enable-alpha-plugins", "--enable-exec", "--enable-star", "--network", "--mount":
			err = fmt.Errorf("argocd-cm kustomize.buildOptions %s: %w (it runs programs or reaches the network)", name, ErrUnsupported)
		default:
			err = fmt.Errorf("argocd-cm kustomize.buildOptions %s: %w", name, ErrUnsupported)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// choice sets *dst to the option an enum flag's value names; what names
// the accepted values in the error.
func choice[T any](dst *T, flag, v, what string, options map[string]T) error {
	o, ok := options[v]
	if !ok {
		return fmt.Errorf("argocd-cm kustomize.buildOptions: %s %q is not %s", flag, v, what)
	}
	*dst = o
	return nil
}

// runKrusty builds, turning a panic inside kustomize into an error.
func runKrusty(opts *krusty.Options, fs filesys.FileSystem, dir string) (m interface{ AsYaml() ([]byte, error) }, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("kustomize failed: %v", r)
		}
	}()
	return krusty.MakeKustomizer(opts).Run(fs, dir)
}

func relTo(root, p string) string {
	if rel, err := filepath.Rel(root, p); err == nil {
		return rel
	}
	return p
}

func (k *kustomizeSource) empty() bool {
	return k.NamePrefix == "" && k.NameSuffix == "" && len(k.Images) == 0 && len(k.Replicas) == 0 &&
		len(k.CommonLabels) == 0 && len(k.CommonAnnotations) == 0 && k.Namespace == "" &&
		len(k.Patches) == 0 && len(k.Components) == 0
}

// editedFS is the checkout (bounded to root) with the edited kustomization
// file in place of the file on disk; other files are read through
// internal/source's bounded reader.
type editedFS struct {
	filesys.FileSystem
	root string
	file string
	data []byte
}

func (f editedFS) ReadFile(path string) ([]byte, error) {
	if f.file != "" && filepath.Clean(path) == f.file {
		return append([]byte(nil), f.data...), nil
	}
	h, err := f.Open(path)
	if err != nil {
		return nil, err // outside root, or missing
	}
	_ = h.Close() // only opened to check the path

	return source.ReadFile(path, nil, 0)
}

// editKustomization makes Argo CD's edits on the kustomization file at
// path and returns the file to build.
func editKustomization(path, appPath, root string, o *kustomizeSource, vars envVars) ([]byte, error) {
	raw, err := source.ReadFile(path, nil, 0)
	if err != nil {
		return nil, err
	}
	var k kustypes.Kustomization
	if err := k.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	k.FixKustomization() // kustfile.Read, which every edit runs
	if o.NamePrefix != "" {
		k.NamePrefix = o.NamePrefix
	}
	if o.NameSuffix != "" {
		k.NameSuffix = o.NameSuffix
	}
	if len(o.Images) > 0 {
		var args []string
		for _, i := range o.Images {
			args = append(args, vars.subst(i))
		}
		if err := setImages(&k, args); err != nil {
			return nil, err
		}
	}
	if len(o.Replicas) > 0 {
		if err := setReplicas(&k, o.Replicas); err != nil {
			return nil, err
		}
	}
	if len(o.CommonLabels) > 0 {
		if !o.LabelWithoutSelector && o.LabelIncludeTemplates {
			return nil, errors.New("kustomize edit add label: --without-selector flag must be specified for --include-templates to work")
		}
		labels := map[string]string{}
		for n, v := range o.CommonLabels {
			labels[n] = vars.subst(v)
		}
		if err := addLabels(&k, labels, o.ForceCommonLabels, o.LabelWithoutSelector, o.LabelIncludeTemplates); err != nil {
			return nil, err
		}
	}
	if len(o.CommonAnnotations) > 0 {
		ann := o.CommonAnnotations
		if o.CommonAnnotationsEnvsubst {
			ann = map[string]string{}
			for n, v := range o.CommonAnnotations {
				ann[n] = vars.subst(v)
			}
		}
		if k.CommonAnnotations == nil {
			k.CommonAnnotations = map[string]string{}
		}
		if err := writeToMap(k.CommonAnnotations, ann, o.ForceCommonAnnotations, "annotation"); err != nil {
			return nil, err
		}
	}
	if o.Namespace != "" {
		k.Namespace = o.Namespace
	}
	if len(o.Patches) > 0 {
		// Argo appends the Application's patches to the file's list as
		// they are (kustomize.go Build, "patches" branch).
		for _, p := range o.Patches {
			var kp kustypes.Patch
			if err := json.Unmarshal(p, &kp); err != nil {
				return nil, fmt.Errorf("spec.source.kustomize.patches: %w", err)
			}
			k.Patches = append(k.Patches, kp)
		}
	}
	if len(o.Components) > 0 {
		if err := addComponents(&k, o.Components, appPath, root, o.IgnoreMissingComponents); err != nil {
			return nil, err
		}
	}
	return yaml.Marshal(&k)
}

// setImages mirrors commands/edit/set/setimage.go: each argument
// (<name>=<new-name>:<tag>@<digest>, <name>:<tag>, ...) replaces the entry
// of its name; "*" keeps the file's new name, tag or digest.
func setImages(k *kustypes.Kustomization, args []string) error {
	const preserve = "*"
	want := map[string]kustypes.Image{}
	for _, a := range args {
		img, err := parseImage(a)
		if err != nil {
			return fmt.Errorf("kustomize edit set image %s: %w", a, err)
		}
		want[img.Name] = img
	}
	for _, im := range k.Images {
		if a, ok := want[im.Name]; ok {
			if a.NewName == preserve {
				a.NewName = im.NewName
			}
			if a.NewTag == preserve {
				a.NewTag = im.NewTag
			}
			if a.Digest == preserve {
				a.Digest = im.Digest
			}
			want[im.Name] = a
			continue
		}
		want[im.Name] = im
	}
	images := make([]kustypes.Image, 0, len(want))
	for _, v := range want {
		if v.NewName == preserve {
			v.NewName = ""
		}
		if v.NewTag == preserve {
			v.NewTag = ""
		}
		if v.Digest == preserve {
			v.Digest = ""
		}
		images = append(images, v)
	}
	sort.Slice(images, func(i, j int) bool { return images[i].Name < images[j].Name })
	k.Images = images
	return nil
}

// parseImage mirrors setimage.go parse with kyaml's image.Split
// (kustomize api internal/image splitImageName).
func parseImage(arg string) (kustypes.Image, error) {
	key, value := "", arg
	if i := strings.Index(arg, "="); i >= 0 {
		key, value = arg[:i], arg[i+1:]
	}
	name, tag, digest := splitImageName(value)
	if name == arg {
		return kustypes.Image{}, errors.New(`invalid format of image, use one of the following options:
- <image>=<newimage>:<newtag>
- <image>=<newimage>@<digest>
- <image>=<newimage>
- <image>:<newtag>
- <image>@<digest>`)
	}
	img := kustypes.Image{NewTag: tag, Digest: digest}
	if key == "" {
		img.Name = name
	} else {
		img.Name, img.NewName = key, name
	}
	return img, nil
}

// splitImageName mirrors kustomize commands/internal/util SplitImageName
// (via api/image.Split): name, tag and digest of an image reference.
func splitImageName(imageName string) (name, tag, digest string) {
	// image reference pattern: [[host[:port]/]component/]component[:tag][@digest]
	if i := strings.Index(imageName, "@"); i >= 0 {
		digest = imageName[i+1:]
		imageName = imageName[:i]
	}
	// a colon after the last slash separates the tag
	slash := strings.LastIndex(imageName, "/")
	if i := strings.LastIndex(imageName, ":"); i > slash {
		tag = imageName[i+1:]
		imageName = imageName[:i]
	}
	return imageName, tag, digest
}

// setReplicas mirrors commands/edit/set/setreplicas.go.
func setReplicas(k *kustypes.Kustomization, reps []kustomizeReplica) error {
	want := map[string]kustypes.Replica{}
	for _, r := range reps {
		n, err := replicaCount(r.Count)
		if err != nil {
			return fmt.Errorf("spec.source.kustomize.replicas %s: %w", r.Name, err)
		}
		want[r.Name] = kustypes.Replica{Name: r.Name, Count: n}
	}
	for _, r := range k.Replicas {
		if _, ok := want[r.Name]; !ok {
			want[r.Name] = r
		}
	}
	out := make([]kustypes.Replica, 0, len(want))
	for _, v := range want {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	k.Replicas = out
	return nil
}

// replicaCount mirrors KustomizeReplica.GetIntCount: an int, or a string
// holding one.
func replicaCount(raw json.RawMessage) (int64, error) {
	var n int64
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("count %s is not a number", raw)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("expected integer value for count. Received: %s", s)
	}
	return n, nil
}

// addLabels mirrors commands/edit/add/addmetadata.go addLabels.
func addLabels(k *kustypes.Kustomization, labels map[string]string, force, withoutSelector, includeTemplates bool) error {
	if !withoutSelector {
		// kustomize edit add label writes commonLabels, deprecated or not:
		// what Argo CD runs is mirrored here.
		if k.CommonLabels == nil { //nolint:staticcheck // mirrors kustomize edit add label
			k.CommonLabels = map[string]string{} //nolint:staticcheck // as above
		}
		return writeToMap(k.CommonLabels, labels, force, "label") //nolint:staticcheck // as above
	}
	lbl := kustypes.Label{Pairs: map[string]string{}, IncludeSelectors: false, IncludeTemplates: includeTemplates}
	match := func() (int, bool) {
		for i, ml := range k.Labels {
			if ml.IncludeSelectors == lbl.IncludeSelectors && ml.IncludeTemplates == lbl.IncludeTemplates {
				return i, true
			}
		}
		return 0, false
	}
	keys := make([]string, 0, len(labels))
	for n := range labels {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	for _, n := range keys {
		if i, ok := match(); ok {
			if err := writeToMap(k.Labels[i].Pairs, map[string]string{n: labels[n]}, force, "label"); err != nil {
				return err
			}
			continue
		}
		if err := writeToMap(lbl.Pairs, labels, force, "label"); err != nil {
			return err
		}
		k.Labels = append(k.Labels, lbl)
	}
	return nil
}

// writeToMap mirrors addmetadata.go writeToMapEntry.
func writeToMap(m, add map[string]string, force bool, kind string) error {
	keys := make([]string, 0, len(add))
	for n := range add {
		keys = append(keys, n)
	}
	sort.Strings(keys)
	for _, n := range keys {
		if _, ok := m[n]; ok && !force {
			return fmt.Errorf("kustomize edit add %s: %s %s already in kustomization file. Use --force to override", kind, kind, n)
		}
		m[n] = add[n]
	}
	return nil
}

// addComponents mirrors kustomize.go Build's components step
// (ignoreMissingComponents drops the ones absent from the repository) and
// commands/edit/add/addcomponent.go (each path must exist; duplicates are
// skipped).
func addComponents(k *kustypes.Kustomization, comps []string, appPath, root string, ignoreMissing bool) error {
	for _, c := range comps {
		p := filepath.Join(appPath, c)
		if _, err := render.Join(root, relTo(root, p)); err != nil {
			if ignoreMissing {
				continue
			}
			return fmt.Errorf("kustomize edit add component %s: %w", c, err)
		}
		if _, err := os.Stat(p); err != nil {
			if ignoreMissing {
				continue
			}
			return fmt.Errorf("kustomize edit add component: %s has no match", c)
		}
		dup := false
		for _, have := range k.Components {
			if have == c {
				dup = true
			}
		}
		if !dup {
			k.Components = append(k.Components, c)
		}
	}
	return nil
}

// envVars are the build environment Argo CD gives tools (repository.go
// newEnv): ARGOCD_APP_NAME, ARGOCD_APP_NAMESPACE...
type envVars map[string]string

// subst mirrors v1alpha1.Env.Envsubst: $VAR and ${VAR} from the build
// environment, unknown ones empty, $$ a dollar.
func (e envVars) subst(s string) string {
	return os.Expand(s, func(v string) string {
		if v == "$" {
			return "$"
		}
		return e[v]
	})
}

// appEnv is buildEnv as the repo-server sets it for the tools: with
// ARGOCD_APP_NAME the Application's instance name.
func (r *Renderer) appEnv(app *application, s *appSource) envVars {
	vars := buildEnv(app, s)
	vars["ARGOCD_APP_NAME"] = app.instanceName(r.opts.Namespace)
	return vars
}

// buildEnv is repository.go newEnv: the revision is the commit the
// source was read at (readAt; "" when unknown, not a git repository).
func buildEnv(app *application, s *appSource) envVars {
	return envVars{
		"ARGOCD_APP_NAME":                   app.Metadata.Name,
		"ARGOCD_APP_NAMESPACE":              app.Spec.Destination.Namespace,
		"ARGOCD_APP_PROJECT_NAME":           app.Spec.Project,
		"ARGOCD_APP_REVISION":               s.Revision,
		"ARGOCD_APP_REVISION_SHORT":         render.ShortRevision(s.Revision, 7),
		"ARGOCD_APP_REVISION_SHORT_8":       render.ShortRevision(s.Revision, 8),
		"ARGOCD_APP_SOURCE_REPO_URL":        s.RepoURL,
		"ARGOCD_APP_SOURCE_PATH":            s.Path,
		"ARGOCD_APP_SOURCE_TARGET_REVISION": s.TargetRevision,
	}
}
