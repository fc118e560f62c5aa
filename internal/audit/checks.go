package audit

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"

	"github.com/kubectl-drift/kubectl-drift/internal/jq"
)

// analysis is the input of every check: the prepared rules, the indexed
// manifests, the configuration and a way to read source lines.
type analysis struct {
	// schemaCache holds the schemas of each kind (see schemasFor).
	schemaCache map[string][]schemaCand

	rules []*ruleInfo
	ix    *manifestIndex
	cfg   *Config
	// maxRules overrides cfg.Budget.Total when > 0 (--max-rules).
	maxRules int
	// lines returns the lines of a file (nil when unreadable).
	lines func(file string) []string
	// byOrigin finds the manifest of a rule (see docFor).
	byOrigin map[string]int
	// engines say what each engine's rules are (Options.Engines).
	engines engines
	// kustomize indexes the tree's kustomization files.
	kustomize kustomizations
	// root is the audited checkout's directory.
	root string
	// deadPaths memoizes deadPath per selector and pointer: rules that
	// repeat both reach the same answer over the same targets.
	deadPaths map[deadPathKey]string
}

type deadPathKey struct {
	sel     model.Selector
	pointer string
}

type checkFunc func(a *analysis) []Finding

// checkFuncs runs in ID order; each returns findings with default severity.
func checkFuncs() []struct {
	id CheckID
	fn checkFunc
} {
	return []struct {
		id CheckID
		fn checkFunc
	}{
		{auditapi.CheckTooBroad, checkTooBroad},
		{auditapi.CheckDangerousTarget, checkDangerous},
		{auditapi.CheckShadowed, checkShadowedAndDuplicates},
		{auditapi.CheckShadowed, checkAggregatedRoles},
		{auditapi.CheckInvalid, checkInvalid},
		{auditapi.CheckMatchesNothing, checkMatchesNothing},
		{auditapi.CheckSlowJQ, checkSlowJQ},
		{auditapi.CheckOverBudget, checkBudget},
		{auditapi.CheckNoJustification, checkJustification},
	}
}

func ruleFinding(id CheckID, r *ruleInfo, msg string) Finding {
	f := newFinding(id, msg).atOrigin(r.Origin)
	f.Engine = r.Engine
	f.ruleKey = r.key
	return f
}

// --- DRIFT001 too broad -----------------------------------------------------

func checkTooBroad(a *analysis) []Finding {
	var out []Finding
	for _, r := range a.rules {
		if r.problem != "" || a.aggregatedRolesOnly(r) {
			continue
		}
		// One finding per mistake: ignoring all Secret data is reported as
		// dangerous, not also as broad.
		if a.cfg.enabled(auditapi.CheckDangerousTarget) && r.m.match != nil && dangerous(r) != "" && broadOnlyBecauseDangerous(r) {
			continue
		}
		if msg, wide := tooBroad(r, a.engines.title(r.Rule)); msg != "" {
			f := ruleFinding(auditapi.CheckTooBroad, r, msg)
			if wide {
				// Severity follows the widest field hidden: a rule that
				// hides images, commands and env of a workload is worse
				// than the narrow rules DRIFT002 already fails on.
				f.Severity = SeverityError
			}
			out = append(out, f)
		}
	}
	return out
}

// tooBroad says why a rule is too broad, and whether what it hides is wide
// (every kind, a whole object, /spec, a pod template or spec, a container
// list: images, commands and env included). title names the rule's engine.
func tooBroad(r *ruleInfo, title string) (string, bool) {
	switch {
	case r.kind == auditapi.Exclusion:
		if r.m.allKinds {
			return "resource exclusion hides every kind from " + title, true
		}
		return "", false
	case !r.isFieldRule():
		return "", false
	}
	if r.whole {
		if r.m.allKinds {
			return "rule ignores every field of every object", true
		}
		if r.m.match != nil && r.m.matchesGK("", "Secret") && !r.m.allKinds {
			return "", false // reported as dangerous
		}
		return fmt.Sprintf("rule ignores the whole object (%s)", r.Target.Describe()), true
	}
	for _, p := range r.paths {
		if why := broadPath(p); why != "" {
			wide := len(p) > 0 && p[0] == "spec" || r.m.allKinds && len(p) > 0 && p[0] != "metadata"
			return fmt.Sprintf("path %s ignores %s", renderTokens(p), why), wide
		}
	}
	if r.m.allKinds {
		for _, p := range r.paths {
			if len(p) > 0 && p[0] != "metadata" && p[0] != "status" {
				return fmt.Sprintf("path %s is specific to one kind but the rule applies to every kind", renderTokens(p)), false
			}
		}
	}
	return "", false
}

