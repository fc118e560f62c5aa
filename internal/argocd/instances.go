package argocd

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// SettingsFromAnnotation marks an argocd-cm synthesized from another shape
// of Argo CD settings (an argocd-operator ArgoCD resource, argo-cd chart
// values): its value names the real holder, e.g. "ArgoCD argocd/example",
// and is used as the rules' origin object.
const SettingsFromAnnotation = "drift.kubectl-drift.io/settings-from"

// settingsFieldsAnnotation holds, as JSON, the field of the real holder
// each data key was read from (e.g. "spec.resourceIgnoreDifferences.all"),
// for rule origins.
const settingsFieldsAnnotation = "drift.kubectl-drift.io/settings-fields"

// settingsDocuments returns the argocd-cm that an object stands for when it
// is not an argocd-cm itself:
//
//   - an argocd-operator ArgoCD resource: the operator writes argocd-cm from
//     spec.resourceIgnoreDifferences (all and resourceIdentifiers),
//     spec.resourceExclusions/resourceInclusions and spec.extraConfig, the
//     latter last so that it wins (argocd-operator
//     controllers/argocd/configmap.go reconcileArgoConfigMap,
//     getResourceIgnoreDifferences);
//   - a HelmRelease or an Application installing the argo-cd chart
//     (argo-helm charts/argo-cd): configs.cm of its values
//     (spec.values; spec.source.helm.valuesObject or the values string).
//
// Only what is written is returned: the operator's default exclusions are
// not rules of the repository. The synthesized document keeps positions:
// its YAML node maps /data/<key> to the line the setting was read from.
func settingsDocuments(d source.Document) []source.Document {
	u := d.Object
	if u == nil {
		return nil
	}
	gvk := u.GroupVersionKind()
	holder := u.GetKind() + " " + nsName(u.GetNamespace(), u.GetName())
	switch {
	case gvk.Group == "argoproj.io" && gvk.Kind == "ArgoCD":
		data, keys := argoCDResourceData(u, d)
		if len(data) == 0 {
			return nil
		}
		return []source.Document{synthCM(d, u.GetNamespace(), holder, data, keys, nil)}
	case strings.HasPrefix(gvk.Group, "helm.toolkit.fluxcd.io") && gvk.Kind == "HelmRelease":
		chart, _, _ := unstructured.NestedString(u.Object, "spec", "chart", "spec", "chart")
		if chart == "" {
			chart, _, _ = unstructured.NestedString(u.Object, "spec", "chartRef", "name")
		}
		if !isArgoCDChart(chart) {
			return nil
		}
		return chartValuesCM(d, holder, u.GetNamespace(), []string{"spec", "values"}, nil)
	case gvk.Group == "argoproj.io" && gvk.Kind == "Application":
		var out []source.Document
		var paths [][]string
		if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "source"); ok {
			paths = append(paths, []string{"spec", "source"})
		}
		list, _, _ := unstructured.NestedSlice(u.Object, "spec", "sources")
		for i := range list {
			paths = append(paths, []string{"spec", "sources", fmt.Sprint(i)})
		}
		for _, p := range paths {
			chart, _ := nestedAny(u.Object, append(append([]string{}, p...), "chart")).(string)
			if !isArgoCDChart(chart) {
				continue
			}
			helmPath := append(append([]string{}, p...), "helm")
			out = append(out, chartValuesCM(d, holder, destinationNamespace(u), append(helmPath, "valuesObject"), nil)...)
			if v, ok := nestedAny(u.Object, append(helmPath, "values")).(string); ok && v != "" {
				var vals map[string]any
				if err := sigsyaml.Unmarshal([]byte(v), &vals); err == nil {
					out = append(out, chartValuesCM(d, holder, destinationNamespace(u), append(helmPath, "values"), vals)...)
				}
			}
		}
		return out
	}
	return nil
}

func destinationNamespace(u *unstructured.Unstructured) string {
	ns, _, _ := unstructured.NestedString(u.Object, "spec", "destination", "namespace")
	return ns
}

