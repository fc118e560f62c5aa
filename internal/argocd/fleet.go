package argocd

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"sync"

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

// Where an Application deploys, seen from the live object's cluster.
type placement int

const (
	// deploysHere: the destination is the live object's cluster.
	deploysHere placement = iota
	// deploysElsewhere: another cluster (another spoke, or the hub).
	deploysElsewhere
	// unresolved: the destination cannot be resolved to a server (a name
	// no cluster Secret has, or several have; name and server both set).
	unresolved
)

// destination is an Application's destination resolved as Argo CD does.
type destination struct {
	where placement
	// server is the destination server as Argo CD knows it (for
	// resource.exclusions' cluster globs); "" when unresolved.
	server string
	// via says how it was resolved, or why it was not.
	via string
	// why says, without --engine-context, how server was matched with the
	// live object's cluster, or why it could not be.
	why string
}

// hub is the hub's cluster registrations and where the live object is.
type hub struct {
	rm      *engine.Remote
	secrets []registeredCluster
	// secretsErr is why the cluster Secrets could not be listed.
	secretsErr error
	// lazy, when set, lists the cluster Secrets on the first destination
	// that names a cluster (setLocal): a destination by server needs
	// none, and explain of an Application deploying to
	// https://kubernetes.default.svc must not list them.
	lazy *lazySecrets
	// local: no --engine-context; Argo CD runs on the live object's
	// cluster, which the kubeconfig reaches at rm.LiveServer (and
	// rm.EngineServer).
	local bool
}

// lazySecrets lists the cluster Secrets once, on first need.
type lazySecrets struct {
	once    sync.Once
	list    func() ([]registeredCluster, error)
	secrets []registeredCluster
	err     error
}

// clusterSecrets are the hub's cluster Secrets, listed now if lazy.
func (h *hub) clusterSecrets() ([]registeredCluster, error) {
	if h.lazy == nil {
		return h.secrets, h.secretsErr
	}
	l := h.lazy
	l.once.Do(func() { l.secrets, l.err = l.list() })
	return l.secrets, l.err
}

// where names the hub in messages.
func (h *hub) where() string {
	if h.local {
		return "this cluster"
	}
	return h.rm.EngineContext
}

// resolve mirrors util/argo/argo.go GetDestinationCluster: server and name
// both set is an error; a name resolves through the cluster Secrets with
// that name (util/db/cluster.go GetClusterServersByName: none or several
// is an error; "in-cluster" is the hub unless a Secret registers the hub
// under another name); a server is taken as is.
func (h *hub) resolve(d Destination) destination {
	server, via := strings.TrimRight(d.Server, "/"), "destination.server"
	var secrets []registeredCluster
	var secretsErr error
	if d.Name != "" && d.Server == "" {
		secrets, secretsErr = h.clusterSecrets()
	}
	switch {
	case d.Server != "" && d.Name != "":
		return destination{where: unresolved, via: fmt.Sprintf("destination has both name %q and server %s, which Argo CD refuses", d.Name, d.Server)}
	case d.Name != "" && secretsErr != nil && d.Name != InClusterName:
		return destination{where: unresolved, via: fmt.Sprintf("destination.name %q cannot be looked up: Argo CD's cluster Secrets could not be listed (%s)", d.Name, oneLine(secretsErr.Error()))}
	case d.Name != "":
		var named []registeredCluster
		inClusterSecret := false
		for _, s := range secrets {
			if s.name == d.Name {
				named = append(named, s)
			}
			inClusterSecret = inClusterSecret || s.server == InClusterServer
		}
		switch {
		case len(named) == 1:
			server, via = named[0].server, fmt.Sprintf("destination.name %q (cluster Secret %s)", d.Name, named[0].secret)
		case len(named) > 1:
			names := make([]string, len(named))
			for i, s := range named {
				names[i] = s.secret
			}
			return destination{where: unresolved, via: fmt.Sprintf("destination.name %q is the name of %d cluster Secrets (%s), which Argo CD refuses", d.Name, len(named), strings.Join(names, ", "))}
		case d.Name == InClusterName && !inClusterSecret:
			server, via = InClusterServer, fmt.Sprintf("destination.name %q", d.Name)
		default:
			return destination{where: unresolved, via: fmt.Sprintf("destination.name %q matches no cluster Secret on %s", d.Name, h.where())}
		}
	case server == "":
		return destination{where: unresolved, via: "the Application has no destination"}
	}
	if h.local {
		where, why := placeLocal(server, h.rm.LiveServer)
		return destination{where: where, server: server, via: via, why: why}
	}
	target := server
	if server == InClusterServer {
		// The hub itself.
		target = strings.TrimRight(h.rm.EngineServer, "/")
		via += ", the hub " + target
	}
	if sameServer(target, h.rm.LiveServer) {
		return destination{where: deploysHere, server: server, via: via}
	}
	return destination{where: deploysElsewhere, server: server, via: via}
}

