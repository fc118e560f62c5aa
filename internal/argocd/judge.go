package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// Judge implements model.Adapter: Argo CD's owner, one verdict per drifted
// field, and notes on every rule that targets the object but removes nothing.
// The steps follow Argo CD's own: find the Application (owner), build its
// diff config, run its comparison (compare), then read every field's
// verdict and the object's sync status off that one comparison.
func (a *Adapter) Judge(ctx context.Context, in model.JudgeInput) error {
	if in.Report == nil || in.Live == nil {
		return fmt.Errorf("nothing to judge")
	}
	a.load(ctx)
	rep, live := in.Report, in.Live
	a.mu.Lock()
	rep.Notes = append(rep.Notes, a.loadNotes...)
	s := a.settings
	rep.Notes = append(rep.Notes, s.Problems...)
	a.mu.Unlock()

	owner := a.Owner(live)
	if owner == nil {
		a.noteTrackingMismatch(rep, live)
		return nil
	}
	app, appSrc, done := a.resolveApp(ctx, rep, owner)
	if done {
		return nil
	}
	if !hasOwner(rep, *owner) {
		rep.Owners = append(rep.Owners, *owner)
	}
	gvk := live.GroupVersionKind()
	if f, ok := s.excluded(gvk.Group, gvk.Kind, a.opts.Cluster); ok {
		o := f.Origin
		for i := range rep.Drifts {
			rep.Drifts[i].SetVerdict(model.Verdict{Engine: Engine, Kind: model.Excluded, Rule: originPtr(o),
				Reason: "resource kind excluded by " + o.String() + ": Argo CD does not watch it at all"})
		}
		return nil
	}
	cfg := a.diffConfig(ctx, rep, live, app, appSrc)
	cmp := a.compare(rep, in, cfg, owner, app)
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		d.SetVerdict(a.verdict(live, d, cfg, cmp, app))
	}
	if cmp.desired == nil {
		rep.Drifts = append(rep.Drifts, inferredMarkDrifts(rep.Drifts, live, cmp.marked, cfg.settings, owner)...)
	}
	rep.Notes = append(rep.Notes, cfg.whyNot(live, cmp.res)...)
	a.objectStatus(ctx, rep, in, owner, app, cmp)
	return nil
}

// noteTrackingMismatch warns about a tracking annotation that names another
// object. A tracking id whose Application deploys to another cluster is
// said by the destination-mismatch note (fleet.go), not here.
func (a *Adapter) noteTrackingMismatch(rep *model.Report, live *unstructured.Unstructured) {
	v := live.GetAnnotations()[AnnotationTrackingID]
	if v == "" || a.trackedOwner(live) != nil {
		return
	}
	msg := fmt.Sprintf("annotation %s=%q does not name this object (copied from another object?): Argo CD neither syncs nor prunes it", AnnotationTrackingID, v)
	if parseTrackingID(v) == nil {
		msg = fmt.Sprintf("annotation %s=%q is not <app>:<group>/<kind>:<namespace>/<name>: Argo CD ignores it", AnnotationTrackingID, v)
	}
	rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "tracking-mismatch", Message: msg})
}

// resolveApp finds the owner's Application (cached, else read from the
// cluster). done: the Application does not exist, every field got its
// verdict already.
func (a *Adapter) resolveApp(ctx context.Context, rep *model.Report, owner *model.Owner) (app *Application, src cmSource, done bool) {
	e := a.appByKey(owner.Namespace + "/" + owner.Name)
	if e == nil {
		var missing bool
		e, missing = a.appFromClusterOrMissing(ctx, owner.Namespace, owner.Name)
		if e != nil {
			owner.Found, owner.AutoSync, owner.SelfHeal, owner.Mode = true, e.app.AutoSync(), e.app.SelfHeal(), appMode(e.app)
		}
		if missing {
			// A tracking annotation left behind by a deleted Application
			// (or copied): no controller syncs this object.
			owner.Missing = true
			msg := fmt.Sprintf("Application %s/%s named by the %s does not exist: nothing reconciles this object, so no drift is reverted", owner.Namespace, owner.Name, owner.Via)
			rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "owner-not-found", Message: msg})
			if !hasOwner(rep, *owner) {
				rep.Owners = append(rep.Owners, *owner)
			}
			for i := range rep.Drifts {
				rep.AddVerdict(rep.Drifts[i].Path, model.Verdict{Engine: Engine, Kind: model.NotApplied,
					Reason: fmt.Sprintf("Application %s/%s does not exist: nothing reconciles this object", owner.Namespace, owner.Name)})
			}
			return nil, cmSource{}, true
		}
	}
	if e == nil {
		rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "application-unknown",
			Message: fmt.Sprintf("Application %s/%s (from %s) could not be read: its ignoreDifferences and sync policy are unknown, argocd-cm rules only", owner.Namespace, owner.Name, owner.Via)})
		return nil, cmSource{}, false
	}
	return e.app, e.src, false
}

// diffConfig builds the Application's diff config (util/argo/diff/diff.go
// DiffConfigBuilder as controller/state.go CompareAppState calls it) and
// notes what keeps it from being Argo CD's own.
func (a *Adapter) diffConfig(ctx context.Context, rep *model.Report, live *unstructured.Unstructured, app *Application, appSrc cmSource) *compareConfig {
	a.mu.Lock()
	s := a.settings
	a.mu.Unlock()
	cfg := newCompareConfigRules(s, a.appRulesCached(app, appSrc), a.opts.GVKParser, a.opts.JQTimeout)
	cfg.applyApp(app)
	cfg.dryRun, cfg.ctx = a.opts.DryRun, ctx
	if gvk := live.GroupVersionKind(); servedByCRD(gvk) && a.opts.Schema != nil {
		cfg.crDefaults = a.defaulterFor(gvk)
	}
	if cfg.serverSide && cfg.dryRun == nil {
		rep.Notes = append(rep.Notes, cfg.withoutDryRun())
	}
	if err := cfg.fatal(); err != nil {
		rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteError, Reason: "comparison-error",
			Message: "Argo CD itself cannot compare this Application (ComparisonError, sync status Unknown): " + err.Error() + "; the verdicts below evaluate the remaining rules"})
	}
	if len(live.GetManagedFields()) == 0 && cfg.hasManagerRules() {
		rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "no-managed-fields",
			Message: "the live object carries no managedFields (saved with kubectl get without --show-managed-fields?): every managedFieldsManagers rule does nothing, for Argo CD too"})
	}
	return cfg
}

// comparison is Argo CD's comparison of one object, as compare ran it:
// every field verdict and the object status are read off it.
type comparison struct {
	// desired is Argo CD's target (Git, or last-applied in inferred
	// mode, with the tracking metadata); nil when there is none.
	desired *unstructured.Unstructured
	// fromLastApplied: desired is the live object's
	// last-applied-configuration (inferred mode), not Git.
	fromLastApplied bool
	res             *normResult
	// ok: the diff ran; modified, mode and seen (the top-most pointers
	// where predictedLive and normalizedLive differ) are its result.
	ok       bool
	modified bool
	mode     string
	seen     []string
	// statusSeen are the status diff's pointers where seen are those of
	// the diff Argo CD shows for a Secret (secretUISeen); nil otherwise.
	statusSeen []string
	// uiSyncedSeen are the pointers of the diff Argo CD shows for a
	// Secret whose status diff finds it Synced (class A22); nil otherwise.
	uiSyncedSeen []string
	// marked is the live object with the tracking marks a person deleted
	// taken back from the owner (ownerMarked): what Argo CD tracks it by.
	marked *unstructured.Unstructured
	// cfg is the diff config the comparison ran with (what a sync
	// applies with, serverSideSyncKeeps; its argocd-cm settings,
	// inferredSyncUnknown).
	cfg *compareConfig
	// origin and originLA are whose the live last-applied-configuration
	// is and that manifest (comparison.lastAppliedOrigin), read once;
	// originRead says they were.
	origin     laOrigin
	originLA   *unstructured.Unstructured
	originRead bool
	// cannotCompare is why Argo CD's own comparison fails: the API server
	// rejects its server-side diff's apply dry-run ("" when it runs).
	cannotCompare string
}

