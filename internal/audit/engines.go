package audit

import (
	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// engines indexes what each engine tells the audit (Options.Engines).
type engines map[model.Engine]*auditapi.Engine

func newEngines(list []auditapi.Engine) engines {
	out := engines{}
	for i := range list {
		out[list[i].Name] = &list[i]
	}
	return out
}

// kind classifies r by its engine.
func (e engines) kind(r model.Rule) auditapi.Kind {
	if d := e[r.Engine]; d != nil {
		return d.Kinds[r.Type] // Other when not listed
	}
	return auditapi.Other
}

// global reports a rule that applies to every holder of its instance.
func (e engines) global(r model.Rule) bool {
	d := e[r.Engine]
	return d != nil && d.Global != nil && d.Global(r)
}

// reach relates two rules: rules of two engines never reach each other.
func (e engines) reach(s, r model.Rule) auditapi.Reach {
	if s.Engine != r.Engine {
		return auditapi.Apart
	}
	if d := e[r.Engine]; d != nil && d.Reach != nil {
		return d.Reach(s, r)
	}
	if s.Origin.Object == r.Origin.Object {
		return auditapi.Same
	}
	return auditapi.Apart
}

// title names r's engine in messages.
func (e engines) title(r model.Rule) string {
	if d := e[r.Engine]; d != nil && d.Title != "" {
		return d.Title
	}
	return string(r.Engine)
}
