package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// normalizerLoader builds the adapters of the selected engines over the
// rule sources; reader is nil when no cluster is used. Tests replace it.
type normalizerLoader func(ctx context.Context, g *GlobalOptions, src *RuleSourceFlags, reader model.Reader) ([]model.Adapter, error)

// normalizeFormats are the -o values of normalize.
var normalizeFormats = []string{"yaml", "json"}

// NormalizeOptions are the flags of `normalize`.
type NormalizeOptions struct {
	*GlobalOptions
	// Files: the object (and, with --diff, then the desired state).
	Files []string
	// Rules are the rule sources (files and directories with
	// Applications, argocd-cm, Kustomizations, HelmReleases).
	Rules RuleSourceFlags
	Diff  bool
	// Full compares every live field in --diff, server defaults included.
	Full   bool
	Output string
	// RenderFlags: with --diff, --source DIR renders the desired state as
	// the owning engine would (source_hook.go) instead of -f DESIRED.
	RenderFlags

	args   []string
	getenv func(string) string
	load   normalizerLoader
	// objectLoader reads one object from a file (the first document).
	readObject func(path string) (*unstructured.Unstructured, error)
}

// NewNormalizeOptions returns the defaults.
func NewNormalizeOptions(g *GlobalOptions) *NormalizeOptions {
	return &NormalizeOptions{GlobalOptions: g, Output: "yaml", getenv: os.Getenv, load: defaultNormalizerLoader, readObject: readObjectFile}
}

func newNormalizeCommand(g *GlobalOptions) *cobra.Command {
	return newNormalizeCmd(NewNormalizeOptions(g))
}

// newNormalizeCmd builds the command over given options (tests inject loaders).
func newNormalizeCmd(o *NormalizeOptions) *cobra.Command {
	g := o.GlobalOptions
	cmd := &cobra.Command{
		Use:   "normalize (-f FILE | TYPE/NAME) [--engine " + strings.Join(engine.Names(), "|") + "] [--rules PATH...] [-k DIR] [--from-cluster] [--diff (-f DESIRED | --source DIR)]",
		Short: "Print an object as Argo CD or Flux sees it before diffing",
		Long: `Normalize prints an object the way one engine sees it just before it
diffs: for Argo CD after its normalizers and the ignoreDifferences rules that
match (Application and argocd-cm), for Flux after its ignore rules. Feed the
result to any diff tool.

The object comes from -f FILE, or from the cluster as TYPE/NAME. Rules come
from --rules files or directories, -k kustomize builds and --from-cluster.
Rules apply as the engines scope them: an Application's rules to the objects
it tracks (argocd.argoproj.io/tracking-id), a Kustomization's or
HelmRelease's to the objects carrying its ownership labels. With --engine
auto (the kubectl door's default) the engine is picked from those marks.

--diff shows desired against live through the same normalization, as a
unified diff: the live object is TYPE/NAME (then -f is the desired state) or
the first -f, the desired state the second -f, or, with --source DIR, the
object its owner would apply, rendered from the checkout as explain
--source renders it (--kustomization/--helmrelease name the owner of an
object without ownership labels). Live fields the desired state
does not set (server defaults, status) are left out, as in Argo CD's
two-way diff; --full keeps them. As with kubectl diff, the
KUBECTL_EXTERNAL_DIFF program, when set, is run on two directories (LIVE and
MERGED) instead. Secret values are masked (***).

Exit codes: 0 ok (with --diff: no differences), 1 differences, 2 error.`,
		Example: `  # Flux's view of a live Deployment saved with --show-managed-fields
  ` + g.Frontend.Name + ` normalize -f live.yaml --engine flux --rules ./clusters/prod

  # Live against what Flux would apply from a local checkout
  ` + g.Frontend.Name + ` normalize deploy/web -n shop --engine flux --from-cluster --diff --source ~/src/fleet-infra

  # What Argo CD would still call drift, in your diff tool
  KUBECTL_EXTERNAL_DIFF="meld" ` + g.Frontend.Name + ` normalize deploy/web -n shop --engine argocd --from-cluster --diff -f web.yaml`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          runOptions(o),
	}
	cmd.Flags().StringArrayVarP(&o.Files, "filename", "f", nil, "object file; with --diff the desired-state file comes next")
	cmd.Flags().StringArrayVar(&o.Rules.Paths, "rules", nil, "file or directory holding rules (Applications, argocd-cm, Kustomizations, HelmReleases); repeatable")
	cmd.Flags().StringArrayVarP(&o.Rules.Kustomize, "kustomize", "k", nil, "kustomize directory holding rules (repeatable)")
	cmd.Flags().BoolVar(&o.Rules.FromCluster, "from-cluster", false, "read rules (and TYPE/NAME) from the cluster")
	cmd.Flags().BoolVar(&o.Diff, "diff", false, "show desired vs live through the same normalization as a unified diff")
	cmd.Flags().BoolVar(&o.Full, "full", false, "with --diff, keep every live field (server defaults, metadata) instead of only the fields the desired state sets")
	addOutputFlag(cmd, &o.Output, normalizeFormats, "without --diff")
	o.addFlags(cmd)
	_ = cmd.MarkFlagDirname("source")
	return cmd
}