// remoteState is the adapter's hub-and-spoke state (--engine-context):
// where the live objects are and where each known Application deploys.
type remoteState struct {
	hub hub
	// dest are the known Applications' destinations, by namespace/name.
	dest map[string]destination

	mu sync.Mutex
	// refused are, by Application, the objects Owner did not give to an
	// Application that deploys elsewhere; unsure those given to one whose
	// destination is unresolved (for the scan's warnings). Sets: Owner is
	// asked more than once about an object.
	refused, unsure map[string]map[string]bool
}

// setRemote reads the hub's cluster Secrets, resolves every known
// Application's destination (after Load), and returns the fleet's
// problems, one note each: the Secrets cannot be read, two contexts point
// at the live server, a Secret's server is no context's, two Secrets
// register the same server. From then on Owner gives no object to an
// Application that deploys to another cluster.
func (a *Adapter) setRemote(ctx context.Context, rm *engine.Remote) []model.Note {
	var notes []model.Note
	note := func(level model.NoteLevel, reason, format string, args ...any) {
		notes = append(notes, model.Note{Engine: Engine, Level: level, Reason: reason, Message: fmt.Sprintf(format, args...)})
	}
	if ctxs := rm.Contexts[rm.LiveServer]; len(ctxs) > 1 {
		note(model.NoteWarning, "same-server-contexts",
			"contexts %s point at the same server %s: the Applications deploying there are the same for each", strings.Join(ctxs, ", "), rm.LiveServer)
	}
	secrets, err := hubClusterSecrets(ctx, a.opts.Reader, a.opts.Namespace)
	if err != nil {
		note(model.NoteWarning, "cluster-secrets-unreadable",
			"cannot list Argo CD's cluster Secrets in %s on %s: destinations are matched by server URL only: %s", a.opts.Namespace, rm.EngineContext, oneLine(err.Error()))
	}
	known := map[string]bool{}
	for s := range rm.Contexts {
		known[strings.TrimRight(s, "/")] = true
	}
	byServer := map[string][]string{}
	for _, s := range secrets {
		if s.server != "" && s.server != InClusterServer && !known[s.server] {
			note(model.NoteInfo, "cluster-secret-no-context",
				"cluster Secret %s (name %q) registers server %s, which no context of the kubeconfig points at", s.secret, s.name, s.server)
		}
		if s.server != "" {
			byServer[s.server] = append(byServer[s.server], s.secret)
		}
	}
	servers := make([]string, 0, len(byServer))
	for s := range byServer {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	for _, s := range servers {
		if len(byServer[s]) > 1 {
			// util/db/cluster.go GetCluster takes the first Secret its
			// index returns for the server: which one is not defined.
			note(model.NoteWarning, "duplicate-cluster-secrets",
				"cluster Secrets %s all register server %s: Argo CD uses one of them (which is not defined) for its name and credentials", strings.Join(byServer[s], ", "), s)
		}
	}
	a.place(hub{rm: rm, secrets: secrets})
	return notes
}

// place resolves every known Application's destination on h; from then on
// Owner gives no object to an Application that deploys elsewhere.
func (a *Adapter) place(h hub) {
	rs := &remoteState{hub: h, dest: map[string]destination{}, refused: map[string]map[string]bool{}, unsure: map[string]map[string]bool{}}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range []map[string]*appEntry{a.apps, a.generated} {
		for key, e := range m {
			rs.dest[key] = rs.hub.resolve(e.app.Spec.Destination)
		}
	}
	a.remote = rs
}

// setLocal is setRemote without --engine-context: Argo CD runs on the
// cluster the adapter reads, the live object's, which the kubeconfig
// reaches at server. Every known Application's destination is resolved
// against it (destination.go): from then on Owner gives no object to an
// Application that deploys to another cluster, since Argo CD's controller
// compares and heals only its destination's objects. The cluster Secrets
// are listed once, when a destination by name first needs them
// (unreadable, such a destination stays unresolved); a destination by
// server is matched without them.
func (a *Adapter) setLocal(ctx context.Context, server string) {
	h := hub{rm: &engine.Remote{EngineServer: server, LiveServer: server}, local: true}
	r, ns := a.opts.Reader, a.opts.Namespace
	h.lazy = &lazySecrets{list: func() ([]registeredCluster, error) { return hubClusterSecrets(ctx, r, ns) }}
	a.place(h)
}

// knowsApplications: Load found some Application (or ApplicationSet).
func (a *Adapter) knowsApplications() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.apps) > 0 || len(a.generated) > 0
}

