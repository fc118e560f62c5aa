package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/fieldpath"
	"github.com/kubectl-drift/kubectl-drift/internal/argocd/smd/typed"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"

	"github.com/kubectl-drift/kubectl-drift/internal/jq"
)

// compareConfig is what Argo CD's diff config holds for one Application
// (util/argo/diff/diff.go DiffConfig), in our own types.
type compareConfig struct {
	settings *Settings
	// rules: the Application's entries first, then argocd-cm's in key
	// order, the order NewIgnoreNormalizer builds its patches in.
	rules     []*ignoreRule
	parser    GVKParser
	jqTimeout time.Duration
	// structuredMerge: the Application syncs with ServerSideApply=true, so
	// Argo diffs with structured-merge-diff (controller/state.go).
	structuredMerge bool
	// serverSide: server-side diff (compare option ServerSideDiff=true or
	// controller.diff.server.side), run through dryRun.
	serverSide             bool
	includeMutationWebhook bool
	dryRun                 DryRunner
	ctx                    context.Context

	// localSSD: no dry-run is allowed (-f without --server-dry-run, or
	// inferred), so the server-side diff applies in memory (ssdlocal.go).
	localSSD bool
	// crDefaults are the structural defaults of the custom resource's
	// CRD (Adapter.defaulterFor), which the in-memory apply sets as the
	// API server does; nil for a built-in kind or without the schema.
	crDefaults func(*unstructured.Unstructured) any
}

// applyApp sets the Application's diff strategy (controller/state.go
// CompareAppState).
func (c *compareConfig) applyApp(app *Application) {
	c.structuredMerge = app != nil && app.HasSyncOption("ServerSideApply=true")
	c.serverSide = c.settings.ServerSideDiff
	if app != nil && app.HasCompareOption("ServerSideDiff=true") {
		c.serverSide = true
	}
	if app != nil && app.HasCompareOption("ServerSideDiff=false") {
		c.serverSide = false
	}
	c.includeMutationWebhook = app != nil && app.HasCompareOption("IncludeMutationWebhook=true")
}

func newCompareConfig(s *Settings, app *Application, appSrc cmSource, parser GVKParser, jqTimeout time.Duration) *compareConfig {
	var rules []*ignoreRule
	if app != nil {
		rules = appRules(app, appSrc)
		for _, r := range rules {
			r.compile()
		}
	}
	c := newCompareConfigRules(s, rules, parser, jqTimeout)
	c.applyApp(app)
	return c
}

// newCompareConfigRules takes the Application's rules already compiled
// (the adapter caches them per Application). argocd-cm rules are compiled
// by ParseSettings, so a config only reads shared rules.
func newCompareConfigRules(s *Settings, appRules []*ignoreRule, parser GVKParser, jqTimeout time.Duration) *compareConfig {
	if s == nil {
		s = DefaultSettings()
	}
	c := &compareConfig{settings: s, parser: parser, jqTimeout: jqTimeout}
	if c.jqTimeout <= 0 {
		c.jqTimeout = s.JQTimeout
	}
	c.rules = append(c.rules, appRules...)
	for _, r := range s.Rules {
		if r.affectsDiff() {
			c.rules = append(c.rules, r)
		}
	}
	return c
}

// needsSchema says whether comparing obj (live) with desired (nil when
// inferred) reads the OpenAPI schema: a managedFieldsManagers rule applies
// to it, the diff is structured-merge (ServerSideApply=true, on the
// Application or the desired object), or a server-side diff removes
// webhook mutations. Other comparisons never consult it, so explain reads
// no schema for them.
func (c *compareConfig) needsSchema(obj, desired *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	for _, r := range c.rules {
		if len(r.Managers) > 0 && r.managersApply(gvk.Group, gvk.Kind, obj.GetName(), obj.GetNamespace()) {
			return true
		}
	}
	if c.structuredMerge || (desired != nil && hasAnnotationOption(desired.GetAnnotations(), AnnotationSyncOptions, "ServerSideApply=true")) {
		return true
	}
	return c.serverSide && (c.dryRun != nil || c.localSSD) && !c.includeMutationWebhook
}

