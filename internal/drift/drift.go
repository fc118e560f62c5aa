// Package drift is the one engine-neutral pipeline that turns a live object
// (and, when given, its desired state) into a model.Report:
//
//	managedFields → diff (or inference) → attribution → the engines'
//	adapters judge → Secret masking → sort
//
// explain, scan and scan --watch call Explain; normalize calls Normalize.
// Nothing here knows an engine by name or imports cobra: commands build a
// Request from their flags and print the Report (stern's shape: flags →
// typed config → Run). Engines come in as model.Adapter values.
package drift

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// Request is everything one explanation needs. The command reads its
// inputs (live object, desired state, rule files) once and hands them over.
type Request struct {
	// Live is the object as the API server has it (with managedFields).
	Live *unstructured.Unstructured
	// Desired is the desired state, or nil: then drift is inferred from
	// managedFields.
	Desired *unstructured.Unstructured
	// Source says where Desired came from (-f, -k); ignored when Desired
	// is nil.
	Source model.DesiredSource
	// Engine is the engine the user selected (engine.Auto or an engine name).
	// With engine.Auto, notes of engines that do not reconcile the object are
	// dropped.
	Engine string
	// Adapters judge the drift, in order.
	Adapters []model.Adapter
	// Notes are what the command noticed reading the inputs (a --rules
	// file no selected engine uses, no OpenAPI schema); they join the
	// report's before the adapters judge.
	Notes []model.Note
	// Owners are owners already known (scan's precheck); each is added to
	// the report unless its engine's adapter added one.
	Owners []model.Owner
	// Bystanders are adapters of engines the selection left out: only
	// their Owner is asked, so that a report names who else reconciles the
	// object instead of reading "no owner".
	Bystanders []model.Adapter
	// CompareStatus compares a status the desired state holds (an engine
	// that judges status, diff.Options.CompareStatus).
	CompareStatus bool
	// IncludeControllers counts fields that only built-in controllers own
	// as drift (scan --include-controllers).
	IncludeControllers bool
	// Inventory is scan's mode: the report is nil when no GitOps engine
	// wrote the object or nothing drifted, inference notes are left out
	// (they explain one object, and a scan lists thousands), and adapters
	// judge only when there is drift, or when one asks for an object
	// inference found clean (engine.InventoryJudge): its report is then
	// kept only when the judging found drift.
	Inventory bool
	// CleanAsked: the caller already asked the adapters about this very
	// object (JudgesClean said yes, scan's check on the decoded object),
	// so inventory mode judges it without asking again; the answer
	// re-parses what the adapter compares (Argo CD's last-applied).
	CleanAsked bool
	// Offline is set when the live object came from a file: messages then
	// say how to save it with its managedFields.
	Offline bool
	// Secrets scrubs Secret values the command read from notes, reasons
	// and values; nil scrubs those of Live only.
	Secrets *redact.Scrubber
	// Warn prints a warning for the user (stderr); nil drops it. The same
	// message is also a note on the report.
	Warn func(msg string)
	// JudgeFailed receives an adapter's Judge error; nil makes it an error
	// note on the report (scan makes it a warning line instead).
	JudgeFailed func(engine model.Engine, err error)
	// JudgeLock serializes adapters' Judge calls when the caller runs
	// Explain concurrently (scan's workers share adapters and caches).
	JudgeLock sync.Locker
}

