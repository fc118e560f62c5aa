package flux

import (
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/ssa/jsondiff"
	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// driftPatch is what one Kustomization spec.patches[i] sets in the
// spec.driftDetection of the HelmReleases it targets. kustomize-controller
// applies the patches to everything it builds from the Kustomization's
// path (kustomize-controller internal/generator: spec.patches become the
// generated kustomization.yaml's patches), so a HelmRelease whose manifest
// says nothing of drift detection may well have it.
type driftPatch struct {
	ks    doc
	index int
	// path is the Kustomization's spec.path ("" is the source's root).
	path string
	// sel selects the patched objects: the patch's target, or for a
	// strategic-merge patch without one its own kind, name and namespace.
	sel *jsondiff.SelectorRegex
	// mode is the driftDetection.mode the patch sets ("" when it sets
	// none; "disabled" when it removes it); modeLine is its line.
	mode     string
	modeLine int
	// ignore are the ignore entries the patch adds, with their lines.
	ignore []patchIgnore
}

// patchIgnore is one driftDetection.ignore entry written in a patch.
type patchIgnore struct {
	paths        []string
	target       *kustomize.Selector
	line, column int
}

// driftPatches reads the patches of every Kustomization among docs that
// touch spec.driftDetection of HelmReleases. A patch that does not parse
// sets nothing here: kustomize-controller fails on it, which its own
// status reports.
func driftPatches(docs []doc) []driftPatch {
	var out []driftPatch
	for _, d := range docs {
		if d.obj == nil || !isKustomization(d.obj) {
			continue
		}
		k, err := toKustomization(d.obj)
		if err != nil {
			continue
		}
		for i, p := range k.Spec.Patches {
			dp, ok := readDriftPatch(d, i, p)
			if ok {
				dp.path = k.Spec.Path
				out = append(out, dp)
			}
		}
	}
	return out
}

// readDriftPatch reads one patch: a JSON 6902 list of operations or a
// strategic-merge patch, each as kustomize tells them apart (a YAML list
// is JSON 6902).
func readDriftPatch(d doc, i int, p kustomize.Patch) (driftPatch, bool) {
	dp := driftPatch{ks: d, index: i}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(p.Patch), &root); err != nil || len(root.Content) != 1 {
		return dp, false
	}
	// The patch is a string inside the Kustomization: a line of it is
	// the line of the `patch:` key plus its own (a block scalar starts on
	// the next line, as `patch: |` is written).
	var base, col int
	if d.pos != nil {
		base, col = d.pos(fmt.Sprintf("/spec/patches/%d/patch", i))
	}
	at := func(n *yaml.Node) (int, int) {
		if base == 0 {
			return 0, 0
		}
		return base + n.Line, col + n.Column + 1
	}
	n := root.Content[0]
	switch n.Kind {
	case yaml.SequenceNode:
		if p.Target == nil {
			return dp, false // JSON 6902 needs a target
		}
		for _, op := range n.Content {
			readDriftOp(&dp, op, at)
		}
	case yaml.MappingNode:
		var obj map[string]any
		if n.Decode(&obj) != nil {
			return dp, false
		}
		if p.Target == nil {
			// A strategic-merge patch without target patches the object
			// of its own kind and name.
			u := unstructured.Unstructured{Object: obj}
			p.Target = &kustomize.Selector{Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace()}
		}
		if dd := child(child(n, "spec"), "driftDetection"); dd != nil {
			readDriftDetection(&dp, dd, at)
		}
	}
	if dp.mode == "" && len(dp.ignore) == 0 {
		return dp, false
	}
	sel, err := jsondiff.NewSelectorRegex(&jsondiff.Selector{
		Group: p.Target.Group, Version: p.Target.Version, Kind: p.Target.Kind,
		Name: p.Target.Name, Namespace: p.Target.Namespace,
		LabelSelector: p.Target.LabelSelector, AnnotationSelector: p.Target.AnnotationSelector,
	})
	if err != nil {
		return dp, false
	}
	dp.sel = sel
	return dp, true
}