// fatal is the error that makes Argo CD's own comparison fail, if any.
func (c *compareConfig) fatal() error {
	if c.settings.Fatal != nil {
		return c.settings.Fatal
	}
	for _, r := range c.rules {
		if r.fatal != nil {
			return r.fatal
		}
	}
	return nil
}

// ruleEffect records what one rule did to one comparison.
type ruleEffect struct {
	rule    *ignoreRule
	matched bool // the rule's selector matched the object
	// removed holds what the rule removed from live ("live") and desired
	// ("desired").
	removed map[string][]removal
	// problems are reasons the rule did less than it says (jq timeout...).
	problems []model.Note
	// managersSeen: managers of the rule that own fields of live.
	managersSeen map[string]bool
}

// removal is one field a rule removed, and by which of its parts.
type removal struct {
	Path string
	// By is "jsonPointer /spec/replicas", "jq <expr>" or "manager kubectl-set".
	By string
}

func (e *ruleEffect) addRemoved(side, by string, paths []string) {
	if side == "scratch" {
		return
	}
	if e.removed == nil {
		e.removed = map[string][]removal{}
	}
	for _, p := range paths {
		e.removed[side] = append(e.removed[side], removal{Path: p, By: by})
	}
}

// removedAny reports whether the rule removed anything at all.
func (e *ruleEffect) removedAny() bool {
	return len(e.removed["live"])+len(e.removed["desired"]) > 0
}

// covering returns the removal that covers pointer p, if any.
func (e *ruleEffect) covering(p string) (removal, bool) {
	for _, side := range []string{"live", "desired"} {
		for _, r := range e.removed[side] {
			if covers(r.Path, p) {
				return r, true
			}
		}
	}
	return removal{}, false
}

func (e *ruleEffect) problem(reason, msg string, level model.NoteLevel) {
	o := e.rule.Origin
	e.problems = append(e.problems, model.Note{Engine: Engine, Level: level, Rule: &o, Reason: reason, Message: msg})
}

// normResult is the outcome of Argo's normalization of one live/desired pair.
type normResult struct {
	Live, Target *unstructured.Unstructured
	effects      map[*ignoreRule]*ruleEffect
}

func (n *normResult) effect(r *ignoreRule) *ruleEffect {
	if n.effects == nil {
		n.effects = map[*ignoreRule]*ruleEffect{}
	}
	e := n.effects[r]
	if e == nil {
		e = &ruleEffect{rule: r}
		n.effects[r] = e
	}
	return e
}

// normalizePair mirrors util/argo/diff/normalize.go Normalize: the pre-diff
// normalization (tracking, managedFieldsManagers) and then the diff
// normalizer (ignore rules, then known types) on both objects. The inputs are
// not modified.
func (c *compareConfig) normalizePair(live, target *unstructured.Unstructured) *normResult {
	res := c.preDiffNormalize(live, target)
	if res.Live != nil {
		c.diffNormalize(res.Live, "live", res)
	}
	if res.Target != nil {
		c.diffNormalize(res.Target, "desired", res)
	}
	return res
}

