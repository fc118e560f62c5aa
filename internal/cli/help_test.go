package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestFlagHelp pins every command's flags as users see them (name,
// shorthand, default and help text; testdata/help/*.golden): the flags the
// engines declare through the registry (the control-plane namespace of
// adopt and suggest, render's owner objects) keep the names, defaults and
// words they had when cli declared them itself.
func TestFlagHelp(t *testing.T) {
	var in, out, errOut bytes.Buffer
	root := NewRootCommand(KubectlFrontend, genericiooptions.IOStreams{In: &in, Out: &out, ErrOut: &errOut})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			name := strings.ReplaceAll(strings.TrimPrefix(sub.CommandPath(), root.CommandPath()+" "), " ", "-")
			t.Run(name, func(t *testing.T) {
				testutil.Golden(t, filepath.Join("testdata", "help", name+".golden"), []byte(sub.LocalFlags().FlagUsages()))
			})
			walk(sub)
		}
	}
	walk(root)
}
