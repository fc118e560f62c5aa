package argocd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/template"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	sigsyaml "sigs.k8s.io/yaml"
)

// In-cluster defaults of the cluster generator
// (pkg/apis/application/v1alpha1 KubernetesInClusterName,
// KubernetesInternalAPIServerAddr).
const (
	inClusterName   = "in-cluster"
	inClusterServer = "https://kubernetes.default.svc"
)

// clusterSecret is an Argo CD cluster Secret read from the files.
type clusterSecret struct {
	labels, annotations map[string]string
	data                map[string]string
}

// clusterSecrets returns the Secrets labelled
// argocd.argoproj.io/secret-type: cluster among the inputs, with data
// decoded (stringData wins, as the API server merges it).
func clusterSecrets(inputs []Input) []clusterSecret {
	var out []clusterSecret
	for _, in := range inputs {
		u := in.Object
		if u == nil || u.GetKind() != "Secret" || u.GroupVersionKind().Group != "" {
			continue
		}
		if u.GetLabels()["argocd.argoproj.io/secret-type"] != "cluster" {
			continue
		}
		cs := clusterSecret{labels: u.GetLabels(), annotations: u.GetAnnotations(), data: map[string]string{}}
		d, _, _ := unstructured.NestedMap(u.Object, "data")
		for k, v := range d {
			if s, ok := v.(string); ok {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					cs.data[k] = string(b)
				}
			}
		}
		sd, _, _ := unstructured.NestedMap(u.Object, "stringData")
		for k, v := range sd {
			if s, ok := v.(string); ok {
				cs.data[k] = s
			}
		}
		out = append(out, cs)
	}
	return out
}

// expandAppSet renders the Applications an ApplicationSet generates from
// the generators that can be evaluated offline: list (elements and
// elementsYaml; applicationset/generators/list.go) and clusters over the
// cluster Secrets in the files plus the local cluster
// (applicationset/generators/cluster.go). Other generators (git, matrix,
// merge, scmProvider, pullRequest, clusterDecisionResource, plugin) need a
// repository, an API or a cluster: they are named in skipped.
func expandAppSet(u *unstructured.Unstructured, secrets []clusterSecret) (apps []*Application, skipped []string) {
	goTemplate, _, _ := unstructured.NestedBool(u.Object, "spec", "goTemplate")
	tmpl, ok, _ := unstructured.NestedMap(u.Object, "spec", "template")
	if !ok {
		return nil, nil
	}
	gens, _, _ := unstructured.NestedSlice(u.Object, "spec", "generators")
	for i, g := range gens {
		gm, _ := g.(map[string]any)
		var params []map[string]any
		var err error
		switch {
		case gm["list"] != nil:
			params, err = listParams(gm["list"], goTemplate)
		case gm["clusters"] != nil:
			params, err = clusterParams(gm["clusters"], secrets)
		default:
			names := make([]string, 0, len(gm))
			for k := range gm {
				if k != "selector" && k != "values" {
					names = append(names, k)
				}
			}
			sort.Strings(names)
			skipped = append(skipped, fmt.Sprintf("generators[%d] (%s) needs a repository, an API or a cluster", i, strings.Join(names, ",")))
			continue
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("generators[%d] cannot be evaluated (%v)", i, err))
			continue
		}
		for _, p := range params {
			rendered, err := renderTemplate(tmpl, p, goTemplate)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("generators[%d] cannot be rendered (%v)", i, err))
				break
			}
			data, err := json.Marshal(rendered)
			if err != nil {
				continue
			}
			app := &Application{}
			if err := json.Unmarshal(data, app); err != nil || app.Metadata.Name == "" {
				continue
			}
			app.Metadata.Namespace = u.GetNamespace()
			apps = append(apps, app)
		}
	}
	return apps, skipped
}

