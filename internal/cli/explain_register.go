//go:build driftexplain

package cli

// Temporary while internal/diff and internal/source land: explain is
// registered only in builds with -tags driftexplain. Replaced by a
// one-line entry in root.go's subcommands.
func init() { subcommands = append(subcommands, newExplainCommand) }