// preDiffNormalize mirrors util/argo/diff/diff.go preDiffNormalize.
func (c *compareConfig) preDiffNormalize(live, target *unstructured.Unstructured) *normResult {
	res := &normResult{}
	if live != nil {
		res.Live = live.DeepCopy()
	}
	if target != nil {
		res.Target = target.DeepCopy()
	}
	normalizeTracking(res.Target, res.Live, c.settings.InstanceLabelKey, c.settings.TrackingMethod)
	if res.Live == nil || res.Target == nil {
		return res
	}
	gvk := res.Target.GroupVersionKind()
	var managers []string
	var from []*ignoreRule
	for _, r := range c.rules {
		if len(r.Managers) == 0 || !r.managersApply(gvk.Group, gvk.Kind, res.Target.GetName(), res.Target.GetNamespace()) {
			continue
		}
		from = append(from, r)
		for _, m := range r.Managers {
			if !contains(managers, m) {
				managers = append(managers, m)
			}
		}
	}
	if len(managers) == 0 {
		return res
	}
	pt, note := c.parseableType(res.Target)
	if note != nil {
		for _, r := range from {
			e := res.effect(r)
			e.matched = true
			e.problem(note.Reason, note.Message, note.Level)
		}
	}
	before := res.Live.DeepCopy()
	beforeT := res.Target.DeepCopy()
	l, t, owners, err := normalizeManagedFields(res.Live, res.Target, managers, pt)
	if err != nil {
		for _, r := range from {
			res.effect(r).problem("managers-skipped", "managedFieldsManagers skipped: the objects do not fit the schema ("+err.Error()+"); Argo CD skips this step silently", model.NoteWarning)
		}
		return res
	}
	res.Live, res.Target = l, t
	removedL := removedPaths(before.Object, res.Live.Object, "")
	removedT := removedPaths(beforeT.Object, res.Target.Object, "")
	for _, r := range from {
		e := res.effect(r)
		e.matched = true
		if e.managersSeen == nil {
			e.managersSeen = map[string]bool{}
		}
		for _, m := range r.Managers {
			if ps, ok := owners[m]; ok {
				e.managersSeen[m] = true
				// Attribute to the rule what this manager owned.
				e.addRemoved("live", "manager "+m, filterUnder(removedL, ps))
				e.addRemoved("desired", "manager "+m, filterUnder(removedT, ps))
			}
		}
	}
	return res
}

// parseableType mirrors gitops-engine pkg/utils/kube/scheme ResolveParseableType:
// no parser means the deduced type (lists atomic; a managers rule then
// removes whole lists or nothing), silently in Argo CD.
func (c *compareConfig) parseableType(obj *unstructured.Unstructured) (*typed.ParseableType, *model.Note) {
	if c.parser == nil {
		return &typed.DeducedParseableType, &model.Note{Level: model.NoteWarning, Reason: "no-schema",
			Message: "managedFieldsManagers evaluated without the cluster's OpenAPI schema: lists are atomic, so fields inside lists (e.g. a container image) are not removed; Argo CD falls back the same way silently"}
	}
	pt := c.parser.Type(obj.GroupVersionKind())
	if pt == nil {
		return &typed.DeducedParseableType, &model.Note{Level: model.NoteWarning, Reason: "no-schema",
			Message: "the cluster's OpenAPI schema has no type for " + obj.GroupVersionKind().String() + ": managedFieldsManagers evaluated with a deduced schema (lists atomic)"}
	}
	return pt, nil
}

// normalizeManagedFields mirrors util/argo/managedfields/managed_fields.go
// Normalize: both objects become typed values and are compared; for each
// live managedFields entry of a trusted manager, the intersection of its
// field set with the modified set is removed from both. owners returns, per
// trusted manager seen, the pointers of the removed fields it owned.
func normalizeManagedFields(live, config *unstructured.Unstructured, trusted []string, pt *typed.ParseableType) (*unstructured.Unstructured, *unstructured.Unstructured, map[string][]string, error) {
	owners := map[string][]string{}
	tl, err := pt.FromUnstructured(live.Object)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("live: %w", err)
	}
	tc, err := pt.FromUnstructured(config.Object)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("desired: %w", err)
	}
	cmp, err := tl.Compare(tc)
	if err != nil {
		return nil, nil, nil, err
	}
	normalized := false
	for _, mf := range live.GetManagedFields() {
		if !contains(trusted, mf.Manager) {
			continue
		}
		if _, ok := owners[mf.Manager]; !ok {
			owners[mf.Manager] = nil
		}
		normalized = true
		if mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.GetRawBytes())); err != nil {
			return nil, nil, nil, fmt.Errorf("manager %s: %w", mf.Manager, err)
		}
		inter := set.Intersection(cmp.Modified)
		if inter.Empty() {
			continue
		}
		inter.Iterate(func(p fieldpath.Path) {
			owners[mf.Manager] = append(owners[mf.Manager], smdPathToPointer(p, live.Object))
		})
		tl = tl.RemoveItems(inter)
		tc = tc.RemoveItems(inter)
	}
	if !normalized {
		return live.DeepCopy(), config.DeepCopy(), owners, nil
	}
	lm, ok := tl.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, nil, nil, errors.New("live typed value is not a map")
	}
	cm, ok := tc.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, nil, nil, errors.New("desired typed value is not a map")
	}
	return &unstructured.Unstructured{Object: lm}, &unstructured.Unstructured{Object: cm}, owners, nil
}

