// Package cli holds the cobra commands of kubectl-drift. Every command is an
// Options struct with Complete/Validate/Run; nothing here is package-level
// mutable state, so the three front ends (kubectl, argocd, flux) and the
// tests can build as many command trees as they like.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"

	// The engines kubectl-drift ships, registered once (engine.Register).
	_ "github.com/kubectl-drift/kubectl-drift/internal/engines"

	// Auth providers (exec, oidc...) that kubeconfigs may name.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

// Frontend says which door the binary was entered through.
type Frontend struct {
	// Name is how users type the command: "kubectl drift", "argocd drift", "flux drift".
	Name string
	// DefaultEngine is the --engine default: auto or an engine's name.
	DefaultEngine string
}

// KubectlFrontend is the kubectl door, for every engine; the engines'
// own doors come from the registry (HostFrontend).
var KubectlFrontend = Frontend{Name: "kubectl drift", DefaultEngine: engine.Auto}

// Exit codes, as kubectl diff and flux diff use them (0 none, 1 drift,
// >1 error), plus 3: the command ran but drift cannot be told (no
// managedFields and no desired state). It is above 1 so scripts written
// for kubectl diff fail closed, and not 2 so they can tell it from an error.
const (
	ExitNoDrift      = 0
	ExitDrift        = 1
	ExitFailure      = 2
	ExitUndetermined = model.ExitUndetermined
)

// exitCodesHelp documents the exit codes in every command's --help.
const exitCodesHelp = "Exit codes: 0 no drift, 1 drift, 2 error, 3 drift cannot be told (no managedFields and no -f/-k)."

// ExitError carries an exit code out of a command. Err may be nil when the
// code is not an error (drift found: 1).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// errDrift is returned by commands that found drift: exit 1, nothing printed.
var errDrift = &ExitError{Code: ExitDrift}

// GlobalOptions are shared by every subcommand.
type GlobalOptions struct {
	Frontend    Frontend
	ConfigFlags *genericclioptions.ConfigFlags
	// Engine is auto or a registered engine's name (internal/engine).
	Engine string
	// Secrets remembers the values of every Secret the command read;
	// Out and ErrOut are scrubbed of them (redact.Writer), and so is the
	// error the command returns. Commands Add each object they load.
	Secrets *redact.Scrubber
	genericiooptions.IOStreams
}

// remember adds the Secrets among objs to the command's Scrubber.
func (g *GlobalOptions) remember(objs ...*unstructured.Unstructured) {
	if g == nil || g.Secrets == nil {
		return
	}
	for _, o := range objs {
		if o != nil {
			g.Secrets.Add(o.Object)
		}
	}
}

// direct returns the stream under a scrubbing writer, flushed first, for
// a child process that needs the terminal (an external diff program).
func direct(w io.Writer) io.Writer {
	if rw, ok := w.(*redact.Writer); ok {
		_ = rw.Flush()
		return rw.Unwrap()
	}
	return w
}

// scrubError returns err with Secret values removed from its text,
// keeping an ExitError's code.
func scrubError(s *redact.Scrubber, err error) error {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err != nil {
		if msg := s.String(ee.Err.Error()); msg != ee.Err.Error() {
			return &ExitError{Code: ee.Code, Err: &redact.Error{Msg: msg, Err: ee.Err}}
		}
		return err
	}
	return s.Err(err)
}

// NewRootCommand builds the command tree for one front end.
func NewRootCommand(fe Frontend, streams genericiooptions.IOStreams) *cobra.Command {
	// Every byte a command prints goes through the Scrubber: the
	// maskers hide values where they know the shape, this catches the
	// rest (a value quoted in an error, a note, a warning).
	secrets := redact.NewScrubber()
	out, errOut := redact.NewWriter(streams.Out, secrets), redact.NewWriter(streams.ErrOut, secrets)
	g := &GlobalOptions{
		Frontend:    fe,
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Engine:      fe.DefaultEngine,
		Secrets:     secrets,
		IOStreams:   genericiooptions.IOStreams{In: streams.In, Out: out, ErrOut: errOut},
	}
	root := &cobra.Command{
		Use:   strings.ReplaceAll(fe.Name, " ", "-"),
		Short: "Explain Kubernetes configuration drift as Argo CD and Flux see it",
		Long: fe.Name + ` explains configuration drift across Argo CD and Flux: which fields
drifted, who changed them and when, and which rule of which engine hides or
reverts each one.

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: fe.Name},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	// Every client identifies as kubectl-drift and gives up on a server
	// that does not answer (cluster.Bound says how long it waits).
	cluster.Bound(g.ConfigFlags)
	g.ConfigFlags.AddFlags(root.PersistentFlags())
	if f := root.PersistentFlags().Lookup("request-timeout"); f != nil {
		f.Usage = cluster.TimeoutFlagUsage
	}
	root.PersistentFlags().StringVar(&g.Engine, "engine", g.Engine, "GitOps engine whose rules to apply: "+engine.Or(engine.Choices()))
	_ = root.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions(engine.Choices(), cobra.ShellCompDirectiveNoFileComp))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%w\nSee '%s --help' for usage", err, c.CommandPath())}
	})

	for _, add := range subcommands {
		root.AddCommand(add(g))
	}
	guardCommands(root, secrets, out, errOut)
	return root
}

// guardCommands makes every command flush its scrubbed streams when it
// ends and return its error scrubbed, whichever way it ends.
func guardCommands(c *cobra.Command, s *redact.Scrubber, out, errOut *redact.Writer) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			_ = out.Flush()
			_ = errOut.Flush()
			return scrubError(s, err)
		}
	}
	for _, sub := range c.Commands() {
		guardCommands(sub, s, out, errOut)
	}
}

// subcommands lists the constructors of the subcommands in help order.
// Each lives in its own file: explain.go, scan.go, rules.go, ...
var subcommands = []func(*GlobalOptions) *cobra.Command{
	newExplainCommand,
	newAuditCommand,
	newScanCommand,
	newServeCommand,
	newRulesCommand,
	newCompareCommand,
	newNormalizeCommand,
	newRenderCommand,
	newAdoptCommand,
	newSuggestCommand,
	newVersionCommand,
}

// ValidateEngine checks the --engine value against the registry.
func (g *GlobalOptions) ValidateEngine() error {
	return engine.Validate(g.Engine)
}

// Main runs the front end and returns the process exit code. Errors are
// printed as one line: no stack traces, no panics reach the user.
func Main(fe Frontend, args []string) (code int) {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	defer func() {
		if r := recover(); r != nil {
			stderrf(streams.ErrOut, "error: internal error: %v\n", r)
			code = ExitFailure
		}
	}()
	cluster.QuietClientLogs()
	return Run(context.Background(), fe, streams, args)
}

// Run runs one command line of door fe over streams and returns the exit
// code, printing an error as one line. Main runs the process's command
// line through it (and turns a panic into exit 2); tests run theirs in
// process, where a panic still fails the test.
func Run(ctx context.Context, fe Frontend, streams genericiooptions.IOStreams, args []string) int {
	root := NewRootCommand(fe, streams)
	root.SetArgs(args)
	return exitCode(root.ExecuteContext(ctx), streams)
}

func exitCode(err error, streams genericiooptions.IOStreams) int {
	if err == nil {
		return ExitNoDrift
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			stderrf(streams.ErrOut, "error: %v\n", ee.Err)
		}
		return ee.Code
	}
	stderrf(streams.ErrOut, "error: %v\n", err)
	return ExitFailure
}
