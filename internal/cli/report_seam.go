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
// objects to judge with, and Argo CD's namespace.
type ReportInputs struct {
	Filenames             []string
	Kustomize             string
	LiveFile              string
	Rules                 []string
	ControlPlaneNamespace string
}

// bind binds them (the --argocd-namespace default is the value in
// ControlPlaneNamespace); the usages of -f, -k and --rules say what the
// command does with the files.
func (in *ReportInputs) bind(f *pflag.FlagSet, filename, kustomize, rules string) {
	f.StringSliceVarP(&in.Filenames, "filename", "f", nil, filename)
	f.StringVarP(&in.Kustomize, "kustomize", "k", "", kustomize)
	f.StringVar(&in.LiveFile, "live-file", "", "Read the live object from this file instead of the cluster")
	f.StringArrayVar(&in.Rules, "rules", nil, rules)
	f.StringVar(&in.ControlPlaneNamespace, "argocd-namespace", in.ControlPlaneNamespace, "Namespace of Argo CD's control plane")
}

// request is the explain request of the inputs.
func (in *ReportInputs) request() reportRequest {
	return reportRequest{Filenames: in.Filenames, Kustomize: in.Kustomize, LiveFile: in.LiveFile, Rules: in.Rules,
		EngineFlags: map[string]string{"argocd-namespace": in.ControlPlaneNamespace}}
}

// reportRequest is what adopt and suggest need from explain.
type reportRequest struct {
	Filenames []string
	Kustomize string
	LiveFile  string
	Rules     []string
	// EngineFlags are engine flags the caller took itself, by name
	// (--argocd-namespace): set on explain's flags of the engine that has
	// them.
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
	// (--argocd-namespace): the engine objects the caller renders or
	// locates are where they say.
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