// compare runs Argo CD's comparison (controller/state.go CompareAppState →
// util/argo/diff StateDiffs → gitops-engine pkg/diff Diff) and makes the
// field list the one that comparison gives: the tracking metadata Argo CD
// adds to its target is no field; a field where Argo CD's states differ is
// listed even where the Git/live comparison found none; a field whose live
// value is Kubernetes' default of what the target leaves out, and which
// Argo CD's diff does not show, is no field either.
func (a *Adapter) compare(rep *model.Report, in model.JudgeInput, cfg *compareConfig, owner *model.Owner, app *Application) *comparison {
	live, s := in.Live, cfg.settings
	cmp := &comparison{modified: true, cfg: cfg}
	given := in.Desired
	if given == nil {
		given, cmp.fromLastApplied = a.lastAppliedTarget(rep, live, s)
	}
	// Argo CD's target is the manifest from Git plus the tracking metadata
	// its controller sets (controller/state.go SetAppInstance); the
	// manifest a user passes with -f has none.
	// A mark a person deleted is taken from the owner (ownerMarked).
	// A CRD's target has no marks (argoMarksTarget).
	cmp.marked, cmp.desired = live, given
	if argoMarksTarget(live, given) {
		cmp.marked = a.ownerMarked(live, owner, app, s)
		cmp.desired = withTracking(given, cmp.marked, s)
		rep.Drifts = dropPaths(rep.Drifts, trackingPointers(given, live, s))
	}
	if n := a.schemaFor(cfg, live, given); n != nil {
		rep.Notes = append(rep.Notes, *n)
	}
	cmp.res = cfg.normalizePair(live, cmp.desired)
	if cmp.desired == nil {
		return cmp
	}
	if !cmp.fromLastApplied {
		rep.Drifts = append(rep.Drifts, keptZeroDrifts(rep.Drifts, given, live)...)
	}
	dr, err := cfg.stateDiff(live, cmp.desired, cmp.res)
	if n := localSSDNote(dr); n != nil {
		rep.Notes = append(rep.Notes, *n)
	}
	if err != nil && cfg.serverSide && isRejected(err) {
		// gitops-engine's serverSideDiff returns the dry-run's error,
		// argo-cd controller/state.go CompareAppState records a
		// ComparisonError and the sync status Unknown, and an automated
		// sync only acts on OutOfSync (controller/appcontroller.go
		// autoSync): Argo CD shows and syncs nothing (differential seed
		// 65213, Argo CD v3.2.11: Git drops an IngressClass's required
		// parameters.name, which argocd-controller's apply owns, in a
		// ServerSideDiff app).
		cmp.cannotCompare = oneLine(err.Error())
		rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "comparison-error",
			Message: "Argo CD cannot compare this Application (ComparisonError, sync status Unknown): its server-side diff's apply dry-run as argocd-controller is rejected: " + cmp.cannotCompare + "; it shows no diff and no automated sync runs until Git or the object changes"})
		return cmp
	}
	if err != nil {
		rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteError, Reason: "diff-failed", Message: "Argo CD diff: " + err.Error()})
		return cmp
	}
	cmp.ok, cmp.modified, cmp.mode = true, dr.Modified, dr.Mode
	cmp.seen = changedPaths(dr.PredictedLive, dr.NormalizedLive, "")
	ui, uiPredicted := secretUISeen(cfg, live, cmp.desired)
	switch {
	case dr.Modified && len(ui) > 0:
		// The fields Argo CD shows are its UI diff's; an empty one is
		// "OutOfSync with an empty diff" (uiDiffNote names the status
		// diff's fields).
		cmp.statusSeen, cmp.seen = cmp.seen, ui
	case !dr.Modified && len(ui) > 0:
		// The reverse (A22): Synced, and the diff Argo CD shows lists
		// fields all the same; each is named (shownSyncedVerdict).
		cmp.uiSyncedSeen = ui
		rep.Drifts = append(rep.Drifts, unownedDiffs(rep.Drifts, argoDiffPaths(ui), live, uiPredicted)...)
	}
	if dr.Modified {
		rep.Drifts = append(rep.Drifts, unownedDiffs(rep.Drifts, argoDiffPaths(cmp.seen), live, dr.PredictedLive)...)
	}
	rep.Drifts = dropDefaulted(rep.Drifts, cmp.seen, cmp.desired, live, a.defaulterFor(live.GroupVersionKind()))
	rep.Drifts = dropBookkeeping(rep.Drifts, cmp.seen)
	rep.Drifts = append(rep.Drifts, missingMarkDrifts(rep.Drifts, cmp.seen, live, cmp.marked, dr.PredictedLive)...)
	if n := lastAppliedOnlyNote(dr, cmp.seen); n != nil {
		rep.Notes = append(rep.Notes, *n)
	}
	if n := uiDiffNote(cfg, live, cmp.desired, dr, cmp.seen); n != nil {
		rep.Notes = append(rep.Notes, *n)
	}
	if dr.Fallback != "" && dr.Mode == "two-way" && strings.Contains(dr.Fallback, "failed") {
		rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "three-way-fallback", Message: "Argo CD falls back to a 2-way diff: " + dr.Fallback})
	}
	return cmp
}

// lastAppliedTarget: without -f/-k (inferred mode, what scan uses) a
// client-side sync leaves Argo CD's last sync on the object:
// argocd-controller wrote the manifest it applied into
// last-applied-configuration. It stands in for Git, so that the verdicts
// come from the diff Argo CD runs: its 3-way diff, or the structured-merge
// diff of a ServerSideApply=true Application whose objects a client-side
// sync created (seen with Argo CD v3.2.11: the first sync of such an
// Application wrote last-applied-configuration with an Update).
func (a *Adapter) lastAppliedTarget(rep *model.Report, live *unstructured.Unstructured, s *Settings) (*unstructured.Unstructured, bool) {
	la, migrated := argoLastAppliedOf(live, s)
	if la == nil {
		return nil, false
	}
	if migrated {
		rep.Drifts = dropEqualToLastApplied(rep.Drifts, la, live)
	}
	if a.opts.Inventory {
		// Every such object of a scan would repeat it.
		a.mu.Lock()
		a.comparedLastApplied = true
		a.mu.Unlock()
	} else {
		rep.Notes = append(rep.Notes, lastAppliedNote())
	}
	return la, true
}

