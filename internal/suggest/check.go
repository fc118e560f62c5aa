package suggest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/audit"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/suggest/suggestapi"
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

// Check adds the suggestion's rule for engine e to one of e's objects
// (holder: as read from the cluster or Git), judges the object's drift
// again with the engine's own adapter, and audits the engine object as it
// would be committed. The report is not changed.
func Check(ctx context.Context, e suggestapi.Semantics, s Suggestion, holder *unstructured.Unstructured, report *model.Report, live, desired *unstructured.Unstructured, opts CheckOptions) (*Checked, error) {
	withRule, err := s.WithRule(e, holder)
	if err != nil {
		return nil, err
	}
	text, err := s.YAML(e, withRule)
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
	a, err := e.Judge(docs, holder, opts.Schema)
	if err != nil {
		return nil, err
	}
	again := rejudged(report)
	if err := a.Judge(ctx, model.JudgeInput{Live: live, Desired: desired, Report: again}); err != nil {
		return nil, err
	}
	c := &Checked{Owner: fmt.Sprintf("%s %s/%s", holder.GetKind(), holder.GetNamespace(), holder.GetName()), Engine: e.Engine}
	for _, d := range again.Drifts {
		if d.Path != s.Pointer {
			continue
		}
		for _, v := range d.Verdicts {
			if v.Engine == e.Engine {
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
	res, err := audit.Run(audit.Options{Root: dir, Paths: []string{"."}, Extractors: opts.Extractors})
	if err != nil {
		return nil, err
	}
	c.Audit = res.Findings
	c.OK = (c.Verdict == model.Ignored || c.Verdict == model.LeftAlone) && !res.Worst().AtLeast(audit.SeverityError)
	return c, nil
}

// EngineObject is an engine object that reconciles the drifted object (a
// holder of the engine's rules), as read from the cluster or Git.
type EngineObject struct {
	Object *unstructured.Unstructured
	Engine suggestapi.Semantics
}

// CheckAll checks every suggestion against every engine object (Check),
// recording in each its proofs and, in NotChecked, the objects it could
// not be checked against.
func CheckAll(ctx context.Context, ss []Suggestion, objs []EngineObject, report *model.Report, live, desired *unstructured.Unstructured, opts CheckOptions) {
	for i := range ss {
		for _, o := range objs {
			c, err := Check(ctx, o.Engine, ss[i], o.Object, report, live, desired, opts)
			if err != nil {
				ss[i].NotChecked = append(ss[i].NotChecked, fmt.Sprintf("%s %s/%s: %v", o.Object.GetKind(), o.Object.GetNamespace(), o.Object.GetName(), err))
				continue
			}
			ss[i].Checks = append(ss[i].Checks, *c)
		}
	}
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
