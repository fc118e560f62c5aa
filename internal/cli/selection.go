package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// Selection is which objects a command over many objects reads (scan,
// serve): a namespace or all of them, a label selector, the kinds.
type Selection struct {
	AllNamespaces bool
	LabelSelector string
	Kinds         []string
}

// addSelectionFlags adds -A, -l and --kinds; verb is what the command
// does to the objects ("scan", "watch").
func (s *Selection) addSelectionFlags(cmd *cobra.Command, verb string) {
	f := cmd.Flags()
	f.BoolVarP(&s.AllNamespaces, "all-namespaces", "A", false, strings.ToUpper(verb[:1])+verb[1:]+" all namespaces")
	f.StringVarP(&s.LabelSelector, "selector", "l", "", "Label selector to filter objects (e.g. app=shop)")
	f.StringSliceVar(&s.Kinds, "kinds", nil, "Kinds to "+verb+`, comma-separated: resource names as kubectl get takes them, "default", "all" (default "default")`)
	_ = cmd.RegisterFlagCompletionFunc("kinds", cobra.FixedCompletions(append([]string{scan.KindsDefault, scan.KindsAll}, scan.DefaultKinds...), cobra.ShellCompDirectiveNoFileComp))
}

// validateSelector checks the label selector once, before any cluster
// access: the server would reject it once per kind listed.
func (s *Selection) validateSelector() error {
	if s.LabelSelector == "" {
		return nil
	}
	if _, err := labels.Parse(s.LabelSelector); err != nil {
		return fmt.Errorf("invalid --selector %q: %w", s.LabelSelector, drift.OneLineError(err))
	}
	return nil
}

// resolveNamespace is the namespace to read, "" for all: the one -n or
// the kubeconfig names, unless -A.
func (s *Selection) resolveNamespace(c *cluster.Client) (string, error) {
	if s.AllNamespaces {
		return "", nil
	}
	ns, _, err := c.Namespace()
	if err != nil {
		return "", cluster.ConfigError(err)
	}
	return ns, nil
}