// objectStatus sets the object verdict: Argo CD's sync status, its own
// (read from the API) when there is one, else the status of the comparison
// the field verdicts came from.
func (a *Adapter) objectStatus(ctx context.Context, rep *model.Report, in model.JudgeInput, owner *model.Owner, app *Application, cmp *comparison) {
	live := in.Live
	gvk := live.GroupVersionKind()
	apiNotes, api := a.argoAPINotes(ctx, live, owner, cmp.modified, in.Desired != nil)
	rep.Notes = append(rep.Notes, apiNotes...)
	st := model.ObjectStatus{Engine: Engine, From: "computed"}
	switch {
	case api != nil:
		st.Drift, st.From = api.item.Modified, api.from
		if api.item.Modified && api.predicted != nil {
			// Every field of Argo CD's own diff is listed, so that
			// OutOfSync always comes with the fields that make it so.
			rep.Drifts = append(rep.Drifts, unownedDiffs(rep.Drifts, api.paths, live, api.predicted)...)
		}
		applyArgoDiff(rep, api, app)
	case cmp.cannotCompare != "":
		cannotCompareVerdicts(rep)
	case cmp.ok:
		st.Drift = cmp.modified
	default:
		for _, d := range rep.Drifts {
			if v := verdictOf(d, Engine); v != nil && (v.Kind == model.Reported || v.Kind == model.Reverted) {
				st.Drift = true
			}
		}
	}
	if !st.Drift && api == nil && in.Desired == nil && app != nil &&
		app.syncStatusOf(gvk.Group, gvk.Kind, live.GetNamespace(), live.GetName()) == "OutOfSync" {
		// Without Git, a commit the controller has not synced yet leaves
		// the live object equal to Argo CD's last sync; the controller's
		// own comparison, recorded in the Application's status.resources,
		// still says OutOfSync. Which fields differ stays unknown.
		st.Drift, st.From = true, "Application status"
	}
	st.Status = "Synced"
	if cmp.cannotCompare != "" && api == nil {
		st.Status = "Unknown" // Argo CD's own word (SyncStatusCodeUnknown)
	}
	if !st.Drift && api == nil && !cmp.ok && hasUnknown(rep) {
		// Nothing says OutOfSync, but a field whose verdict Git decides
		// may (class I5: a label another manager changed or added reads
		// the same without Git). A computed "Synced" would claim what no
		// field verdict does; Argo CD's own word for a comparison it
		// cannot make is Unknown (SyncStatusCodeUnknown).
		st.Status = "Unknown"
	}
	if st.Drift {
		st.Status = "OutOfSync"
		syncReapplies(rep, cmp.desired, app)
		inferredSyncUnknown(rep, live, cmp, app)
		sync := newClientSideSync(cmp.res, live, cmp.desired, app)
		syncPrunes(rep, live, cmp.desired, sync, app, cmp.fromLastApplied)
		after := serverSideSync(live, cmp, app, sync)
		serverSideSyncKeeps(rep, live, cmp, app, after)
		// Last: a sync that fails takes back what the steps above say
		// it does (seed 61921).
		a.syncFails(rep, live, cmp.desired, sync, after, app)
		syncReleases(rep, live, app)
	}
	if st.From == "Application status" {
		// After inferredSyncUnknown, whose unknown verdicts the note names.
		rep.Notes = append(rep.Notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "outofsync-in-status",
			Message: fmt.Sprintf("Application %s/%s records this object OutOfSync, %s; give the desired state (-f, -k, --source) or --argocd-server to see which fields", owner.Namespace, owner.Name, outOfSyncInStatusCause(rep))})
	}
	rep.SetStatus(st)
}

// cannotCompareVerdicts: where Argo CD cannot compare the Application
// (comparison.cannotCompare), a field it would report or revert is one it
// leaves alone: no diff, no sync.
func cannotCompareVerdicts(rep *model.Report) {
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil || v.Kind != model.Reported && v.Kind != model.Reverted {
			continue
		}
		nv := *v
		nv.Kind = model.LeftAlone
		nv.Reason = cannotComparePhrase
		d.SetVerdict(nv)
	}
}

// cannotComparePhrase is the reason of cannotCompareVerdicts.
const cannotComparePhrase = "left alone while Argo CD cannot compare this Application (ComparisonError, the comparison-error note says why): it shows no diff and syncs nothing"

// hasUnknown: some field's Argo CD verdict is unknown.
func hasUnknown(rep *model.Report) bool {
	for _, d := range rep.Drifts {
		if v := verdictOf(d, Engine); v != nil && v.Kind == model.Unknown {
			return true
		}
	}
	return false
}

// outOfSyncInStatusCause says why the Application's status can record
// OutOfSync where no field verdict does: a field whose verdict Git decides
// (unknown: seed 52019, a label another manager took, which Argo CD's diff
// showed) may be the cause; without one, the object equals Argo CD's last
// sync and Git changed since.
func outOfSyncInStatusCause(rep *model.Report) string {
	if hasUnknown(rep) {
		return "and a field whose verdict is unknown (Git decides it) may be why, or Git changed since (a commit not synced yet)"
	}
	return "but it equals Argo CD's last sync: Git changed since (a commit not synced yet)"
}

func verdictOf(d model.FieldDrift, e model.Engine) *model.Verdict {
	for i := range d.Verdicts {
		if d.Verdicts[i].Engine == e {
			return &d.Verdicts[i]
		}
	}
	return nil
}

// argoAnswer is Argo CD's own diff of one object.
type argoAnswer struct {
	item *ResourceDiff
	from string
	// paths are where predictedLiveState and normalizedLiveState differ:
	// Argo's diff, field by field.
	paths []string
	// predicted is predictedLiveState (nil for a created or deleted one).
	predicted any
}

// applyArgoDiff makes Argo CD's own diff the truth per field: a field its
// diff shows is OutOfSync whatever our computation said, a field it does
// not show is not (keeping the rule that hid it when ours found one).
func applyArgoDiff(rep *model.Report, api *argoAnswer, app *Application) {
	outOfSync := func() model.Verdict {
		v := model.Verdict{Engine: Engine, Kind: model.Reported, Reason: "OutOfSync in Argo CD's own diff (" + api.from + ")"}
		if app != nil && app.SelfHeal() {
			v.Kind = model.Reverted
			v.Reason += "; automated sync with selfHeal reverts it on the next reconcile"
		}
		return v
	}
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		shown := anyCovers(api.paths, d.Path)
		cur := verdictOf(*d, Engine)
		counted := cur != nil && (cur.Kind == model.Reported || cur.Kind == model.Reverted)
		switch {
		case shown && !counted:
			v := outOfSync()
			if cur != nil {
				v.Reason += "; the local computation said " + string(cur.Kind) + ": " + cur.Reason
			}
			d.SetVerdict(v)
		case !shown && counted:
			d.SetVerdict(model.Verdict{Engine: Engine, Kind: model.LeftAlone,
				Reason: "not in Argo CD's own diff (" + api.from + "); the local computation said " + cur.Reason})
		case !shown && cur == nil:
			d.SetVerdict(model.Verdict{Engine: Engine, Kind: model.LeftAlone,
				Reason: "not in Argo CD's own diff (" + api.from + ")"})
		}
	}
}

func hasOwner(rep *model.Report, o model.Owner) bool {
	for _, x := range rep.Owners {
		if x.Engine == o.Engine && x.Kind == o.Kind && x.Namespace == o.Namespace && x.Name == o.Name {
			return true
		}
	}
	return false
}

func originPtr(o model.Origin) *model.Origin { return &o }

