package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/compare"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// loadDocuments reads every path and kustomize directory. Each path is read
// on its own so that one missing path is reported and skipped, like a bad
// document, instead of hiding the others. Directories are read
// recursively: GitOps repositories nest (clusters/prod/apps/...). The
// Secrets read are added to secrets, which the caller applies where a
// value could be quoted.
func loadDocuments(g *GlobalOptions, f *RuleSourceFlags, secrets *redact.Scrubber) (docs []source.Document, problems []string) {
	add := func(d []source.Document, err error) {
		docs = append(docs, d...)
		for _, x := range d {
			if x.Object != nil {
				secrets.Add(x.Object.Object)
			}
		}
		if err == nil {
			return
		}
		des := source.DocumentErrors(err)
		for _, de := range des {
			if notRuleSource(de) {
				continue
			}
			problems = append(problems, de.Error())
		}
		if len(des) == 0 {
			problems = append(problems, err.Error())
		}
	}
	for _, p := range f.Paths {
		add(source.LoadFiles([]string{p}, g.In, source.Options{Recursive: true, SkipHidden: true}))
		docs = append(docs, valuesDocuments(p)...)
	}
	kopts, err := g.kustomizeOptions()
	if err != nil {
		return docs, append(problems, err.Error())
	}
	for _, k := range f.Kustomize {
		add(source.LoadKustomizeWith(k, kopts))
	}
	return docs, problems
}

// notRuleSource reports a document that is not a Kubernetes object at all
// (Chart.yaml, values.yaml, kustomization.yaml without apiVersion, CI
// configuration, a JSON patch list) or a Helm template: such files are no
// rule source, and a warning for each drowned the output on real
// repositories (1,499 lines on one).
func notRuleSource(de *source.DocumentError) bool {
	msg := de.Err.Error()
	if strings.Contains(msg, "apiVersion and kind are missing") || strings.Contains(msg, "not a Kubernetes object") ||
		strings.Contains(msg, " without kind") || strings.Contains(msg, " without apiVersion") {
		// Chart.yaml has an apiVersion only, chart values may have a kind:
		// neither can hold a rule.
		return true
	}
	return strings.Contains(msg, "invalid YAML") && inHelmChart(de.File)
}

// inHelmChart reports whether a file sits in a Helm chart (a parent
// directory holds Chart.yaml): its templates are not YAML until rendered.
func inHelmChart(file string) bool {
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "Chart.yaml")); err == nil {
			return true
		}
		if next := filepath.Dir(dir); next == dir {
			return false
		}
	}
}

// valuesDocuments reads the engines' settings files under path (Argo CD's
// chart values, whose configs.cm is an argocd-cm); the manifest reader
// skips them as they are not Kubernetes objects.
func valuesDocuments(path string) []source.Document {
	if path == "-" {
		return nil
	}
	var out []source.Document
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if source.HiddenDir(path, p, d) {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		vd, _ := engine.SettingsDocuments(p)
		out = append(out, vd...)
		return nil
	})
	return out
}

// engineObject reports objects that belong to the engines themselves and
// are therefore not compared by effect.
func engineObject(o *unstructured.Unstructured) bool {
	_, ok := engine.EngineOf(o)
	return ok
}

// clusterClient connects when --from-cluster is given.
func clusterClient(g *GlobalOptions, f *RuleSourceFlags) (*cluster.Client, error) {
	if !f.FromCluster {
		return nil, nil
	}
	return cluster.New(g.ConfigFlags, cluster.Options{})
}

// maxEffectKinds bounds how many kinds --from-cluster lists for comparing
// by effect.
const maxEffectKinds = 40

// clusterObjects lists, once per kind, the live objects of the kinds the
// rules name literally (Argo CD `apps`/`Deployment`, Flux `apps`/`^$` and a
// plain kind), so that rules can be compared by effect on real objects.
// Globs, regexes and Flux's any-group targets name no listable kind and
// are skipped. A kind that cannot be listed (Forbidden, unknown) is a
// warning, not a failure.
func clusterObjects(ctx context.Context, c *cluster.Client, rules []model.Rule) (objs []*unstructured.Unstructured, problems []string) {
	seen := map[schema.GroupKind]bool{}
	var kinds []schema.GroupKind
	engines := engine.CompareEngines()
	for _, r := range rules {
		if !compare.Removes(r, engines) {
			continue // no field effect to compare
		}
		gk, ok := literalGroupKind(r)
		if !ok || seen[gk] {
			continue
		}
		seen[gk] = true
		kinds = append(kinds, gk)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].String() < kinds[j].String() })
	if len(kinds) > maxEffectKinds {
		problems = append(problems, fmt.Sprintf("comparing by effect on the first %d of %d kinds only", maxEffectKinds, len(kinds)))
		kinds = kinds[:maxEffectKinds]
	}
	for _, gk := range kinds {
		m, err := c.Mapper().RESTMapping(gk)
		if err != nil {
			continue // a kind this cluster does not serve has no objects
		}
		items, err := c.List(ctx, m.GroupVersionKind, "", "")
		if err != nil {
			problems = append(problems, fmt.Sprintf("listing %s for comparing by effect: %v", gk, err))
			continue
		}
		for i := range items {
			objs = append(objs, &items[i])
		}
	}
	return objs, problems
}

