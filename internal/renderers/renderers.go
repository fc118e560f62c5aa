// Package renderers names each engine's render.Renderer: the one place that
// links the engines' render packages, so that commands (internal/cli)
// render through internal/render without importing an engine. The engine
// registry of issue 14 is where these belong once it exists.
package renderers

import (
	fluxrender "github.com/kubectl-drift/kubectl-drift/internal/flux/render"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
)

// All returns the renderers of every engine that renders from a checkout.
func All() []render.Renderer {
	return []render.Renderer{fluxrender.New()}
}
