package flux

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// maxReleaseBytes bounds what a release Secret may inflate to: Helm's own
// limit on a release is 1 MiB stored, the manifest inside may be larger.
const maxReleaseBytes = 64 << 20

// releaseManifest reads the manifest of the deployed Helm release that
// helm-controller stores for hr (Helm's Secret storage driver:
// helm.sh/helm/v3 pkg/storage/driver/secrets.go, labels owner=helm,
// name=RELEASE, status=deployed; data.release is base64 of gzip of the
// release JSON, whose "manifest" is the rendered chart) and returns the
// document that is obj. Only the manifest is read: the release's values
// (.config) may hold secrets and are never decoded into anything printed.
// A nil object and a note say why it could not be used.
func (a *Adapter) releaseManifest(ctx context.Context, st *ownerState, live *unstructured.Unstructured) (*unstructured.Unstructured, *model.Note) {
	if a.reader == nil || st == nil || st.hr == nil || live == nil {
		return nil, nil
	}
	hr := st.hr
	ns := hr.GetStorageNamespace()
	name := hr.GetReleaseName()
	note := func(level model.NoteLevel, reason, msg string) *model.Note {
		return &model.Note{Engine: Engine, Level: level, Reason: reason, Message: msg}
	}
	secrets, err := a.reader.List(ctx, secretGVK, ns, "owner=helm,name="+name+",status=deployed")
	if err != nil {
		if apierrors.IsForbidden(err) {
			return nil, note(model.NoteWarning, "release-forbidden", fmt.Sprintf(
				"reading Helm release %s/%s is forbidden (needs list on secrets in %s): the chart's manifest is unknown, give -f with the rendered chart", ns, name, ns))
		}
		return nil, note(model.NoteWarning, "release-unreadable", fmt.Sprintf("cannot read Helm release %s/%s: %v", ns, name, err))
	}
	var best *unstructured.Unstructured
	bestVersion := -1
	for i := range secrets {
		v, _ := strconv.Atoi(secrets[i].GetLabels()["version"])
		if v > bestVersion {
			best, bestVersion = &secrets[i], v
		}
	}
	if best == nil {
		return nil, note(model.NoteInfo, "release-not-found", fmt.Sprintf("no deployed Helm release %s/%s in storage", ns, name))
	}
	manifest, err := decodeRelease(best)
	if err != nil {
		return nil, note(model.NoteWarning, "release-undecodable", fmt.Sprintf("Helm release Secret %s/%s: %v", ns, best.GetName(), err))
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(manifest)), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			break
		}
		if m == nil {
			continue
		}
		// Through the unstructured JSON decoder, so numbers are int64 as
		// in every other object the tool reads.
		js, err := json.Marshal(m)
		if err != nil {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			continue
		}
		if u.GetKind() == live.GetKind() && u.GetName() == live.GetName() && u.GroupVersionKind().Group == live.GroupVersionKind().Group &&
			(u.GetNamespace() == "" || u.GetNamespace() == live.GetNamespace()) {
			if u.GetNamespace() == "" {
				u.SetNamespace(live.GetNamespace())
			}
			return u, note(model.NoteInfo, "release-manifest", fmt.Sprintf(
				"desired state for Flux verdicts: the manifest of Helm release %s/%s v%d (Secret %s)", ns, name, bestVersion, best.GetName()))
		}
	}
	return nil, note(model.NoteInfo, "release-lacks-object", fmt.Sprintf("Helm release %s/%s v%d does not render this object", ns, name, bestVersion))
}

// decodeRelease returns the "manifest" of a Helm release Secret.
func decodeRelease(secret *unstructured.Unstructured) (string, error) {
	enc, _, _ := unstructured.NestedString(secret.Object, "data", "release")
	if enc == "" {
		return "", fmt.Errorf("no data.release")
	}
	// The Secret's data is base64 (Kubernetes), holding Helm's own base64.
	outer, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", fmt.Errorf("data.release: %w", err)
	}
	raw, err := base64.StdEncoding.DecodeString(string(outer))
	if err != nil {
		return "", fmt.Errorf("release payload: %w", err)
	}
	if len(raw) > 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return "", err
		}
		if raw, err = io.ReadAll(io.LimitReader(zr, maxReleaseBytes)); err != nil {
			return "", err
		}
	}
	var rel struct {
		Manifest string `json:"manifest"`
	}
	if err := json.Unmarshal(raw, &rel); err != nil {
		return "", fmt.Errorf("release JSON: %w", err)
	}
	return rel.Manifest, nil
}
