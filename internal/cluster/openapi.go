package cluster

import (
	"fmt"
	"sort"

	openapi_v3 "github.com/google/gnostic-models/openapiv3"
	gproto "google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/openapi"
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

// GVKParserFor builds the same parser from the OpenAPI v3 document of one
// group-version only, the way kubectl reads OpenAPI (kubectl explain, apply
// --validate): the list of group-versions at /openapi/v3 is revalidated with
// its ETag through discovery's disk cache (~/.kube/cache/http), and each
// group-version's document is fetched by its hashed URL, which the API
// server marks immutable, so a warm cache serves it without a request.
// explain needs the types of one object, not the whole /openapi/v2 (several
// MB, read on every run). A server that publishes no v3 document for gv
// (older than Kubernetes 1.27, or the group is served by an aggregated API
// without one) falls back to GVKParser.
func (c *Client) GVKParserFor(gv schema.GroupVersion) (*managedfields.GvkParser, error) {
	paths, err := c.discovery.OpenAPIV3().Paths()
	if err != nil {
		return c.GVKParser()
	}
	key := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		key = "api/" + gv.Version
	}
	p, ok := paths[key]
	if !ok {
		return c.GVKParser()
	}
	raw, err := p.Schema(openapi.ContentTypeOpenAPIV3PB)
	if err != nil {
		return nil, ServerError(c.config.Host, fmt.Errorf("reading the OpenAPI v3 schema of %s: %w", gv, err))
	}
	doc := &openapi_v3.Document{}
	if err := gproto.Unmarshal(raw, doc); err != nil {
		return nil, fmt.Errorf("parsing the OpenAPI v3 schema of %s: %w", gv, err)
	}
	models, err := proto.NewOpenAPIV3Data(doc)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v3 models of %s: %w", gv, err)
	}
	v2GVKExtensions(models)
	return NewGVKParser(models)
}

// gvkExtension names the kinds a model is the schema of.
const gvkExtension = "x-kubernetes-group-version-kind"

// v2GVKExtensions rewrites each model's x-kubernetes-group-version-kind
// items into the shape the v2 reader gives them: kube-openapi decodes v3
// extensions with yaml.v3 (map[string]any), v2's with yaml.v2
// (map[any]any), and managedfields.NewGVKParser (like modelGVKs) reads only
// the latter, so a v3 model would name no kind and every object would get
// the deduced schema. The extension maps are the models' own, changed in
// place.
func v2GVKExtensions(models proto.Models) {
	for _, name := range models.ListModels() {
		m := models.LookupModel(name)
		if m == nil {
			continue
		}
		ext := m.GetExtensions()
		items, ok := ext[gvkExtension].([]interface{})
		if !ok {
			continue
		}
		for i, it := range items {
			if sm, ok := it.(map[string]interface{}); ok {
				im := make(map[interface{}]interface{}, len(sm))
				for k, v := range sm {
					im[k] = v
				}
				items[i] = im
			}
		}
	}
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
	ext, ok := s.GetExtensions()[gvkExtension].([]interface{})
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
