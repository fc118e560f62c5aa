package compare

import (
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Semantics is what compare needs to know about one engine's rules. Each
// engine contributes its own (engine.Descriptor.Compare), so this package
// names no engine: it compares the rules of every registered engine with
// every other one, and translates through the target engine's Translator.
type Semantics struct {
	// Engine and Title name the engine ("Argo CD" in messages).
	Engine model.Engine
	Title  string
	// Syntax is how the engine's selectors match when a rule does not say
	// (model.Selector.Syntax); MatchExact when empty.
	Syntax model.MatchSyntax
	// Intrinsic says why a rule of this engine has no counterpart in any
	// other engine whatever its content (a discovery exclusion, a per-object
	// apply mode), "" when it may have one. nil: none is intrinsic.
	Intrinsic func(r model.Rule) string
	// CannotSay names what this engine's rules cannot say of another
	// engine's valid rule r. nil: it can say everything.
	CannotSay func(r model.Rule) Limits
	// Instance names the engine instance a rule belongs to (one argocd-cm
	// is one Argo CD), "" when the rule goes with every instance: the
	// equal-target counterparts of two instances never add up to one
	// equivalent. nil: one instance.
	Instance func(r model.Rule) string
	// Scoped reports a rule written in an owner object (an Application, a
	// Kustomization) that applies only to the objects that owner
	// reconciles; other rules (settings-wide) apply to every object. nil:
	// none is.
	Scoped func(r model.Rule) bool
	// Translator says other engines' rules in this engine (compare --to);
	// nil when the engine cannot be translated to.
	Translator *Translator
}

// Limits is what an engine cannot say of another engine's rule.
type Limits struct {
	// Target names the parts of the rule's selector it cannot say.
	Target []string
	// Parts names the removed fields (or other parts) it cannot say.
	Parts []string
	// Some is set when at least one removed field can be said.
	Some bool
}

// full says the rule cannot be said at all: no field, or not its objects.
func (l Limits) full() bool { return !l.Some || len(l.Target) > 0 }

// Engines are the semantics of every engine taking part, sorted by name.
type Engines []Semantics

// of returns the semantics of engine e (a bare one when unknown: a rule of
// an engine that is not registered is still listed and classified).
func (es Engines) of(e model.Engine) Semantics {
	for _, s := range es {
		if s.Engine == e {
			return s
		}
	}
	return Semantics{Engine: e, Title: string(e)}
}

// title names engine e in messages.
func (es Engines) title(e model.Engine) string {
	if t := es.of(e).Title; t != "" {
		return t
	}
	return string(e)
}

// Names returns the engines' names in order.
func (es Engines) Names() []model.Engine {
	out := make([]model.Engine, 0, len(es))
	for _, s := range es {
		out = append(out, s.Engine)
	}
	return out
}

// syntax is the engine's default selector syntax.
func (s Semantics) syntax() model.MatchSyntax {
	if s.Syntax == "" {
		return model.MatchExact
	}
	return s.Syntax
}

// Only is the status of a translatable rule of engine e that no other
// engine has anything like ("only-argocd").
func Only(e model.Engine) Status { return Status("only-" + string(e)) }

// onlyKey is the JSON key of the fields only engine e ignores
// ("onlyArgocd").
func onlyKey(e model.Engine) string {
	s := string(e)
	if s == "" {
		return "only"
	}
	return "only" + strings.ToUpper(s[:1]) + s[1:]
}