// hasPlacement: Applications' destinations are matched with the live
// object's cluster (setRemote or setLocal ran).
func (a *Adapter) hasPlacement() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.remote != nil
}

// forget drops what was matched or seen for Application key, which
// changed (UpdateOwner).
func (rs *remoteState) forget(key string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	delete(rs.dest, key)
	delete(rs.refused, key)
	delete(rs.unsure, key)
}

// placed says whether Owner gives obj to Application key: not when the
// Application deploys to another cluster than the live one. It records
// what it decided for the scan's warnings.
func (a *Adapter) placed(key string, obj *unstructured.Unstructured) bool {
	a.mu.Lock()
	rs := a.remote
	a.mu.Unlock()
	if rs == nil {
		return true
	}
	// An Application read after setRemote/setLocal (Judge reads one the
	// list did not have) is resolved the same way.
	e := a.appByKey(key)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	d, ok := rs.dest[key]
	if !ok && e != nil {
		d, ok = rs.hub.resolve(e.app.Spec.Destination), true
		rs.dest[key] = d
	}
	if !ok || d.where == deploysHere {
		return true
	}
	seen := rs.refused
	if d.where == unresolved {
		seen = rs.unsure
	}
	if seen[key] == nil {
		seen[key] = map[string]bool{}
	}
	gvk := obj.GroupVersionKind()
	seen[key][gvk.Group+"/"+gvk.Kind+" "+obj.GetNamespace()+"/"+obj.GetName()] = true
	return d.where != deploysElsewhere
}

// OwnerWarnings implements scan.OwnerWarner: after a scan with
// --engine-context, one line per Application whose tracking id was on
// objects of the scanned cluster while it deploys elsewhere (those objects
// are not counted as its), or whose destination is unresolved.
func (a *Adapter) OwnerWarnings() []string {
	a.mu.Lock()
	rs := a.remote
	a.mu.Unlock()
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []string
	if rs.hub.local {
		for key, objs := range rs.refused {
			d := rs.dest[key]
			out = append(out, fmt.Sprintf("Application %s deploys to %s (%s), not to this cluster (%s): %d object(s) here carry its tracking id; Argo CD reconciles only its destination's objects, so they are not counted as its",
				key, d.server, d.via, rs.hub.rm.LiveServer, len(objs)))
		}
		for key, objs := range rs.unsure {
			out = append(out, fmt.Sprintf("Application %s: %s; its %d object(s) here are judged as its", key, unmatched(rs.dest[key], rs.hub.rm.LiveServer), len(objs)))
		}
		sort.Strings(out)
		return out
	}
	for key, objs := range rs.refused {
		d, n := rs.dest[key], len(objs)
		out = append(out, fmt.Sprintf("Application %s on %s deploys to %s (%s), not to %s: %d object(s) there carry its tracking id and are not owned by it",
			key, rs.hub.rm.EngineContext, d.server, d.via, rs.hub.rm.LiveContext, n))
	}
	for key, objs := range rs.unsure {
		n := len(objs)
		out = append(out, fmt.Sprintf("Application %s on %s: %s: whether it deploys to %s is unknown; its %d object(s) there are judged with its rules",
			key, rs.hub.rm.EngineContext, rs.dest[key].via, rs.hub.rm.LiveContext, n))
	}
	sort.Strings(out)
	return out
}

