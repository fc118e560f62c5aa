package adopt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// HelmLocator maps an object's field to a Helm values key where a chart
// template writes the value straight in: `replicas: {{ .Values.replicaCount }}`
// (optionally `| quote`), or a subtree through
// `{{- toYaml .Values.resources | nindent 12 }}` under the field's key.
// Anything else the template computes (include, printf, default, if) is
// not edited: the value is printed for the user instead.
type HelmLocator struct {
	Chart string
	// Values is the values file to edit; empty means Chart/values.yaml.
	Values string
}

var (
	directValue = regexp.MustCompile(`^["']?\{\{-?\s*\.Values\.([A-Za-z0-9_.]+)\s*(\|\s*quote\s*)?-?\}\}["']?$`)
	toYamlValue = regexp.MustCompile(`^\{\{-?\s*toYaml\s+\.Values\.([A-Za-z0-9_.]+)\s*\|\s*n?indent\s+\d+\s*-?\}\}$`)
	kindLine    = regexp.MustCompile(`(?m)^kind:\s*(\S+)\s*$`)
)

// helmMapping is one field path of a template and what sets it.
type helmMapping struct {
	values  string // dotted values path; "" when computed
	subtree bool   // the values key holds the whole subtree below
	line    int
}

// Locate implements Locator.
func (h HelmLocator) Locate(obj Object, pointer string, _ any) (*Target, error) {
	tmpls, err := filepath.Glob(filepath.Join(h.Chart, "templates", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(tmpls)
	var found []string
	var maps map[string]helmMapping
	for _, f := range tmpls {
		rf, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, part := range splitDocs(string(rf.Data)) {
			if m := kindLine.FindStringSubmatch(part.text); m != nil && m[1] == obj.Kind {
				found = append(found, fmt.Sprintf("%s:%d", f, part.line))
				maps = templateMappings(part.text, part.line)
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no template of chart %s renders a %s", h.Chart, obj.Kind)
	case 1:
	default:
		return nil, &EditError{Pointer: pointer, Reason: ReasonTemplate, Msg: fmt.Sprintf("several templates render a %s (%s): cannot tell which is %s", obj.Kind, strings.Join(found, ", "), obj.Name)}
	}
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return nil, err
	}
	values := h.Values
	if values == "" {
		values = filepath.Join(h.Chart, "values.yaml")
	}
	if _, err := os.Stat(values); err != nil {
		return nil, fmt.Errorf("values file %s not found", values)
	}
	for i := len(tokens); i > 0; i-- {
		m, ok := maps[strings.Join(tokens[:i], "/")]
		if !ok {
			continue
		}
		switch {
		case m.values == "":
			return nil, &EditError{Pointer: pointer, Reason: ReasonTemplate, Msg: fmt.Sprintf("the template %s computes this field at line %d: it cannot be edited safely", found[0], m.line)}
		case i == len(tokens) || m.subtree:
			p := "/" + strings.ReplaceAll(m.values, ".", "/") + jsonpointer.Join(tokens[i:]...)
			return &Target{File: values, Pointer: p, Kind: InValues}, nil
		}
	}
	return nil, &EditError{Pointer: pointer, Reason: ReasonTemplate, Msg: fmt.Sprintf("the template %s does not take this field from the values: it cannot be edited safely", found[0])}
}

type docPart struct {
	text string
	line int
}

func splitDocs(s string) []docPart {
	var out []docPart
	line, start := 1, 1
	var cur []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimRight(l, " ") == "---" {
			out = append(out, docPart{strings.Join(cur, "\n"), start})
			cur, start = nil, line+1
		} else {
			cur = append(cur, l)
		}
		line++
	}
	return append(out, docPart{strings.Join(cur, "\n"), start})
}

// templateMappings reads a template document line by line, tracking the
// key path by indentation, and records each key whose value is a
// template expression. Control lines ({{- if }}, {{- end }}) are skipped.
func templateMappings(text string, firstLine int) map[string]helmMapping {
	type frame struct {
		indent int
		token  string
		index  bool
	}
	var stack []frame
	counters := map[string]int{}
	out := map[string]helmMapping{}
	path := func() string {
		var ts []string
		for _, f := range stack {
			ts = append(ts, f.token)
		}
		return strings.Join(ts, "/")
	}
	lastKey := ""
	for n, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		if trim == "" || strings.HasPrefix(trim, "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if strings.HasPrefix(trim, "{{") {
			if m := toYamlValue.FindStringSubmatch(trim); m != nil && lastKey != "" {
				out[lastKey] = helmMapping{values: m[1], subtree: true, line: firstLine + n}
			}
			continue
		}
		lastKey = ""
		item := strings.HasPrefix(trim, "- ") || trim == "-"
		if item {
			for len(stack) > 0 {
				top := stack[len(stack)-1]
				if top.indent > indent || (top.indent == indent && top.index) {
					stack = stack[:len(stack)-1]
					continue
				}
				break
			}
			parent := path()
			idx := counters[parent]
			counters[parent] = idx + 1
			stack = append(stack, frame{indent: indent, token: strconv.Itoa(idx), index: true})
			trim = strings.TrimSpace(strings.TrimPrefix(trim, "-"))
			indent += 2
			if trim == "" {
				continue
			}
		} else {
			for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
				stack = stack[:len(stack)-1]
			}
		}
		key, rest, ok := strings.Cut(trim, ":")
		if !ok || strings.Contains(key, "{{") {
			continue
		}
		key = strings.Trim(key, `"'`)
		rest = strings.TrimSpace(rest)
		if i := strings.Index(rest, " #"); i >= 0 && !strings.Contains(rest[:i], "{{") {
			rest = strings.TrimSpace(rest[:i])
		}
		stack = append(stack, frame{indent: indent, token: key})
		p := path()
		switch {
		case rest == "":
			lastKey = p
		case directValue.MatchString(rest):
			out[p] = helmMapping{values: directValue.FindStringSubmatch(rest)[1], line: firstLine + n}
		case strings.Contains(rest, "{{"):
			out[p] = helmMapping{line: firstLine + n}
		}
	}
	return out
}
