package cluster

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResourceTypes lists the resource types that can be read (get and list),
// as shell completion offers them: "deployments" or "deployments.apps"
// for non-core groups' preferred versions, plus short names. Sorted.
func (c *Client) ResourceTypes() ([]string, error) {
	lists, err := c.discovery.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, ServerError(c.config.Host, err)
	}
	seen := map[string]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r, "get", "list") {
				continue
			}
			name := r.Name
			if gv.Group != "" {
				name += "." + gv.Group
			}
			seen[name] = true
			for _, s := range r.ShortNames {
				seen[s] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

func hasVerbs(r metav1.APIResource, verbs ...string) bool {
	for _, v := range verbs {
		found := false
		for _, have := range r.Verbs {
			if have == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Names lists the names of the objects of a type in a namespace, for
// completion. One LIST.
func (c *Client) Names(ctx context.Context, typ, namespace string) ([]string, error) {
	m, err := MappingFor(c.mapper, c.config.Host, typ)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	items, err := c.List(ctx, m.GroupVersionKind, namespace, "")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.GetName())
	}
	sort.Strings(out)
	return out, nil
}