// verdict decides one drifted field from the comparison: a rule that hid
// it, then whether Argo CD's diff shows it, then what a sync does.
func (a *Adapter) verdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig, cmp *comparison, app *Application) model.Verdict {
	if v, ok := ignoredButShownVerdict(d, cfg, cmp, app); ok {
		return v
	}
	if v, ok := ruleVerdict(d, cfg, cmp.res); ok {
		if u, ok := rulesEmptiedMapVerdict(live, d, cfg, cmp); ok {
			return u
		}
		return v
	}
	if v, ok := rulesHideGitMapVerdict(d, cfg, cmp); ok {
		return v
	}
	if v, ok := partlyIgnoredVerdict(d, cfg, cmp); ok {
		return v
	}
	if !cmp.ok {
		if v, ok := foreignLastAppliedVerdict(live, d, cfg, cmp, laForeign); ok {
			return v
		}
		if u, ok := managersEmptiedMapVerdict(live, d, cfg, cmp); ok {
			return u
		}
		if v, ok := managersVerdict(live, d, cfg); ok {
			return v
		}
		if v, ok := foreignLastAppliedVerdict(live, d, cfg, cmp, laNone); ok {
			return v
		}
	}
	if v, ok := aggregatedRoleVerdict(live, d, cfg); ok {
		return v
	}
	shown := cmp.modified && anyCovers(cmp.seen, d.Path)
	if v, ok := shownSyncedVerdict(d, cmp); ok && cmp.ok {
		return v
	}
	if cmp.ok && !shown {
		if v, ok := knownTypesVerdict(live, d, cfg); ok {
			return v
		}
		return statusOnlyVerdict(d, cmp, notInDiffVerdict(d, cmp))
	}
	if v, ok := liveOnlyVerdict(live, d, cfg, cmp, app); ok {
		return v
	}
	if !cmp.ok && cfg.structuredMerge && d.Change == model.Added {
		// Inferred mode, server-side apply, with a last-applied-
		// configuration that names Git's fields (without one,
		// foreignLastAppliedVerdict said unknown: class I5): the field is
		// not argocd-controller's (diff.Infer lists only fields other
		// managers own) and was added beside Git's. Argo CD's structured-
		// merge diff applies its manifest as argocd-controller, which
		// leaves fields of other managers alone (gitops-engine
		// pkg/diff/diff.go StructuredMergeDiff).
		return model.Verdict{Engine: Engine, Kind: model.LeftAlone,
			Reason: "not applied by argocd-controller: a server-side apply leaves other managers' fields alone"}
	}
	return outOfSyncVerdict(app, cmp.fromLastApplied)
}

// ruleVerdict: a rule removed the field (or an ancestor) before the diff.
func ruleVerdict(d *model.FieldDrift, cfg *compareConfig, res *normResult) (model.Verdict, bool) {
	for _, r := range cfg.rules {
		e := res.effects[r]
		if e == nil {
			continue
		}
		if rm, ok := e.covering(d.Path); ok {
			return model.Verdict{Engine: Engine, Kind: model.Ignored, Rule: originPtr(r.Origin),
				Reason: fmt.Sprintf("ignored by %s (%s removes %s)", r.Origin.String(), rm.By, rm.Path)}, true
		}
	}
	return model.Verdict{}, false
}

// managersVerdict: with the desired state inferred from managedFields,
// Argo runs the managers step against its rendered desired state, where a
// field owned by a trusted manager that differs is removed. The drift's
// owners say the same thing.
func managersVerdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig) (model.Verdict, bool) {
	if cfg.parser == nil {
		return model.Verdict{}, false
	}
	gvk := live.GroupVersionKind()
	for _, r := range cfg.rules {
		if len(r.Managers) == 0 || !r.managersApply(gvk.Group, gvk.Kind, live.GetName(), live.GetNamespace()) {
			continue
		}
		for _, m := range d.Managers {
			if contains(r.Managers, m.Manager) {
				return model.Verdict{Engine: Engine, Kind: model.Ignored, Rule: originPtr(r.Origin),
					Reason: fmt.Sprintf("ignored by %s (manager %s owns the field)", r.Origin.String(), m.Manager)}, true
			}
		}
	}
	return model.Verdict{}, false
}

// aggregatedRoleVerdict: gitops-engine pkg/diff normalizeRole drops the
// rules of an aggregated role (WithIgnoreAggregatedRoles): the aggregation
// controller fills them in.
func aggregatedRoleVerdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig) (model.Verdict, bool) {
	gvk := live.GroupVersionKind()
	if !cfg.settings.Compare.IgnoreAggregatedRoles || gvk.Group != "rbac.authorization.k8s.io" ||
		(gvk.Kind != "ClusterRole" && gvk.Kind != "Role") || live.Object["aggregationRule"] == nil || !covers("/rules", d.Path) {
		return model.Verdict{}, false
	}
	o := cfg.settings.Source.origin("data["+keyCompareOptions+"].ignoreAggregatedRoles=true", "/data/"+keyCompareOptions)
	if o.Object == "" {
		o.Object = "ConfigMap " + DefaultNamespace + "/" + cmName
	}
	return model.Verdict{Engine: Engine, Kind: model.Ignored, Rule: originPtr(o),
		Reason: "rules of an aggregated role are ignored (" + o.String() + ")"}, true
}

// knownTypesVerdict: knownTypeFields re-format a field (100m and 0.1
// compare equal): name the rule that hid the difference.
func knownTypesVerdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig) (model.Verdict, bool) {
	if d.Change != model.Changed {
		return model.Verdict{}, false
	}
	gvk := live.GroupVersionKind()
	for _, f := range cfg.knownFieldsFor(gvk.Group, gvk.Kind) {
		if knownTypeConstructor(f.Type) == nil {
			continue
		}
		if p := "/" + strings.ReplaceAll(f.Field, ".", "/"); covers(p, d.Path) {
			o := f.Origin
			if o.Object == "" {
				o = model.Origin{Object: "Argo CD built-in", Field: "argoproj.io/Rollout spec.template.spec is a PodSpec (util/argo/normalizers/knowntypes_normalizer.go)"}
			}
			return model.Verdict{Engine: Engine, Kind: model.Ignored, Rule: originPtr(o),
				Reason: fmt.Sprintf("equal once %s is read as %s (knownTypeFields, %s)", f.Field, f.Type, o.String())}, true
		}
	}
	return model.Verdict{}, false
}

// statusOnlyVerdict: a Secret's field the status diff shows and the diff
// Argo CD shows for the Secret does not (secretUISeen): the sync of the
// OutOfSync object applies Git's manifest and writes it all the same
// (differential seed 53020: ServerSideApply=true, Git adds an
// annotation; Argo CD's diff shows /data and /metadata/labels, self-heal
// added the annotation).
func statusOnlyVerdict(d *model.FieldDrift, cmp *comparison, v model.Verdict) model.Verdict {
	if !anyCovers(cmp.statusSeen, d.Path) {
		return v
	}
	phrase := map[model.ChangeKind]string{model.Added: SyncDeletesPhrase, model.Removed: SyncAddsPhrase}[d.Change]
	if phrase == "" {
		return v
	}
	v.Reason = secretStatusOnly + "the object is OutOfSync and " + phrase + ": the sync applies Git's manifest"
	return v
}

// secretStatusOnly begins the reason of statusOnlyVerdict; syncPrunes
// reads it where the computed client-side sync leaves the field.
const secretStatusOnly = "not in the diff Argo CD shows for this Secret (controller/appcontroller.go hideSecretData recomputes it client-side), but in its status diff; "

