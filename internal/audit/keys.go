package audit

import (
	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// unknownKeys returns a problem for keys the rule's shape does not have,
// as its engine reads them (auditapi.Engine.UnknownKey).
func (a *analysis) unknownKeys(r *ruleInfo) string {
	e := a.engines[r.Engine]
	if e == nil || e.UnknownKey == nil {
		return ""
	}
	d, ok := a.docFor(r.Origin)
	if !ok {
		return ""
	}
	return e.UnknownKey(r.Rule, d)
}

// docFor finds the manifest holding a rule: same file, same object.
func (a *analysis) docFor(o model.Origin) (Document, bool) {
	if a.byOrigin == nil {
		a.byOrigin = map[string]int{}
		for i, d := range a.ix.docs {
			a.byOrigin[d.File+"|"+auditapi.ObjectOf(d.Object)] = i
		}
	}
	i, ok := a.byOrigin[o.File+"|"+o.Object]
	if !ok {
		return Document{}, false
	}
	return a.ix.docs[i], true
}