// Complete records the positional object reference.
func (o *NormalizeOptions) Complete(_ *cobra.Command, args []string) error {
	o.args = args
	return nil
}

// Validate checks flags.
func (o *NormalizeOptions) Validate() error {
	if err := o.ValidateEngine(); err != nil {
		return err
	}
	if _, err := canonicalOutput(o.Output, normalizeFormats); err != nil {
		return err
	}
	if o.Source != "" && !o.Diff {
		return errors.New("--source gives the desired state: it needs --diff")
	}
	if err := o.validateSourceFor("normalize"); err != nil {
		return err
	}
	want := 1
	if o.Diff && o.Source == "" {
		want = 2
	}
	if len(o.args) > 0 {
		want--
	}
	if len(o.Files) != want {
		switch {
		case o.Diff && o.Source != "":
			return fmt.Errorf("--diff --source needs the live object alone (TYPE/NAME or -f LIVE): the desired state is rendered")
		case o.Diff:
			return fmt.Errorf("--diff needs the live object (TYPE/NAME or -f LIVE) and the desired state (-f DESIRED, or --source DIR)")
		}
		return fmt.Errorf("give exactly one object: -f FILE or TYPE/NAME")
	}
	return nil
}

// Run normalizes and prints or diffs.
func (o *NormalizeOptions) Run(ctx context.Context) error {
	var reader model.Reader
	var client *cluster.Client
	var live *unstructured.Unstructured
	var namespace string
	files := o.Files
	if len(o.args) > 0 || o.Rules.FromCluster {
		c, err := cluster.New(o.ConfigFlags, cluster.Options{})
		if err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
		reader, client = c, c
		if len(o.args) > 0 {
			ns, _, err := c.Namespace()
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			namespace = ns
			t, err := c.Resolve(o.args, ns)
			if err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			if live, err = c.Get(ctx, t.GVK, t.Namespace, t.Name); err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
		}
	}
	if live == nil {
		var err error
		if live, err = o.readObject(files[0]); err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
		files = files[1:]
	}
	o.remember(live)
	adapters, err := o.load(ctx, o.GlobalOptions, &o.Rules, reader)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	a, err := drift.PickAdapter(o.Engine, adapters, live)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if fn, ok := a.(engine.FileNoter); ok {
		for _, n := range fn.FileNotes() {
			if n.Level == model.NoteWarning {
				stderrf(o.ErrOut, "warning: %s\n", n.Message)
			}
		}
	}
	norm, ok := a.(engine.Normalizer)
	if !ok {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%s cannot normalize objects", a.Engine())}
	}
	req := drift.NormalizeRequest{Live: live, Adapter: norm, Full: o.Full}
	switch {
	case o.Diff && o.Source != "":
		if req.Desired, err = o.desiredFromSource(ctx, live, reader, client, namespace); err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
	case o.Diff:
		if req.Desired, err = o.readObject(files[0]); err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
		o.remember(req.Desired)
	}
	n, err := drift.Normalize(ctx, req)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if !o.Diff {
		redact.Object(n.Live.Object)
		return printObject(o.Out, o.Output, n.Live)
	}
	// kubectl diff's convention: "*** (before)" / "*** (after)" where a
	// value differs, so the diff still shows which keys changed.
	redact.Pair(n.Live.Object, n.Desired.Object)
	return o.diff(n.Live, n.Desired)
}