// notInDiffVerdict: Argo CD's diff does not show the field; the reason
// says which of its diffs leaves it alone.
func notInDiffVerdict(d *model.FieldDrift, cmp *comparison) model.Verdict {
	v := model.Verdict{Engine: Engine, Kind: model.LeftAlone}
	added, mode, la := d.Change == model.Added, cmp.mode, cmp.fromLastApplied
	switch {
	case added && mode == "structured-merge" && la:
		v.Reason = "not in last-applied-configuration (Argo CD's last sync) and not applied by argocd-controller: a server-side apply leaves other managers' fields alone"
	case added && mode == "structured-merge":
		v.Reason = "not in the desired state and not applied by argocd-controller: a server-side apply leaves other managers' fields alone"
	case added && strings.HasPrefix(mode, "server-side"):
		v.Reason = serverSideKeeps
	case added && mode == "three-way" && la:
		v.Reason = "extraneous: not in last-applied-configuration, Argo CD's 3-way diff does not report it"
	case added && mode == "three-way":
		v.Reason = "extraneous: in neither the desired state nor last-applied-configuration, so Argo CD's 3-way diff does not report it"
	case added:
		v.Reason = "extraneous: not in the desired state; Argo CD's 2-way diff never removes fields it does not manage"
	case !cmp.modified:
		v.Reason = "Argo CD's diff finds the resource Synced after normalization"
	default:
		v.Reason = "Argo CD's diff does not see this field after normalization"
	}
	return v
}

// outOfSyncVerdict: the field is in Argo CD's diff; what happens to it
// depends on the sync policy.
func outOfSyncVerdict(app *Application, fromLastApplied bool) model.Verdict {
	v := model.Verdict{Engine: Engine, Kind: model.Reported}
	oos := "OutOfSync"
	if fromLastApplied {
		oos = "OutOfSync against Argo CD's last sync"
	}
	switch {
	case app != nil && app.SelfHeal():
		v.Kind = model.Reverted
		v.Reason = oos + "; automated sync with selfHeal reverts it on the next reconcile"
	case app != nil && app.AutoSync():
		v.Reason = oos + "; automated sync without selfHeal does not revert live changes (only new Git revisions are synced)"
	case app == nil:
		v.Reason = oos + " (the Application's sync policy is unknown)"
	default:
		v.Reason = oos + " until someone syncs (manual sync policy)"
	}
	if app != nil && app.HasSyncOption("RespectIgnoreDifferences=true") {
		v.Reason += "; RespectIgnoreDifferences keeps ignored fields out of syncs"
	}
	return v
}

func anyCovers(paths []string, p string) bool {
	for _, q := range paths {
		if covers(q, p) || covers(p, q) {
			return true
		}
	}
	return false
}

// changedPaths lists the top-most pointers where a and b differ.
func changedPaths(a, b any, prefix string) []string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []string{prefixOrRoot(prefix)}
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := slices.Sorted(maps.Keys(keys))
		var out []string
		for _, k := range sorted {
			out = append(out, changedPaths(x[k], y[k], prefix+"/"+jsonpointer.Escape(k))...)
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return []string{prefixOrRoot(prefix)}
		}
		var out []string
		for i := range x {
			out = append(out, changedPaths(x[i], y[i], fmt.Sprintf("%s/%d", prefix, i))...)
		}
		return out
	}
	if !jsonEqual(a, b) {
		return []string{prefixOrRoot(prefix)}
	}
	return nil
}

func prefixOrRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func (c *compareConfig) hasManagerRules() bool {
	for _, r := range c.rules {
		if len(r.Managers) > 0 {
			return true
		}
	}
	return false
}

// excluded mirrors util/settings ResourcesFilter.IsExcludedResource:
// built-in exclusions, then resource.exclusions, then inclusions.
func (s *Settings) excluded(group, kind, cluster string) (filterRule, bool) {
	core := []filterRule{
		{FilteredResource: FilteredResource{APIGroups: []string{"events.k8s.io", "metrics.k8s.io"}}},
		{FilteredResource: FilteredResource{APIGroups: []string{""}, Kinds: []string{"Event"}}},
		{FilteredResource: FilteredResource{APIGroups: []string{"coordination.k8s.io"}, Kinds: []string{"Lease"}}},
	}
	for i := range core {
		core[i].Origin = model.Origin{Object: "Argo CD built-in exclusions", Field: "util/settings/resources_filter.go coreExcludedResources"}
	}
	for _, f := range append(core, s.Exclusions...) {
		if f.match(group, kind, cluster) {
			return f, true
		}
	}
	for _, f := range s.Inclusions {
		if f.match(group, kind, cluster) {
			return filterRule{}, false
		}
	}
	for _, f := range s.Inclusions {
		if f.matchCluster(cluster) {
			o := f.Origin
			o.Field += " (not included)"
			return filterRule{Origin: o}, true
		}
	}
	return filterRule{}, false
}

func (f filterRule) match(group, kind, cluster string) bool {
	okG := len(f.APIGroups) == 0
	for _, g := range f.APIGroups {
		if globMatch(g, group) {
			okG = true
			break
		}
	}
	okK := len(f.Kinds) == 0
	for _, k := range f.Kinds {
		if k == "*" || k == kind {
			okK = true
			break
		}
	}
	return okG && okK && f.matchCluster(cluster)
}

func (f filterRule) matchCluster(cluster string) bool {
	for _, c := range f.Clusters {
		if globMatch(c, cluster) {
			return true
		}
	}
	return len(f.Clusters) == 0
}

// whyNot explains every rule that targets this object (or nearly does) but
// removes nothing: the question behind "ignoreDifferences not working".
func (c *compareConfig) whyNot(live *unstructured.Unstructured, res *normResult) []model.Note {
	gvk := live.GroupVersionKind()
	group, kind, name, ns := gvk.Group, gvk.Kind, live.GetName(), live.GetNamespace()
	liveManagers := map[string]bool{}
	var managerNames []string
	for _, mf := range live.GetManagedFields() {
		if !liveManagers[mf.Manager] {
			managerNames = append(managerNames, mf.Manager)
		}
		liveManagers[mf.Manager] = true
	}
	sort.Strings(managerNames)
	var notes []model.Note
	add := func(r *ignoreRule, level model.NoteLevel, reason, msg string) {
		notes = append(notes, model.Note{Engine: Engine, Level: level, Rule: originPtr(r.Origin), Reason: reason, Message: msg})
	}
	for _, r := range c.rules {
		if r.Type == RuleCompareOptions {
			continue
		}
		for _, e := range r.Errors {
			add(r, model.NoteError, "invalid-rule", e)
		}
		e := res.effects[r]
		if e != nil {
			notes = append(notes, e.problems...)
		}
		if e != nil && e.matched {
			if e.removedAny() {
				continue
			}
			c.explainNoEffect(r, e, res, liveManagers, managerNames, add)
			continue
		}
		// The selector did not match: say why when the rule is close.
		gOK, kOK := globMatch(r.Group, group), globMatch(r.Kind, kind)
		switch {
		case r.FromCM && len(r.Managers) > 0 && gOK && kOK && !strings.Contains(r.OverrideKey, "/"):
			add(r, model.NoteWarning, "kind-only-key-managers", fmt.Sprintf(
				"argocd-cm key for %q has no group: Argo CD looks managedFieldsManagers up under %q, so these managers (%s) never apply; write the key as _%s (empty group) or use an Application rule",
				r.OverrideKey, group+"/"+kind, strings.Join(r.Managers, ", "), kind))
		case gOK && kOK && r.Name != "" && r.Name != name:
			add(r, model.NoteInfo, "name-mismatch", fmt.Sprintf("rule targets name %q, this object is %q", r.Name, name))
		case gOK && kOK && r.Namespace != "" && r.Namespace != ns:
			add(r, model.NoteInfo, "namespace-mismatch", fmt.Sprintf("rule targets namespace %q, this object is in %q", r.Namespace, ns))
		case kOK && !gOK:
			msg := fmt.Sprintf("rule group %q does not match this object's group %q", r.Group, group)
			if nearMiss(r.Group, group) {
				msg += fmt.Sprintf(" (did you mean %q?)", group)
			}
			if group == "" {
				msg += " (the core group is written as an empty string)"
			}
			add(r, model.NoteWarning, "group-mismatch", msg)
		case gOK && !kOK && (nearMiss(r.Kind, kind)):
			add(r, model.NoteWarning, "kind-mismatch", fmt.Sprintf("rule kind %q does not match %q (did you mean %q? kinds are case-sensitive)", r.Kind, kind, kind))
		case !gOK && !kOK && nearMiss(r.Kind, kind) && nearMiss(r.Group, group):
			add(r, model.NoteWarning, "group-mismatch", fmt.Sprintf("rule %s/%s does not match %s/%s (typo?)", r.Group, r.Kind, group, kind))
		}
	}
	return notes
}

