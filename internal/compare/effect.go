package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"

	"github.com/kubectl-drift/kubectl-drift/internal/jq"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// RuleEffect is what one rule removes from the given objects.
type RuleEffect struct {
	// Fields are "Kind.group ns/name /pointer" entries the rule removes.
	Fields []string `json:"fields"`
	// SameAsCounterparts: the counterparts remove exactly these fields from
	// these objects (only meaningful when there are counterparts).
	SameAsCounterparts bool `json:"sameAsCounterparts"`
	// OnlyThisRule and OnlyCounterparts list the fields one side removes
	// and the other does not.
	OnlyThisRule     []string `json:"onlyThisRule,omitempty"`
	OnlyCounterparts []string `json:"onlyCounterparts,omitempty"`
	// Notes say what could not be evaluated on manifests.
	Notes []string `json:"notes,omitempty"`
}

// ObjectEffect is what each engine's rules remove from one object. Its
// JSON form has one key per engine (its fields) and one "only" key per
// engine ("onlyArgocd": the fields no other engine's rules remove).
type ObjectEffect struct {
	Object model.ResourceID
	// Ignored are the fields each engine's rules remove.
	Ignored map[model.Engine][]string
	// Only are the fields only that engine's rules remove.
	Only map[model.Engine][]string
}

// MarshalJSON writes the object, then each engine's fields, then each
// engine's "only" fields, engines in name order.
func (e ObjectEffect) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	put := func(k string, v any) error {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return err
		}
		vb, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		return nil
	}
	if err := put("object", e.Object); err != nil {
		return nil, err
	}
	for _, n := range engineKeys(e.Ignored) {
		if err := put(string(n), e.Ignored[n]); err != nil {
			return nil, err
		}
	}
	for _, n := range engineKeys(e.Only) {
		if err := put(onlyKey(n), e.Only[n]); err != nil {
			return nil, err
		}
	}
	return []byte("{" + b.String() + "}"), nil
}

// UnmarshalJSON reads what MarshalJSON writes: "object", an "onlyX" key
// per engine x (first letter upper-cased) and a key per engine.
func (e *ObjectEffect) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*e = ObjectEffect{Ignored: map[model.Engine][]string{}, Only: map[model.Engine][]string{}}
	for k, v := range m {
		if k == "object" {
			if err := json.Unmarshal(v, &e.Object); err != nil {
				return err
			}
			continue
		}
		var fields []string
		if err := json.Unmarshal(v, &fields); err != nil {
			return err
		}
		if rest, ok := strings.CutPrefix(k, "only"); ok && rest != "" {
			if n := model.Engine(strings.ToLower(rest[:1]) + rest[1:]); onlyKey(n) == k {
				e.Only[n] = fields
				continue
			}
		}
		e.Ignored[model.Engine(k)] = fields
	}
	return nil
}