// remoteNotes says, for explain with --engine-context, whether the
// Application the live object's tracking mark names deploys to the live
// object's cluster, and which cluster Secret says so (setRemote ran). It
// returns the destination server as Argo CD knows it (for
// resource.exclusions' cluster globs; "" when unresolved or elsewhere) and
// one note: hub-application, destination-mismatch (the object is then not
// the Application's) or destination-unresolved.
func remoteNotes(ctx context.Context, a *Adapter, obj *unstructured.Unstructured) (string, []model.Note) {
	a.mu.Lock()
	rs := a.remote
	a.mu.Unlock()
	owner := a.trackedOwner(obj)
	if rs == nil || owner == nil {
		return "", nil
	}
	key := owner.Namespace + "/" + owner.Name
	e := a.appByKey(key)
	if e == nil {
		// Not in the list (another namespace, namespaced RBAC): read it.
		e, _ = a.appFromClusterOrMissing(ctx, owner.Namespace, owner.Name)
	}
	if e == nil {
		return "", nil
	}
	d := rs.hub.resolve(e.app.Spec.Destination)
	rs.mu.Lock()
	rs.dest[key] = d
	rs.mu.Unlock()
	note := func(level model.NoteLevel, reason, format string, args ...any) []model.Note {
		return []model.Note{{Engine: Engine, Level: level, Reason: reason, Message: fmt.Sprintf(format, args...)}}
	}
	rm := rs.hub.rm
	if rs.hub.local {
		switch d.where {
		case deploysElsewhere:
			// As below: nothing on this cluster reconciles the object.
			n := note(model.NoteWarning, "destination-mismatch",
				"Application %s deploys to %s (%s), not to this cluster (%s): Argo CD compares and heals only its destination's objects, so nothing reverts this object's fields, though its tracking id names the Application",
				key, d.server, d.via, rm.LiveServer)
			n[0].AboutObject = true
			return "", n
		case unresolved:
			return "", note(model.NoteWarning, "destination-unresolved", "Application %s: %s; judged as its Application's, as if it deployed here", key, unmatched(d, rm.LiveServer))
		}
		return d.server, nil
	}
	switch d.where {
	case deploysElsewhere:
		// Argo CD compares an Application with the objects of its
		// destination cluster only (controller/state.go CompareAppState
		// reads them with liveStateCache.GetManagedLiveObjs for the
		// destination's cluster cache, controller/cache/cache.go), so
		// nothing reconciles this object, though its tracking id says
		// so: a finding about the object, kept under --engine auto
		// where the Application is no owner.
		n := note(model.NoteWarning, "destination-mismatch",
			"Application %s on %s deploys to %s (%s), not to the live object's cluster %s (context %s): the object is not its, though its tracking id names it",
			key, rm.EngineContext, d.server, d.via, rm.LiveServer, rm.LiveContext)
		n[0].AboutObject = true
		return "", n
	case unresolved:
		return "", note(model.NoteWarning, "destination-unresolved",
			"Application %s: %s: cannot tell whether it deploys to this cluster (%s); judged with its rules", key, d.via, rm.LiveServer)
	}
	return d.server, note(model.NoteInfo, "hub-application",
		"Application %s on %s deploys to this cluster (%s, %s)", key, rm.EngineContext, d.server, d.via)
}

// unmatched says why destination d (unresolved, without
// --engine-context) could not be matched with this cluster at self.
func unmatched(d destination, self string) string {
	if d.server == "" {
		return fmt.Sprintf("%s: its destination could not be matched with this cluster (%s)", d.via, self)
	}
	return fmt.Sprintf("its destination %s (%s) could not be matched with this cluster: %s", d.server, d.via, d.why)
}
