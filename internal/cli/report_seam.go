package cli

import (
	"context"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// ReportInputs are the flags adopt and suggest share to get explain's
// report: the desired state, the live object from a file, the engine
// objects to judge with, and the engines' control-plane namespaces.
type ReportInputs struct {
	Filenames []string
	Kustomize string
	LiveFile  string
	Rules     []string
	// ControlPlanes are the control-plane namespaces the engines declare
	// (engine.Descriptor.ControlPlane: Argo CD's --argocd-namespace), by
	// engine; set by bind.
	ControlPlanes map[model.Engine]*string
}

// bind binds them; the usages of -f, -k and --rules say what the command
// does with the files, the registry names the control-plane flags.
func (in *ReportInputs) bind(f *pflag.FlagSet, filename, kustomize, rules string) {
	f.StringSliceVarP(&in.Filenames, "filename", "f", nil, filename)
	f.StringVarP(&in.Kustomize, "kustomize", "k", "", kustomize)
	f.StringVar(&in.LiveFile, "live-file", "", "Read the live object from this file instead of the cluster")
	f.StringArrayVar(&in.Rules, "rules", nil, rules)
	in.ControlPlanes = map[model.Engine]*string{}
	for _, d := range engine.All() {
		if cp := d.ControlPlane; cp != nil {
			v := new(string)
			f.StringVar(v, cp.Flag, cp.Default, cp.Usage)
			in.ControlPlanes[d.Name] = v
		}
	}
}

// request is the explain request of the inputs: each control-plane
// namespace goes to explain's flag of the same name.
func (in *ReportInputs) request() reportRequest {
	flags := map[string]string{}
	for _, d := range engine.All() {
		if v := in.ControlPlanes[d.Name]; d.ControlPlane != nil && v != nil {
			flags[d.ControlPlane.Flag] = *v
		}
	}
	return reportRequest{Filenames: in.Filenames, Kustomize: in.Kustomize, LiveFile: in.LiveFile, Rules: in.Rules,
		EngineFlags: flags}
}

// controlPlanesByGroup are the control-plane namespaces given, by the API
// group of the engine objects that live there (render's --app NAME).
func (in *ReportInputs) controlPlanesByGroup() map[string]string {
	out := map[string]string{}
	for _, d := range engine.All() {
		if v := in.ControlPlanes[d.Name]; d.ControlPlane != nil && v != nil {
			out[d.ControlPlane.Group] = *v
		}
	}
	return out
}

// reportRequest is what adopt and suggest need from explain.
type reportRequest struct {
	Filenames []string
	Kustomize string
	LiveFile  string
	Rules     []string
	// EngineFlags are engine flags the caller took itself, by name
	// (a control-plane namespace): set on explain's flags of the engine
	// that has them.
	EngineFlags map[string]string
	// Render: --source renders the desired state from a checkout.
	Render RenderFlags
}

// explained is explain's result as adopt and suggest use it.
type explained struct {
	report  *model.Report
	live    *unstructured.Unstructured
	desired *unstructured.Unstructured // nil when inferred
	client  *cluster.Client            // nil offline (--live-file)
	// engineFlags are the engines' explain flags as the request set them
	// (a control-plane namespace): the engine objects the caller renders
	// or locates are where they say.
	engineFlags map[model.Engine]engine.Flags
}

// explainReport is the one seam through which adopt and suggest get a
// drift report, the live object and the desired state. When
// internal/drift.Explain (issue 14) lands, this becomes a call to it and
// nothing else changes.
func explainReport(ctx context.Context, g *GlobalOptions, args []string, req reportRequest) (*explained, error) {
	eo := NewExplainOptions(g)
	eo.Filenames, eo.Kustomize, eo.LiveFile, eo.Rules = req.Filenames, req.Kustomize, req.LiveFile, req.Rules
	eo.RenderFlags = req.Render
	// The engines' own explain flags, with their defaults; the control
	// plane namespace the caller was given goes to the engine that has it.
	fs := pflag.NewFlagSet("explain", pflag.ContinueOnError)
	for _, d := range engine.All() {
		if d.Flags != nil {
			if ef := d.Flags("explain", fs); ef != nil {
				eo.engineFlags[d.Name] = ef
			}
		}
	}
	for name, v := range req.EngineFlags {
		if v != "" && fs.Lookup(name) != nil {
			if err := fs.Set(name, v); err != nil {
				return nil, err
			}
		}
	}
	if err := eo.Complete(nil, args); err != nil {
		return nil, err
	}
	if err := eo.Validate(); err != nil {
		return nil, err
	}
	live, err := eo.live(ctx)
	if err != nil {
		return nil, err
	}
	eo.remember(live)
	report, err := eo.explain(ctx, live)
	if err != nil {
		return nil, err
	}
	out := &explained{report: report, live: live, client: eo.client, engineFlags: eo.engineFlags}
	if len(req.Filenames) > 0 || req.Kustomize != "" {
		// Read again: explain does not hand its desired object out.
		if out.desired, _, err = eo.desired(ctx, live); err != nil {
			return nil, err
		}
	}
	return out, nil
}
