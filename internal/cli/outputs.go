package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// One -o vocabulary for every command: the human view is called "text" by
// explain and audit and "table" by scan, rules and compare; both names are
// accepted everywhere there is a human view, and mean that view. "wide" is
// accepted only where it changes something (explain). Every command reports a
// bad value with the same words.

// addOutputFlag binds a command's -o: its values, its usage (outputHelp)
// and its completion come from the one list; Validate maps the value with
// canonicalOutput. The default is *p.
func addOutputFlag(cmd *cobra.Command, p *string, formats []string, extra string) {
	cmd.Flags().StringVarP(p, "output", "o", *p, outputHelp(formats, extra))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// outputHelp is the -o flag usage: the values, and the synonym rule.
func outputHelp(formats []string, extra string) string {
	s := "Output format: " + strings.Join(formats, ", ")
	if human(formats) != "" {
		s += " (text and table both name the human-readable view)"
	}
	if extra != "" {
		s += "; " + extra
	}
	return s
}

// human returns the command's own name for the human view, "" if none.
func human(formats []string) string {
	for _, f := range formats {
		if f == "text" || f == "table" {
			return f
		}
	}
	return ""
}

// canonicalOutput maps -o to one of formats: "text" and "table" to the
// command's human view, anything else must be listed.
func canonicalOutput(value string, formats []string) (string, error) {
	if h := human(formats); h != "" && (value == "text" || value == "table") {
		return h, nil
	}
	if slices.Contains(formats, value) {
		return value, nil
	}
	return "", fmt.Errorf("invalid -o %q: must be one of %s", value, strings.Join(formats, ", "))
}