// engineKeys returns the engines with fields in m, sorted.
func engineKeys(m map[model.Engine][]string) []model.Engine {
	var out []model.Engine
	for n, v := range m {
		if len(v) > 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Common counts the fields of the first of engines that every other one
// ignores too (a field removed with its parent counts).
func (e ObjectEffect) Common(engines []model.Engine) int {
	if len(engines) == 0 {
		return 0
	}
	n := 0
	for _, f := range e.Ignored[engines[0]] {
		all := true
		for _, o := range engines[1:] {
			if len(toPathSet(e.Ignored[o]).uncovered(toPathSet([]string{f}))) > 0 {
				all = false
				break
			}
		}
		if all {
			n++
		}
	}
	return n
}

// jqTimeout is Argo CD's default ignore.normalizer.jq.timeout.
const jqTimeout = jq.DefaultTimeout

// evaluator applies rules to concrete objects the way each engine would
// select them: Argo CD with gobwas globs on group and kind and exact name
// and namespace (diff_normalizer.go Normalize), Flux with anchored regexes
// as fluxcd/pkg ssa/jsondiff SelectorRegex (model.Selector.Compile).
type evaluator struct {
	objs     []*unstructured.Unstructured
	engines  Engines
	memo     map[*analyzed]map[int][]string
	matchers map[*analyzed]matcher
	owners   func(*unstructured.Unstructured) []model.Owner
	ownerOf  map[int][]model.Owner
	// fieldIndex caches parsed managedFields per object.
	fieldIndex map[int]*managedfields.Index
	// timedOut holds jq expressions that exceeded the 1s limit once; they
	// are not run again (Argo CD skips them too), so one runaway program
	// costs one second, not one per object.
	timedOut map[string]string
}

func newEvaluator(objs []*unstructured.Unstructured, es Engines) *evaluator {
	return &evaluator{objs: objs, engines: es, memo: map[*analyzed]map[int][]string{}, matchers: map[*analyzed]matcher{}}
}

func resourceID(o *unstructured.Unstructured) model.ResourceID {
	gvk := o.GroupVersionKind()
	return model.ResourceID{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

// matcher is a rule's compiled selector.
type matcher func(o *unstructured.Unstructured) bool

func (ev *evaluator) matcher(a *analyzed) matcher {
	if m, ok := ev.matchers[a]; ok {
		return m
	}
	m := compileMatcher(a.rule, ev.engines.of(a.rule.Engine).syntax())
	ev.matchers[a] = m
	return m
}

func (ev *evaluator) matches(a *analyzed, o *unstructured.Unstructured) bool {
	return ev.matcher(a)(o)
}

// scopedOut reports whether the rule's holder is an engine object that does
// not reconcile object i: an Application's ignoreDifferences only apply to
// that Application's resources, a Kustomization's or HelmRelease's ignore
// rules only to the objects it applies (Semantics.Scoped); settings-wide
// rules (argocd-cm) apply to all. Objects owned by another engine's object
// only are also out: in a migration each object is reconciled by one of
// them at a time.
func (ev *evaluator) scopedOut(a *analyzed, i int) bool {
	if ev.owners == nil {
		return false
	}
	if scoped := ev.engines.of(a.rule.Engine).Scoped; scoped == nil || !scoped(a.rule) {
		return false
	}
	holder := a.rule.Origin.Object
	if ev.ownerOf == nil {
		ev.ownerOf = map[int][]model.Owner{}
	}
	owners, ok := ev.ownerOf[i]
	if !ok {
		owners = ev.owners(ev.objs[i])
		ev.ownerOf[i] = owners
	}
	for _, o := range owners {
		if o.Engine == a.rule.Engine && o.Ref() == holder {
			return false
		}
	}
	// Not reconciled by the rule's holder. A live object (it has a uid)
	// without marks is nobody's; a manifest from Git has no marks yet
	// (the engine adds them when applying), so it may well be the holder's.
	return len(owners) > 0 || ev.objs[i].GetUID() != ""
}

func compileMatcher(r model.Rule, syntax model.MatchSyntax) matcher {
	s := r.Target
	if s.Syntax == "" {
		s.Syntax = syntax
	}
	m, err := s.Compile()
	if err != nil {
		return func(*unstructured.Unstructured) bool { return false }
	}
	return m.Matches
}

// fields returns, per object index, the pointers of existing fields the
// rule removes.
func (ev *evaluator) fields(a *analyzed) map[int][]string {
	if m, ok := ev.memo[a]; ok {
		return m
	}
	m := map[int][]string{}
	ev.memo[a] = m
	if len(a.invalid) > 0 || a.intrinsic != "" {
		return m
	}
	for i, o := range ev.objs {
		if !ev.matches(a, o) || ev.scopedOut(a, i) {
			continue
		}
		seen := map[string]bool{}
		for _, p := range a.rule.JSONPointers {
			pp, err := parsePointer(p)
			if err == nil && exists(o.Object, pp) {
				seen[p] = true
			}
		}
		for _, e := range a.rule.JQPathExpressions {
			for _, p := range ev.jqPaths(o, e) {
				seen[p] = true
			}
		}
		for _, p := range ev.managerFields(i, a.rule.Managers) {
			seen[p] = true
		}
		for p := range seen {
			m[i] = append(m[i], p)
		}
		sort.Strings(m[i])
	}
	return m
}

// managerFields returns the leaf fields of object i owned by any of the
// managers: the most Argo CD's managedFieldsManagers can hide there (it
// hides them where they differ from Git; util/argo/managedfields
// managed_fields.go Normalize). Objects without managedFields (files, or
// `kubectl get` without --show-managed-fields) give nothing.
func (ev *evaluator) managerFields(i int, managers []string) []string {
	if len(managers) == 0 {
		return nil
	}
	if ev.fieldIndex == nil {
		ev.fieldIndex = map[int]*managedfields.Index{}
	}
	ix, ok := ev.fieldIndex[i]
	if !ok {
		ix, _ = managedfields.Parse(ev.objs[i]) // malformed entries: nothing owned
		ev.fieldIndex[i] = ix
	}
	if ix.Empty() {
		return nil
	}
	trusted := map[string]bool{}
	for _, m := range managers {
		trusted[m] = true
	}
	var out []string
	for _, f := range ix.Leaves(ev.objs[i]) {
		for _, o := range f.Owners {
			if trusted[o.Manager] {
				out = append(out, f.Pointer)
				break
			}
		}
	}
	return out
}

// hasManagedFields reports whether any given object carries managedFields.
func (ev *evaluator) hasManagedFields() bool {
	for _, o := range ev.objs {
		if len(o.GetManagedFields()) > 0 {
			return true
		}
	}
	return false
}

// jqPointers expands a jq expression to the pointers it selects on the
// objects the rule applies to; n is the number of such objects.
func (ev *evaluator) jqPointers(a *analyzed, expr string) (ptrs []string, n int) {
	seen := map[string]bool{}
	for i, o := range ev.objs {
		if !ev.matches(a, o) || ev.scopedOut(a, i) {
			continue
		}
		n++
		for _, p := range ev.jqPaths(o, expr) {
			if !seen[p] {
				seen[p] = true
				ptrs = append(ptrs, p)
			}
		}
	}
	sort.Strings(ptrs)
	return ptrs, n
}

// jqPaths runs path(EXPR) on the object: the fields del(EXPR) deletes, as
// Argo CD runs it, within Argo's 1s jq limit. Paths to absent fields are
// dropped (del of an absent field changes nothing).
func (ev *evaluator) jqPaths(o *unstructured.Unstructured, expr string) []string {
	if _, ok := ev.timedOut[expr]; ok {
		return nil
	}
	out, timedOut := jqPaths(o, expr)
	if timedOut {
		if ev.timedOut == nil {
			ev.timedOut = map[string]string{}
		}
		ev.timedOut[expr] = resourceID(o).String()
	}
	return out
}

func jqPaths(o *unstructured.Unstructured, expr string) (out []string, timedOut bool) {
	code, err := jq.CompilePath(expr)
	if err != nil {
		return nil, false
	}
	_, err = jq.Run(code, o.DeepCopy().Object, jqTimeout, func(v any) bool {
		arr, ok := v.([]any)
		if !ok {
			return true
		}
		var pp pathPattern
		for _, s := range arr {
			switch k := s.(type) {
			case string:
				pp = append(pp, segment{Key: k})
			case int:
				pp = append(pp, segment{Key: strconv.Itoa(k)})
			case float64:
				pp = append(pp, segment{Key: strconv.Itoa(int(k))})
			default:
				pp = nil
			}
		}
		if pp != nil && exists(o.Object, pp) {
			p, _ := pp.Pointer()
			out = append(out, p)
		}
		return true
	})
	if errors.Is(err, jq.ErrTimeout) {
		return nil, true
	}
	return out, false
}

// exists reports whether the field at p (no wildcard steps) is in doc.
func exists(doc any, p pathPattern) bool {
	tokens := make([]string, len(p))
	for i, s := range p {
		if s.Wild {
			return false
		}
		tokens[i] = s.Key
	}
	_, n := jsonpointer.Walk(doc, tokens)
	return n == len(tokens)
}

func fieldRef(o *unstructured.Unstructured, p string) string {
	if p == "" {
		p = `"" (whole object)`
	}
	return resourceID(o).String() + " " + p
}

func (ev *evaluator) ruleEffect(a *analyzed, cps []Counterpart, all []*analyzed) *RuleEffect {
	eff := &RuleEffect{Fields: []string{}}
	mine := ev.fields(a)
	others := map[int][]string{}
	for _, cp := range cps {
		for _, o := range all {
			if o.rule.Engine == cp.Engine && o.rule.Origin == cp.Origin {
				for i, ps := range ev.fields(o) {
					others[i] = append(others[i], ps...)
				}
			}
		}
	}
	for i, o := range ev.objs {
		for _, p := range mine[i] {
			eff.Fields = append(eff.Fields, fieldRef(o, p))
		}
		if len(cps) == 0 {
			continue
		}
		onlyMine, onlyOthers := diffFields(mine[i], others[i])
		for _, p := range onlyMine {
			eff.OnlyThisRule = append(eff.OnlyThisRule, fieldRef(o, p))
		}
		for _, p := range onlyOthers {
			eff.OnlyCounterparts = append(eff.OnlyCounterparts, fieldRef(o, p))
		}
	}
	eff.SameAsCounterparts = len(cps) > 0 && len(eff.OnlyThisRule) == 0 && len(eff.OnlyCounterparts) == 0
	if len(a.rule.Managers) > 0 {
		if ev.hasManagedFields() {
			eff.Notes = append(eff.Notes, "managedFieldsManagers: the fields listed are owned by those managers; "+ev.engines.title(a.rule.Engine)+" hides them where they differ from Git")
		} else {
			eff.Notes = append(eff.Notes, "managedFieldsManagers depend on live field ownership; the given objects carry no managedFields")
		}
	}
	for _, e := range a.rule.JQPathExpressions {
		if obj, ok := ev.timedOut[e]; ok {
			t := ev.engines.title(a.rule.Engine)
			eff.Notes = append(eff.Notes, fmt.Sprintf("jq %s exceeded %s's 1s limit on %s and was not evaluated further (%s skips it)", e, t, obj, t))
		}
	}
	return eff
}

// diffFields returns the pointers of a not covered by b, and of b not
// covered by a (a removed parent covers its children).
func diffFields(a, b []string) (onlyA, onlyB []string) {
	pa, pb := toPathSet(a), toPathSet(b)
	for _, p := range pb.uncovered(pa) {
		s, _ := p.Pointer()
		onlyA = append(onlyA, s)
	}
	for _, p := range pa.uncovered(pb) {
		s, _ := p.Pointer()
		onlyB = append(onlyB, s)
	}
	return dedupe(onlyA), dedupe(onlyB)
}

func toPathSet(ps []string) pathSet {
	var out pathSet
	for _, p := range ps {
		if pp, err := parsePointer(p); err == nil {
			out = append(out, pp)
		}
	}
	return out
}

func dedupe(in []string) []string {
	sort.Strings(in)
	var out []string
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func (ev *evaluator) objectEffects(all []*analyzed) []ObjectEffect {
	var out []ObjectEffect
	for i, o := range ev.objs {
		by := map[model.Engine][]string{}
		for _, a := range all {
			if ps := ev.fields(a)[i]; len(ps) > 0 {
				by[a.rule.Engine] = append(by[a.rule.Engine], ps...)
			}
		}
		if len(by) == 0 {
			continue
		}
		oe := ObjectEffect{Object: resourceID(o), Ignored: map[model.Engine][]string{}, Only: map[model.Engine][]string{}}
		for e, ps := range by {
			var others []string
			for f, qs := range by {
				if f != e {
					others = append(others, qs...)
				}
			}
			oe.Ignored[e] = dedupe(ps)
			if only, _ := diffFields(ps, others); len(only) > 0 {
				oe.Only[e] = only
			}
		}
		out = append(out, oe)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Object.Less(out[j].Object) })
	return out
}

// String renders an effect summary line for tables.
func (e *RuleEffect) String() string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("%d field(s)", len(e.Fields))
}

// uniqueObjects keeps the first copy of each object: the same manifest
// often sits in a GitOps repo and in a rendered directory.
func uniqueObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	seen := map[model.ResourceID]bool{}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		id := resourceID(o)
		id.Version = ""
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, o)
	}
	return out
}