// desiredFromSource is normalize's --source hook: live's document in its
// owner's render (engine objects, sources and valuesFrom read from the
// cluster when one is used, else from the checkout).
func (o *NormalizeOptions) desiredFromSource(ctx context.Context, live *unstructured.Unstructured, reader model.Reader, c *cluster.Client, namespace string) (*unstructured.Unstructured, error) {
	env, err := o.renderEnv(o.GlobalOptions, reader, c)
	if err != nil {
		return nil, err
	}
	defer func() { _ = env.Close() }()
	obj, _, objs, err := drift.NewRendered(env, engine.Renderers(nil), o.owner(), nil).Desired(ctx, live, namespace)
	o.remember(objs...)
	return obj, err
}

func printObject(w io.Writer, format string, obj *unstructured.Unstructured) error {
	return output.PrintObject(w, output.Format(format), obj.Object)
}

func objectYAML(obj *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(obj.Object)
	if err != nil {
		return "", err
	}
	y, err := yaml.JSONToYAML(b)
	return string(y), err
}

// diff prints live vs desired. Exit 1 when they differ (kubectl diff).
func (o *NormalizeOptions) diff(live, desired *unstructured.Unstructured) error {
	if ext := strings.TrimSpace(o.getenv("KUBECTL_EXTERNAL_DIFF")); ext != "" {
		return externalDiff(ext, o.Out, o.ErrOut, "drift-normalize-", live, desired)
	}
	a, err := objectYAML(live)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	b, err := objectYAML(desired)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if a == b {
		return nil
	}
	name := diffFileName(live)
	if _, err := io.WriteString(o.Out, unifiedDiff("LIVE/"+name, "MERGED/"+name, a, b, 3)); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	return errDrift
}

func diffFileName(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	parts := []string{}
	if gvk.Group != "" {
		parts = append(parts, gvk.Group)
	}
	parts = append(parts, gvk.Version, gvk.Kind)
	if ns := obj.GetNamespace(); ns != "" {
		parts = append(parts, ns)
	}
	parts = append(parts, obj.GetName())
	return strings.Join(parts, ".")
}

// externalDiff follows kubectl diff's contract (kubectl pkg/cmd/diff
// diff.go): the program from KUBECTL_EXTERNAL_DIFF, split on spaces, gets
// two directories, LIVE then MERGED, holding one YAML file per object; its
// exit code 1 means differences. normalize --diff and explain -o diff run
// it; both hand it objects already masked.
func externalDiff(ext string, out, errOut io.Writer, prefix string, live, desired *unstructured.Unstructured) error {
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	// A temporary directory left behind is harmless; the diff's result is
	// what matters.
	defer func() { _ = os.RemoveAll(tmp) }()
	dirs := [2]string{filepath.Join(tmp, "LIVE"), filepath.Join(tmp, "MERGED")}
	for i, obj := range []*unstructured.Unstructured{live, desired} {
		if err := os.Mkdir(dirs[i], 0o700); err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
		y, err := objectYAML(obj)
		if err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
		if err := os.WriteFile(filepath.Join(dirs[i], diffFileName(obj)), []byte(y), 0o600); err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
	}
	args := strings.Fields(ext)
	cmd := exec.Command(args[0], append(args[1:], dirs[0], dirs[1])...)
	// The program gets the terminal itself (vimdiff, meld need it); what
	// it shows is the two files written above, already masked.
	cmd.Stdout, cmd.Stderr = direct(out), direct(errOut)
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return errDrift
	}
	return &ExitError{Code: ExitFailure, Err: fmt.Errorf("KUBECTL_EXTERNAL_DIFF %q: %w", ext, err)}
}