// smdPathToPointer renders a structured-merge-diff path as a JSON pointer
// into obj (list items by their index in obj).
func smdPathToPointer(p fieldpath.Path, obj any) string {
	var sb strings.Builder
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			sb.WriteString("/" + jsonpointer.Escape(*pe.FieldName))
			if m, ok := cur.(map[string]any); ok {
				cur = m[*pe.FieldName]
			} else {
				cur = nil
			}
		case pe.Index != nil:
			fmt.Fprintf(&sb, "/%d", *pe.Index)
			if l, ok := cur.([]any); ok && *pe.Index < len(l) {
				cur = l[*pe.Index]
			} else {
				cur = nil
			}
		default:
			idx := -1
			if l, ok := cur.([]any); ok {
				for i, it := range l {
					if pathElementMatches(pe, it) {
						idx = i
						break
					}
				}
				if idx >= 0 {
					cur = l[idx]
				} else {
					cur = nil
				}
			}
			fmt.Fprintf(&sb, "/%d", idx)
		}
	}
	return sb.String()
}

func pathElementMatches(pe fieldpath.PathElement, item any) bool {
	if pe.Key != nil {
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			v, _ := json.Marshal(m[f.Name])
			w, _ := json.Marshal(f.Value.Unstructured())
			if !bytes.Equal(v, w) {
				return false
			}
		}
		return true
	}
	if pe.Value != nil {
		v, _ := json.Marshal(item)
		w, _ := json.Marshal((*pe.Value).Unstructured())
		return bytes.Equal(v, w)
	}
	return false
}

// normalizeTracking mirrors util/argo/resource_tracking.go Normalize: with
// annotation tracking, a live object carrying the instance label gets the
// desired tracking annotation, and loses the label when desired has none.
func normalizeTracking(config, live *unstructured.Unstructured, labelKey, method string) {
	if method == "" || method == TrackingLabel || live == nil || config == nil {
		return
	}
	if live.GetLabels()[labelKey] == "" {
		return
	}
	gvk := live.GroupVersionKind()
	if gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition" {
		return
	}
	ann := live.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationTrackingID] = config.GetAnnotations()[AnnotationTrackingID]
	live.SetAnnotations(ann)
	if config.GetLabels()[labelKey] == "" {
		labels := live.GetLabels()
		delete(labels, labelKey)
		if len(labels) == 0 {
			live.SetLabels(nil)
		} else {
			live.SetLabels(labels)
		}
	}
}

// diffNormalize mirrors the composable normalizer of util/argo/diff/normalize.go:
// the ignore normalizer (diff_normalizer.go) then the known-types normalizer.
func (c *compareConfig) diffNormalize(un *unstructured.Unstructured, side string, res *normResult) {
	c.ignoreNormalize(un, side, res)
	c.knownTypesNormalize(un, res)
}

