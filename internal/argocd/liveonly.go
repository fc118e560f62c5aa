package argocd

import (
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// laOrigin says whose manifest the live last-applied-configuration is, in
// inferred mode (no Git): what Argo CD's 3-way diff takes as its "orig"
// (gitops-engine pkg/diff/diff.go Diff, ThreeWayDiff), and what tells the
// tool which fields Git set.
type laOrigin int

const (
	// laNone: no last-applied-configuration (a server-side sync, or an
	// RBAC object, which gitops-engine writes with kubectl auth reconcile:
	// pkg/utils/kube/resource_ops.go rbacReconcile; seen on Argo CD
	// v3.2.11, differential seeds 50000, 50207).
	laNone laOrigin = iota
	// laArgo: an Argo CD manager owns it: Argo CD's last sync, compared
	// as Git (lastAppliedTarget).
	laArgo
	// laArgoEdited: another manager owns it, but it carries the tracking
	// marks Argo CD puts on its target (controller/state.go
	// SetAppInstance): Argo CD's last sync that a kubectl edit patched
	// with its own change. Its keys are still the ones Git set.
	laArgoEdited
	// laForeign: a person's kubectl apply replaced it with their own
	// manifest (no tracking mark): it says nothing of Git, and Argo CD's
	// 3-way diff deletes what it lists and Git lacks.
	laForeign
)

// lastAppliedOrigin is lastAppliedOrigin of the comparison's live object,
// classified once: each field's verdict asks it, and each answer would
// parse the annotation again.
func (c *comparison) lastAppliedOrigin(live *unstructured.Unstructured, s *Settings) (laOrigin, *unstructured.Unstructured) {
	if !c.originRead {
		c.origin, c.originLA = lastAppliedOrigin(live, s)
		c.originRead = true
	}
	return c.origin, c.originLA
}

// lastAppliedOrigin classifies live's last-applied-configuration.
func lastAppliedOrigin(live *unstructured.Unstructured, s *Settings) (laOrigin, *unstructured.Unstructured) {
	if la := argoLastApplied(live, s); la != nil {
		return laArgo, la
	}
	la, err := lastApplied(live)
	if err != nil || la == nil || la.Object == nil {
		return laNone, nil
	}
	if la.GetAnnotations()[AnnotationTrackingID] != "" || la.GetLabels()[labelKeyOf(s)] != "" {
		return laArgoEdited, la
	}
	return laForeign, la
}

// isTrackingPath: the tracking annotation or instance label, which Argo
// CD's target carries whatever Git holds (inferredMarkDrifts judges them).
func isTrackingPath(p string, s *Settings) bool {
	return p == "/metadata/annotations/"+jsonpointer.Escape(AnnotationTrackingID) ||
		p == "/metadata/labels/"+jsonpointer.Escape(labelKeyOf(s))
}

// labelKeyOf is instanceLabelKey, also without settings (a bare
// compareConfig).
func labelKeyOf(s *Settings) string {
	if s == nil {
		return DefaultInstanceLabelKey
	}
	return instanceLabelKey(s)
}

// foreignLastAppliedVerdict is class I4 (docs/verdicts.md, session 13):
// in inferred mode, after a person's client-side kubectl apply replaced
// Argo CD's last-applied-configuration, every verdict on a field depends
// on Git, which nothing on the object records any more. Argo CD's 3-way
// diff patches from that annotation to Git: a field Git sets shows when
// its value differs from live (whatever the person applied), a field the
// annotation lists and Git lacks is deleted, the others stay. Seen on Argo
// CD v3.2.11: the person's apply reset a patched field to Git's value (Argo
// CD Synced on it; seeds 50023, 50224, 50204) or set a label Git lacks
// (OutOfSync; 50324, 50197). A managedFieldsManagers rule hides a field only
// where Git sets another value (util/argo/managedfields Normalize removes
// the trusted manager's fields of the comparison's Modified set, not its
// Removed set), so it depends on Git too (50324).
//
// With no annotation at all and a client-side sync (laNone: an RBAC object,
// which kubectl auth reconcile writes without one, or one a server-side
// apply migrated away) Argo CD's 2-way diff shows a field a person wrote only where Git sets
// another value: a label a person changed is shown (seed 50027), one a
// person added is not (50207), and managedFields cannot tell the two
// apart (an Update takes the field from the manager that wrote it). A
// managedFieldsManagers rule is never contradicted there (its field is
// hidden where Git sets it, left alone where it does not), so the chain
// asks it first: want is the origin this call decides.
//
// A server-side sync leaves no annotation either (class I5, session 14):
// Argo CD's structured-merge diff applies Git as argocd-controller and
// shows a field another manager owns only where Git sets another value.
// That manager took the field from argocd-controller if it changed Git's
// value (an Update, or a forced apply: seed 52019, helm's label on a
// ClusterRole; 52060, a Service's publishNotReadyAddresses), and owns it
// alone just the same if Git lacks it: unknown too. So is an object with
// an argocd-controller Apply entry in a client-side Application (52079: a
// server-side apply under that name dropped the annotation; the 2-way
// diff showed the label a JSON patch changed).
func foreignLastAppliedVerdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig, cmp *comparison, want laOrigin) (model.Verdict, bool) {
	if cmp.desired != nil || isTrackingPath(d.Path, cfg.settings) || strings.HasPrefix(d.Path, "/status") {
		return model.Verdict{}, false
	}
	if o, _ := cmp.lastAppliedOrigin(live, cfg.settings); o != want {
		return model.Verdict{}, false
	}
	if _, ok := aggregatedRoleVerdict(live, d, cfg); ok {
		return model.Verdict{}, false
	}
	if want == laNone {
		if cfg.structuredMerge || appliedServerSide(live) {
			return model.Verdict{Engine: Engine, Kind: model.Unknown, Reason: noLastAppliedSSAReason}, true
		}
		return model.Verdict{Engine: Engine, Kind: model.Unknown, Reason: noLastAppliedReason}, true
	}
	return model.Verdict{Engine: Engine, Kind: model.Unknown, Reason: foreignReason}, true
}