func (c *compareConfig) explainNoEffect(r *ignoreRule, e *ruleEffect, res *normResult, liveManagers map[string]bool, managerNames []string, add func(*ignoreRule, model.NoteLevel, string, string)) {
	var parts []string
	for _, p := range r.JSONPointers {
		if validatePointer(p) != nil {
			continue // already an invalid-rule note
		}
		if !pointerPresent(res.Live, p) && !pointerPresent(res.Target, p) {
			add(r, model.NoteInfo, "pointer-absent", fmt.Sprintf("jsonPointer %s is present in neither live nor desired (Argo CD skips it silently)", p))
		} else {
			parts = append(parts, p)
		}
	}
	for i, q := range r.JQPathExpressions {
		if r.jq != nil && r.jq[i] != nil && !hasProblem(e, q) {
			add(r, model.NoteInfo, "jq-no-match", fmt.Sprintf("jq path expression %q selects nothing in live or desired", q))
		}
	}
	for _, m := range r.Managers {
		if !liveManagers[m] {
			msg := fmt.Sprintf("manager %q never appears in the live object's managedFields", m)
			if len(managerNames) > 0 {
				msg += " (managers: " + strings.Join(managerNames, ", ") + ")"
			}
			add(r, model.NoteWarning, "manager-not-seen", msg)
		} else if res.Target != nil {
			add(r, model.NoteInfo, "manager-owns-no-drift", fmt.Sprintf("manager %q owns no field that differs from the desired state", m))
		} else {
			add(r, model.NoteInfo, "managers-need-desired", fmt.Sprintf("manager %q: Argo CD applies managedFieldsManagers only when comparing with a desired state (-f/-k)", m))
		}
	}
	_ = parts
}

func hasProblem(e *ruleEffect, expr string) bool {
	for _, p := range e.problems {
		if strings.Contains(p.Message, fmt.Sprintf("%q", expr)) {
			return true
		}
	}
	return false
}

// pointerPresent reports whether an RFC 6901 pointer resolves in obj.
func pointerPresent(obj *unstructured.Unstructured, p string) bool {
	if obj == nil {
		return false
	}
	_, ok := jsonpointer.Get(obj.Object, p)
	return ok
}

// argoAPINotes puts Argo CD's own computed diff beside our verdicts and
// returns it (nil when there is none: no API, unreachable, not listed).
// An API that cannot be used is one warning; the verdicts then stay local.
func (a *Adapter) argoAPINotes(ctx context.Context, live *unstructured.Unstructured, owner *model.Owner, ourModified, haveDesired bool) ([]model.Note, *argoAnswer) {
	gvk := live.GroupVersionKind()
	a.mu.Lock()
	mr := a.managed
	a.mu.Unlock()
	item := mr.Find(gvk.Group, gvk.Kind, live.GetNamespace(), live.GetName())
	if item == nil && a.opts.ArgoDiff.Server != "" {
		appNS := owner.Namespace
		fetched, err := a.opts.ArgoDiff.fetch(ctx, appNS, owner.Name, &ResourceDiff{Group: gvk.Group, Kind: gvk.Kind, Namespace: live.GetNamespace(), Name: live.GetName()})
		if err != nil {
			return []model.Note{{Engine: Engine, Level: model.NoteWarning, Reason: "argocd-api",
				Message: oneLine(err.Error()) + "; verdicts computed locally"}}, nil
		}
		mr = fetched
		item = mr.Find(gvk.Group, gvk.Kind, live.GetNamespace(), live.GetName())
	}
	if mr == nil {
		return nil, nil
	}
	// An Application Argo CD cannot compare (its repository cannot be
	// fetched) still lists its resources with the last states it had: that
	// is no verdict (seen: sync Unknown, ComparisonError, items "Synced").
	if a.opts.ArgoDiff.Server != "" {
		if errs := a.opts.ArgoDiff.comparisonErrors(ctx, owner.Namespace, owner.Name); len(errs) > 0 {
			return []model.Note{{Engine: Engine, Level: model.NoteWarning, Reason: "argocd-cannot-compare",
				Message: fmt.Sprintf("Argo CD cannot compare Application %s/%s (%s): it has no verdict on this object; verdicts computed locally", owner.Namespace, owner.Name, oneLine(strings.Join(errs, "; ")))}}, nil
		}
	}
	if item == nil {
		return []model.Note{{Engine: Engine, Level: model.NoteInfo, Reason: "argocd-api",
			Message: fmt.Sprintf("Argo CD's managed resources (%s) do not list this object", mr.From)}}, nil
	}
	_, norm, pred, err := item.States()
	if err != nil {
		return []model.Note{{Engine: Engine, Level: model.NoteWarning, Reason: "argocd-api", Message: "Argo CD's diff could not be read: " + err.Error()}}, nil
	}
	ans := &argoAnswer{item: item, from: mr.From}
	status := "Synced"
	if item.Modified {
		status = "OutOfSync"
	}
	msg := fmt.Sprintf("Argo CD's own diff (%s): %s", mr.From, status)
	if norm != nil && pred != nil {
		ans.paths = argoDiffPaths(changedPaths(pred.Object, norm.Object, ""))
		ans.predicted = pred.Object
		if len(ans.paths) > 0 {
			msg += "; fields differing between predictedLiveState and normalizedLiveState: " + strings.Join(ans.paths, ", ")
		}
	} else if item.Modified {
		// Created or deleted: the whole object.
		ans.paths = []string{"/"}
	}
	notes := []model.Note{{Engine: Engine, Level: model.NoteInfo, Reason: "argocd-api", Message: msg}}
	if haveDesired && item.Modified != ourModified {
		notes = append(notes, model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "argocd-api-disagrees",
			Message: fmt.Sprintf("Argo CD's own diff says modified=%v, ours says %v: Argo may compare another revision, or use server-side diff; Argo CD's answer is used", item.Modified, ourModified)})
	}
	return notes, ans
}

