package cli

import (
	"context"
	"errors"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// errNotWired is returned until internal/source and the adapters' exported
// rule readers land. TEMPORARY.
var errNotWired = errors.New("reading rules is not available in this build yet")

func defaultInputLoader(ctx context.Context, g *GlobalOptions, f *RuleSourceFlags) (*ruleInputs, error) {
	return nil, errNotWired
}

func defaultNormalizerLoader(ctx context.Context, g *GlobalOptions, engine string, src *RuleSourceFlags, reader model.Reader) (normalizeFunc, error) {
	return nil, errNotWired
}