// appliedServerSide says whether Argo CD synced the object with a
// server-side apply: its manager holds an Apply entry (a client-side sync
// writes Update entries and last-applied-configuration; argo-cd
// common/common.go ArgoCDSSAManager).
func appliedServerSide(live *unstructured.Unstructured) bool {
	for _, m := range live.GetManagedFields() {
		if m.Manager == SSAManager && m.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

const foreignReason = "last-applied-configuration is a person's kubectl apply (no Argo CD tracking mark), not Argo CD's last sync: " +
	"Argo CD's diff shows this field if Git's value differs from live, or if Git lacks it and that annotation lists it; " +
	"what Git holds is unknown without it; give the desired state (-f, -k, --source) or --argocd-server"

const noLastAppliedReason = "no last-applied-configuration (kubectl auth reconcile writes none on RBAC objects): " +
	"Argo CD's 2-way diff shows this field only if Git sets another value, and nothing on the object records Git's; " +
	"give the desired state (-f, -k, --source) or --argocd-server"

const noLastAppliedSSAReason = "no last-applied-configuration (a server-side sync writes none): " +
	"Argo CD's structured-merge diff applies Git as argocd-controller and shows this field only if Git sets another value; " +
	"another manager that changed a field Git sets took it from Argo CD's manager, so managedFields read the same as for a field Git lacks; " +
	"give the desired state (-f, -k, --source) or --argocd-server"

// liveOnlyVerdict is the one place of class W3 (docs/verdicts.md): in
// inferred mode without Argo CD's last sync (no comparison ran: a kubectl
// edit or apply rewrote last-applied-configuration, or there is none) and
// without ServerSideApply, a field live added that the live
// last-applied-configuration does not hold is left alone. gitops-engine
// pkg/diff/diff.go Diff takes that annotation, whoever wrote it, as the
// "orig" of ThreeWayDiff, and the 3-way patch from it to Git's manifest
// deletes only fields the orig lists (without the annotation TwoWayDiff
// takes Git's manifest as orig, which never lists a live-only field): a
// live-only label or annotation stays, Argo CD's diff does not show it
// and a sync keeps it. Seen on Argo CD v3.2.11: a kubectl annotate, then a
// kubectl edit, which patched last-applied with its own change only (seeds
// 5046, 5023; owner-annotation-label/w3-live-only-annotation-and-edit).
//
// When that annotation is Argo CD's last sync patched by a kubectl edit
// (laArgoEdited), its keys are Git's, for a changed field too: a field it
// lacks is in neither Git nor the orig, and Argo CD leaves it alone, with a
// client-side sync (the 3-way patch) or a server-side one (the structured-
// merge diff applies Git as argocd-controller, which leaves other managers'
// fields). A field it holds is Git's, changed by the person who owns it:
// OutOfSync (seeds
// 50370, 50248: a server-side Application; a field patched in beside
// Git's left alone, Git's annotation edited shown).
func liveOnlyVerdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig, cmp *comparison, app *Application) (model.Verdict, bool) {
	if cmp.ok {
		return model.Verdict{}, false
	}
	if o, la := cmp.lastAppliedOrigin(live, cfg.settings); cmp.desired == nil && o == laArgoEdited && !isTrackingPath(d.Path, cfg.settings) {
		if _, in := jsonpointer.Get(la.Object, d.Path); in {
			return outOfSyncVerdict(app, false), true
		}
		return model.Verdict{Engine: Engine, Kind: model.LeftAlone,
			Reason: "not in last-applied-configuration (Argo CD's last sync, edited since), so not in Git: Argo CD's diff leaves a field Git does not set alone"}, true
	}
	if cfg.structuredMerge || d.Change != model.Added || inLastApplied(live, d.Path) {
		return model.Verdict{}, false
	}
	return model.Verdict{Engine: Engine, Kind: model.LeftAlone,
		Reason: "not in last-applied-configuration: Argo CD's 3-way diff removes only fields its last apply set"}, true
}

// inLastApplied says whether live's last-applied-configuration, whoever
// wrote it, has the field at p.
func inLastApplied(live *unstructured.Unstructured, p string) bool {
	la, err := lastApplied(live)
	if err != nil || la == nil {
		return false
	}
	_, ok := jsonpointer.Get(la.Object, p)
	return ok
}

// inferredSyncUnknown is class I2 (docs/verdicts.md, session 13): in
// inferred mode without Argo CD's last sync, a field an ignore rule hides
// on an OutOfSync object. ignoreDifferences only hides a field from the
// diff; the sync applies Git's manifest, this field with it when Git sets
// it (syncReapplies), and a client-side sync deletes it when
// last-applied-configuration lists it and Git does not. Without Argo CD's
// last sync which of these happens is Git's to say: the verdict is
// unknown, the rule kept (seen on Argo CD v3.2.11: self-heal changed such
// fields after a person's kubectl apply, seeds 50031, 50159, 50265, 50358,
// and after a kubectl edit of an RBAC object with no annotation, 50135).
// An annotation that is Argo CD's last sync edited lists Git's fields:
// syncReapplies reads it as Git.
func inferredSyncUnknown(rep *model.Report, live *unstructured.Unstructured, cmp *comparison, app *Application) {
	s := cmp.cfg.settings
	if cmp.desired != nil || (app != nil && app.HasSyncOption("RespectIgnoreDifferences=true")) {
		return
	}
	o, la := cmp.lastAppliedOrigin(live, s)
	if o == laArgoEdited {
		syncReapplies(rep, la, app)
	}
	for i := range rep.Drifts {
		d := &rep.Drifts[i]
		v := verdictOf(*d, Engine)
		if v == nil || v.Kind != model.Ignored || v.Rule == nil || isTrackingPath(d.Path, s) ||
			strings.HasPrefix(v.Rule.Object, "Argo CD resource tracking") || strings.HasPrefix(d.Path, "/status") {
			continue
		}
		if o == laArgoEdited && (d.Change != model.Added || !pointerPresent(la, d.Path) || strings.Contains(v.Reason, SyncReappliesPhrase)) {
			// The edited annotation holds Git's value (syncReapplies),
			// except where the edit added the field: differential seed
			// 60575 (Argo CD v3.2.11), a kubectl edit of an ignored label
			// of an aggregated ClusterRole; self-heal wrote Git's value.
			continue
		}
		nv := *v
		nv.Kind = model.Unknown
		nv.Reason += "; the object is OutOfSync and a sync applies Git's manifest: it rewrites this field if Git sets it" +
			" (or deletes it if last-applied-configuration lists it and Git does not), and what Git holds is unknown without Argo CD's last sync; give the desired state (-f, -k, --source)"
		d.SetVerdict(nv)
	}
}

// managersEmptiedMapVerdict is class I6 (docs/verdicts.md, session 15): in
// inferred mode without Argo CD's last sync, a field a managedFieldsManagers
// rule would hide, in a map every member of which, in the live
// last-applied-configuration, the rule's managers own. util/argo/managedfields
// Normalize removes the trusted manager's fields that differ from Git from
// both live and Git's manifest (structured-merge-diff RemoveItems keeps an
// emptied map as {}); when they were all of Git's members of the map,
// gitops-engine pkg/diff/diff.go Diff's remarshal (through the typed
// object, whose map fields are omitempty) drops the empty map from Git's
// manifest, and ThreeWayDiff's patch from last-applied-configuration,
// which lists the map, deletes the whole map from live, with the members
// no rule removed (last-applied-configuration itself): Argo CD's diff
// shows the map, not the field. Seen on Argo CD v3.2.11, seed 54026: a kubectl edit of a
// ServiceAccount's only annotation of Git, a rule trusting kubectl-edit,
// the diff /metadata/annotations. Whether it happens depends on Git's values
// (a trusted manager's member that equals Git's stays, and so does the
// map), which the edited annotation no longer records: unknown.
func managersEmptiedMapVerdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig, cmp *comparison) (model.Verdict, bool) {
	if cmp.desired != nil || cfg.parser == nil || isTrackingPath(d.Path, cfg.settings) {
		return model.Verdict{}, false
	}
	toks, err := jsonpointer.Parse(d.Path)
	if err != nil || len(toks) < 2 {
		return model.Verdict{}, false
	}
	parent := jsonpointer.Join(toks[:len(toks)-1]...)
	la, err := lastApplied(live)
	if err != nil {
		return model.Verdict{}, false
	}
	if la == nil {
		return managersEmptiedMapNoSync(live, d, cfg, parent)
	}
	laMap, _ := jsonpointer.Get(la.Object, parent)
	members, _ := laMap.(map[string]any)
	liveMap, _ := jsonpointer.Get(live.Object, parent)
	liveMembers, _ := liveMap.(map[string]any)
	if len(members) == 0 || len(liveMembers) <= len(members) {
		// Nothing of Git's there, or nothing of live's beside it that
		// the patch could delete with the map.
		return model.Verdict{}, false
	}
	trusted := trustedManagers(live, cfg)
	ix, err := managedfields.Parse(live)
	if err != nil || ix == nil || len(trusted) == 0 {
		return model.Verdict{}, false
	}
	for k := range members {
		if !ownedByAny(ix.Owners(live, parent+"/"+jsonpointer.Escape(k)), trusted) {
			return model.Verdict{}, false
		}
	}
	// The rule hides d itself, or d is another member of the map, which
	// Argo CD shows with the whole map or leaves alone (seed 58280, I10:
	// a kubectl label beside a label kubectl edit changed under a rule
	// trusting kubectl-edit; Argo CD showed /metadata/labels).
	otherwise := "the rule hides this field"
	if !ownedByAny(ix.Owners(live, d.Path), trusted) {
		otherwise = "the map stays and this field, which last-applied-configuration does not list, is left alone"
	}
	return model.Verdict{Engine: Engine, Kind: model.Unknown,
		Reason: "a managedFieldsManagers rule owns every member last-applied-configuration lists in " + parent +
			": if they all differ from Git, Argo CD's normalization leaves Git's manifest without " + parent +
			" (an empty map, dropped when it remarshals the object) and its 3-way diff deletes the whole map (last-applied-configuration with it), so Argo CD shows " + parent +
			" OutOfSync; if one equals Git, " + otherwise + "; Git's values are unknown without Argo CD's last sync; give the desired state (-f, -k, --source) or --argocd-server"}, true
}