// argoDiffPaths drops bookkeeping that differs between Argo CD's states
// without being a difference anyone sees in its diff view.
func argoDiffPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		switch {
		case p == "/metadata/managedFields" || strings.HasPrefix(p, "/metadata/managedFields/"),
			p == "/metadata/resourceVersion", p == "/metadata/generation",
			p == "/metadata/annotations/"+jsonpointer.Escape(LastAppliedAnnotation):
			continue
		}
		out = append(out, p)
	}
	return out
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// withTracking returns desired with the tracking metadata Argo CD sets on
// its target (util/argo/resource_tracking.go SetAppInstance): the live
// object's tracking annotation (which names this object: the owner check
// already passed) and, with label tracking, its instance label.
func withTracking(desired, live *unstructured.Unstructured, s *Settings) *unstructured.Unstructured {
	if desired == nil || live == nil {
		return desired
	}
	out := desired.DeepCopy()
	// Argo CD puts namespaced objects without a namespace into the
	// Application's destination namespace, where the live one is.
	if out.GetNamespace() == "" && live.GetNamespace() != "" {
		out.SetNamespace(live.GetNamespace())
	}
	if s.TrackingMethod != TrackingLabel {
		if v := live.GetAnnotations()[AnnotationTrackingID]; v != "" && out.GetAnnotations()[AnnotationTrackingID] == "" {
			ann := out.GetAnnotations()
			if ann == nil {
				ann = map[string]string{}
			}
			ann[AnnotationTrackingID] = v
			out.SetAnnotations(ann)
		}
	}
	if s.TrackingMethod == TrackingLabel || s.TrackingMethod == TrackingAnnotationAndLabel {
		key := s.InstanceLabelKey
		if key == "" {
			key = DefaultInstanceLabelKey
		}
		if v := live.GetLabels()[key]; v != "" && out.GetLabels()[key] == "" {
			labels := out.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[key] = v
			out.SetLabels(labels)
		}
	}
	return out
}

// trackingPointers are the live fields withTracking adds to desired.
func trackingPointers(desired, live *unstructured.Unstructured, s *Settings) []string {
	if desired == nil || live == nil {
		return nil
	}
	with := withTracking(desired, live, s)
	var out []string
	for k := range with.GetAnnotations() {
		if _, ok := desired.GetAnnotations()[k]; !ok {
			out = append(out, "/metadata/annotations/"+jsonpointer.Escape(k))
		}
	}
	for k := range with.GetLabels() {
		if _, ok := desired.GetLabels()[k]; !ok {
			out = append(out, "/metadata/labels/"+jsonpointer.Escape(k))
		}
	}
	return out
}

// SyncReappliesPhrase ends the reason of an ignored field that a sync of
// its OutOfSync object writes back anyway.
const SyncReappliesPhrase = "a sync re-applies Git's value here too"

// syncReapplies: ignoreDifferences only hides a field from the diff. When
// the object is OutOfSync for another field, a sync applies the whole
// manifest, the ignored field with it, unless RespectIgnoreDifferences=true
// (controller/sync.go; docs/user-guide/sync-options.md). Seen with a real
// Argo CD: replicas ignored, image changed, self-heal put both back. With
// RespectIgnoreDifferences=true the sync copies ignored fields from live
// into its target (argo-cd controller/sync.go normalizeTargetResources);
// the reason says so, since it is the question a user asks.
func syncReapplies(rep *model.Report, desired *unstructured.Unstructured, app *Application) {
	if desired == nil {
		return
	}
	respect := app != nil && app.HasSyncOption("RespectIgnoreDifferences=true")
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil || v.Kind != model.Ignored || d.Change == model.Added || v.Rule == nil ||
			strings.HasPrefix(v.Rule.Object, "Argo CD resource tracking") || strings.HasPrefix(d.Path, "/status") {
			continue
		}
		if !pointerPresent(desired, d.Path) {
			continue
		}
		nv := *v
		if respect {
			nv.Reason += "; the object is OutOfSync, but RespectIgnoreDifferences=true keeps this field out of the sync"
		} else {
			nv.Reason += "; the object is OutOfSync and, without RespectIgnoreDifferences=true, " + SyncReappliesPhrase
		}
		d.SetVerdict(nv)
	}
}

// argoLastApplied is the manifest Argo CD applied at its last client-side
// sync: the live object's last-applied-configuration when an Argo CD
// manager owns that annotation (kubectl apply by hand writes it too, and
// that is no Argo CD sync). Argo CD's diff reads the same annotation as
// the "orig" of its 3-way diff (gitops-engine pkg/diff/diff.go Diff,
// GetLastAppliedConfigAnnotation, ThreeWayDiff): fields in neither it nor
// the target are never reported. nil when absent, unreadable or not Argo
// CD's.
//
// An annotation with Argo CD's tracking marks (controller/state.go
// SetAppInstance puts them on every target it applies) that only Apply
// entries own is Argo CD's last sync too, unedited: a kubectl apply
// --server-side by another manager hands the fields of every Update
// manager owning last-applied-configuration, argocd-controller's with
// them, to its own Apply entry (k8s.io/kubectl pkg/cmd/apply/apply.go
// migrateToSSAIfNecessary) and leaves the annotation's value as it was,
// while a client-side writer that changes it (kubectl edit, kubectl apply)
// is an Update (class I7, session 15, seed 55285: two server-side applies
// of a label took every field of an IngressClass from argocd-controller;
// Argo CD Synced, inferred mode reported Git's fields as edited).
func argoLastApplied(live *unstructured.Unstructured, s *Settings) *unstructured.Unstructured {
	la, _ := argoLastAppliedOf(live, s)
	return la
}

// argoLastAppliedOf is argoLastApplied, and whether the annotation is Argo
// CD's by its tracking marks only (migrated: no Argo CD manager owns it).
func argoLastAppliedOf(live *unstructured.Unstructured, s *Settings) (la *unstructured.Unstructured, migrated bool) {
	if _, ok := live.GetAnnotations()[LastAppliedAnnotation]; !ok {
		return nil, false
	}
	ix, err := managedfields.Parse(live)
	if err != nil || ix.Empty() {
		return nil, false
	}
	byArgo, applyOnly := lastAppliedOwners(live, ix)
	la, err = lastApplied(live)
	if err != nil || la == nil || la.Object == nil {
		return nil, false
	}
	if byArgo {
		return la, false
	}
	if applyOnly && (la.GetAnnotations()[AnnotationTrackingID] != "" || la.GetLabels()[labelKeyOf(s)] != "") {
		return la, true
	}
	return nil, false
}

// lastAppliedOwners says whether an Argo CD manager owns live's
// last-applied-configuration, and whether only Apply entries do (at
// least one).
func lastAppliedOwners(live *unstructured.Unstructured, ix *managedfields.Index) (byArgo, applyOnly bool) {
	owners := ix.Owners(live, "/metadata/annotations/"+jsonpointer.Escape(LastAppliedAnnotation))
	applyOnly = len(owners) > 0
	for _, o := range owners {
		byArgo = byArgo || IsManager(strings.ToLower(o.Manager))
		applyOnly = applyOnly && o.Operation == "Apply"
	}
	return byArgo, applyOnly
}

