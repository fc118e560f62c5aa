package flux

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Remote clusters: a Kustomization or HelmRelease on a management cluster
// applies to another cluster through spec.kubeConfig (a Secret holding a
// kubeconfig, or a ConfigMap naming the cluster's address for workload
// identity). The objects it applies carry its name/namespace labels on the
// remote cluster, so with --engine-context the owner named by the labels
// is read from the management cluster. The Secret's key defaults to
// "value", then "value.yaml" (fluxcd/pkg runtime/secrets and
// kustomize-controller's getClientAndPoller via runtime/client
// KubeConfigOptions); the ConfigMap's server is its "address" key
// (fluxcd/pkg auth, provider-based kubeConfig).

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// remoteNotes says, for explain with --engine-context, whether the Flux
// owner named by the live object's labels on the management cluster
// applies to the live object's cluster: one note either way. Only the
// server URL is taken from the kubeconfig Secret; nothing else of it is
// kept or printed.
func remoteNotes(ctx context.Context, r model.Reader, owner *model.Owner, rm *engine.Remote) []model.Note {
	if owner == nil || r == nil {
		return nil
	}
	note := func(level model.NoteLevel, reason, format string, args ...any) []model.Note {
		return []model.Note{{Engine: Engine, Level: level, Reason: reason, Message: fmt.Sprintf(format, args...)}}
	}
	gvk := KustomizationGVK
	if owner.Kind == HelmReleaseGVK.Kind {
		gvk = HelmReleaseGVK
	}
	ref := fmt.Sprintf("%s %s/%s on %s", owner.Kind, owner.Namespace, owner.Name, rm.EngineContext)
	obj, err := r.Get(ctx, gvk, owner.Namespace, owner.Name)
	if err != nil {
		// The adapter reports a missing or unreadable owner itself.
		return nil
	}
	kc, found, _ := unstructured.NestedMap(obj.Object, "spec", "kubeConfig")
	if !found {
		return note(model.NoteWarning, "owner-not-remote",
			"%s has no spec.kubeConfig: it applies to its own cluster, not to the live object's (%s, context %s)", ref, rm.LiveServer, rm.LiveContext)
	}
	server, via := "", ""
	if name, ok, _ := unstructured.NestedString(kc, "secretRef", "name"); ok {
		key, _, _ := unstructured.NestedString(kc, "secretRef", "key")
		via = "spec.kubeConfig.secretRef " + name
		server = kubeconfigServer(ctx, r, owner.Namespace, name, key)
	} else if name, ok, _ := unstructured.NestedString(kc, "configMapRef", "name"); ok {
		via = "spec.kubeConfig.configMapRef " + name
		if cm, err := r.Get(ctx, configMapGVK, owner.Namespace, name); err == nil {
			server, _, _ = unstructured.NestedString(cm.Object, "data", "address")
		}
	}
	switch {
	case server == "":
		return note(model.NoteWarning, "remote-unresolved",
			"%s applies to a remote cluster through %s, whose server could not be read: cannot tell whether it is this cluster (%s)", ref, via, rm.LiveServer)
	case strings.TrimRight(server, "/") != strings.TrimRight(rm.LiveServer, "/"):
		return note(model.NoteWarning, "remote-mismatch",
			"%s applies to %s (%s), not to the live object's cluster %s (context %s)", ref, server, via, rm.LiveServer, rm.LiveContext)
	}
	return note(model.NoteInfo, "remote-owner",
		"%s applies to this cluster (%s) through %s", ref, server, via)
}

// kubeconfigServer is the server of the kubeconfig a Flux kubeConfig
// Secret holds ("" when unreadable).
func kubeconfigServer(ctx context.Context, r model.Reader, namespace, name, key string) string {
	s, err := r.Get(ctx, secretGVK, namespace, name)
	if err != nil {
		return ""
	}
	keys := []string{key}
	if key == "" {
		keys = []string{"value", "value.yaml"}
	}
	for _, k := range keys {
		v, ok, _ := unstructured.NestedString(s.Object, "data", k)
		if !ok {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return ""
		}
		cfg, err := clientcmd.Load(raw)
		if err != nil {
			return ""
		}
		if c, ok := cfg.Contexts[cfg.CurrentContext]; ok {
			if cl, ok := cfg.Clusters[c.Cluster]; ok {
				return cl.Server
			}
		}
		if len(cfg.Clusters) == 1 {
			for _, cl := range cfg.Clusters {
				return cl.Server
			}
		}
		return ""
	}
	return ""
}
