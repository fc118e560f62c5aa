package flux

import (
	"context"
	"fmt"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/diff"
	fluxrender "github.com/kubectl-drift/kubectl-drift/internal/flux/render"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// BuildDesired is what kustomize-controller applies for a manifest read
// from a file: the Kustomization's own build over it (its patches, images,
// name prefix/suffix, targetNamespace, postBuild substitution) with the
// ownership labels and commonMetadata (kustomize-controller
// internal/controller/kustomization_controller.go build() and apply()).
// Measured on the real controller (make differential, seeds 1048, 5101):
// without it a field the Kustomization's patch sets, or a ${VAR} the
// controller substitutes, reads as drift. HelmRelease objects come from
// the release manifest, which helm-controller built already: nil.
func (a *Adapter) BuildDesired(ctx context.Context, live, desired *unstructured.Unstructured, secrets *redact.Scrubber) (*unstructured.Unstructured, []model.Note) {
	o := a.ownerOf(ctx, live)
	if o == nil || o.Kind != kustomizev1.KustomizationKind || desired == nil {
		return nil, nil
	}
	if l := desired.GetLabels(); l[KustomizeNameLabel] == o.Name && l[KustomizeNamespaceLabel] == o.Namespace {
		// The file is the controller's build already (render's output,
		// flux build): it carries the ownership labels, which Git never
		// does. Building again would prefix names twice.
		return nil, nil
	}
	st, missing := a.resolveOwner(ctx, o, &model.Report{})
	if missing || st == nil || st.doc.obj == nil {
		// Judge says why the owner could not be read.
		return nil, nil
	}
	note := func(msg string) []model.Note {
		return []model.Note{{Engine: Engine, Level: model.NoteWarning, Reason: "build-skipped",
			Message: "compared with the file as written, not as " + o.Ref() + " builds it: " + msg}}
	}
	built, err := fluxrender.BuildObjects(ctx, a.reader, secrets, st.doc.obj, []*unstructured.Unstructured{desired})
	if err != nil {
		return nil, note(err.Error())
	}
	if len(built) != 1 || built[0].GetKind() != desired.GetKind() {
		return nil, note(fmt.Sprintf("its build turned the file into %d objects", len(built)))
	}
	b := built[0]
	if (b.GetName() != live.GetName() || b.GetNamespace() != live.GetNamespace()) &&
		desired.GetName() == live.GetName() {
		// A file already named as the live object, which the build would
		// rename (namePrefix): it is a build output, not Git.
		return nil, nil
	}
	diff.AddDerivedDefaults(b.Object)
	return b, nil
}
