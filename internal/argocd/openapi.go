package argocd

import (
	"fmt"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/util/proto"
)

// GVKParserFromOpenAPIV2 builds the parser managedFieldsManagers rules need
// from a saved /openapi/v2 document, the way gitops-engine's KubectlCmd does
// for the application controller (pkg/utils/kube/ctl.go newGVKParser).
func GVKParserFromOpenAPIV2(raw []byte) (*managedfields.GvkParser, error) {
	doc, err := openapi_v2.ParseDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("parse OpenAPI v2 document: %w", err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		return nil, fmt.Errorf("read OpenAPI models: %w", err)
	}
	p, err := managedfields.NewGVKParser(models, false)
	if err != nil {
		return nil, fmt.Errorf("build GVK parser: %w", err)
	}
	return p, nil
}