// ignoreNormalize mirrors ignoreNormalizer.Normalize: the matched patches
// run in order on one JSON document; a patch that fails is skipped (missing
// paths silently, jq errors and timeouts with only a debug log).
func (c *compareConfig) ignoreNormalize(un *unstructured.Unstructured, side string, res *normResult) {
	gk := un.GroupVersionKind().GroupKind()
	var matched []*ignoreRule
	for _, r := range c.rules {
		if len(r.JSONPointers)+len(r.JQPathExpressions) == 0 {
			continue
		}
		if r.matchesObject(gk.Group, gk.Kind, un.GetName(), un.GetNamespace()) {
			matched = append(matched, r)
			res.effect(r).matched = true
		}
	}
	if len(matched) == 0 {
		return
	}
	doc, err := json.Marshal(un)
	if err != nil {
		return
	}
	// gojq quotes the value it fails on: never a Secret's.
	secret := redact.IsSecretObject(un.Object)
	for _, r := range matched {
		e := res.effect(r)
		for _, p := range r.JSONPointers {
			out, err := applyRemove(doc, p)
			if err != nil {
				continue
			}
			e.addRemoved(side, "jsonPointer "+p, diffDocs(doc, out))
			doc = out
		}
		for i, expr := range r.JQPathExpressions {
			if r.jq == nil || r.jq[i] == nil {
				continue
			}
			if r.timedOut(i) {
				e.problem("jq-timeout", fmt.Sprintf("jq path expression %q timed out (%s) on an earlier object and is skipped; Argo CD skips it too, after waiting for the limit on every comparison", expr, c.jqTimeout), model.NoteError)
				continue
			}
			out, err := applyJQ(doc, r.jq[i], expr, c.jqTimeout, secret)
			if errors.Is(err, jq.ErrTimeout) {
				r.markTimedOut(i)
			}
			if err != nil {
				reason := "jq-error"
				if errors.Is(err, jq.ErrTimeout) {
					reason = "jq-timeout"
				}
				e.problem(reason, fmt.Sprintf("jq path expression %q on %s: %v; Argo CD skips it (logged at debug level only)", expr, side, err), model.NoteError)
				continue
			}
			e.addRemoved(side, "jq "+expr, diffDocs(doc, out))
			doc = out
		}
	}
	// Argo unmarshals into the same object: integers become int64 again.
	fresh := &unstructured.Unstructured{}
	if err := fresh.UnmarshalJSON(doc); err != nil {
		return
	}
	un.Object = fresh.Object
}

// applyRemove is one RFC 6902 remove, as the ignore normalizer builds it.
func applyRemove(doc []byte, pointer string) ([]byte, error) {
	op, err := json.Marshal([]map[string]string{{"op": "remove", "path": pointer}})
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(op)
	if err != nil {
		return nil, err
	}
	return patch.Apply(doc)
}

// applyJQ mirrors jqNormalizerPatch.Apply: the document is decoded into a
// map (numbers as float64), exactly one result is required (a second one,
// even an error, is "multiple objects"), within the time limit.
//
// With secret set the error is told without gojq's text (jq.Redact):
// gojq quotes the value it failed on; expr is the rule's expression, the
// only text the redacted error may repeat.
func applyJQ(doc []byte, code *gojq.Code, expr string, timeout time.Duration, secret bool) ([]byte, error) {
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	var first any
	n := 0
	_, err := jq.Run(code, v, timeout, func(out any) bool {
		if n == 0 {
			first = out
		}
		n++
		return n < 2
	})
	switch {
	case n > 1 || n == 1 && err != nil:
		return nil, errors.New("JQ patch returned multiple objects")
	case errors.Is(err, jq.ErrTimeout):
		return nil, err
	case err != nil:
		if secret {
			err = jq.Redact(err, expr)
		}
		return nil, fmt.Errorf("JQ patch returned error: %w", err)
	case n == 0:
		return nil, errors.New("JQ patch did not return any data")
	}
	return json.Marshal(first)
}

// knownTypesNormalize mirrors knowntypes_normalizer.go: fields of the listed
// kinds are re-marshalled through Kubernetes types so 0.1 and 100m compare
// equal. argoproj.io/Rollout spec.template.spec is always a PodSpec.
func (c *compareConfig) knownTypesNormalize(un *unstructured.Unstructured, res *normResult) {
	gk := un.GroupVersionKind().GroupKind()
	fields := c.knownFieldsFor(gk.Group, gk.Kind)
	for _, f := range fields {
		newFn := knownTypeConstructor(f.Type)
		if newFn == nil {
			continue
		}
		_ = normalizeKnownField(un.Object, newFn, strings.Split(f.Field, "."))
	}
}

