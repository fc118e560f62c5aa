package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// OpenAPIModels reads the OpenAPI definitions that type the objects of one
// group-version, keyed by name: the components.schemas of the cluster's
// /openapi/v3/apis/<group>/<version> (/openapi/v3/api/v1 for the core
// group) document, the way kubectl reads OpenAPI (kubectl explain, apply
// --validate; client-go openapi3.Root.GVSpec). The list of group-versions
// at /openapi/v3 comes from the discovery disk cache under discovery's
// 6-hour TTL, as kubectl's group and resource lists do (openAPIRoot), and
// each document is fetched by its hashed URL, which the API server marks
// immutable, so a warm cache serves it without a request. explain needs
// the types of one object, not the whole /openapi/v2 (several MB). A
// server that publishes no v3 document for gv (older than Kubernetes 1.27,
// or an aggregated API without one) falls back to the definitions of
// /openapi/v2.
func (c *Client) OpenAPIModels(gv schema.GroupVersion) (map[string]*spec.Schema, error) {
	root := &openAPIRoot{rest: c.discovery.RESTClient(), file: c.openAPIRootFile, ttl: discoveryTTL}
	raw, found, err := root.document(context.Background(), gv)
	if err != nil {
		return nil, ServerError(c.config.Host, fmt.Errorf("reading the OpenAPI v3 schema of %s: %w", gv, err))
	}
	if !found {
		return c.openAPIV2Models()
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parsing the OpenAPI v3 schema of %s: %w", gv, err)
	}
	if doc.Components == nil {
		return map[string]*spec.Schema{}, nil
	}
	return doc.Components.Schemas, nil
}

// openAPIV2Models reads the definitions of the whole /openapi/v2 document
// (through discovery's disk cache), for a group-version without a v3
// document. The v2 document comes as protobuf; its YAML form is decoded
// into the same definition type as v3's.
func (c *Client) openAPIV2Models() (map[string]*spec.Schema, error) {
	doc, err := c.discovery.OpenAPISchema()
	if err != nil {
		return nil, ServerError(c.config.Host, fmt.Errorf("reading the OpenAPI v2 schema: %w", err))
	}
	y, err := doc.YAMLValue("")
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v2 schema: %w", err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v2 schema: %w", err)
	}
	var sw spec.Swagger
	if err := json.Unmarshal(j, &sw); err != nil {
		return nil, fmt.Errorf("parsing the OpenAPI v2 schema: %w", err)
	}
	out := make(map[string]*spec.Schema, len(sw.Definitions))
	for name := range sw.Definitions {
		s := sw.Definitions[name]
		out[name] = &s
	}
	return out, nil
}
