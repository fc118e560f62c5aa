package cli

import (
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

func normalizeCmd(g *GlobalOptions) *cobra.Command {
	o := NewNormalizeOptions(g)
	o.getenv = func(string) string { return "" }
	return newNormalizeCmd(o)
}

// TestNormalizeCorpus runs both engines' normalization over the corpus: the
// object alone, and --diff against the desired state in Git. The goldens
// show what each engine still calls drift: both see the ssa annotation the
// live copy lacks; only Flux sees the Istio image, which Argo CD's jq rule
// (select by container name) hides.
func TestNormalizeCorpus(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"normalize-argocd", []string{"-f", "live/deployment-web.yaml", "--engine", "argocd", "--rules", "argocd-app-of-apps"}, 0},
		{"normalize-flux", []string{"-f", "live/deployment-web.yaml", "--engine", "flux", "--rules", "flux-repo"}, 0},
		{"normalize-argocd-diff", []string{"-f", "live/deployment-web.yaml", "--engine", "argocd", "--rules", "argocd-app-of-apps", "--diff", "-f", "flux-repo/apps/shop/deployment.yaml"}, 1},
		{"normalize-flux-diff", []string{"-f", "live/deployment-web.yaml", "--engine", "flux", "--rules", "flux-repo", "--diff", "-f", "flux-repo/apps/shop/deployment.yaml"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			gp := goldenPath(t, c.name)
			// --engine is a root flag; set it on the globals.
			var args []string
			engine := ""
			for i := 0; i < len(c.args); i++ {
				if c.args[i] == "--engine" {
					engine = c.args[i+1]
					i++
					continue
				}
				args = append(args, c.args[i])
			}
			out, errOut, err := inCorpus(t, func(g *GlobalOptions) *cobra.Command {
				g.Engine = engine
				return normalizeCmd(g)
			}, args...)
			code := 0
			var ee *ExitError
			if errors.As(err, &ee) {
				code = ee.Code
			} else if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if code != c.code {
				t.Fatalf("exit %d, want %d: %v\n%s", code, c.code, err, errOut)
			}
			compareGolden(t, gp, out)
		})
	}
}