func (c *compareConfig) knownFieldsFor(group, kind string) []knownField {
	var out []knownField
	rollout := false
	for _, f := range c.settings.Known {
		if f.Group == group && f.Kind == kind {
			out = append(out, f)
		}
		if f.Group == "argoproj.io" && f.Kind == "Rollout" && knownTypeConstructor(f.Type) != nil {
			rollout = true
		}
	}
	if group == "argoproj.io" && kind == "Rollout" && !rollout {
		out = append(out, knownField{Group: group, Kind: kind, Field: "spec.template.spec", Type: "core/v1/PodSpec"})
	}
	return out
}

func knownTypeConstructor(t string) func() any {
	switch t {
	case "core/Quantity":
		return func() any { return &resource.Quantity{} }
	case "meta/v1/Duration":
		return func() any { return &metav1.Duration{} }
	}
	return coreV1KnownTypes[t]
}

func normalizeKnownField(obj map[string]any, newFn func() any, path []string) error {
	for i := range path {
		v, ok, err := unstructured.NestedFieldNoCopy(obj, path[:i+1]...)
		if err != nil || !ok {
			continue
		}
		items, ok := v.([]any)
		if !ok {
			continue
		}
		for j := range items {
			item, ok := items[j].(map[string]any)
			if !ok {
				continue
			}
			sub := path[i+1:]
			if len(sub) == 0 {
				nv, err := remarshalKnown(item, newFn)
				if err != nil {
					return err
				}
				items[j] = nv
			} else if err := normalizeKnownField(item, newFn, sub); err != nil {
				return err
			}
		}
		return unstructured.SetNestedSlice(obj, items, path[:i+1]...)
	}
	if v, ok, err := unstructured.NestedFieldNoCopy(obj, path...); ok && err == nil {
		nv, err := remarshalKnown(v, newFn)
		if err != nil {
			return err
		}
		return unstructured.SetNestedField(obj, nv, path...)
	}
	return nil
}

func remarshalKnown(v any, newFn func() any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	t := newFn()
	if err := json.Unmarshal(data, t); err != nil {
		return nil, err
	}
	if data, err = json.Marshal(t); err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(data, &out)
	return out, err
}

// diffDocs lists the pointers present in before and gone from after.
func diffDocs(before, after []byte) []string {
	var b, a any
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil {
		return nil
	}
	return removedPaths(b, a, "")
}

// removedPaths lists the top-most pointers present in before and absent or
// shortened in after.
func removedPaths(before, after any, prefix string) []string {
	var out []string
	switch b := before.(type) {
	case map[string]any:
		a, ok := after.(map[string]any)
		if !ok {
			return nil
		}
		keys := slices.Sorted(maps.Keys(b))
		for _, k := range keys {
			p := prefix + "/" + jsonpointer.Escape(k)
			av, ok := a[k]
			if !ok {
				out = append(out, p)
				continue
			}
			out = append(out, removedPaths(b[k], av, p)...)
		}
	case []any:
		a, ok := after.([]any)
		if !ok {
			return nil
		}
		if len(a) == len(b) {
			for i := range b {
				out = append(out, removedPaths(b[i], a[i], fmt.Sprintf("%s/%d", prefix, i))...)
			}
			return out
		}
		// Items removed: match the remaining ones in order.
		j := 0
		for i := range b {
			if j < len(a) && jsonEqual(b[i], a[j]) {
				j++
				continue
			}
			out = append(out, fmt.Sprintf("%s/%d", prefix, i))
		}
	}
	return out
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// filterUnder keeps the paths equal to or below one of roots, or above one
// (a removed parent covers the owned child).
func filterUnder(paths, roots []string) []string {
	var out []string
	for _, p := range paths {
		for _, r := range roots {
			if covers(p, r) || covers(r, p) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// covers reports whether pointer a is b or an ancestor of b.
func covers(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+"/")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
