package flux

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

func TestRemoteNotesOwnerAppliesHere(t *testing.T) {
	rm := &engine.Remote{EngineContext: "mgmt", EngineServer: "https://mgmt:6443", LiveContext: "spoke-b", LiveServer: "https://spoke-b:6443"}
	kubeconfig := func(server string) string {
		return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: s3cr3t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, server))
	}
	ks := func(name, kubeConfig string) string {
		return fmt.Sprintf(`
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %s, namespace: flux-system}
spec: {interval: 1m, path: ./, prune: true, sourceRef: {kind: GitRepository, name: repo}%s}
`, name, kubeConfig)
	}
	for _, tt := range []struct {
		name, spec, want string
	}{
		{"here", ", kubeConfig: {secretRef: {name: kc-b}}", "remote-owner"},
		{"there", ", kubeConfig: {secretRef: {name: kc-c, key: value.yaml}}", "remote-mismatch"},
		{"local", "", "owner-not-remote"},
		{"by-address", ", kubeConfig: {configMapRef: {name: addr-b}}", "remote-owner"},
		{"unreadable", ", kubeConfig: {secretRef: {name: missing}}", "remote-unresolved"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &testutil.Reader{}
			r.Objects = append(r.Objects,
				obj(t, ks(tt.name, tt.spec)),
				obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: kc-b, namespace: flux-system}, data: {value: `+kubeconfig("https://spoke-b:6443")+`}}`),
				obj(t, `{apiVersion: v1, kind: Secret, metadata: {name: kc-c, namespace: flux-system}, data: {value.yaml: `+kubeconfig("https://spoke-c:6443")+`}}`),
				obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: addr-b, namespace: flux-system}, data: {provider: aws, address: "https://spoke-b:6443"}}`),
			)
			owner := &model.Owner{Engine: Engine, Kind: "Kustomization", Namespace: "flux-system", Name: tt.name}
			notes := remoteNotes(context.Background(), r, owner, rm)
			if len(notes) != 1 || notes[0].Reason != tt.want {
				t.Fatalf("notes = %+v, want one %s", notes, tt.want)
			}
			if m := notes[0].Message; strings.Contains(m, "s3cr3t") {
				t.Errorf("note leaks the kubeconfig's token: %s", m)
			}
		})
	}
}