// isArgoCDChart: the argo-helm chart is published as "argo-cd" (OCI and
// Helm repository alike).
func isArgoCDChart(name string) bool {
	name = strings.TrimSuffix(name, "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return name == "argo-cd"
}

// nestedAny follows path through maps and (by decimal index) lists.
func nestedAny(obj map[string]any, path []string) any {
	var cur any = obj
	for _, p := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// chartValuesKeySkipped: configs.cm keys the argo-cd chart does not write
// into argocd-cm (charts/argo-cd/templates/argocd-configs/argocd-cm.yaml
// ranges over `omit .Values.configs.cm "create" "annotations"`).
func chartValuesKeySkipped(k string) bool { return k == "create" || k == "annotations" }

// chartValuesCM reads configs.cm of argo-cd chart values found at path in
// the document (or in vals, already parsed from a values string, in which
// case positions point at the string itself).
func chartValuesCM(d source.Document, holder, ns string, path []string, vals map[string]any) []source.Document {
	var cm map[string]any
	if vals != nil {
		cm, _ = nestedAny(vals, []string{"configs", "cm"}).(map[string]any)
	} else {
		cm, _ = nestedAny(d.Object.Object, append(append([]string{}, path...), "configs", "cm")).(map[string]any)
	}
	data := map[string]string{}
	for k, v := range cm {
		if chartValuesKeySkipped(k) {
			continue
		}
		switch s := v.(type) {
		case string:
			data[k] = s
		case nil:
		default:
			// The chart renders non-strings with toYaml/quote; what matters
			// for the rules is the text Argo CD parses.
			b, _ := sigsyaml.Marshal(s)
			data[k] = strings.TrimSuffix(string(b), "\n")
		}
	}
	if len(data) == 0 {
		return nil
	}
	pointer, where := "", "configs.cm"
	if len(path) > 0 {
		pointer = "/" + strings.Join(path, "/")
		where = strings.Join(path, ".") + ".configs.cm"
		if vals != nil {
			where = strings.Join(path, ".") + ": configs.cm"
		}
	}
	keys := map[string]string{}
	fields := map[string]string{}
	for k := range data {
		fields[k] = where + "[" + k + "]"
		if vals == nil {
			keys[k] = pointer + "/configs/cm/" + jsonpointer.Escape(k)
		} else {
			keys[k] = pointer // inside a string: its start
		}
	}
	return []source.Document{synthCM(d, ns, holder, data, keys, fields)}
}

// argoCDResourceData mirrors argocd-operator getResourceIgnoreDifferences,
// getResourceExclusions/Inclusions and the extraConfig merge. keys maps each
// data key to the JSON pointer of the field it was written from.
func argoCDResourceData(u *unstructured.Unstructured, d source.Document) (map[string]string, map[string]string) {
	data := map[string]string{}
	keys := map[string]string{}
	marshal := func(v any) string {
		b, _ := sigsyaml.Marshal(v)
		return string(b)
	}
	if all, ok, _ := unstructured.NestedMap(u.Object, "spec", "resourceIgnoreDifferences", "all"); ok && len(all) > 0 {
		k := keyCustomizations + "." + customizationIgnore + ".all"
		data[k] = marshal(all)
		keys[k] = "/spec/resourceIgnoreDifferences/all"
	}
	ids, _, _ := unstructured.NestedSlice(u.Object, "spec", "resourceIgnoreDifferences", "resourceIdentifiers")
	for i, it := range ids {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		group, _ := m["group"].(string)
		kind, _ := m["kind"].(string)
		if group != "" {
			group += "_"
		}
		k := keyCustomizations + "." + customizationIgnore + "." + group + kind
		data[k] = marshal(m["customization"])
		keys[k] = fmt.Sprintf("/spec/resourceIgnoreDifferences/resourceIdentifiers/%d", i)
	}
	for field, key := range map[string]string{"resourceExclusions": keyExclusions, "resourceInclusions": keyInclusions} {
		if v, ok, _ := unstructured.NestedString(u.Object, "spec", field); ok && v != "" {
			data[key] = v
			keys[key] = "/spec/" + field
		}
	}
	extra, _, _ := unstructured.NestedMap(u.Object, "spec", "extraConfig")
	for k, v := range extra {
		s, ok := v.(string)
		if !ok {
			continue
		}
		data[k] = s
		keys[k] = "/spec/extraConfig/" + jsonpointer.Escape(k)
	}
	return data, keys
}

// synthCM builds the argocd-cm document. Its YAML node is a mapping
// {data: {key: value}} whose key nodes carry the line and column of the
// field each key was read from, so that Document.Position("/data/<key>")
// cites the real place.
func synthCM(d source.Document, ns, holder string, data, keys, fields map[string]string) source.Document {
	if fields == nil {
		fields = map[string]string{}
		for k, p := range keys {
			fields[k] = pointerToField(p)
		}
	}
	fj, _ := json.Marshal(fields)
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": cmName, "annotations": map[string]any{
			SettingsFromAnnotation: holder, settingsFieldsAnnotation: string(fj)}},
	}
	if ns != "" {
		obj["metadata"].(map[string]any)["namespace"] = ns
	}
	dm := map[string]any{}
	names := make([]string, 0, len(data))
	for k, v := range data {
		dm[k] = v
		names = append(names, k)
	}
	sort.Strings(names)
	obj["data"] = dm
	dataNode := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range names {
		line, col := d.Position(keys[k])
		dataNode.Content = append(dataNode.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: k, Line: line, Column: col},
			&yaml.Node{Kind: yaml.ScalarNode, Value: data[k], Line: line, Column: col})
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Line: d.Line, Column: 1, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "data", Line: d.Line, Column: 1}, dataNode,
	}}
	return source.Document{Object: &unstructured.Unstructured{Object: obj}, File: d.File, Line: d.Line, Index: d.Index, Node: root}
}

