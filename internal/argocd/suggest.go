package argocd

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
)

// SuggestSemantics is Argo CD's part of `suggest`: an Application's
// spec.ignoreDifferences entry (argo-cd util/argo/diff/ignore.go,
// /work/shared/reference/engines.md §1):
//   - managedFieldsManagers when the writer's manager name is stable and
//     Git does not hold the field;
//   - jqPathExpressions for an item of a keyed list (items move);
//   - jsonPointers otherwise.
//
// When Git holds the field, syncOptions RespectIgnoreDifferences=true too,
// since a sync would write Git's value anyway. That option works through
// controller/sync.go normalizeTargetResources, which copies into the
// target the live values of what diff.Normalize removes: the
// jsonPointers/jq ignore normalizer, not the managedFieldsManagers step of
// the diff itself. So a field in Git gets a path rule.
func SuggestSemantics() *suggestapi.Semantics {
	return &suggestapi.Semantics{
		Holders:     []suggestapi.Holder{{GVK: applicationGVK, Rules: []string{"spec", "ignoreDifferences"}}},
		Suggest:     suggestRule,
		Judge:       suggestJudge,
		NeedsSchema: true,
	}
}

// SuggestedRule is the suggested spec.ignoreDifferences entry, and whether
// the Application needs RespectIgnoreDifferences=true with it.
type SuggestedRule struct {
	ResourceIgnoreDifferences
	// RespectIgnoreDifferences: add syncOptions RespectIgnoreDifferences=true.
	RespectIgnoreDifferences bool `json:"respectIgnoreDifferences,omitempty"`
}

// Entry implements suggestapi.Rule.
func (r SuggestedRule) Entry() any { return suggestapi.Entry(&r.ResourceIgnoreDifferences) }

// respectIgnoreDifferences is the sync option, as Argo CD's
// common.SyncOptionsRespectIgnoreDifferences spells it.
const respectIgnoreDifferences = "RespectIgnoreDifferences=true"

// Settings implements suggestapi.Rule: RespectIgnoreDifferences=true in
// spec.syncPolicy.syncOptions when Git holds the field; an option already
// there, spelled with other case or spaces, is not added twice.
func (r SuggestedRule) Settings() []suggestapi.Setting {
	if !r.RespectIgnoreDifferences {
		return nil
	}
	return []suggestapi.Setting{{Path: []string{"spec", "syncPolicy", "syncOptions"}, Value: respectIgnoreDifferences,
		Has: func(o string) bool {
			return strings.EqualFold(strings.ReplaceAll(o, " ", ""), respectIgnoreDifferences)
		}}}
}

func suggestRule(f suggestapi.Field) (suggestapi.Rule, []string) {
	id := f.Resource
	r := SuggestedRule{ResourceIgnoreDifferences: ResourceIgnoreDifferences{Group: id.Group, Kind: id.Kind, Name: id.Name, Namespace: id.Namespace}, RespectIgnoreDifferences: f.InGit}
	switch {
	case f.StableManager && !f.InGit:
		// Only the diff matters (a sync does not write a field Git lacks):
		// trusting the manager covers whatever it writes next.
		r.ManagedFieldsManagers = []string{f.Manager}
	case f.KeyedItem():
		r.JQPathExpressions = []string{JQPath(f.Drift.FieldPath)}
	default:
		r.JSONPointers = []string{f.Drift.Path}
	}
	return r, nil
}

// suggestJudge judges with the Application holding the rule, its
// namespace taken as the control plane's (where Applications live by
// default), with the cluster's schema for managedFieldsManagers.
func suggestJudge(docs []source.Document, holder *unstructured.Unstructured, openAPI func(gv schema.GroupVersion) (map[string]*spec.Schema, error)) (model.Adapter, error) {
	ns := holder.GetNamespace()
	if ns == "" {
		ns = DefaultNamespace
	}
	return New(Options{Documents: docs, Namespace: ns, Schema: openAPI})
}

var element = regexp.MustCompile(`\.([A-Za-z0-9_-]+)|\[([^\]=]+)=([^\]]*)\]|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]`)

// JQPath turns a field path into an Argo CD jq path expression selecting
// list items by their keys: .spec.template.spec.containers[name=app].image
// becomes .spec.template.spec.containers[] | select(.name == "app") | .image.
func JQPath(fieldPath string) string {
	var b strings.Builder
	for _, m := range element.FindAllStringSubmatch(fieldPath, -1) {
		switch {
		case m[1] != "":
			b.WriteString("." + m[1])
		case m[2] != "":
			var conds []string
			keys := strings.Split(m[2]+"="+m[3], ",")
			for _, kv := range keys {
				k, v, _ := strings.Cut(kv, "=")
				conds = append(conds, fmt.Sprintf(".%s == %s", k, jqLiteral(v)))
			}
			b.WriteString("[] | select(" + strings.Join(conds, " and ") + ") | ")
		case m[4] != "":
			if b.Len() == 0 || strings.HasSuffix(b.String(), "| ") {
				b.WriteString(".")
			}
			fmt.Fprintf(&b, "[%q]", m[4])
		case m[5] != "":
			b.WriteString("[" + m[5] + "]")
		}
	}
	return strings.TrimSuffix(b.String(), " | ")
}

var integer = regexp.MustCompile(`^-?\d+$`)

// jqLiteral writes a key value: numbers stay numbers (containerPort=80).
func jqLiteral(v string) string {
	if integer.MatchString(v) {
		return v
	}
	return fmt.Sprintf("%q", strings.Trim(v, `"`))
}
