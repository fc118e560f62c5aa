package cluster

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Target is one object named on the command line, resolved against the
// server's discovery.
type Target struct {
	// GVR and GVK are the preferred version of the type.
	GVR schema.GroupVersionResource
	GVK schema.GroupVersionKind
	// Namespaced is false for cluster-scoped kinds (then Namespace is "").
	Namespaced bool
	Namespace  string
	Name       string
}

// String renders "deployments.apps/web".
func (t Target) String() string {
	return t.GVR.GroupResource().String() + "/" + t.Name
}

// ParseArgs splits "TYPE/NAME" or "TYPE NAME" into type and name, the
// two spellings kubectl get accepts for a single object.
func ParseArgs(args []string) (typ, name string, err error) {
	switch len(args) {
	case 1:
		t, n, ok := strings.Cut(args[0], "/")
		if !ok || t == "" || n == "" {
			return "", "", fmt.Errorf("expected TYPE/NAME or TYPE NAME, got %q", args[0])
		}
		if strings.Contains(n, "/") {
			return "", "", fmt.Errorf("invalid object name %q in %q", n, args[0])
		}
		return t, n, nil
	case 2:
		if strings.Contains(args[0], "/") || args[1] == "" || strings.Contains(args[1], "/") {
			return "", "", fmt.Errorf("expected TYPE/NAME or TYPE NAME, got %q", strings.Join(args, " "))
		}
		return args[0], args[1], nil
	}
	return "", "", fmt.Errorf("expected exactly one object as TYPE/NAME or TYPE NAME, got %d arguments", len(args))
}

// MappingFor resolves a resource or kind argument ("deploy",
// "deployments.apps", "deployments.v1.apps", "Deployment") to a REST
// mapping, in the same order kubectl's resource.Builder tries them
// (k8s.io/cli-runtime pkg/resource/builder.go, mappingFor): as a resource
// (fully specified, then group/resource through the short-name expander),
// then as a kind.
func MappingFor(mapper meta.RESTMapper, host, arg string) (*meta.RESTMapping, error) {
	fullySpecifiedGVR, groupResource := schema.ParseResourceArg(arg)
	var gvk schema.GroupVersionKind
	var discoveryErr error
	if fullySpecifiedGVR != nil {
		gvk, _ = mapper.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		var err error
		gvk, err = mapper.KindFor(groupResource.WithVersion(""))
		if err != nil && !meta.IsNoMatchError(err) {
			discoveryErr = err
		}
	}
	if !gvk.Empty() {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, ServerError(host, err)
		}
		return m, nil
	}

	fullySpecifiedGVK, groupKind := schema.ParseKindArg(arg)
	if fullySpecifiedGVK == nil {
		k := groupKind.WithVersion("")
		fullySpecifiedGVK = &k
	}
	if !fullySpecifiedGVK.Empty() {
		if m, err := mapper.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return m, nil
		}
	}
	m, err := mapper.RESTMapping(groupKind)
	if err == nil {
		return m, nil
	}
	if discoveryErr != nil && !meta.IsNoMatchError(discoveryErr) {
		// Discovery itself failed (server down, Forbidden on /apis): that,
		// not "unknown type", is what the user needs to hear.
		err = discoveryErr
	}
	if meta.IsNoMatchError(err) {
		return nil, &UnknownTypeError{Type: arg, Resource: groupResource.Resource, Group: groupResource.Group, Err: err}
	}
	// ServerError returns its argument itself when it has nothing to add.
	if se := ServerError(host, err); se != err { //nolint:errorlint // identity
		return nil, se
	}
	var nm *meta.NoResourceMatchError
	if errors.As(err, &nm) {
		return nil, &UnknownTypeError{Type: arg, Resource: groupResource.Resource, Group: groupResource.Group, Err: err}
	}
	// One line, but still the server's error underneath (a fleet scan
	// tells a refused token by it).
	return nil, &lineError{msg: fmt.Sprintf("cannot resolve resource type %q: %s", arg, oneLine(err.Error())), err: err}
}

// Resolve turns command-line arguments into a Target. namespace is the
// effective namespace (-n or the context's); it is dropped for
// cluster-scoped kinds.
func (c *Client) Resolve(args []string, namespace string) (Target, error) {
	typ, name, err := ParseArgs(args)
	if err != nil {
		return Target{}, err
	}
	m, err := MappingFor(c.mapper, c.config.Host, typ)
	if err != nil {
		return Target{}, err
	}
	t := Target{GVR: m.Resource, GVK: m.GroupVersionKind, Name: name}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		t.Namespaced = true
		t.Namespace = namespace
	}
	return t, nil
}