// pointerToField renders /spec/extraConfig/a~1b as spec.extraConfig[a/b]
// and list indexes as [i].
func pointerToField(p string) string {
	tokens, err := jsonpointer.Parse(p)
	if err != nil {
		return p
	}
	var b strings.Builder
	for _, tok := range tokens {
		if tok == "" {
			continue
		}
		switch {
		case isIndex(tok):
			b.WriteString("[" + tok + "]")
		case strings.ContainsAny(tok, "./"):
			b.WriteString("[" + tok + "]")
		default:
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(tok)
		}
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// settingsFields reads the settings-fields annotation of a synthesized
// argocd-cm (nil for a real one).
func settingsFields(annotations map[string]string) map[string]string {
	v := annotations[settingsFieldsAnnotation]
	if v == "" {
		return nil
	}
	var m map[string]string
	if json.Unmarshal([]byte(v), &m) != nil {
		return nil
	}
	return m
}

// ValuesFileDocuments reads an argo-cd chart values file (values*.yaml, not
// a Kubernetes object, so the manifest reader skips it) and returns the
// argocd-cm its configs.cm stands for, or nothing when it has none.
func ValuesFileDocuments(file string) ([]source.Document, error) {
	data, err := source.ReadFile(file, nil, 0)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil || len(root.Content) == 0 {
		return nil, nil // not ours to report: the manifest reader does
	}
	var vals map[string]any
	if err := sigsyaml.Unmarshal(data, &vals); err != nil || vals == nil {
		return nil, nil
	}
	if _, isObject := vals["apiVersion"]; isObject {
		return nil, nil
	}
	d := source.Document{Object: &unstructured.Unstructured{Object: vals}, File: file, Line: 1, Node: root.Content[0]}
	// The chart's own values, or an umbrella chart's values for its argo-cd
	// dependency (under the key argo-cd).
	for _, path := range [][]string{nil, {"argo-cd"}} {
		cm, ok := nestedAny(vals, append(append([]string{}, path...), "configs", "cm")).(map[string]any)
		if !ok || !looksLikeArgoCDValues(nestedAny(vals, path), cm) {
			continue
		}
		if path == nil {
			return chartValuesCM(d, "argo-cd chart values", "", nil, nil), nil
		}
		return chartValuesCM(d, "argo-cd chart values", "", path, nil), nil
	}
	return nil, nil
}

// looksLikeArgoCDValues tells argo-cd chart values from another chart's
// that happen to have configs.cm: a component key of the argo-cd chart
// next to configs, or an argocd-cm key in configs.cm. Per-environment overlays of the chart's
// values often hold nothing else than configs.cm ui.bannercontent: they
// are still an argocd-cm, whose resource.compareoptions default (the
// /status rule) applies though no rule key is set.
func looksLikeArgoCDValues(vals any, cm map[string]any) bool {
	m, _ := vals.(map[string]any)
	for _, k := range []string{"server", "controller", "repoServer", "applicationSet", "dex", "redis", "notifications", "global"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	for k := range cm {
		first, _, _ := strings.Cut(k, ".")
		if argoCDCMKeys[first] {
			return true
		}
	}
	return false
}

// argoCDCMKeys are the first dot-separated parts of argocd-cm's keys
// (argo-cd docs/operator-manual/argocd-cm.yaml).
var argoCDCMKeys = map[string]bool{
	"accounts": true, "additionalUrls": true, "admin": true, "application": true, "cluster": true, "commit": true,
	"dex": true, "exec": true, "extension": true, "ga": true, "helm": true, "help": true, "installationID": true,
	"jsonnet": true, "kustomize": true, "oidc": true, "passwordPattern": true, "project": true, "resource": true,
	"server": true, "sourceHydrator": true, "statusbadge": true, "timeout": true, "ui": true, "url": true,
	"users": true, "webhook": true,
}

// IsValuesFile reports whether a file name looks like Helm chart values.
func IsValuesFile(name string) bool {
	base := strings.ToLower(filepath.Base(name))
	ext := filepath.Ext(base)
	return (ext == ".yaml" || ext == ".yml") && strings.Contains(base, "values")
}