// broadOnlyBecauseDangerous: every broad path of r is a Secret's data.
func broadOnlyBecauseDangerous(r *ruleInfo) bool {
	if r.m.allKinds || !r.m.matchesGK("", "Secret") {
		return false
	}
	for _, p := range r.paths {
		if broadPath(p) != "" && !(len(p) == 1 && (p[0] == "data" || p[0] == "stringData")) {
			return false
		}
	}
	return true
}

var containerLists = map[string]bool{"containers": true, "initContainers": true, "ephemeralContainers": true}

// broadPath says why a path is too broad, or "".
func broadPath(p []string) string {
	switch {
	case len(p) == 1 && p[0] == "spec":
		return "the whole spec"
	case len(p) == 1 && p[0] != "status":
		return "the whole top-level " + p[0] + " field, not one of its values"
	case len(p) == 2 && p[0] == "spec" && p[1] == "template":
		return "the whole pod template"
	case len(p) == 3 && p[0] == "spec" && p[1] == "template" && p[2] == "spec":
		return "the whole pod spec"
	}
	n := len(p)
	if n >= 1 && containerLists[p[n-1]] {
		return "the whole " + p[n-1] + " list"
	}
	if n >= 2 && containerLists[p[n-2]] && isIndexToken(p[n-1]) {
		return "whole containers"
	}
	return ""
}

// --- DRIFT002 dangerous targets ---------------------------------------------

