package argocd

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// Hub and spoke: Applications and argocd-cm on the hub, their objects on
// spokes registered as cluster Secrets. Argo CD resolves an Application's
// destination (server, or name through the cluster Secrets) to a cluster
// (argo-cd util/argo/argo.go GetDestinationCluster; the Secrets are read
// by util/db/cluster.go, selected by the label below; the hub itself is
// the "in-cluster" https://kubernetes.default.svc).
const (
	// ClusterSecretLabel marks Argo CD's cluster Secrets
	// (common.LabelKeySecretType), with value ClusterSecretType.
	ClusterSecretLabel = "argocd.argoproj.io/secret-type"
	ClusterSecretType  = "cluster"
	// InClusterServer and InClusterName are the hub itself
	// (common.KubernetesInternalAPIServerAddr, InClusterName).
	InClusterServer = "https://kubernetes.default.svc"
	InClusterName   = "in-cluster"
)

var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// registeredCluster is a cluster Secret's name and server: nothing else of
// the Secret (its config holds credentials) is read or kept.
type registeredCluster struct {
	secret, name, server string
}

// hubClusterSecrets lists the hub's cluster Secrets in Argo CD's namespace.
func hubClusterSecrets(ctx context.Context, r model.Reader, namespace string) ([]registeredCluster, error) {
	list, err := r.List(ctx, secretGVK, namespace, ClusterSecretLabel+"="+ClusterSecretType)
	if err != nil {
		return nil, err
	}
	var out []registeredCluster
	for i := range list {
		s := &list[i]
		out = append(out, registeredCluster{secret: s.GetNamespace() + "/" + s.GetName(), name: secretKey(s, "name"), server: strings.TrimRight(secretKey(s, "server"), "/")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].secret < out[j].secret })
	return out, nil
}

// secretKey decodes one data key (stringData never comes back from the
// API server).
func secretKey(s *unstructured.Unstructured, key string) string {
	v, _, _ := unstructured.NestedString(s.Object, "data", key)
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// remoteNotes checks, for explain with --engine-context, that the
// Application the live object's tracking mark names deploys to the live
// object's cluster, and says which cluster Secret says so. It returns the
// destination server as Argo CD knows it (for resource.exclusions'
// cluster globs; "" when unresolved) and one note per problem: a
// destination that is another cluster, a cluster Secret whose server no
// context points at, two contexts for the live server.
func remoteNotes(ctx context.Context, a *Adapter, owner *model.Owner, rm *engine.Remote) (string, []model.Note) {
	note := func(level model.NoteLevel, reason, format string, args ...any) model.Note {
		return model.Note{Engine: model.EngineArgoCD, Level: level, Reason: reason, Message: fmt.Sprintf(format, args...)}
	}
	var notes []model.Note
	live := strings.TrimRight(rm.LiveServer, "/")
	if ctxs := rm.Contexts[rm.LiveServer]; len(ctxs) > 1 {
		notes = append(notes, note(model.NoteWarning, "same-server-contexts",
			"contexts %s point at the same server %s: the Applications deploying there are the same for each", strings.Join(ctxs, ", "), rm.LiveServer))
	}
	secrets, err := hubClusterSecrets(ctx, a.opts.Reader, a.opts.Namespace)
	if err != nil {
		notes = append(notes, note(model.NoteWarning, "cluster-secrets-unreadable",
			"cannot list Argo CD's cluster Secrets in %s on %s: destinations are matched by server URL only: %s", a.opts.Namespace, rm.EngineContext, oneLine(err.Error())))
	}
	known := map[string]bool{}
	for s := range rm.Contexts {
		known[strings.TrimRight(s, "/")] = true
	}
	for _, s := range secrets {
		if s.server != "" && s.server != InClusterServer && !known[s.server] {
			notes = append(notes, note(model.NoteInfo, "cluster-secret-no-context",
				"cluster Secret %s (name %q) registers server %s, which no context of the kubeconfig points at", s.secret, s.name, s.server))
		}
	}
	if owner == nil {
		return "", notes
	}
	e := a.appByKey(owner.Namespace + "/" + owner.Name)
	if e == nil {
		e, _ = a.appFromClusterOrMissing(ctx, owner.Namespace, owner.Name)
	}
	if e == nil {
		return "", notes
	}
	dest := e.app.Spec.Destination
	server, via := strings.TrimRight(dest.Server, "/"), "destination.server"
	if server == "" && dest.Name != "" {
		via = fmt.Sprintf("destination.name %q", dest.Name)
		if dest.Name == InClusterName {
			server = InClusterServer
		}
		for _, s := range secrets {
			if s.name == dest.Name {
				server, via = s.server, fmt.Sprintf("destination.name %q (cluster Secret %s)", dest.Name, s.secret)
				break
			}
		}
		if server == "" {
			notes = append(notes, note(model.NoteWarning, "destination-unresolved",
				"Application %s/%s: %s matches no cluster Secret on %s: cannot tell whether it deploys to this cluster (%s)", owner.Namespace, owner.Name, via, rm.EngineContext, rm.LiveServer))
			return "", notes
		}
	}
	target := server
	if server == InClusterServer {
		// The hub itself.
		target = strings.TrimRight(rm.EngineServer, "/")
	}
	if target != live {
		notes = append(notes, note(model.NoteWarning, "destination-mismatch",
			"Application %s/%s on %s deploys to %s (%s), not to the live object's cluster %s (context %s): its rules are not this object's", owner.Namespace, owner.Name, rm.EngineContext, server, via, rm.LiveServer, rm.LiveContext))
		return server, notes
	}
	notes = append(notes, note(model.NoteInfo, "hub-application",
		"Application %s/%s on %s deploys to this cluster (%s, %s)", owner.Namespace, owner.Name, rm.EngineContext, server, via))
	return server, notes
}