// managersEmptiedMapNoSync is managersEmptiedMapVerdict on an object
// that records no Argo CD sync at all (a kubectl apply --server-side as
// argocd-controller took last-applied-configuration over and its apply
// pruned it): the rule's managers own every live member of parent. If
// Git sets each of them with another value, Argo CD's normalization
// removes them all from live, and its diff shows parent whole (this
// field with it) when Git sets another member; otherwise the rule hides
// this field or Argo CD leaves it alone. Differential seed 65680 (I12,
// Argo CD v3.2.11): a Secret's only data key, token, changed by kubectl
// patch under a rule trusting kubectl-patch, Git's password missing from
// live; Argo CD showed /data. Git decides, and the object does not
// record it.
func managersEmptiedMapNoSync(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig, parent string) (model.Verdict, bool) {
	liveMap, _ := jsonpointer.Get(live.Object, parent)
	members, _ := liveMap.(map[string]any)
	trusted := trustedManagers(live, cfg)
	if len(members) == 0 || len(trusted) == 0 {
		return model.Verdict{}, false
	}
	ix, err := managedfields.Parse(live)
	if err != nil || ix == nil {
		return model.Verdict{}, false
	}
	for k := range members {
		if !ownedByAny(ix.Owners(live, parent+"/"+jsonpointer.Escape(k)), trusted) {
			return model.Verdict{}, false
		}
	}
	return model.Verdict{Engine: Engine, Kind: model.Unknown,
		Reason: "a managedFieldsManagers rule owns every member of " + parent + ": if Git sets each with another value, Argo CD's normalization removes them all from live and its diff shows " + parent +
			" whole, this field with it, when Git sets another member; otherwise the rule hides this field or Argo CD leaves it alone; the object records no Argo CD sync (no last-applied-configuration) and Git's manifest is unknown here; give the desired state (-f, -k, --source) or --argocd-server"}, true
}

