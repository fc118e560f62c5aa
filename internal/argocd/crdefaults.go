package argocd

import (
	"encoding/json"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// defaulterFor gives what the API server defaults in an object of gvk, as
// dropDefaulted compares it with live: the scheme's defaulting functions
// for a built-in kind (those Argo CD's diff runs, withSchemeDefaults); for
// a custom resource, its CRD's structural defaults, read from the served
// OpenAPI document of its group-version (apiextensions-apiserver publishes
// them). The API server applies those to every custom resource it
// decodes, an apply request's body included, so the applier owns them
// (differential seeds 50500, 50556, 50578: spec.retention and a pod
// template's defaults owned by a server-side apply, listed as drift).
// Without the cluster's schema a custom resource has no defaults here.
func (a *Adapter) defaulterFor(gvk schema.GroupVersionKind) func(*unstructured.Unstructured) any {
	if gvk == apiextv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
		return crdDefaults
	}
	if !servedByCRD(gvk) || a.opts.Schema == nil {
		return withSchemeDefaults
	}
	models, root, ok := a.kindSchema(gvk)
	if !ok {
		return withSchemeDefaults
	}
	return func(obj *unstructured.Unstructured) any {
		data, err := json.Marshal(obj.Object)
		if err != nil {
			return obj.Object
		}
		var out any
		if err := json.Unmarshal(data, &out); err != nil {
			return obj.Object
		}
		structuralDefault(models[root], out)
		return out
	}
}

// crdDefaults is a CustomResourceDefinition with the defaults its own
// group's API server sets (apiextensions-apiserver
// pkg/apis/apiextensions/v1/defaults.go: conversion strategy None, the
// singular and list kind names, a webhook service's port 443), which
// neither the Kubernetes scheme nor a CRD schema has (differential seed
// 50157: /spec/conversion/strategy None listed).
func crdDefaults(obj *unstructured.Unstructured) any {
	var crd apiextv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &crd); err != nil {
		return obj.Object
	}
	apiextv1.SetObjectDefaults_CustomResourceDefinition(&crd)
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&crd)
	if err != nil {
		return obj.Object
	}
	return out
}

// servedByCRD: gvk is no kind of the API server's own groups (those
// client-go or k8s.io/kubernetes know, apiextensions' and
// apiregistration's), so a CRD serves it. A built-in kind's served schema
// carries openapi-gen's zero values as defaults, which its server does
// not apply.
func servedByCRD(gvk schema.GroupVersionKind) bool {
	if scheme.Scheme.Recognizes(gvk) || legacyscheme.Scheme.Recognizes(gvk) {
		return false
	}
	return gvk.Group != "apiextensions.k8s.io" && gvk.Group != "apiregistration.k8s.io"
}

// structuralDefault sets the defaults of s in x where x lacks the field or
// holds a null the schema does not allow, then descends, as the API server
// defaults a custom resource (apiextensions-apiserver
// pkg/apiserver/schema/defaulting/algorithm.go Default). A CRD's
// structural schema has no references: a $ref (metadata's ObjectMeta in
// the served document, whose openapi-gen zero-value defaults the server
// does not apply) is not followed.
func structuralDefault(s *spec.Schema, x any) {
	if s == nil || s.Ref.String() != "" || len(s.AllOf) > 0 {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, prop := range s.Properties {
			if prop.Default == nil || prop.Ref.String() != "" {
				continue
			}
			if v, found := x[k]; !found || v == nil && !prop.Nullable {
				x[k] = runtime.DeepCopyJSONValue(prop.Default)
			}
		}
		for k := range x {
			if prop, found := s.Properties[k]; found {
				structuralDefault(&prop, x[k])
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				ap := s.AdditionalProperties.Schema
				if x[k] == nil && !ap.Nullable && ap.Default != nil {
					x[k] = runtime.DeepCopyJSONValue(ap.Default)
				}
				structuralDefault(ap, x[k])
			}
		}
	case []any:
		if s.Items == nil || s.Items.Schema == nil {
			return
		}
		it := s.Items.Schema
		for i := range x {
			if x[i] == nil && !it.Nullable && it.Default != nil {
				x[i] = runtime.DeepCopyJSONValue(it.Default)
			}
			structuralDefault(it, x[i])
		}
	}
}