// readDriftOp reads one JSON 6902 operation on spec.driftDetection.
func readDriftOp(dp *driftPatch, op *yaml.Node, at func(*yaml.Node) (int, int)) {
	opName, path, value := child(op, "op"), child(op, "path"), child(op, "value")
	if opName == nil || path == nil {
		return
	}
	const dd = "/spec/driftDetection"
	switch {
	case opName.Value == "remove" && (path.Value == dd || path.Value == dd+"/mode"):
		dp.mode, dp.modeLine = helmv2Disabled, lineOf(at, path)
	case opName.Value != "add" && opName.Value != "replace" || value == nil:
	case path.Value == dd:
		readDriftDetection(dp, value, at)
	case path.Value == dd+"/mode":
		dp.mode, dp.modeLine = value.Value, lineOf(at, value)
	case path.Value == dd+"/ignore":
		readIgnoreList(dp, value, at)
	case strings.HasPrefix(path.Value, dd+"/ignore/"):
		readIgnore(dp, value, at)
	}
}

// helmv2Disabled is helm-controller's mode without drift detection.
const helmv2Disabled = "disabled"

func lineOf(at func(*yaml.Node) (int, int), n *yaml.Node) int {
	l, _ := at(n)
	return l
}

// readDriftDetection reads a driftDetection map: mode and ignore.
func readDriftDetection(dp *driftPatch, n *yaml.Node, at func(*yaml.Node) (int, int)) {
	if m := child(n, "mode"); m != nil {
		dp.mode, dp.modeLine = m.Value, lineOf(at, m)
	}
	if l := child(n, "ignore"); l != nil {
		readIgnoreList(dp, l, at)
	}
}

func readIgnoreList(dp *driftPatch, n *yaml.Node, at func(*yaml.Node) (int, int)) {
	if n.Kind != yaml.SequenceNode {
		return
	}
	for _, item := range n.Content {
		readIgnore(dp, item, at)
	}
}

// readIgnore reads one ignore entry (helm-controller api/v2 IgnoreRule).
func readIgnore(dp *driftPatch, n *yaml.Node, at func(*yaml.Node) (int, int)) {
	var ir struct {
		Paths  []string            `yaml:"paths"`
		Target *kustomize.Selector `yaml:"target"`
	}
	if n.Kind != yaml.MappingNode || n.Decode(&ir) != nil {
		return
	}
	line, col := at(n)
	dp.ignore = append(dp.ignore, patchIgnore{paths: ir.Paths, target: ir.Target, line: line, column: col})
}

// child returns the value of key in a mapping node, or nil.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// patches returns the patches of ps that kustomize-controller applies to
// the HelmRelease hr: its Kustomization builds hr's manifest (the file is
// under the Kustomization's path, source.UnderSourcePath) and the patch's
// target selects it.
func patchesFor(hr doc, ps []driftPatch) []driftPatch {
	var out []driftPatch
	for _, p := range ps {
		if hr.file == "" || p.ks.file == "" || !p.sel.MatchUnstructured(hr.obj) {
			continue
		}
		if _, ok := source.UnderSourcePath(hr.file, p.ks.file, []string{p.path}); ok {
			out = append(out, p)
		}
	}
	return out
}

// patchedMode is the driftDetection.mode hr has once ps are applied in
// order, with the patch that set it last (nil: hr's own).
func patchedMode(hr doc, ps []driftPatch) (string, *driftPatch) {
	mode, _, _ := unstructured.NestedString(hr.obj.Object, "spec", "driftDetection", "mode")
	var from *driftPatch
	for i := range ps {
		if ps[i].mode != "" {
			mode, from = ps[i].mode, &ps[i]
		}
	}
	return mode, from
}

// patchRules are the ignore rules the patches ps add to hr, each placed at
// its line in the patch and held by hr (after kustomize build they are
// hr's own).
func patchRules(hr doc, ps []driftPatch) []ignoreRule {
	var out []ignoreRule
	n := 0
	if own, ok, _ := unstructured.NestedSlice(hr.obj.Object, "spec", "driftDetection", "ignore"); ok {
		n = len(own)
	}
	for _, p := range ps {
		for _, ir := range p.ignore {
			o := model.Origin{
				Object: objectRef(hr.obj),
				Field: fmt.Sprintf(".spec.driftDetection.ignore[%d] from %s .spec.patches[%d]",
					n, objectRef(p.ks.obj), p.index),
				File: p.ks.file, Line: ir.line, Column: ir.column,
			}
			n++
			out = append(out, compileIgnoreRule(RuleHelmIgnore, model.ScopeDiff, ir.paths, ir.target, o))
		}
	}
	return out
}
