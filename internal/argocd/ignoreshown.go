package argocd

import (
	"fmt"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// ignoredButShownVerdict: a rule removed the field on both sides, yet
// Argo CD's diff shows a map or list that holds it. The ignore normalizer
// removes only the pointer (util/argo/normalizers/diff_normalizer.go: one
// RFC 6902 remove per pointer, on live, target and last-applied alike), so
// the map it emptied stays, and gitops-engine's diff compares that empty
// map with a target that has none (remarshal drops an empty map of an
// omitempty field, and the 3-way patch deletes it: pkg/diff/diff.go Diff,
// ThreeWayDiff). Seen on Argo CD v3.2.11 (differential seeds 20003, 20097):
// a jsonPointers rule on /spec/selector/app of a Service, Git's selector
// emptied; Argo CD is OutOfSync on /spec/selector and a sync removes the
// selector, app with it, unless RespectIgnoreDifferences=true copies
// live's ignored value into the sync's target (controller/sync.go
// normalizeTargetResources): then the sync keeps it and the object stays
// OutOfSync.
func ignoredButShownVerdict(d *model.FieldDrift, cfg *compareConfig, cmp *comparison, app *Application) (model.Verdict, bool) {
	if !cmp.ok || !cmp.modified {
		return model.Verdict{}, false
	}
	shown := ""
	for _, s := range cmp.seen {
		if covers(s, d.Path) {
			shown = s
			break
		}
	}
	if shown == "" {
		return model.Verdict{}, false
	}
	rule, ok := ruleVerdict(d, cfg, cmp.res)
	if !ok {
		return model.Verdict{}, false
	}
	why := fmt.Sprintf("Argo CD's diff shows %s, which holds this field: %s, but what is left of %s still differs", shown, strings.TrimPrefix(rule.Reason, "ignored by "), shown)
	if app != nil && app.HasSyncOption("RespectIgnoreDifferences=true") {
		return model.Verdict{Engine: Engine, Kind: model.Reported, Rule: rule.Rule,
			Reason: "OutOfSync: " + why + "; " + respectCopiesPhrase}, true
	}
	v := outOfSyncVerdict(app, cmp.fromLastApplied)
	v.Rule = rule.Rule
	v.Reason = why + "; a sync applies Git's " + shown + ", this field with it: " + v.Reason
	return v, true
}

// partlyIgnoredVerdict: without a desired state (inferred mode, no Argo CD
// last sync to compare with), a field another writer set whose value
// holds a path an ignore rule removes (an atomic podSelector written by a
// client-side apply, a rule on podSelector/matchLabels/app): whether Argo
// CD's diff shows the field depends on whether Git's value differs only
// there, and nothing in the cluster says what Git holds (differential seed
// 20052: Argo CD's diff did not show it).
func partlyIgnoredVerdict(d *model.FieldDrift, cfg *compareConfig, cmp *comparison) (model.Verdict, bool) {
	if cmp.desired != nil || cmp.res == nil {
		return model.Verdict{}, false
	}
	if r, rm, ok := ruleInside(cfg, cmp.res, "live", d.Path); ok {
		o := r.Origin
		return model.Verdict{Engine: Engine, Kind: model.Unknown, Rule: &o,
			Reason: fmt.Sprintf("%s ignores %s inside this field (%s): Argo CD's diff shows the field only if Git's value differs elsewhere, which inferred mode cannot see; give the desired state (-f, -k, --source)", o.String(), rm.Path, rm.By)}, true
	}
	return model.Verdict{}, false
}

// respectCopiesPhrase ends the reason of an ignored field in a map Argo
// CD's diff shows, under RespectIgnoreDifferences=true: it already says
// why the sync leaves the field (syncPrunes keeps it).
const respectCopiesPhrase = "RespectIgnoreDifferences=true copies the live value of the ignored field into the sync, so a sync does not change it and the object stays OutOfSync"

// rulesHideGitMapVerdict: d is a map Git sets that live lacks (the tool's
// diff leaves Argo CD's bookkeeping, last-applied-configuration, out of
// live's annotations), and the rules remove every member Git sets from
// the target, leaving an empty map Argo CD's diff does not show. The
// field is the rules' doing, as each member is: ignored by the rule that
// removed one, so that syncReapplies says what a sync of the OutOfSync
// object does to it. Differential seed 60824 (Argo CD v3.2.11): Git adds
// the annotation ticket to a ClusterRoleBinding without annotations, a
// jq rule hides it, and the object is OutOfSync for its labels; self-heal
// applied Git's manifest, ticket with it. The tool said left-alone.
func rulesHideGitMapVerdict(d *model.FieldDrift, cfg *compareConfig, cmp *comparison) (model.Verdict, bool) {
	if cmp.desired == nil || cmp.res == nil || cmp.res.Target == nil || d.Change != model.Removed ||
		cmp.modified && anyCovers(cmp.seen, d.Path) {
		return model.Verdict{}, false
	}
	git, _ := jsonpointer.Get(cmp.desired.Object, d.Path)
	if m, ok := git.(map[string]any); !ok || len(m) == 0 {
		return model.Verdict{}, false
	}
	if left, ok := jsonpointer.Get(cmp.res.Target.Object, d.Path); ok {
		if m, isMap := left.(map[string]any); !isMap || len(m) > 0 {
			return model.Verdict{}, false
		}
	}
	if r, rm, ok := ruleInside(cfg, cmp.res, "desired", d.Path); ok {
		return model.Verdict{Engine: Engine, Kind: model.Ignored, Rule: originPtr(r.Origin),
			Reason: fmt.Sprintf("ignored by %s (%s removes %s, and the rules remove every member Git sets here)", r.Origin.String(), rm.By, rm.Path)}, true
	}
	return model.Verdict{}, false
}

// ruleInside is the first rule that removed a field strictly inside p from
// side ("live" or "desired") of res, and that removal.
func ruleInside(cfg *compareConfig, res *normResult, side, p string) (*ignoreRule, removal, bool) {
	for _, r := range cfg.rules {
		e := res.effects[r]
		if e == nil {
			continue
		}
		for _, rm := range e.removed[side] {
			if rm.Path != p && covers(p, rm.Path) {
				return r, rm, true
			}
		}
	}
	return nil, removal{}, false
}