// Explain runs the pipeline on one object.
func Explain(ctx context.Context, req Request) (*model.Report, error) {
	live := req.Live
	if live == nil {
		return nil, fmt.Errorf("drift: no live object")
	}
	id := ResourceID(live)
	ix, err := managedfields.Parse(live)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}

	var notes []model.Note
	// Without managedFields and without a desired state there is nothing
	// to infer drift from: say so (exit 3) instead of "No drift." (exit 0).
	undetermined := ix.Empty() && req.Desired == nil
	if ix.Empty() && !undetermined {
		msg := "the live object has no managedFields: drift cannot be attributed to a manager, and every ownership-based rule (" + engine.OwnershipRules() + ") silently does nothing"
		if req.Offline {
			msg += "; save it with kubectl get -o yaml --show-managed-fields"
		}
		if req.Warn != nil {
			req.Warn(msg)
		}
		notes = append(notes, model.Note{Level: model.NoteWarning, Reason: "no-managed-fields", Message: msg})
	}

	src := req.Source
	if req.Desired == nil {
		src = model.SourceManagedFields
	}
	report := model.NewReport(id, src)
	// cleanJudged: inventory mode judges an object inference found clean
	// because an adapter asked (engine.InventoryJudge); the report is kept
	// only if its judging found drift.
	cleanJudged := false
	secrets := req.Secrets
	if secrets == nil {
		secrets = redact.NewScrubber()
		secrets.Add(live.Object)
	}
	if req.Desired != nil && req.Source != model.SourceRendered {
		// A file holds Git as written; compare with what the controller
		// applies (its build over the file). A rendered desired state
		// (--source) was built by the engine's renderer already.
		built, buildNotes := buildDesired(ctx, req, secrets)
		notes = append(notes, buildNotes...)
		if built != nil {
			req.Desired = built
		}
	}
	switch {
	case req.Desired != nil:
		drifts, err := diff.Compute(req.Desired, live, diff.Options{Owned: OwnedFunc(ix, live), CompareStatus: req.CompareStatus})
		if err != nil {
			return nil, fmt.Errorf("comparing %s with the desired state: %w", id, err)
		}
		report.Drifts = drifts
	case undetermined && !req.Inventory:
		report.Undetermined = "the live object has no managedFields, so who owns each field (and so what drifted) cannot be told; give the desired state with -f FILE or -k DIR (add --server-dry-run to decide as the engine would)"
		if req.Offline {
			report.Undetermined += ", or save the object with kubectl get -o yaml --show-managed-fields"
		}
	default:
		inf := diff.Infer(live, ix, diff.InferOptions{IncludeControllers: req.IncludeControllers})
		if req.Inventory {
			if !inf.EngineWrote {
				return nil, nil
			}
			if len(inf.Drifts) == 0 {
				if !req.CleanAsked && !JudgesClean(live, req.Adapters...) {
					return nil, nil
				}
				cleanJudged = true
			}
		} else {
			notes = append(notes, inf.Notes...)
		}
		report.Drifts = inf.Drifts
	}
	attribute(report, live, ix, req.Inventory)
	report.Notes = append(report.Notes, notes...)
	report.Notes = append(report.Notes, req.Notes...)

	judge(ctx, req, report, ix)
	if cleanJudged && len(report.Drifts) == 0 && !report.StatusDrift() {
		return nil, nil
	}
	for _, a := range req.Bystanders {
		bystander(req.Engine, a, report, live)
	}
	if req.Engine == engine.Auto && !req.Inventory {
		report.Notes = quietUninvolvedEngines(report)
	}
	// Mask a Secret's drift values, and scrub every remembered Secret
	// value from notes and reasons (a jq error quotes the value it
	// failed on; an adapter may quote a field).
	secrets.Report(report)
	report.Sort()
	return report, nil
}

// buildDesired asks the adapter whose engine reconciles the live object
// what its controller would apply for req.Desired (engine.DesiredBuilder);
// nil when none builds it.
func buildDesired(ctx context.Context, req Request, secrets *redact.Scrubber) (*unstructured.Unstructured, []model.Note) {
	for _, a := range req.Adapters {
		b, ok := a.(engine.DesiredBuilder)
		if !ok {
			continue
		}
		if built, notes := b.BuildDesired(ctx, req.Live, req.Desired, secrets); built != nil || len(notes) > 0 {
			return built, notes
		}
	}
	return nil, nil
}

// judge lets every adapter add its owner, verdicts and notes. An adapter
// that fails leaves the drift reported, without its verdicts.
func judge(ctx context.Context, req Request, report *model.Report, ix *managedfields.Index) {
	if req.JudgeLock != nil {
		req.JudgeLock.Lock()
		defer req.JudgeLock.Unlock()
	}
	for _, a := range req.Adapters {
		err := a.Judge(ctx, model.JudgeInput{Live: req.Live, Desired: req.Desired, Report: report, ManagedFields: ix})
		switch {
		case err == nil:
		case req.JudgeFailed != nil:
			req.JudgeFailed(a.Engine(), err)
		default:
			report.Notes = append(report.Notes, model.Note{Engine: a.Engine(), Level: model.NoteError, Reason: "judge-failed",
				Message: fmt.Sprintf("%s verdicts unavailable: %v", a.Engine(), err)})
		}
	}
	for _, ow := range req.Owners {
		if !hasOwner(report, ow.Engine) {
			report.Owners = append(report.Owners, ow)
		}
	}
}

