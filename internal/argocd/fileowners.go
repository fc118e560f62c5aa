package argocd

import (
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// localSourcePaths lists the paths of an Application's sources that render
// files of a repository (spec.source.path, spec.sources[].path), cleaned,
// '/'-separated. A chart source (chart set) renders a chart repository's
// files, none of the checkout's.
func localSourcePaths(u *unstructured.Unstructured) []string {
	var srcs []any
	if s, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "source"); ok {
		srcs = append(srcs, s)
	}
	if l, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "sources"); ok {
		if items, ok := l.([]any); ok {
			srcs = append(srcs, items...)
		}
	}
	var out []string
	for _, s := range srcs {
		m, _ := s.(map[string]any)
		p, _ := m["path"].(string)
		if c, _ := m["chart"].(string); c != "" || p == "" {
			continue
		}
		out = append(out, path.Clean(strings.Trim(filepath.ToSlash(p), "/")))
	}
	return out
}

// FileOwners names the Applications read from files whose source path
// holds file, a manifest of the checkout: the repo-server renders an
// Application from its source path only (reposerver/repository
// GenerateManifests over the path's directory), so its ignoreDifferences
// reach those objects and no other Application's. The path is relative to
// the repository's root (source.UnderSourcePath). A kustomize base outside the path is
// rendered as well but not named: such an object keeps no owner, which
// callers read as "may be anyone's" (engine.FileOwner).
func (a *Adapter) FileOwners(file string) []model.Owner {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []model.Owner
	seen := map[string]bool{}
	entries := slices.Collect(maps.Values(a.apps))
	for _, same := range a.sameName {
		entries = append(entries, same...) // per-environment copies: each file's source path counts
	}
	for _, e := range entries {
		if e.src.File == "" || len(e.paths) == 0 {
			continue
		}
		if p, ok := source.UnderSourcePath(file, e.src.File, e.paths); ok {
			o := model.Owner{Engine: Engine, Kind: "Application", Namespace: e.app.Metadata.Namespace,
				Name: e.app.Metadata.Name, Via: "source path " + p, Found: true}
			if !seen[o.Ref()+" "+o.Via] {
				seen[o.Ref()+" "+o.Via] = true
				out = append(out, o)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Ref() != out[j].Ref() {
			return out[i].Ref() < out[j].Ref()
		}
		return out[i].Via < out[j].Via
	})
	return out
}