// literalGroupKind returns the one group/kind a rule names, if it names
// exactly one.
func literalGroupKind(r model.Rule) (schema.GroupKind, bool) {
	g, k := r.Target.Group, r.Target.Kind
	switch r.Target.Syntax {
	case model.MatchGlob:
		if strings.ContainsAny(g+k, `*?[]{}\`) || k == "" {
			return schema.GroupKind{}, false
		}
	case model.MatchRegex:
		switch g {
		case "^$":
			g = ""
		case "":
			return schema.GroupKind{}, false // any group
		default:
			// `networking\.k8s\.io` and the usual unescaped
			// `networking.k8s.io` both name one group for listing.
			g = strings.ReplaceAll(g, `\.`, ".")
			if strings.ContainsAny(g, `\^$*+?()[]{}|`) {
				return schema.GroupKind{}, false
			}
		}
		if k == "" || strings.ContainsAny(k, `\^$*+?()[]{}|.`) {
			return schema.GroupKind{}, false
		}
	default:
		return schema.GroupKind{}, false
	}
	return schema.GroupKind{Group: g, Kind: k}, true
}

// defaultInputLoader reads the rules of every engine (through their
// adapters) and the plain objects of the files.
//
// The Secrets among the files are not given to the command's stream
// Scrubber: rules and compare print file paths, object names, kinds, keys
// and pointers, never a Secret's values, and a value that is also a name
// ("guestbook", a user named after its application) masked every path
// and name it occurs in. The free text of the inputs (problems, rule
// errors) is scrubbed of the values instead (scrubInputs).
func defaultInputLoader(ctx context.Context, g *GlobalOptions, f *RuleSourceFlags) (in *ruleInputs, err error) {
	secrets := redact.NewScrubber()
	defer func() { scrubInputs(in, secrets) }()
	docs, problems := loadDocuments(g, f, secrets)
	in = &ruleInputs{Problems: problems, Read: len(docs)}
	files := map[*unstructured.Unstructured]string{}
	for _, d := range docs {
		if d.Object != nil && !engineObject(d.Object) {
			in.Objects = append(in.Objects, d.Object)
			files[d.Object] = d.File
		}
	}
	client, err := clusterClient(g, f)
	if err != nil {
		return nil, err
	}
	cfg := engine.Config{Purpose: engine.ForRules, Documents: docs}
	if client != nil {
		cfg.Reader = client
	}
	var adapters []model.Adapter
	var clusterErrs []error
	for _, d := range engine.All() {
		a, _, err := d.New(ctx, cfg)
		if err != nil {
			if client == nil {
				continue // offline, an engine that cannot start names no owner
			}
			return nil, err
		}
		adapters = append(adapters, a)
		rr, ok := a.(engine.RuleReader)
		if !ok {
			rules, _ := a.Rules(ctx)
			in.Rules = append(in.Rules, rules...)
			continue
		}
		rules, read, errs := rr.ReadRules(ctx)
		in.Rules = append(in.Rules, rules...)
		if client == nil {
			// Offline the errors are the files' (file:line).
			for _, e := range errs {
				in.Problems = append(in.Problems, e.Error())
			}
			continue
		}
		in.Read += read
		clusterErrs = append(clusterErrs, errs...)
	}
	in.Owners = ownersOf(files, adapters...)
	if client == nil {
		return in, nil
	}
	// Every source that could not be read is one warning naming it
	// (Forbidden argocd-cm, Applications, Kustomizations...): rules must
	// not vanish silently. A source that answered "not there" (engine not
	// installed) was read.
	for _, e := range clusterErrs {
		in.Problems = append(in.Problems, "rules from the cluster: "+e.Error())
	}
	if in.Read == 0 {
		// Nothing from files and nothing from the cluster: an unreachable
		// server is one error, not a warning per source.
		for _, e := range clusterErrs {
			var ue *cluster.UnreachableError
			if errors.As(e, &ue) {
				return nil, ue
			}
		}
	}
	if f.Effect {
		objs, problems := clusterObjects(ctx, client, in.Rules)
		in.Objects = append(in.Objects, objs...)
		in.Problems = append(in.Problems, problems...)
	}
	return in, nil
}

// scrubInputs removes Secret values from the free text of in: the
// problems and the rules' errors, which may quote what they failed on.
func scrubInputs(in *ruleInputs, secrets *redact.Scrubber) {
	if in == nil {
		return
	}
	for i, p := range in.Problems {
		in.Problems[i] = secrets.String(p)
	}
	for i := range in.Rules {
		in.Rules[i].Error = secrets.String(in.Rules[i].Error)
	}
}

// ownersOf asks each adapter which of its objects reconciles obj. Owner
// reads only the object's labels and annotations; a manifest from a file
// (files) has none of the marks yet, so an adapter that knows which
// holders render which files (engine.FileOwner) names them from its file.
func ownersOf(files map[*unstructured.Unstructured]string, adapters ...model.Adapter) func(*unstructured.Unstructured) []model.Owner {
	return func(obj *unstructured.Unstructured) []model.Owner {
		var out []model.Owner
		for _, a := range adapters {
			if o := a.Owner(obj); o != nil {
				out = append(out, *o)
				continue
			}
			if fo, ok := a.(engine.FileOwner); ok && files[obj] != "" {
				out = append(out, fo.FileOwners(files[obj])...)
			}
		}
		return out
	}
}

// defaultNormalizerLoader builds the selected engines' adapters over the
// rule sources.
func defaultNormalizerLoader(ctx context.Context, g *GlobalOptions, src *RuleSourceFlags, reader model.Reader) ([]model.Adapter, error) {
	// normalize prints objects: every Secret it read stays a value to
	// scrub from its whole output.
	docs, problems := loadDocuments(g, src, g.Secrets)
	for _, p := range problems {
		stderrf(g.ErrOut, "warning: skipped %s\n", p)
	}
	cfg := engine.Config{Purpose: engine.ForNormalize, Reader: reader, Documents: docs}
	var out []model.Adapter
	for _, d := range engine.Selected(g.Engine) {
		a, _, err := d.New(ctx, cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
