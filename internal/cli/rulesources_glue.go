package cli

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// loadDocuments reads every path and kustomize directory. Each path is read
// on its own so that one missing path is reported and skipped, like a bad
// document, instead of hiding the others. Directories are read
// recursively: GitOps repositories nest (clusters/prod/apps/...).
func loadDocuments(g *GlobalOptions, f *RuleSourceFlags) (docs []source.Document, problems []string) {
	add := func(d []source.Document, err error) {
		docs = append(docs, d...)
		if err == nil {
			return
		}
		des := source.DocumentErrors(err)
		for _, de := range des {
			problems = append(problems, de.Error())
		}
		if len(des) == 0 {
			problems = append(problems, err.Error())
		}
	}
	for _, p := range f.Paths {
		add(source.LoadFiles([]string{p}, g.In, source.Options{Recursive: true}))
	}
	for _, k := range f.Kustomize {
		add(source.LoadKustomize(k))
	}
	return docs, problems
}

// engineObject reports objects that belong to the engines themselves and
// are therefore not compared by effect.
func engineObject(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	if gvk.Group == "argoproj.io" || strings.HasSuffix(gvk.Group, ".toolkit.fluxcd.io") {
		return true
	}
	return gvk.Group == "" && gvk.Kind == "ConfigMap" && strings.HasPrefix(o.GetName(), "argocd-")
}

// clusterReader connects when --from-cluster is given.
func clusterReader(g *GlobalOptions, f *RuleSourceFlags) (model.Reader, error) {
	if !f.FromCluster {
		return nil, nil
	}
	c, err := cluster.New(g.ConfigFlags, cluster.Options{})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// defaultInputLoader reads rules of both engines (through their adapters)
// and the plain objects of the files.
func defaultInputLoader(ctx context.Context, g *GlobalOptions, f *RuleSourceFlags) (*ruleInputs, error) {
	docs, problems := loadDocuments(g, f)
	in := &ruleInputs{Problems: problems, Read: len(docs)}
	for _, d := range docs {
		if d.Object != nil && !engineObject(d.Object) {
			in.Objects = append(in.Objects, d.Object)
		}
	}
	reader, err := clusterReader(g, f)
	if err != nil {
		return nil, err
	}
	if reader == nil {
		ar, aerrs := argocd.RulesFromDocuments(docs)
		fr, _ := flux.RulesFromDocuments(docs) // their errors are on the rules (Rule.Error)
		for _, e := range aerrs {
			in.Problems = append(in.Problems, e.Error())
		}
		in.Rules = append(ar, fr...)
		return in, nil
	}
	aa, err := argocd.New(argocd.Options{Reader: reader, Documents: docs})
	if err != nil {
		return nil, err
	}
	fa, err := flux.New(flux.Options{Reader: reader, Documents: docs})
	if err != nil {
		return nil, err
	}
	for _, a := range []model.Adapter{aa, fa} {
		rs, err := a.Rules(ctx)
		if err != nil {
			// Forbidden or missing CRDs for one engine must not hide the
			// other: say so and go on.
			in.Problems = append(in.Problems, fmt.Sprintf("%s rules from the cluster: %v", a.Engine(), err))
			continue
		}
		in.Read++
		in.Rules = append(in.Rules, rs...)
	}
	return in, nil
}

// defaultNormalizerLoader builds the chosen adapter over the rule sources.
func defaultNormalizerLoader(ctx context.Context, g *GlobalOptions, engine string, src *RuleSourceFlags, reader model.Reader) (normalizeFunc, error) {
	docs, problems := loadDocuments(g, src)
	for _, p := range problems {
		fmt.Fprintf(g.ErrOut, "warning: skipped %s\n", p)
	}
	switch engine {
	case "argocd":
		a, err := argocd.New(argocd.Options{Reader: reader, Documents: docs})
		if err != nil {
			return nil, err
		}
		return a.Normalize, nil
	case "flux":
		a, err := flux.New(flux.Options{Reader: reader, Documents: docs})
		if err != nil {
			return nil, err
		}
		return a.Normalize, nil
	}
	return nil, fmt.Errorf("unknown engine %q", engine)
}