// listParams mirrors ListGenerator.GenerateParams: without goTemplate the
// element's keys are flat strings and values.<k> for its values map.
func listParams(list any, goTemplate bool) ([]map[string]any, error) {
	lm, _ := list.(map[string]any)
	var out []map[string]any
	elems, _ := lm["elements"].([]any)
	for _, e := range elems {
		el, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("list element is not a map")
		}
		if goTemplate {
			out = append(out, el)
			continue
		}
		p := map[string]any{}
		for k, v := range el {
			if k == "values" {
				vm, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("list element values is not a map")
				}
				for vk, vv := range vm {
					s, ok := vv.(string)
					if !ok {
						return nil, fmt.Errorf("list element values.%s is not a string", vk)
					}
					p["values."+vk] = s
				}
				continue
			}
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("list element %s is not a string", k)
			}
			p[k] = s
		}
		out = append(out, p)
	}
	if y, _ := lm["elementsYaml"].(string); y != "" {
		var more []map[string]any
		if err := sigsyaml.Unmarshal([]byte(y), &more); err != nil {
			return nil, fmt.Errorf("elementsYaml: %w", err)
		}
		out = append(out, more...)
	}
	return out, nil
}

// clusterParams mirrors ClusterGenerator.GenerateParams over the cluster
// Secrets of the files: name, nameNormalized, server, project,
// metadata.labels.<k>, metadata.annotations.<k> and values.<k>; the local
// cluster is added when there is no selector and no Secret for it.
func clusterParams(gen any, secrets []clusterSecret) ([]map[string]any, error) {
	gm, _ := gen.(map[string]any)
	selector := labels.Everything()
	hasSelector := false
	if sm, ok := gm["selector"].(map[string]any); ok && len(sm) > 0 {
		data, _ := json.Marshal(sm)
		var ls metav1.LabelSelector
		if err := json.Unmarshal(data, &ls); err != nil {
			return nil, fmt.Errorf("clusters selector: %w", err)
		}
		s, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return nil, fmt.Errorf("clusters selector: %w", err)
		}
		selector, hasSelector = s, len(ls.MatchLabels)+len(ls.MatchExpressions) > 0
	}
	if flat, _ := gm["flatList"].(bool); flat {
		return nil, fmt.Errorf("clusters flatList is not expanded offline")
	}
	values, _ := gm["values"].(map[string]any)
	withValues := func(p map[string]any) map[string]any {
		for k, v := range values {
			if s, ok := v.(string); ok {
				p["values."+k] = s
			}
		}
		return p
	}
	var out []map[string]any
	local := false
	for _, cs := range secrets {
		if !selector.Matches(labels.Set(cs.labels)) {
			continue
		}
		if cs.data["server"] == inClusterServer {
			local = true
		}
		p := map[string]any{"name": cs.data["name"], "nameNormalized": sanitizeName(cs.data["name"]),
			"server": cs.data["server"], "project": cs.data["project"]}
		for k, v := range cs.labels {
			p["metadata.labels."+k] = v
		}
		for k, v := range cs.annotations {
			p["metadata.annotations."+k] = v
		}
		out = append(out, withValues(p))
	}
	if !hasSelector && !local {
		out = append(out, withValues(map[string]any{"name": inClusterName, "nameNormalized": inClusterName, "server": inClusterServer, "project": ""}))
	}
	return out, nil
}

// sanitizeName approximates applicationset/utils SanitizeName: lower case,
// characters outside [a-z0-9.-] become '-'.
func sanitizeName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-.")
}

// renderTemplate renders every string of the template: fasttemplate
// `{{ key }}` replacement (unknown keys stay as they are), or text/template
// with goTemplate (applicationset/utils/utils.go Render). Sprig functions
// are not available offline: a template using them is not expanded.
func renderTemplate(v any, params map[string]any, goTemplate bool) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			r, err := renderTemplate(e, params, goTemplate)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := renderTemplate(e, params, goTemplate)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case string:
		if !strings.Contains(t, "{{") {
			return t, nil
		}
		if goTemplate {
			tp, err := template.New("").Option("missingkey=zero").Parse(t)
			if err != nil {
				return nil, fmt.Errorf("goTemplate %q not evaluated offline: %w", t, err)
			}
			var b bytes.Buffer
			if err := tp.Execute(&b, params); err != nil {
				return nil, fmt.Errorf("goTemplate %q not evaluated offline: %w", t, err)
			}
			return strings.ReplaceAll(b.String(), "<no value>", ""), nil
		}
		return fastTemplate(t, params), nil
	}
	return v, nil
}

func fastTemplate(s string, params map[string]any) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		tag := s[i+2 : i+2+j]
		if v, ok := params[strings.TrimSpace(tag)]; ok {
			fmt.Fprint(&b, v)
		} else {
			b.WriteString("{{" + tag + "}}")
		}
		s = s[i+2+j+2:]
	}
}