// unifiedDiff renders a line diff computed by sergi/go-diff in unified
// format with ctx lines of context.
func unifiedDiff(nameA, nameB, a, b string, ctx int) string {
	var out bytes.Buffer
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	for _, h := range diffHunks(diffLines(a, b), ctx) {
		fmt.Fprintf(&out, "%s\n", h.header())
		for _, l := range h.lines {
			out.WriteString(l.String() + "\n")
		}
	}
	return out.String()
}

// diffLine is one line of a line diff.
type diffLine struct {
	op   diffmatchpatch.Operation
	text string
}

// String renders the line as a unified diff body line.
func (l diffLine) String() string {
	switch l.op {
	case diffmatchpatch.DiffDelete:
		return "-" + l.text
	case diffmatchpatch.DiffInsert:
		return "+" + l.text
	}
	return " " + l.text
}

// diffLines is the line diff of a and b (sergi/go-diff).
func diffLines(a, b string) []diffLine {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var ls []diffLine
	for _, d := range diffs {
		text := strings.TrimSuffix(d.Text, "\n")
		for _, t := range strings.Split(text, "\n") {
			ls = append(ls, diffLine{d.Type, t})
		}
	}
	return ls
}

// diffHunk is one hunk of a unified diff: its lines and where they start
// in each file (1-based) and how many each covers.
type diffHunk struct {
	as, an, bs, bn int
	lines          []diffLine
}

func (h diffHunk) header() string {
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.as, h.an, h.bs, h.bn)
}

// diffHunks groups a line diff into hunks: runs of changes with ctx lines
// of context around them; more than 2*ctx equal lines end a hunk.
func diffHunks(ls []diffLine, ctx int) []diffHunk {
	var hunks []diffHunk
	aLine, bLine := 1, 1
	i := 0
	for i < len(ls) {
		if ls[i].op == diffmatchpatch.DiffEqual {
			i++
			aLine++
			bLine++
			continue
		}
		start := max(i-ctx, 0)
		for start < i && ls[start].op != diffmatchpatch.DiffEqual {
			start++
		}
		end := i
		for end < len(ls) {
			if ls[end].op != diffmatchpatch.DiffEqual {
				end++
				continue
			}
			run := end
			for run < len(ls) && ls[run].op == diffmatchpatch.DiffEqual {
				run++
			}
			if run == len(ls) || run-end > 2*ctx {
				end = min(end+ctx, len(ls))
				break
			}
			end = run
		}
		back := i - start
		h := diffHunk{as: aLine - back, bs: bLine - back, lines: ls[start:end]}
		for _, l := range h.lines {
			switch l.op {
			case diffmatchpatch.DiffEqual:
				h.an++
				h.bn++
			case diffmatchpatch.DiffDelete:
				h.an++
			case diffmatchpatch.DiffInsert:
				h.bn++
			}
		}
		hunks = append(hunks, h)
		for _, l := range ls[i:end] {
			switch l.op {
			case diffmatchpatch.DiffEqual:
				aLine++
				bLine++
			case diffmatchpatch.DiffDelete:
				aLine++
			case diffmatchpatch.DiffInsert:
				bLine++
			}
		}
		i = end
	}
	return hunks
}

// readObjectFile reads the first object of a YAML or JSON file through
// the bounded loader every command uses (size limit, alias bombs, one-line
// errors); a List's first item counts.
func readObjectFile(path string) (*unstructured.Unstructured, error) {
	if path == "-" {
		return nil, fmt.Errorf("-f -: reading the object from stdin is not supported; give a file")
	}
	docs, err := source.LoadFiles([]string{path}, nil, source.Options{NoPositions: true})
	if err != nil {
		return nil, drift.LoadError(err)
	}
	for _, d := range docs {
		if objs := drift.ExpandList(d.Object); len(objs) > 0 {
			return objs[0], nil
		}
	}
	return nil, fmt.Errorf("%s: no object found", path)
}
