package argocd

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// "OutOfSync with an empty diff" (argo-cd issues #14666, #21434).
//
// Argo CD's sync status and the diff its UI (and argocd app diff) shows are
// two computations for a Secret. The status comes from controller/state.go
// CompareAppState: StateDiffs with the Application's whole diff config
// (structured-merge diff for ServerSideApply=true, server-side diff, the
// argocd-controller manager). The managed-resources diff of a Secret is
// computed again by controller/appcontroller.go hideSecretData, on copies
// whose stringData gitops-engine's HideSecretData first merged into data
// (NormalizeSecret, also in the last-applied-configuration it masks), with
// a diff config of the ignore rules and tracking only: a client-side diff,
// whatever the Application's sync and compare options. When the two
// disagree, the object is OutOfSync and its diff is empty, and nobody can
// tell which field is to blame. uiDiffNote runs the second computation
// beside the first and says which step makes them differ.

// uiDiffNote is the note on a Secret whose status diff (status) is
// modified while Argo CD's UI diff of it is empty; nil otherwise. paths
// are the fields of the status diff.
func uiDiffNote(cfg *compareConfig, live, desired *unstructured.Unstructured, status *diffResult, paths []string) *model.Note {
	if status == nil || !status.Modified || live == nil || desired == nil {
		return nil
	}
	if gvk := live.GroupVersionKind(); gvk.Group != "" || gvk.Kind != "Secret" {
		return nil
	}
	ui := *cfg
	ui.structuredMerge, ui.serverSide, ui.includeMutationWebhook = false, false, false
	// The step that differs: first the diff strategy alone, then with
	// stringData merged into data first.
	var step string
	switch {
	case (cfg.structuredMerge || cfg.serverSide) && !uiModified(&ui, live, desired, false):
		step = "the diff strategy: the status diff is " + statusStrategy(cfg) +
			", which removes a field the argocd-controller manager applied and Git no longer has; the UI diff is a client-side diff (hideSecretData builds it without the ServerSideApply/ServerSideDiff options), which keeps every live field Git does not name unless the last-applied-configuration lists it"
	case !uiModified(&ui, live, desired, true):
		step = "stringData: the status diff runs the ignoreDifferences rules (managedFieldsManagers, jsonPointers, jq) on the Git manifest before its stringData is merged into data (util/argo/diff/diff.go preDiffNormalize, then gitops-engine NormalizeSecret), so a rule on data.KEY removes nothing from stringData.KEY; the UI diff merges stringData into data first (gitops-engine HideSecretData), so the rule removes it"
	default:
		return nil
	}
	fields := strings.Join(argoDiffPaths(paths), ", ")
	if fields == "" {
		fields = "(none named)"
	}
	return &model.Note{Engine: Engine, Level: model.NoteWarning, Reason: "empty-ui-diff",
		Message: fmt.Sprintf("Argo CD records this Secret OutOfSync while the diff its UI and `argocd app diff` show is empty (argo-cd issues #14666, #21434): the sync status comes from controller/state.go CompareAppState, the UI diff of a Secret is computed again by controller/appcontroller.go hideSecretData; they differ in %s. Fields that make it OutOfSync: %s", step, fields)}
}

func statusStrategy(cfg *compareConfig) string {
	if cfg.serverSide {
		return "a server-side diff (ServerSideDiff=true: a dry-run apply as argocd-controller)"
	}
	return "a structured-merge diff (ServerSideApply=true: the manifest merged into live as the argocd-controller manager)"
}

// secretUISeen are the fields of the diff Argo CD shows for a Secret
// whose status diff is server-side or structured-merge: the managed
// resources' diff of a Secret is computed again by hideSecretData, a
// client-side diff (the paths where its states differ); nil for any other
// object, or when that diff cannot run. Differential seed 50046: a
// ServerSideDiff Application, a person's kubectl apply added an
// annotation; the server-side diff does not show it, Argo CD's UI and API
// do (the 3-way diff from the person's last-applied-configuration).
// predicted is that diff's predicted live state (the values it shows).
func secretUISeen(cfg *compareConfig, live, desired *unstructured.Unstructured) (seen []string, predicted any) {
	if live == nil || desired == nil || !cfg.structuredMerge && !cfg.serverSide {
		return nil, nil
	}
	if gvk := live.GroupVersionKind(); gvk.Group != "" || gvk.Kind != "Secret" {
		return nil, nil
	}
	ui := *cfg
	ui.structuredMerge, ui.serverSide, ui.includeMutationWebhook = false, false, false
	dr, err := uiDiff(&ui, live, desired, true)
	if err != nil || !dr.Modified {
		return nil, nil
	}
	return changedPaths(dr.PredictedLive, dr.NormalizedLive, ""), dr.PredictedLive
}

// ShownWhileSyncedPhrase is in the verdict of a Secret's field that the
// diff Argo CD shows for the Secret lists while the resource is Synced
// (class A22): the differential harness reads it (scoreShownSynced).
const ShownWhileSyncedPhrase = "argocd app diff and the UI list it while the resource is Synced"

// shownSyncedVerdict is class A22 (docs/verdicts.md, session 15): a
// Secret's field that the diff Argo CD shows for it lists (secretUISeen,
// controller/appcontroller.go hideSecretData: a client-side 3-way diff)
// while its status diff, server-side or structured-merge, finds it Synced
// (controller/state.go CompareAppState; gitops-engine pkg/diff/diff.go
// serverSideDiff keeps a field argocd-controller's Update entry owns and
// Git no longer has). The status decides: no sync runs and self-heal does
// nothing, so the field is left alone; the verdict says why the diff
// shows it (differential seed 53260: ServerSideDiff=true, Git drops
// /data/token, a kubectl edit changed it).
func shownSyncedVerdict(d *model.FieldDrift, cmp *comparison) (model.Verdict, bool) {
	if cmp.modified || !anyCovers(cmp.uiSyncedSeen, d.Path) {
		return model.Verdict{}, false
	}
	return model.Verdict{Engine: Engine, Kind: model.LeftAlone,
		Reason: "shown, not drift: " + ShownWhileSyncedPhrase + " (controller/appcontroller.go hideSecretData recomputes a Secret's diff client-side, " +
			"a 3-way diff from last-applied-configuration), but the sync status comes from " + statusStrategy(cmp.cfg) +
			", which finds the Secret Synced: no sync runs, self-heal leaves it"}, true
}

// uiModified runs the diff hideSecretData runs: ui's rules on copies of
// live and desired, with stringData merged into data first when
// mergeStringData (in live's last-applied-configuration too).
func uiModified(ui *compareConfig, live, desired *unstructured.Unstructured, mergeStringData bool) bool {
	dr, err := uiDiff(ui, live, desired, mergeStringData)
	return err != nil || dr.Modified
}

// uiDiff is the diff uiModified reads.
func uiDiff(ui *compareConfig, live, desired *unstructured.Unstructured, mergeStringData bool) (*diffResult, error) {
	l, d := live.DeepCopy(), desired.DeepCopy()
	if mergeStringData {
		normalizeSecret(d)
		normalizeSecret(l)
		if la, err := lastApplied(l); err == nil && la != nil {
			normalizeSecret(la)
			if b, err := json.Marshal(la.Object); err == nil {
				ann := l.GetAnnotations()
				ann[LastAppliedAnnotation] = string(b)
				l.SetAnnotations(ann)
			}
		}
	}
	res := ui.normalizePair(l, d)
	return ui.stateDiff(l, d, res)
}
