package cluster

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/util/proto"
)

// GVKParser builds the schema-aware parser Argo CD's controller diffs with,
// from the cluster's OpenAPI v2 document. Argo builds it the same way
// (gitops-engine pkg/utils/kube: discovery OpenAPISchema ->
// proto.NewOpenAPIData -> managedfields.NewGVKParser(models, false)).
// Without it, structured-merge-diff falls back to a deduced schema where
// every list is atomic, and managedFieldsManagers rules silently stop
// matching list items (DESIGN.md, "two traps").
func (c *Client) GVKParser() (*managedfields.GvkParser, error) {
	doc, err := c.discovery.OpenAPISchema()
	if err != nil {
		return nil, ServerError(c.config.Host, fmt.Errorf("reading the OpenAPI v2 schema: %w", err))
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		return nil, fmt.Errorf("parsing the OpenAPI v2 schema: %w", err)
	}
	return NewGVKParser(models)
}

// NewGVKParser is managedfields.NewGVKParser made tolerant of a schema that
// declares the same GVK in two models (aggregated APIs and some CRDs do):
// upstream refuses the whole document then. Argo CD works around the same
// failure by dropping the duplicates before building the parser
// (gitops-engine pkg/utils/kube/uniqueprotomodels.go); here the first model
// in name order keeps the GVK and later models declaring it are left out,
// so every other kind still parses.
func NewGVKParser(models proto.Models) (*managedfields.GvkParser, error) {
	return managedfields.NewGVKParser(uniqueModels(models), false)
}

type dedupedModels struct {
	proto.Models
	names []string
}

func (d dedupedModels) ListModels() []string { return d.names }

func uniqueModels(models proto.Models) proto.Models {
	names := append([]string(nil), models.ListModels()...)
	sort.Strings(names)
	seen := map[schema.GroupVersionKind]bool{}
	kept := make([]string, 0, len(names))
	for _, name := range names {
		m := models.LookupModel(name)
		if m == nil {
			continue
		}
		gvks := modelGVKs(m)
		dup := false
		for _, gvk := range gvks {
			if seen[gvk] {
				dup = true
			}
		}
		if dup {
			continue
		}
		for _, gvk := range gvks {
			seen[gvk] = true
		}
		kept = append(kept, name)
	}
	return dedupedModels{Models: models, names: kept}
}

// modelGVKs reads the x-kubernetes-group-version-kind extension, as
// apimachinery's gvkparser.go parseGroupVersionKind does.
func modelGVKs(s proto.Schema) []schema.GroupVersionKind {
	ext, ok := s.GetExtensions()["x-kubernetes-group-version-kind"].([]interface{})
	if !ok {
		return nil
	}
	var out []schema.GroupVersionKind
	for _, item := range ext {
		m, ok := item.(map[interface{}]interface{})
		if !ok {
			continue
		}
		g, _ := m["group"].(string)
		v, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if k != "" {
			out = append(out, schema.GroupVersionKind{Group: g, Version: v, Kind: k})
		}
	}
	return out
}