var rbacKinds = []string{"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}

func checkDangerous(a *analysis) []Finding {
	var out []Finding
	for _, r := range a.rules {
		if r.problem != "" || r.m.match == nil || a.aggregatedRolesOnly(r) {
			continue
		}
		if msg := dangerous(r); msg != "" {
			f := ruleFinding(auditapi.CheckDangerousTarget, r, msg)
			if namedSecretDataOnly(r) {
				// One named Secret's data, not every Secret's: most often
				// a Secret that a chart or controller writes (a webhook's
				// TLS certificate the chart regenerates at every render),
				// for which ignoring /data is the usual fix. Worth a
				// reviewer's look at that one Secret, not a failed build.
				f.Severity = SeverityNote
				f.Hint = "Check that a chart or controller writes this Secret (a generated certificate); for credentials kept in Git, fix the writer instead."
			}
			out = append(out, f)
		}
	}
	return out
}

// namedSecretDataOnly reports a rule whose only dangerous paths are the
// data of one Secret named exactly: it hides that object's data, not every
// Secret's. Argo CD compares a rule's name with == (not as a glob:
// argo-cd util/argo/normalizers/diff_normalizer.go, ignoreNormalizer), and
// a Flux name regex counts only when it is a literal.
func namedSecretDataOnly(r *ruleInfo) bool {
	if r.m.literalName == "" || r.m.allKinds || r.whole || r.kind == auditapi.Exclusion {
		return false
	}
	one := *r
	one.paths = nil
	for _, p := range r.paths {
		if len(p) == 1 && (p[0] == "data" || p[0] == "stringData") {
			continue
		}
		one.paths = append(one.paths, p)
	}
	// What the other paths hide (an image, a securityContext) keeps its
	// severity.
	return len(one.paths) < len(r.paths) && dangerous(&one) == ""
}

func dangerous(r *ruleInfo) string {
	secret := !r.m.allKinds && r.m.matchesGK("", "Secret")
	if r.kind == auditapi.Exclusion || (r.isFieldRule() && r.whole) {
		if secret {
			return "rule hides whole Secrets: changed credentials would go unnoticed"
		}
		return ""
	}
	if !r.isFieldRule() {
		return ""
	}
	rbac := false
	for _, k := range rbacKinds {
		if !r.m.allKinds && r.m.matchesGK("rbac.authorization.k8s.io", k) {
			rbac = true
		}
	}
	for _, p := range r.paths {
		for i, t := range p {
			if containerLists[t] && i+2 < len(p) && isIndexToken(p[i+1]) {
				switch p[i+2] {
				case "image":
					return fmt.Sprintf("path %s ignores container images: a changed image would never be reverted", renderTokens(p))
				case "command", "args":
					return fmt.Sprintf("path %s ignores what containers run (%s)", renderTokens(p), p[i+2])
				}
			}
			switch t {
			case "securityContext", "hostNetwork", "hostPID", "hostIPC":
				return fmt.Sprintf("path %s ignores %s: privilege changes would go unnoticed", renderTokens(p), t)
			}
		}
		if rbac && len(p) >= 1 {
			switch p[0] {
			case "rules", "subjects", "roleRef", "aggregationRule":
				return fmt.Sprintf("path %s ignores RBAC %s: granted permissions would go unnoticed", renderTokens(p), p[0])
			}
		}
		if secret && len(p) == 1 && (p[0] == "data" || p[0] == "stringData") {
			if r.m.literalName != "" {
				return fmt.Sprintf("path %s ignores all data of Secret %s", renderTokens(p), r.m.literalName)
			}
			return fmt.Sprintf("path %s ignores all Secret data", renderTokens(p))
		}
	}
	return ""
}

// aggregatedRolesOnly reports a field rule that ignores only the rules of
// ClusterRoles, all of whose manifests have an aggregationRule: the
// aggregation controller (kube-controller-manager's clusterrole-aggregation)
// writes their rules, so ignoring them is sound, neither dangerous nor too
// broad.
func (a *analysis) aggregatedRolesOnly(r *ruleInfo) bool {
	if !r.isFieldRule() || r.whole || r.m.match == nil || r.m.allKinds || len(r.paths) == 0 ||
		len(r.JQPathExpressions) > 0 || len(r.Managers) > 0 || !r.m.matchesGK("rbac.authorization.k8s.io", "ClusterRole") {
		return false
	}
	for _, p := range r.paths {
		if len(p) == 0 || p[0] != "rules" {
			return false
		}
	}
	targets := a.ix.targets(r.m)
	for _, i := range targets {
		o := a.ix.docs[i].Object
		if o.GetKind() != "ClusterRole" || o.GroupVersionKind().Group != "rbac.authorization.k8s.io" || o.Object["aggregationRule"] == nil {
			return false
		}
	}
	return len(targets) > 0
}

// checkAggregatedRoles notes the rules aggregatedRolesOnly accepts where
// their engine can ignore aggregated roles by itself
// (auditapi.Engine.AggregatedRoles): one setting instead of a rule per role.
func checkAggregatedRoles(a *analysis) []Finding {
	var out []Finding
	for _, r := range a.rules {
		e := a.engines[r.Engine]
		if e == nil || e.AggregatedRoles == "" || r.problem != "" || !a.aggregatedRolesOnly(r) {
			continue
		}
		f := ruleFinding(auditapi.CheckShadowed, r, fmt.Sprintf(
			"rule ignores the rules of aggregated ClusterRoles, which the aggregation controller writes: sound; %s", e.AggregatedRoles))
		f.Severity = SeverityNote
		f.Hint = "Set the engine's setting and delete the rule, or keep the rule: it hides only what the aggregation controller writes."
		out = append(out, f)
	}
	return out
}

// --- DRIFT003 shadowed / DRIFT004 duplicate ---------------------------------

// checkShadowedAndDuplicates compares field rules that apply to the same
// objects, as their engine relates them (auditapi.Engine.Reach and Global):
// a holder's rule covered by a global rule of its instance (Argo CD's
// argocd-cm) changes nothing; equal rules of peers (a Flux Kustomization
// and HelmRelease of one namespace) are duplicates because one copy cannot
// reach the objects the author meant.
func checkShadowedAndDuplicates(a *analysis) []Finding {
	var out []Finding
	// Bucket by literal kind: a rule can only be covered by one with the
	// same literal kind or a wildcard kind.
	byKind := map[string][]*ruleInfo{}
	var wild []*ruleInfo
	var all []*ruleInfo
	for _, r := range a.rules {
		if !r.isFieldRule() || r.problem != "" || r.m.match == nil {
			continue
		}
		all = append(all, r)
		if r.m.literalKind != "" {
			byKind[r.m.literalKind] = append(byKind[r.m.literalKind], r)
		} else {
			wild = append(wild, r)
		}
	}
	// Candidate lists per literal kind (plus wildcards), in origin order,
	// built once: the comparison is pairwise only within a kind.
	byOrigin := func(c []*ruleInfo) []*ruleInfo {
		sort.SliceStable(c, func(i, j int) bool { return c[i].Origin.Compare(c[j].Origin) < 0 })
		return c
	}
	candidates := map[string][]*ruleInfo{"": byOrigin(append([]*ruleInfo(nil), wild...))}
	for k, rs := range byKind {
		candidates[k] = byOrigin(append(append([]*ruleInfo(nil), rs...), wild...))
	}
	reported := map[*ruleInfo]bool{}
	for _, r := range all {
		for _, s := range candidates[r.m.literalKind] {
			if s == r || reported[r] {
				continue
			}
			rel := a.relation(s, r)
			if rel == auditapi.Apart {
				continue
			}
			sameAsS := covers(r, s)
			if rel == auditapi.Same && sameAsS {
				// Equal rules in the same scope: report the later one only.
				if s.global == r.global {
					if r.Origin.Compare(s.Origin) < 0 {
						continue
					}
				} else if r.global {
					continue // the holder's copy is the redundant one
				}
				reported[r] = true
				out = append(out, ruleFinding(auditapi.CheckDuplicate, r,
					fmt.Sprintf("rule repeats %s", citeRule(s))))
				continue
			}
			if rel == auditapi.Peer {
				if !sameAsS || r.Origin.Compare(s.Origin) < 0 {
					continue
				}
				reported[r] = true
				f := ruleFinding(auditapi.CheckDuplicate, r, fmt.Sprintf(
					"rule repeats %s; a %s's rules reach only the objects it applies itself, so one copy cannot reach what it targets",
					citeRule(s), auditapi.ObjectKind(r.Origin.Object)))
				if e := a.engines[r.Engine]; e != nil && e.PeerHint != "" {
					f.Hint = e.PeerHint
				}
				out = append(out, f)
				continue
			}
			reported[r] = true
			out = append(out, ruleFinding(auditapi.CheckShadowed, r, fmt.Sprintf("rule is covered by the broader %s", citeRule(s))))
		}
	}
	return out
}

func citeRule(r *ruleInfo) string {
	pos := r.Origin.File
	if r.Origin.Line > 0 {
		pos += fmt.Sprintf(":%d", r.Origin.Line)
	}
	if r.Origin.Object != "" {
		return fmt.Sprintf("rule of %s %s (%s)", r.Origin.Object, r.Origin.Field, pos)
	}
	return "rule at " + pos
}

// relation says whether s applies to the objects r applies to: Same (s
// applies wherever r does and covers r), Peer (equal rules of peer
// holders), or Apart.
func (a *analysis) relation(s, r *ruleInfo) auditapi.Reach {
	switch a.engines.reach(s.Rule, r.Rule) {
	case auditapi.Same:
		if covers(s, r) {
			return auditapi.Same
		}
	case auditapi.Peer:
		if covers(s, r) && covers(r, s) {
			return auditapi.Peer
		}
	}
	return auditapi.Apart
}

// covers reports whether every field r removes on every object r targets
// is also removed by s.
func covers(s, r *ruleInfo) bool {
	if s.Target.Syntax != r.Target.Syntax {
		return false
	}
	if !s.m.coversSelector(r.Target) {
		return false
	}
	if s.whole {
		return true
	}
	if r.whole {
		return false
	}
	if len(r.paths) == 0 && len(r.JQPathExpressions) == 0 && len(r.Managers) == 0 {
		return false
	}
	for _, p := range r.paths {
		ok := false
		for _, q := range s.paths {
			if hasPrefixTokens(p, q) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	// jq expressions that are not plain paths are compared as text.
	for _, e := range r.JQPathExpressions {
		if _, plain := jqTokens(e); plain {
			continue
		}
		if !containsString(s.JQPathExpressions, strings.TrimSpace(e)) {
			return false
		}
	}
	for _, m := range r.Managers {
		if !containsString(s.Managers, m) {
			return false
		}
	}
	return true
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == v {
			return true
		}
	}
	return false
}

// --- DRIFT005 invalid -------------------------------------------------------

func checkInvalid(a *analysis) []Finding {
	var out []Finding
	for _, r := range a.rules {
		problem := r.problem
		if problem == "" {
			problem = a.unknownKeys(r)
		}
		if problem == "" {
			for _, e := range r.JQPathExpressions {
				if _, err := jq.CompileDelete(e); err != nil {
					problem = fmt.Sprintf("jq path expression %q: %v", e, err)
					break
				}
			}
		}
		if problem != "" {
			f := ruleFinding(auditapi.CheckInvalid, r, oneLine(problem))
			f.Hint = invalidHint(r.Rule)
			out = append(out, f)
		}
	}
	return out
}

// invalidHint says how to fix an invalid rule, speaking of RFC 6901
// escaping only when a pointer holds '~' or a label or annotation key that
// an unescaped '/' split in two, and of jq only for jq rules: a hint about
// what the rule does not have sends its author looking in vain.
func invalidHint(r model.Rule) string {
	var parts []string
	for _, p := range r.JSONPointers {
		if needsEscaping(p) {
			parts = append(parts, "in a JSON pointer escape '~' as ~0 and '/' inside a key as ~1 (/metadata/labels/app.kubernetes.io~1name)")
			break
		}
	}
	if len(r.JQPathExpressions) > 0 {
		parts = append(parts, "check jq with `jq -n 'path(EXPR)'`")
	}
	if len(parts) == 0 {
		return "Fix what the message names; the engine cannot evaluate the rule as written."
	}
	return "Fix the syntax: " + strings.Join(parts, "; ") + "."
}

// needsEscaping: p holds '~', or more than one token after labels or
// annotations (a key such as app.kubernetes.io/name written unescaped).
func needsEscaping(p string) bool {
	if strings.Contains(p, "~") {
		return true
	}
	tok := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, t := range tok {
		if (t == "labels" || t == "annotations") && len(tok)-i > 2 {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return s
}

// --- DRIFT006 matches nothing -----------------------------------------------

// checkMatchesNothing looks for field rules whose target selects no manifest
// of the repository, or whose path leads nowhere in every manifest it
// selects. The targets of rules of rendered objects (a HelmRelease's: the
// chart's objects) are rendered outside the repository: only the kind's
// schema is asked about them, which needs no manifest.
func checkMatchesNothing(a *analysis) []Finding {
	var out []Finding
	for _, r := range a.rules {
		if !r.isFieldRule() || r.problem != "" || r.m.match == nil || r.m.allKinds {
			continue
		}
		if r.kind == auditapi.RenderedField {
			if msg := a.neverMatches(r); msg != "" {
				out = append(out, ruleFinding(auditapi.CheckMatchesNothing, r, msg))
			}
			continue
		}
		targets := a.ix.targets(r.m)
		if len(targets) == 0 {
			// No manifest to compare with: the kind's schema still tells
			// a path that no object of the kind can have.
			if msg := a.neverMatches(r); msg != "" {
				out = append(out, ruleFinding(auditapi.CheckMatchesNothing, r, msg))
				continue
			}
			if r.global && a.knownKind(r) {
				// An instance-wide setting (argocd-cm
				// resource.customizations, an ArgoCD resource, argo-cd
				// chart values) applies to the objects of every
				// Application of the instance (argo-cd
				// util/settings/settings.go GetResourceOverrides, read for
				// each Application's diff by controller/state.go
				// CompareAppState): that this repository holds no object
				// of a kind that exists says nothing. A kind that exists
				// nowhere (a misspelling) is still reported.
				continue
			}
			if r.global && !a.knownGroup(r) {
				if g := a.nearestGroup(r.Target.Group); g != "" {
					out = append(out, ruleFinding(auditapi.CheckMatchesNothing, r, fmt.Sprintf(
						"no manifest in the repository matches %s; nearest: group %q instead of %q", r.Target.Describe(), g, r.Target.Group)))
					continue
				}
				if msg := a.noTargetMessage(r); !strings.Contains(msg, "; ") {
					// A group no manifest, CRD or built-in kind of the
					// tree has, and no near spelling of one: the CRD
					// comes with something installed from outside the
					// repository (a remote chart), as for
					// apiextensions.crossplane.io. It cannot be judged
					// offline; a misspelling would have a nearest name.
					f := ruleFinding(auditapi.CheckMatchesNothing, r, fmt.Sprintf(
						"not checkable offline: no manifest or CRD in the repository has group %q; its kinds are installed from outside it", r.Target.Group))
					f.Severity = SeverityNote
					f.Hint = "Check the rule against the live cluster with compare --from-cluster, or add the CRD's manifest to the repository."
					out = append(out, f)
					continue
				}
			}
			if from := a.renderedFrom(r); from != "" {
				// The objects come from a Helm chart rendered elsewhere:
				// no manifest here can match, which says nothing.
				f := ruleFinding(auditapi.CheckMatchesNothing, r, fmt.Sprintf(
					"not checkable offline: %s renders %s, whose objects are not in the repository", r.Origin.Object, from))
				f.Severity = SeverityNote
				f.Hint = "Check the rule against the chart's objects (helm template), or against the live cluster with compare --from-cluster."
				out = append(out, f)
				continue
			}
			out = append(out, ruleFinding(auditapi.CheckMatchesNothing, r, a.noTargetMessage(r)))
			continue
		}
		if msg := a.deadPath(r, targets); msg != "" {
			out = append(out, ruleFinding(auditapi.CheckMatchesNothing, r, msg))
		}
	}
	return out
}

// knownKind reports whether r's group and kind accept a kind that exists:
// a built-in kind (client-go's scheme, the k8s.io/api types), a kind
// defined by a CRD in the tree, or the kind of a manifest in the tree.
func (a *analysis) knownKind(r *ruleInfo) bool {
	for _, gk := range a.ix.groupKinds {
		if r.m.matchesGK(gk.Group, gk.Kind) {
			return true
		}
	}
	for _, gk := range builtinKinds() {
		if r.m.matchesGK(gk.Group, gk.Kind) {
			return true
		}
	}
	for _, d := range a.ix.docs {
		if gk, ok := crdKind(d.Object.Object); ok && r.m.matchesGK(gk.Group, gk.Kind) {
			return true
		}
	}
	return false
}

// knownGroup reports whether r's group is a group of the tree's
// manifests, of a CRD in the tree or of a built-in kind.
func (a *analysis) knownGroup(r *ruleInfo) bool {
	for _, gk := range a.ix.groupKinds {
		if r.m.matchesGroup(gk.Group) {
			return true
		}
	}
	for _, gk := range builtinKinds() {
		if r.m.matchesGroup(gk.Group) {
			return true
		}
	}
	for _, d := range a.ix.docs {
		if gk, ok := crdKind(d.Object.Object); ok && r.m.matchesGroup(gk.Group) {
			return true
		}
	}
	return false
}

// nearestGroup is the group of the tree or of a built-in kind nearest to
// a group that none has (a misspelling: "app" for "apps"), or "".
func (a *analysis) nearestGroup(group string) string {
	var groups []string
	for _, gk := range a.ix.groupKinds {
		groups = append(groups, gk.Group)
	}
	for _, gk := range builtinKinds() {
		groups = append(groups, gk.Group)
	}
	return auditapi.Nearest(group, groups)
}

// renderedFrom names what renders r's targets outside the repository, as
// its engine says (auditapi.Engine.RenderedFrom), or "".
func (a *analysis) renderedFrom(r *ruleInfo) string {
	e := a.engines[r.Engine]
	if e == nil || e.RenderedFrom == nil {
		return ""
	}
	return e.RenderedFrom(r.Rule, auditapi.Tree{Find: a.docFor, RemoteCharts: func(dir string) []string {
		return a.kustomize.remoteCharts[path.Clean(dir)]
	}, Chart: func(dir string) bool {
		if a.root == "" || !filepath.IsLocal(filepath.FromSlash(dir)) {
			return false
		}
		_, err := os.Stat(filepath.Join(a.root, filepath.FromSlash(dir), "Chart.yaml"))
		return err == nil
	}})
}

func (a *analysis) noTargetMessage(r *ruleInfo) string {
	base := fmt.Sprintf("no manifest in the repository matches %s", r.Target.Describe())
	s := r.Target
	// Which part fails? Try group/kind alone first.
	gkOK := false
	for _, gk := range a.ix.groupKinds {
		if r.m.matchesGK(gk.Group, gk.Kind) {
			gkOK = true
			break
		}
	}
	if !gkOK {
		var groups, kinds []string
		seenG := map[string]bool{}
		for _, gk := range a.ix.groupKinds {
			if !seenG[gk.Group] {
				seenG[gk.Group] = true
				groups = append(groups, gk.Group)
			}
			if gk.Group == s.Group || r.m.matchesGroup(gk.Group) {
				kinds = append(kinds, gk.Kind)
			}
		}
		// A kind that exists under another group points at the group.
		kindExists := false
		for _, gk := range a.ix.groupKinds {
			if gk.Kind == s.Kind {
				kindExists = true
			}
		}
		if kindExists {
			var in []string
			for _, gk := range a.ix.groupKinds {
				if gk.Kind == s.Kind {
					in = append(in, fmt.Sprintf("%q", gk.Group))
				}
			}
			return fmt.Sprintf("%s; kind %s is in group %s, not %q", base, s.Kind, strings.Join(in, ", "), s.Group)
		}
		if g := auditapi.Nearest(s.Group, groups); g != "" {
			return fmt.Sprintf("%s; nearest: group %q instead of %q", base, g, s.Group)
		}
		var allKinds []string
		for _, gk := range a.ix.groupKinds {
			allKinds = append(allKinds, gk.Kind)
		}
		if k := auditapi.Nearest(s.Kind, append(kinds, allKinds...)); k != "" {
			return fmt.Sprintf("%s; nearest: kind %q instead of %q", base, k, s.Kind)
		}
		// No manifest of the tree is close: a built-in kind of the group
		// may be (an instance-wide rule is often the only place a kind is
		// named).
		var builtin []string
		for _, gk := range builtinKinds() {
			if r.m.matchesGroup(gk.Group) {
				builtin = append(builtin, gk.Kind)
			}
		}
		if k := auditapi.Nearest(s.Kind, builtin); k != "" {
			return fmt.Sprintf("%s; nearest: kind %q instead of %q", base, k, s.Kind)
		}
		return base
	}
	// Group/kind exist; the name or namespace must be off.
	var names, nss []string
	for _, d := range a.ix.docs {
		gvk := d.Object.GroupVersionKind()
		if r.m.matchesGK(gvk.Group, gvk.Kind) {
			names = append(names, d.Object.GetName())
			if ns := d.Object.GetNamespace(); ns != "" {
				nss = append(nss, ns)
			}
		}
	}
	if s.Name != "" && !containsString(names, s.Name) {
		if n := auditapi.Nearest(s.Name, names); n != "" {
			return fmt.Sprintf("%s; nearest: name %q instead of %q", base, n, s.Name)
		}
		return base
	}
	if s.Namespace != "" && !containsString(nss, s.Namespace) {
		if n := auditapi.Nearest(s.Namespace, nss); n != "" {
			return fmt.Sprintf("%s; nearest: namespace %q instead of %q", base, n, s.Namespace)
		}
	}
	return base
}

// deadPath reports a JSON pointer whose parent exists in none of the
// targeted manifests. Only the parent must exist: the field itself is often
// absent from Git on purpose (replicas owned by an HPA, an injected
// caBundle). Paths under /metadata and /status are not checked, since
// controllers add labels, annotations and status that Git never holds.
func (a *analysis) deadPath(r *ruleInfo, targets []int) string {
	for _, p := range r.JSONPointers {
		k := deadPathKey{r.m.sel, p}
		msg, ok := a.deadPaths[k]
		if !ok {
			msg = a.deadPointer(p, targets)
			if a.deadPaths == nil {
				a.deadPaths = map[deadPathKey]string{}
			}
			a.deadPaths[k] = msg
		}
		if msg != "" {
			return msg
		}
	}
	return ""
}

// deadPointer says why pointer p reaches nothing in any of targets, or ""
// when some target has its parent.
func (a *analysis) deadPointer(p string, targets []int) string {
	tok, err := parsePointer(p)
	if err != nil || len(tok) < 2 || tok[0] == "metadata" || tok[0] == "status" {
		return ""
	}
	parent := tok[:len(tok)-1]
	best, bestDoc := -1, -1
	for _, i := range targets {
		n := lookupPointer(a.ix.docs[i].Object.Object, parent)
		if n > best {
			best, bestDoc = n, i
		}
		if n == len(parent) {
			break
		}
	}
	if best == len(parent) {
		return ""
	}
	missing := renderTokens(tok[:best+1])
	msg := fmt.Sprintf("path %s: none of the %d targeted manifests has %s", p, len(targets), missing)
	if near := auditapi.Nearest(tok[best], childKeys(a.ix.docs[bestDoc].Object.Object, tok[:best])); near != "" {
		msg += fmt.Sprintf("; nearest: %q instead of %q", near, tok[best])
	}
	return msg
}

// --- DRIFT009 budget --------------------------------------------------------

func checkBudget(a *analysis) []Finding {
	var counted []*ruleInfo
	for _, r := range a.rules {
		if r.isIgnoreRule() {
			counted = append(counted, r)
		}
	}
	sort.SliceStable(counted, func(i, j int) bool { return counted[i].Origin.Compare(counted[j].Origin) < 0 })
	var out []Finding
	total := a.cfg.Budget.Total
	if a.maxRules > 0 {
		total = a.maxRules
	}
	if total > 0 && len(counted) > total {
		f := ruleFinding(auditapi.CheckOverBudget, counted[total], fmt.Sprintf(
			"%d ignore rules in total, budget %d: this is rule %d", len(counted), total, total+1))
		f.ruleKey = ""
		f.count = len(counted)
		out = append(out, f)
	}
	if per := a.cfg.Budget.PerApp; per > 0 {
		byObj := map[string][]*ruleInfo{}
		var objs []string
		for _, r := range counted {
			o := r.Origin.Object
			if _, ok := byObj[o]; !ok {
				objs = append(objs, o)
			}
			byObj[o] = append(byObj[o], r)
		}
		for _, o := range objs {
			rs := byObj[o]
			if len(rs) > per {
				f := ruleFinding(auditapi.CheckOverBudget, rs[per], fmt.Sprintf(
					"%s has %d ignore rules, budget %d per app: this is rule %d", o, len(rs), per, per+1))
				f.ruleKey = ""
				f.count = len(rs)
				out = append(out, f)
			}
		}
	}
	return out
}

// --- DRIFT010 justification -------------------------------------------------

func checkJustification(a *analysis) []Finding {
	var pat *regexp.Regexp
	if a.cfg.Justification.Pattern != "" {
		pat = regexp.MustCompile(a.cfg.Justification.Pattern) // validated with the config
	}
	var out []Finding
	for _, r := range a.rules {
		if !r.isIgnoreRule() || r.Origin.File == "" || r.Origin.Line < 1 {
			continue
		}
		lines := a.lines(r.Origin.File)
		if lines == nil || r.Origin.Line > len(lines) {
			continue
		}
		comment, ok := commentFor(lines, r.Origin.Line)
		if !ok {
			comment, ok = commentInside(lines, r.Origin.Line, r.Origin.Column)
		}
		switch {
		case !ok:
			out = append(out, ruleFinding(auditapi.CheckNoJustification, r, "rule has no justification comment directly above it"))
		case pat != nil && !pat.MatchString(comment):
			out = append(out, ruleFinding(auditapi.CheckNoJustification, r, fmt.Sprintf(
				"justification comment %q does not match the required pattern %q", comment, a.cfg.Justification.Pattern)))
		}
	}
	return out
}

// commentFor returns the comment on the line directly above line (1-based),
// or a trailing comment on the line itself.
func commentFor(lines []string, line int) (string, bool) {
	if line >= 2 {
		prev := strings.TrimSpace(lines[line-2])
		if strings.HasPrefix(prev, "#") {
			return strings.TrimSpace(strings.TrimLeft(prev, "#")), true
		}
	}
	if c, ok := trailingComment(lines[line-1]); ok {
		return c, true
	}
	return "", false
}

// commentInside returns the first comment inside the entry that starts at
// line and column (1-based; the column of its first key): authors justify
// a rule between its keys as often as above it. The entry's lines are
// those after line indented like the first key (a sequence item "- key:")
// or deeper (a mapping key, or a block scalar "key: |" whose content is
// the entry, as for argocd-cm's resource.exclusions, whose entries all
// carry the key's position). Without a column nothing is inside.
func commentInside(lines []string, line, column int) (string, bool) {
	if column < 1 || line < 1 || line > len(lines) {
		return "", false
	}
	first, c := lines[line-1], column-1
	seqItem := c >= 2 && c <= len(first) && first[c-2:c] == "- "
	for _, l := range lines[line:] {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < c || indent == c && !seqItem {
			break
		}
		if strings.HasPrefix(t, "#") {
			return strings.TrimSpace(strings.TrimLeft(t, "#")), true
		}
		if cm, ok := trailingComment(l); ok {
			return cm, true
		}
	}
	return "", false
}

// trailingComment finds a YAML comment at the end of a line: a '#' after
// whitespace and outside quotes.
func trailingComment(line string) (string, bool) {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && i > 0 && (line[i-1] == ' ' || line[i-1] == '\t'):
			return strings.TrimSpace(line[i+1:]), true
		}
	}
	return "", false
}