// rulesEmptiedMapVerdict, in inferred mode: the rules hide every member of
// the live map that holds d, and the live last-applied-configuration lists
// each of them. Argo CD normalizes live to an empty map ({}); its predicted
// state is kubectl's 3-way patch of Git's manifest, which deletes every
// member Git does not set: when Git sets none, the map is gone after
// gitops-engine remarshals the emptied map away (omitempty), and Argo CD
// shows the whole map OutOfSync; when Git sets one, both sides normalize
// to {} and the rule hides the field. Differential seed 57046 (I9, Argo CD
// v3.2.11): a person's client-side apply of a RoleBinding label that a
// jsonPointer rule hides; Argo CD showed /metadata/labels, inferred mode
// said ignored. Git's manifest decides, and inferred mode does not have it.
func rulesEmptiedMapVerdict(live *unstructured.Unstructured, d *model.FieldDrift, cfg *compareConfig, cmp *comparison) (model.Verdict, bool) {
	if cmp.desired != nil || isTrackingPath(d.Path, cfg.settings) {
		return model.Verdict{}, false
	}
	toks, err := jsonpointer.Parse(d.Path)
	if err != nil || len(toks) < 2 {
		return model.Verdict{}, false
	}
	parent := jsonpointer.Join(toks[:len(toks)-1]...)
	liveMap, _ := jsonpointer.Get(live.Object, parent)
	members, _ := liveMap.(map[string]any)
	la, err := lastApplied(live)
	if err != nil || la == nil || len(members) == 0 {
		return model.Verdict{}, false
	}
	for k := range members {
		p := parent + "/" + jsonpointer.Escape(k)
		if !pointerPresent(la, p) {
			return model.Verdict{}, false
		}
		if _, hidden := ruleVerdict(&model.FieldDrift{Path: p}, cfg, cmp.res); !hidden {
			return model.Verdict{}, false
		}
	}
	return model.Verdict{Engine: Engine, Kind: model.Unknown,
		Reason: "the ignoreDifferences rules hide every member of " + parent + " and last-applied-configuration lists each: if Git sets none of them, kubectl's 3-way diff deletes them all, Argo CD's normalized live keeps an empty " + parent +
			" while its predicted state has none, and Argo CD shows " + parent + " OutOfSync; if Git sets one, the rule hides this field; Git's manifest is unknown here; give the desired state (-f, -k, --source) or --argocd-server"}, true
}

// trustedManagers are the managers of the managedFieldsManagers rules
// that apply to live.
func trustedManagers(live *unstructured.Unstructured, cfg *compareConfig) []string {
	gvk := live.GroupVersionKind()
	var out []string
	for _, r := range cfg.rules {
		if len(r.Managers) > 0 && r.managersApply(gvk.Group, gvk.Kind, live.GetName(), live.GetNamespace()) {
			out = append(out, r.Managers...)
		}
	}
	return out
}

// ownedByAny says whether one of owners is a manager of trusted.
func ownedByAny(owners []model.ManagerRef, trusted []string) bool {
	for _, m := range owners {
		if contains(trusted, m.Manager) {
			return true
		}
	}
	return false
}
