package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-drift/kubectl-drift/internal/adopt"
)

// AdoptOptions are the flags and state of `adopt`.
type AdoptOptions struct {
	*GlobalOptions
	// RenderFlags: --source DIR finds the object's manifests through the
	// engine object that applies it (as render and explain --source do).
	RenderFlags

	// ReportInputs: -f and -k (or Chart) say where the object's manifest
	// is: plain files, a kustomize directory, or a Helm chart (values
	// file); --rules are engine objects to judge with (as explain
	// --rules).
	ReportInputs
	Chart  string
	Values string
	// Fields are the fields to adopt (JSON pointers or field paths);
	// empty means every field an engine would revert or reports as drift.
	Fields []string
	// DryRun prints the unified diff of the Git change instead of writing.
	DryRun bool

	args    []string
	locator adopt.Locator
}

// NewAdoptOptions returns options with defaults.
func NewAdoptOptions(g *GlobalOptions) *AdoptOptions {
	return &AdoptOptions{GlobalOptions: g}
}

func newAdoptCommand(g *GlobalOptions) *cobra.Command {
	o := NewAdoptOptions(g)
	cmd := &cobra.Command{
		Use:   "adopt TYPE/NAME (-f FILE | -k DIR | --chart DIR | --source DIR) [--field PATH]... [--dry-run]",
		Short: "Write an object's drifted live values back into the manifests in Git",
		Long: `Write the drifted live values of an object back into the file they came
from, when the live change was right (a hotfix) and Git should follow.

The file is edited in place: only the adopted values change; comments, key
order, quoting, anchors and indentation are kept byte for byte. The right
document of a multi-document file is edited, list items are found by their
merge key (containers by name, ports by containerPort and protocol), and a
missing key is added in its parent's style. With -k the value goes where
kustomize took it from: the images or replicas field of the
kustomization, a strategic-merge or JSON 6902 patch, or the base resource.
With --chart, a values key that a template writes straight into the field.
With --source, the checkout of a GitOps repository: the Flux Kustomization
or HelmRelease (by its ownership labels, or --kustomization/--helmrelease)
or the Argo CD Application (by its tracking id, or --app) that applies the
object says where: the kustomize directory of its path, the plain manifest
files there when it has no kustomization file, or its chart, with a
HelmRelease's inline spec.values or an Application's helm.valuesObject
edited in its manifest when they set the key (an Application's helm
valueFiles are tried last file first).

A field the source computes (a template expression, an inline patch, an
anchor shared through aliases) is not edited: its value is printed for you
to write. Secret values are never written to Git: use your secret manager.

Without --field, every field an engine would revert (or reports as drift,
e.g. Argo CD without auto-sync) is adopted. The
cluster is only read. Files are replaced atomically, and not at all when
they changed since they were read.

Exit codes: 0 written or nothing to do, 2 error.`,
		Example: `  # Keep the hotfixed replicas and image: show the Git change first
  kubectl drift adopt deploy/web -n shop -f apps/web.yaml --dry-run

  # Write one field into the kustomize overlay it came from
  kubectl drift adopt deploy/prod-web -n shop -k overlays/prod --field /spec/replicas

  # A Helm chart: write into values.yaml
  kubectl drift adopt deploy/web -n shop --chart charts/web --values charts/web/values-prod.yaml

  # A GitOps checkout: the owning Kustomization, HelmRelease or Application says where
  kubectl drift adopt deploy/web -n shop --source . --dry-run`,
		Args: cobra.RangeArgs(0, 2),
		RunE: runOptions(o),
	}
	f := cmd.Flags()
	o.bind(f, "Manifest file holding the object (may be repeated)", "Kustomization directory the object is built from",
		"File with Argo CD or Flux objects to judge with (repeatable)")
	f.StringVar(&o.Chart, "chart", "", "Helm chart directory whose template renders the object")
	f.StringVar(&o.Values, "values", "", "Values file to write with --chart (default: the chart's values.yaml)")
	f.StringArrayVar(&o.Fields, "field", nil, "Field to adopt, as a JSON pointer (/spec/replicas) or field path (.spec.template.spec.containers[name=app].image); repeatable")
	f.BoolVar(&o.DryRun, "dry-run", false, "Print the unified diff of the change instead of writing it")
	o.addFlags(cmd)
	// adopt edits the working tree: it locates manifests there whatever
	// revision a source names, so the flag would change nothing.
	_ = cmd.Flags().MarkHidden("working-tree")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagDirname("kustomize")
	_ = cmd.MarkFlagDirname("chart")
	_ = cmd.MarkFlagFilename("values", "yaml", "yml")
	cmd.ValidArgsFunction = objectCompletion(g)
	return cmd
}

