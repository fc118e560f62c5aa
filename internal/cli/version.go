package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-drift/kubectl-drift/internal/version"
)

func newVersionCommand(g *GlobalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of " + g.Frontend.Name,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(g.Out, "%s %s\n", g.Frontend.Name, version.String())
			return err
		},
	}
}