// dropEqualToLastApplied drops the fields whose live value is the one
// Argo CD's last sync (la) applied: no drift from it. managedFields
// inference (internal/diff Infer) already does so when an Argo CD manager
// owns the annotation; when a server-side apply's migration handed it,
// with Argo CD's fields, to another manager (argoLastApplied, class I7)
// those fields read as that manager's though nobody changed them.
func dropEqualToLastApplied(drifts []model.FieldDrift, la, live *unstructured.Unstructured) []model.FieldDrift {
	kept := drifts[:0]
	for _, d := range drifts {
		want, inLA := jsonpointer.Get(la.Object, d.Path)
		lv, inLive := jsonpointer.Get(live.Object, d.Path)
		if inLA && inLive && jsonEqual(want, lv) {
			continue
		}
		kept = append(kept, d)
	}
	return kept
}

// unownedDiffs are the fields Argo CD's diff against its last sync shows
// that inference from managedFields cannot list: a field deleted live (no
// manager owns what is gone), a status the engine compares (diff.Infer
// never counts status). Without them the object is OutOfSync with no field
// to say why (seen with a real Argo CD: kubectl set env LEVEL- and a
// ConfigMap key removed by a JSON patch).
func unownedDiffs(drifts []model.FieldDrift, paths []string, live *unstructured.Unstructured, predicted any) []model.FieldDrift {
	var listed []string
	for _, d := range drifts {
		listed = append(listed, d.Path)
	}
	ix, _ := managedfields.Parse(live)
	var out []model.FieldDrift
	for _, p := range paths {
		if p == "/" || anyCovers(listed, p) {
			continue
		}
		lv, inLive := jsonpointer.Get(live.Object, p)
		want, inTarget := jsonpointer.Get(predicted, p)
		fd := model.FieldDrift{Path: p, FieldPath: managedfields.FieldPath(live, p), Change: model.Changed, Live: lv, Desired: want, Cause: model.CauseUnknown}
		switch {
		case !inLive:
			fd.Change, fd.Live = model.Removed, nil
		case !inTarget:
			fd.Change, fd.Desired = model.Added, nil
		}
		if inLive && ix != nil && !ix.Empty() {
			fd.Managers = ix.Owners(live, p)
			for _, m := range fd.Managers {
				if !managedfields.IsGitOpsManager(m.Manager) {
					fd.Cause = managedfields.Classify(m.Manager, m.Operation, m.Subresource)
					break
				}
			}
		}
		out = append(out, fd)
	}
	// Argo CD's states hold a Secret's values: never in the report.
	redact.Drifts(model.ResourceID{Group: live.GroupVersionKind().Group, Kind: live.GetKind()}, out)
	return out
}

// dropPaths removes the drifts at paths (the tracking metadata Argo CD adds
// to its own target: no difference in its comparison).
func dropPaths(drifts []model.FieldDrift, paths []string) []model.FieldDrift {
	if len(paths) == 0 {
		return drifts
	}
	return slices.DeleteFunc(drifts, func(d model.FieldDrift) bool { return contains(paths, d.Path) })
}

// dropBookkeeping removes the annotations the API server recomputes with
// the template (diff.IsServerBookkeeping) where Argo CD's diff (seen) does
// not show them: a writer who changed a DaemonSet's template also owns its
// new template generation, which Argo CD neither shows nor changes
// (make differential ENGINE=argocd seeds 52136, 52182).
func dropBookkeeping(drifts []model.FieldDrift, seen []string) []model.FieldDrift {
	return slices.DeleteFunc(drifts, func(d model.FieldDrift) bool {
		return diff.IsServerBookkeeping(d.Path) && !anyCovers(seen, d.Path)
	})
}

// dropDefaulted removes the fields live has and desired leaves out (added,
// or changed by another manager in inferred mode) where
// the live value is the one Kubernetes' defaults give desired (defaults:
// the scheme's, or a custom resource's structural defaults, defaulterFor;
// or derive from the rest of live: derivedDefault), and
// Argo CD's diff (seen) does not show them: its comparison defaults the
// target the same way (gitops-engine applyPatch, normalizeTypedValue), so
// they are no difference, whoever owns them (a server-side apply by
// another manager, for one, takes over the defaults the first apply left
// to nobody).
func dropDefaulted(drifts []model.FieldDrift, seen []string, desired, live *unstructured.Unstructured, defaults func(*unstructured.Unstructured) any) []model.FieldDrift {
	if desired == nil {
		return drifts
	}
	var defaulted any
	computed := false
	return slices.DeleteFunc(drifts, func(d model.FieldDrift) bool {
		if anyCovers(seen, d.Path) {
			return false
		}
		if _, inDesired := jsonpointer.Get(desired.Object, d.Path); d.Change != model.Added && inDesired {
			// Desired sets it: a change of Git's value, not a default.
			// A field desired leaves out can read as changed in
			// inferred mode (desired is last-applied-configuration;
			// managedFields say another manager holds it: seed 55285,
			// an IngressClass's parameters.scope).
			return false
		}
		if !computed {
			defaulted, computed = defaults(desired), true
		}
		want, _ := jsonpointer.Get(defaulted, d.Path)
		got, ok := jsonpointer.Get(live.Object, d.Path)
		return ok && (jsonEqual(want, got) || derivedDefault(live, d.Path, got) || apiServerDefault(live, d.Path, got))
	})
}

// apiServerDefault says whether got, at p of live, is the value the API
// server the object lives on fills in when a write leaves the field out
// (diff.IsServerDefaultValue: the defaults of kube-apiserver v1.37, whose
// feature gates may differ from those of the release Argo CD links). A
// server-side apply of another field takes such a default over (the
// server defaults the apply's body), yet whoever deletes it gets it back:
// no sync changes it (differential seed 50562: a StatefulSet's
// rollingUpdate.maxUnavailable, which MaxUnavailableStatefulSet defaults
// on 1.37 and not on Argo CD's 1.34, owned by a platform-operator's apply
// of a label; Argo CD neither shows nor changes it).
func apiServerDefault(live *unstructured.Unstructured, p string, got any) bool {
	toks, err := jsonpointer.Parse(p)
	if err != nil || len(toks) == 0 {
		return false
	}
	gvk := live.GroupVersionKind()
	return diff.IsServerDefaultValue(gvk.Group, gvk.Kind, toks, got, live.Object)
}

// withSchemeDefaults is obj, remarshalled as Argo CD does, with the
// scheme's defaults patched in; obj itself when its kind has none or the
// defaulting fails.
func withSchemeDefaults(obj *unstructured.Unstructured) any {
	r := remarshal(obj)
	data, err := json.Marshal(r.Object)
	if err != nil {
		return r.Object
	}
	if data, err = defaultsFor(data, r); err != nil {
		return r.Object
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return r.Object
	}
	return out
}

// derivedDefault says whether the field at p is one Kubernetes' defaults
// derive from the rest of live (a Service's
// sessionAffinityConfig.clientIP.timeoutSeconds from sessionAffinity
// ClientIP, kubernetes pkg/apis/core/v1/defaults.go SetDefaults_Service):
// live without it, defaulted as Argo CD's diff defaults, has it back with
// the value live holds. Nobody wrote such a field; it follows the one
// that was written.
func derivedDefault(live *unstructured.Unstructured, p string, got any) bool {
	toks, err := jsonpointer.Parse(p)
	if err != nil || len(toks) == 0 {
		return false
	}
	without := live.DeepCopy()
	parent, n := jsonpointer.Walk(without.Object, toks[:len(toks)-1])
	m, ok := parent.(map[string]any)
	if n != len(toks)-1 || !ok {
		return false
	}
	delete(m, toks[len(toks)-1])
	want, ok := jsonpointer.Get(withSchemeDefaults(without), p)
	return ok && jsonEqual(want, got)
}
