package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-drift/kubectl-drift/internal/output"
	"github.com/kubectl-drift/kubectl-drift/internal/version"
)

// VersionOptions prints the build's version (internal/version, stamped with
// -ldflags -X at build time).
type VersionOptions struct {
	g *GlobalOptions
	// Output is "" (one line), json or yaml, as `kubectl version -o`.
	Output string
}

func newVersionCommand(g *GlobalOptions) *cobra.Command {
	o := &VersionOptions{g: g}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of " + g.Frontend.Name,
		Long: `Print the version of ` + g.Frontend.Name + `: the release, the commit it was built
from and the build date; -o json or -o yaml adds the Go version and platform.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: one line)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Validate checks -o.
func (o *VersionOptions) Validate() error {
	switch o.Output {
	case "", "json", "yaml":
		return nil
	}
	return fmt.Errorf("invalid -o %q: must be json or yaml", o.Output)
}

// Run prints the version.
func (o *VersionOptions) Run() error {
	info := version.Get()
	switch o.Output {
	case "json", "yaml":
		return output.PrintObject(o.g.Out, output.Format(o.Output), info)
	}
	_, err := fmt.Fprintf(o.g.Out, "%s %s\n", o.g.Frontend.Name, version.String())
	return err
}
