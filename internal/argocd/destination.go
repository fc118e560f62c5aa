package argocd

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Where an Application deploys without --engine-context. Argo CD runs on
// the cluster whose Applications are read (its controller watches them in
// its own cluster), so the live object's cluster is Argo CD's in-cluster
// destination: https://kubernetes.default.svc, or the name "in-cluster"
// (argo-cd util/db/cluster.go GetCluster and GetClusterServersByName: the
// in-cluster server and name unless a cluster Secret registers them). Any
// other destination server is a cluster Argo CD reaches by that URL (its
// cluster Secret, util/settings/cluster_informer.go GetClusterByURL, which
// matches the URL exactly, trailing "/" trimmed); the kubeconfig names the
// live cluster by its own URL, and the two are compared here.
//
// Two URLs name the same endpoint when scheme, host, port (443 for https
// when absent) and path agree. Different URLs are "elsewhere" only when
// nothing suggests one cluster behind both: a loopback address on one side
// (a tunnel or port-forward on the user's side, the controller's own node
// on Argo CD's) and not the other, an IP address against a host name (one
// may resolve to the other; names are not resolved here), or a short host
// name against a longer one it begins. Those stay unresolved: today's
// verdict with a note, never the stronger claim.

// serverAddr is an API server URL reduced to what names the endpoint.
type serverAddr struct {
	scheme, host, port, path string
	ip                       net.IP
}

func parseServer(s string) (serverAddr, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		// rest.Config.Host may be host:port alone (https then).
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return serverAddr{}, err
	}
	if u.Hostname() == "" {
		return serverAddr{}, fmt.Errorf("%q has no host", s)
	}
	a := serverAddr{scheme: strings.ToLower(u.Scheme), host: strings.TrimSuffix(strings.ToLower(u.Hostname()), "."),
		port: u.Port(), path: strings.TrimRight(u.EscapedPath(), "/")}
	if a.port == "" {
		switch a.scheme {
		case "https":
			a.port = "443"
		case "http":
			a.port = "80"
		}
	}
	if ip := net.ParseIP(a.host); ip != nil {
		a.ip, a.host = ip, ip.String()
	}
	return a, nil
}

func (a serverAddr) loopback() bool {
	if a.ip != nil {
		return a.ip.IsLoopback() || a.ip.IsUnspecified()
	}
	return a.host == "localhost" || strings.HasSuffix(a.host, ".localhost")
}

// kubernetesService: the cluster's own kubernetes Service (the controller's
// in-cluster address of its API server under another name than Argo CD's
// in-cluster URL, e.g. kubernetes.default.svc.cluster.local).
func (a serverAddr) kubernetesService() bool {
	return a.host == "kubernetes" || a.host == "kubernetes.default" || a.host == "kubernetes.default.svc" ||
		strings.HasPrefix(a.host, "kubernetes.default.svc.")
}

func (a serverAddr) sameEndpoint(b serverAddr) bool {
	return a.scheme == b.scheme && a.port == b.port && a.path == b.path
}

// same: the same endpoint on the same host.
func (a serverAddr) same(b serverAddr) bool { return a.sameEndpoint(b) && a.host == b.host }

// sameServer reports whether two server URLs name the same endpoint.
func sameServer(a, b string) bool {
	x, errX := parseServer(a)
	y, errY := parseServer(b)
	if errX != nil || errY != nil {
		return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
	}
	return x.same(y)
}

// placeLocal says whether destination server dest (resolved as Argo CD
// does) is the cluster the kubeconfig reaches at self, and why when it is
// or cannot be told.
func placeLocal(dest, self string) (placement, string) {
	if strings.TrimRight(dest, "/") == InClusterServer {
		return deploysHere, "Argo CD's own cluster"
	}
	d, err := parseServer(dest)
	if err != nil {
		return unresolved, fmt.Sprintf("the server URL cannot be read (%v)", err)
	}
	s, err := parseServer(self)
	if err != nil {
		return unresolved, fmt.Sprintf("the kubeconfig's server URL %s cannot be read (%v)", self, err)
	}
	maybe := func(why string) (placement, string) {
		return unresolved, fmt.Sprintf("the kubeconfig reaches this cluster at %s, %s", self, why)
	}
	switch {
	case d.same(s):
		return deploysHere, "the kubeconfig's server"
	case d.kubernetesService() && d.scheme == "https":
		return deploysHere, "the cluster's own kubernetes Service"
	case d.loopback() && s.loopback():
		if d.sameEndpoint(s) {
			return deploysHere, "the kubeconfig's server (loopback)"
		}
	case d.loopback() != s.loopback():
		return maybe("and one of the two is a loopback address (a tunnel, a port-forward, the controller's own node): both may lead to this cluster")
	case (d.ip == nil) != (s.ip == nil):
		return maybe("and one of the two is an IP address, the other a host name that may resolve to it")
	case strings.HasPrefix(s.host, d.host+".") || strings.HasPrefix(d.host, s.host+"."):
		return maybe("and one host name is the other's short form")
	}
	return deploysElsewhere, ""
}
