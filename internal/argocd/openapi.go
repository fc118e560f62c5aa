package argocd

import (
	"fmt"
	"sort"
	"sync"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/schemaconv"
	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/typed"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// GVKParser gives the structured-merge-diff type of a kind, typed with the
// library version Argo CD links (internal/argocd/smd), which is what
// managedFieldsManagers rules and the structured-merge and server-side
// diffs are evaluated with. Type returns nil for a kind the schema does
// not name.
type GVKParser interface {
	Type(gvk schema.GroupVersionKind) *typed.ParseableType
}

// SchemaFunc reads the OpenAPI definitions (keyed by name, references
// resolved by name) that type the objects of one group-version: the
// components.schemas of the cluster's /openapi/v3/apis/<group>/<version>
// document. The definitions are library-neutral data; GVKParserFromModels
// types them.
type SchemaFunc func(gv schema.GroupVersion) (map[string]*spec.Schema, error)

// gvkExtension names the kinds a definition is the schema of.
const gvkExtension = "x-kubernetes-group-version-kind"

// GVKParserFromOpenAPIV2 builds the parser from a saved /openapi/v2
// document the way gitops-engine's KubectlCmd does for the application
// controller (pkg/utils/kube/ctl.go newGVKParser: proto.NewOpenAPIData,
// duplicate GVKs dropped by uniqueprotomodels.go, then
// managedfields.NewGVKParser(models, false)), typed with the pinned
// structured-merge-diff.
func GVKParserFromOpenAPIV2(raw []byte) (GVKParser, error) {
	doc, err := openapi_v2.ParseDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("parse OpenAPI v2 document: %w", err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		return nil, fmt.Errorf("read OpenAPI models: %w", err)
	}
	p, err := schemaconv.NewGVKParser(uniqueModels(models), false)
	if err != nil {
		return nil, fmt.Errorf("build GVK parser: %w", err)
	}
	return p, nil
}

// GVKParserFromModels builds the parser from OpenAPI definitions keyed by
// name (one group-version's OpenAPI v3 document, SchemaFunc). The v3
// documents wrap a typed reference in allOf: [$ref] (a container's
// resources, a Pod template's spec); schemaconv.ToSchemaFromOpenAPI
// resolves those to the named type, so containers stay a list keyed by
// name as in the v2 schema Argo CD reads (kube-openapi's proto reader would
// leave them untyped: an atomic list).
func GVKParserFromModels(models map[string]*spec.Schema) (GVKParser, error) {
	p, err := schemaconv.NewGVKParserFromOpenAPI(models, modelGVKs(models), false)
	if err != nil {
		return nil, fmt.Errorf("build GVK parser: %w", err)
	}
	return p, nil
}

// modelGVKs maps each kind to the definition that declares it in its
// x-kubernetes-group-version-kind extension. A kind declared by two
// definitions keeps the first in name order, as uniqueModels does for v2
// (upstream NewGVKParser would refuse the whole schema).
func modelGVKs(models map[string]*spec.Schema) map[schema.GroupVersionKind]string {
	names := make([]string, 0, len(models))
	for name := range models {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[schema.GroupVersionKind]string{}
	for _, name := range names {
		for _, gvk := range specGVKs(models[name]) {
			if _, dup := out[gvk]; !dup {
				out[gvk] = name
			}
		}
	}
	return out
}

// kindSchema is the cluster's OpenAPI definitions of gvk's group-version
// (read once per group-version) and the name of gvk's own; ok is false
// when none declares gvk.
func (a *Adapter) kindSchema(gvk schema.GroupVersionKind) (models map[string]*spec.Schema, root string, ok bool) {
	models = a.schemas.models(a.opts.Schema, gvk.GroupVersion())
	root, ok = modelGVKs(models)[gvk]
	return models, root, ok
}

// specGVKs reads the extension of a definition decoded from JSON (a list
// of maps with string keys).
func specGVKs(s *spec.Schema) []schema.GroupVersionKind {
	if s == nil {
		return nil
	}
	items, _ := s.Extensions[gvkExtension].([]any)
	var out []schema.GroupVersionKind
	for _, it := range items {
		m, ok := it.(map[string]any)
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

// schemaCache holds the parser of each group-version read through a
// SchemaFunc: an object's schema is read once per run, and only when a
// verdict needs it.
type schemaCache struct {
	mu   sync.Mutex
	byGV map[schema.GroupVersion]schemaEntry
}

type schemaEntry struct {
	parser GVKParser
	// models are the definitions read (nil when the read failed).
	models map[string]*spec.Schema
	note   *model.Note
}

// parser returns the parser of gv, reading it with read on first use; a
// failure is a "no-schema" note, remembered like a success.
func (c *schemaCache) parser(read SchemaFunc, gv schema.GroupVersion) (GVKParser, *model.Note) {
	e := c.entry(read, gv)
	return e.parser, e.note
}

// models returns the definitions of gv (nil when they cannot be read),
// reading them with read on first use, as parser does.
func (c *schemaCache) models(read SchemaFunc, gv schema.GroupVersion) map[string]*spec.Schema {
	return c.entry(read, gv).models
}

func (c *schemaCache) entry(read SchemaFunc, gv schema.GroupVersion) schemaEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byGV[gv]; ok {
		return e
	}
	var e schemaEntry
	models, err := read(gv)
	if err == nil {
		e.models = models
		e.parser, err = GVKParserFromModels(models)
	}
	if err != nil {
		e.note = &model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "no-schema",
			Message: "cannot read the cluster's OpenAPI schema, managedFieldsManagers rules run on a deduced schema: " + err.Error()}
	}
	if c.byGV == nil {
		c.byGV = map[schema.GroupVersion]schemaEntry{}
	}
	c.byGV[gv] = e
	return e
}

// protoModels is proto.Models with some models left out of ListModels.
type protoModels struct {
	proto.Models
	names []string
}

func (d protoModels) ListModels() []string { return d.names }

// uniqueModels mirrors gitops-engine pkg/utils/kube/uniqueprotomodels.go:
// a schema that declares the same GVK in two models (aggregated APIs and
// some CRDs do) makes upstream NewGVKParser refuse the whole document, so
// the later models declaring a GVK already seen (in name order) are left
// out and every other kind still parses.
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
		gvks := protoGVKs(m)
		dup := false
		for _, gvk := range gvks {
			dup = dup || seen[gvk]
		}
		if dup {
			continue
		}
		for _, gvk := range gvks {
			seen[gvk] = true
		}
		kept = append(kept, name)
	}
	return protoModels{Models: models, names: kept}
}

// protoGVKs reads the extension of a v2 model (yaml.v2 maps), as
// apimachinery's gvkparser.go parseGroupVersionKind does.
func protoGVKs(s proto.Schema) []schema.GroupVersionKind {
	items, _ := s.GetExtensions()[gvkExtension].([]any)
	var out []schema.GroupVersionKind
	for _, it := range items {
		m, ok := it.(map[any]any)
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
