package suggest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/audit"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Checked is the proof of one suggestion for one engine object.
type Checked struct {
	Owner   string            `json:"owner"`
	Engine  model.Engine      `json:"engine"`
	Verdict model.VerdictKind `json:"verdict"`
	Reason  string            `json:"reason"`
	// Audit lists the audit findings of the engine object with the rule
	// (errors make the suggestion unusable).
	Audit []audit.Finding `json:"audit,omitempty"`
	// OK: our own judge leaves the field alone (ignored, left alone) and
	// audit finds no error.
	OK bool `json:"ok"`
}

// CheckOptions carry what the judges need from the cluster.
type CheckOptions struct {
	// GVKParser is the cluster's OpenAPI schema. Argo CD evaluates
	// managedFieldsManagers with it; without a desired state (inferred
	// drift) our judge cannot evaluate such a rule without it.
	GVKParser *managedfields.GvkParser
}

// Check adds the suggestion's rule to an engine object (an Application,
// Kustomization or HelmRelease, as read from the cluster or Git), judges
// the object's drift again with our own engine adapter, and audits the
// engine object as it would be committed. The report is not changed.
func Check(ctx context.Context, s Suggestion, owner *unstructured.Unstructured, report *model.Report, live, desired *unstructured.Unstructured, opts CheckOptions) (*Checked, error) {
	withRule, err := s.WithRule(owner)
	if err != nil {
		return nil, err
	}
	text, err := s.YAML(withRule)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "drift-suggest-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	file := filepath.Join(dir, "owner.yaml")
	if err := os.WriteFile(file, text, 0o600); err != nil {
		return nil, err
	}
	docs, err := source.Decode(text, file)
	if err != nil {
		return nil, err
	}
	var a model.Adapter
	engine := model.EngineFlux
	if owner.GetKind() == KindApplication {
		engine = model.EngineArgoCD
		ns := owner.GetNamespace()
		if ns == "" {
			ns = "argocd"
		}
		a, err = argocd.New(argocd.Options{Documents: docs, Namespace: ns, GVKParser: opts.GVKParser})
	} else {
		a, err = flux.New(flux.Options{Documents: docs})
	}
	if err != nil {
		return nil, err
	}
	again := rejudged(report)
	if err := a.Judge(ctx, model.JudgeInput{Live: live, Desired: desired, Report: again}); err != nil {
		return nil, err
	}
	c := &Checked{Owner: fmt.Sprintf("%s %s/%s", owner.GetKind(), owner.GetNamespace(), owner.GetName()), Engine: engine}
	for _, d := range again.Drifts {
		if d.Path != s.Pointer {
			continue
		}
		for _, v := range d.Verdicts {
			if v.Engine == engine {
				c.Verdict, c.Reason = v.Kind, v.Reason
			}
		}
	}
	// Audit the engine object beside the object it targets, so the
	// target matches a manifest.
	if obj := manifestOf(live, desired); obj != nil {
		if b, err := yaml.Marshal(obj); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "object.yaml"), b, 0o600)
		}
	}
	res, err := audit.Run(audit.Options{Root: dir, Paths: []string{"."},
		Extractors: []audit.Extractor{argocd.RulesFromDocuments, flux.RulesFromDocuments}})
	if err != nil {
		return nil, err
	}
	c.Audit = res.Findings
	c.OK = (c.Verdict == model.Ignored || c.Verdict == model.LeftAlone) && !res.Worst().AtLeast(audit.SeverityError)
	return c, nil
}

// rejudged copies a report without any verdict, owner, note or status,
// as the adapters receive it.
func rejudged(r *model.Report) *model.Report {
	out := model.NewReport(r.Resource, r.DesiredSource)
	for _, d := range r.Drifts {
		d.Verdicts = nil
		out.Drifts = append(out.Drifts, d)
	}
	return out
}

// manifestOf is the object as it would sit in Git: the desired state, or
// the live object without its server-side fields.
func manifestOf(live, desired *unstructured.Unstructured) map[string]any {
	if desired != nil {
		return desired.Object
	}
	if live == nil {
		return nil
	}
	c := live.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "status")
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(c.Object, "metadata", "uid")
	return c.Object
}