// JudgesClean says whether one of adapters asks to judge obj although no
// relevant manager wrote it or inference found no drift: an
// engine.InventoryJudge that can see drift managedFields cannot (a field
// deleted live, a status its controller recorded). obj may hold metadata
// only (scan's precheck). Adapters without the capability never ask.
func JudgesClean(obj *unstructured.Unstructured, adapters ...model.Adapter) bool {
	for _, a := range adapters {
		if j, ok := a.(engine.InventoryJudge); ok && j.JudgeClean(obj) {
			return true
		}
	}
	return false
}

func hasOwner(r *model.Report, e model.Engine) bool {
	for _, ow := range r.Owners {
		if ow.Engine == e {
			return true
		}
	}
	return false
}

// ResourceID identifies obj in a report.
func ResourceID(obj *unstructured.Unstructured) model.ResourceID {
	gvk := obj.GroupVersionKind()
	return model.ResourceID{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// quietUninvolvedEngines drops the notes of an engine that does not
// reconcile the object when no engine was selected: on a cluster without
// one engine, "cannot read its settings" tells a newcomer nothing about
// this object. Selecting the engine (--engine NAME) keeps them, and so
// does a note about the object itself (Note.AboutObject): an engine whose
// marks on the object name an owner that does not reconcile it is the
// finding, not noise.
func quietUninvolvedEngines(r *model.Report) []model.Note {
	involved := map[model.Engine]bool{}
	for _, ow := range r.Owners {
		involved[ow.Engine] = true
	}
	for _, d := range r.Drifts {
		for _, v := range d.Verdicts {
			if v.Kind != model.LeftAlone {
				involved[v.Engine] = true
			}
		}
	}
	kept := r.Notes[:0]
	for _, n := range r.Notes {
		// Errors stay: a broken --rules file must not vanish.
		if n.Engine != "" && !involved[n.Engine] && n.Level != model.NoteError && !n.AboutObject {
			continue
		}
		kept = append(kept, n)
	}
	return kept
}

// bystander names the owner of an engine the selection left out (an object
// reconciled by engine B explained with --engine A), so OWNER does not read
// "none" for an object that another engine reconciles. Ownership is read
// from labels and annotations only; that engine's rules are not applied.
func bystander(selected string, other model.Adapter, r *model.Report, live *unstructured.Unstructured) {
	ow := other.Owner(live)
	if ow == nil {
		return
	}
	ow.NotJudged = true
	r.Owners = append(r.Owners, *ow)
	r.Notes = append(r.Notes, model.Note{Engine: ow.Engine, Level: model.NoteWarning, Reason: "engine-not-judged",
		Message: fmt.Sprintf("%s reconciles this object, but --engine %s leaves %s out: its verdicts and rules are not shown (use --engine %s or auto)",
			ow.Ref(), selected, ow.Engine, ow.Engine)})
}

// OwnedFunc tells diff which live fields somebody set (and so may be
// drift when the desired state lacks them) as opposed to API server
// defaults. Server-side apply leaves defaults unowned, but an Update
// (client-side apply, as Argo CD syncs by default) owns every field the
// server filled in on that request, defaults included. So a field counts
// as set when a non-GitOps manager owns it (someone added it by hand) or a
// GitOps engine owns it through Apply (its applied configuration had it);
// a GitOps Update alone does not say it was ever in the manifest.
func OwnedFunc(ix *managedfields.Index, live *unstructured.Unstructured) func(string) bool {
	if ix.Empty() {
		// Without ownership every API server default would look like a
		// field someone added; report only fields the desired state sets
		// (the no-managedFields warning says what is lost).
		return func(string) bool { return false }
	}
	return func(pointer string) bool {
		owners := ix.Owners(live, pointer)
		for _, m := range owners {
			if !managedfields.IsGitOpsManager(m.Manager) || m.Operation == "Apply" {
				return true
			}
		}
		// A GitOps Update owning a field its last-applied configuration
		// names: it was in the manifest, and a field removed from Git since
		// is drift (Argo CD's 3-way diff removes it).
		return len(owners) > 0 && ix.InLastApplied(live, pointer)
	}
}