// Complete picks the locator for the source given.
func (o *AdoptOptions) Complete(_ *cobra.Command, args []string) error {
	o.args = args
	// --app NAME is an Application of the control plane --argocd-namespace
	// names, as a tracking id without a namespace is.
	o.controlPlanes = o.controlPlanesByGroup()
	switch {
	case len(o.Filenames) > 0:
		o.locator = adopt.FilesLocator{Files: o.Filenames}
	case o.Kustomize != "":
		o.locator = adopt.KustomizeLocator{Dir: o.Kustomize}
	case o.Chart != "":
		o.locator = adopt.HelmLocator{Chart: o.Chart, Values: o.Values}
	}
	return nil
}

// Validate checks flag combinations; it does no I/O.
func (o *AdoptOptions) Validate() error {
	n := 0
	if len(o.Filenames) > 0 {
		n++
	}
	if o.Kustomize != "" {
		n++
	}
	if o.Chart != "" {
		n++
	}
	if o.Source != "" {
		n++
	}
	if n != 1 {
		return errors.New("give the object's source with exactly one of -f FILE, -k DIR, --chart DIR or --source DIR")
	}
	if len(o.refs()) > 1 {
		return errors.New("adopt writes one owner's sources: " + o.oneOwnerOf())
	}
	if err := o.validate(); err != nil {
		return err
	}
	for _, f := range o.Filenames {
		if f == "-" || f == "" {
			return errors.New("-f needs a file to write to (not stdin)")
		}
	}
	if o.Values != "" && o.Chart == "" {
		return errors.New("--values goes with --chart")
	}
	if len(o.args) == 0 {
		return errors.New("name the object: TYPE/NAME")
	}
	return nil
}

// Run adopts the fields and prints what was written (or the diff).
func (o *AdoptOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// Output is gathered and written once, after the files are written.
	var b strings.Builder
	defer func() { _, _ = io.WriteString(o.Out, b.String()) }()
	req := o.request()
	req.Render = o.RenderFlags
	if o.Chart != "" {
		// The chart is not rendered here: drift is inferred from field
		// ownership, and values come from the live object.
		req.Filenames = nil
	}
	ex, err := explainReport(ctx, o.GlobalOptions, o.args, req)
	if err != nil {
		return err
	}
	report, live := ex.report, ex.live
	if o.Source != "" {
		if o.locator, err = o.sourceLocator(ctx, ex); err != nil {
			return err
		}
	}
	fields, err := adopt.Pick(report, live.Object, o.Fields)
	if err != nil {
		return err
	}
	if len(fields) == 0 {
		fmt.Fprintf(&b, "Nothing to adopt: no engine would revert or report a field of %s (name fields with --field).\n", report.Resource)
		return nil
	}
	id := report.Resource
	obj := adopt.Object{Group: id.Group, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name}
	edits, skips, err := adopt.Plan(o.locator, obj, live.Object, fields)
	if err != nil {
		return errors.New(oneLine(err.Error()))
	}
	for _, e := range edits {
		if o.DryRun {
			name := filepath.ToSlash(e.File.Path)
			fmt.Fprint(&b, unifiedDiff("a/"+name, "b/"+name, string(e.File.Data), string(e.After), 3))
		}
	}
	if !o.DryRun {
		if err := adopt.Write(edits); err != nil {
			return err
		}
		for _, e := range edits {
			fmt.Fprintf(&b, "wrote %s: %s\n", e.File.Path, strings.Join(e.Fields, ", "))
		}
	}
	for _, s := range skips {
		if s.Reason == adopt.ReasonSecret {
			fmt.Fprintf(&b, "not written %s: %s\n", s.Pointer, s.Message)
			continue
		}
		fmt.Fprintf(&b, "not written %s: %s; write it by hand: %s\n", s.Pointer, s.Message, jsonValue(s.Value))
	}
	if len(edits) == 0 && len(skips) == 0 {
		fmt.Fprintln(&b, "Nothing to adopt: the source already holds the live values.")
	}
	return nil
}

// jsonValue is v as JSON, for a value the user writes by hand.
func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
