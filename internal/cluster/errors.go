package cluster

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
)

// APIError is a failed request, rendered as one line that says what was
// asked and what to do. It unwraps to the API server's error, so
// apierrors.IsNotFound / IsForbidden see through it.
type APIError struct {
	Verb      string
	Resource  schema.GroupResource
	Namespace string
	Name      string
	Host      string
	Err       error
}

func (e *APIError) Error() string {
	what := describe(e.Resource, e.Name)
	where := ""
	if e.Namespace != "" {
		where = fmt.Sprintf(" in namespace %q", e.Namespace)
	} else if e.Verb == "list" {
		where = " at the cluster scope"
	}
	switch {
	case apierrors.IsNotFound(e.Err):
		if e.Name == "" {
			return fmt.Sprintf("%s not found%s", e.Resource.String(), where)
		}
		return fmt.Sprintf("%s not found%s", what, where)
	case apierrors.IsForbidden(e.Err):
		// kubectl-drift never writes: get and list are all it needs, so say
		// exactly which of those is missing.
		return fmt.Sprintf("forbidden: cannot %s %s%s%s; kubectl drift is read-only and needs the get and list verbs on %s",
			e.Verb, what, where, user(e.Err), e.Resource.String())
	case apierrors.IsUnauthorized(e.Err):
		return fmt.Sprintf("unauthorized: the API server at %s rejected the credentials (check --kubeconfig, --context, --token)", e.Host)
	}
	// ServerError returns its argument itself when it has nothing to add.
	if se := ServerError(e.Host, e.Err); se != e.Err { //nolint:errorlint // identity
		return se.Error()
	}
	return fmt.Sprintf("cannot %s %s%s: %s", e.Verb, what, where, oneLine(e.Err.Error()))
}

func (e *APIError) Unwrap() error { return e.Err }

// user extracts `User "x"` from a Forbidden message, so the one line says
// who was refused (impersonation makes that non-obvious).
func user(err error) string {
	msg := err.Error()
	i := strings.Index(msg, "User \"")
	if i < 0 {
		return ""
	}
	rest := msg[i+len("User \""):]
	j := strings.Index(rest, "\"")
	if j < 0 {
		return ""
	}
	return fmt.Sprintf(" as user %q", rest[:j])
}

func wrapAPIError(host, verb string, gr schema.GroupResource, namespace, name string, err error) error {
	if err == nil {
		return nil
	}
	return &APIError{Verb: verb, Resource: gr, Namespace: namespace, Name: name, Host: host, Err: err}
}

// UnreachableError says the API server could not be reached at all.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the Kubernetes API server at %s: %s (check --kubeconfig, --context, --server)", e.Host, cause(e.Err))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// UnknownTypeError is a resource type the server does not serve.
type UnknownTypeError struct {
	// Type is the type as written; Resource and Group, when set, are its
	// parts as kubectl parses them (schema.ParseResourceArg).
	Type            string
	Resource, Group string
	Err             error
}

// Error words it as kubectl does (k8s.io/cli-runtime pkg/resource/builder.go
// mappingFor), naming the group apart when there is one.
func (e *UnknownTypeError) Error() string {
	if e.Group != "" && e.Resource != "" {
		return fmt.Sprintf("the server doesn't have a resource type %q in group %q", e.Resource, e.Group)
	}
	return fmt.Sprintf("the server doesn't have a resource type %q", e.Type)
}

func (e *UnknownTypeError) Unwrap() error { return e.Err }

// ServerError turns a transport-level failure (connection refused, DNS,
// TLS, timeout) into an UnreachableError; other errors are returned as is.
func ServerError(host string, err error) error {
	if err == nil || !unreachable(err) {
		return err
	}
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return err
	}
	return &UnreachableError{Host: host, Err: err}
}

func unreachable(err error) bool {
	var (
		opErr   *net.OpError
		dnsErr  *net.DNSError
		urlErr  *url.Error
		unkAuth x509.UnknownAuthorityError
		hostErr x509.HostnameError
		certErr x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &opErr), errors.As(err, &dnsErr),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &unkAuth), errors.As(err, &hostErr), errors.As(err, &certErr):
		return true
	case errors.As(err, &urlErr):
		return true
	}
	// Discovery wraps transport errors in plain strings in places
	// (ErrGroupDiscoveryFailed, memcache), so fall back to the text.
	msg := err.Error()
	for _, s := range []string{"connection refused", "no such host", "i/o timeout", "dial tcp", "TLS handshake", "x509:", "context deadline exceeded", "EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// cause is the last, most specific part of a transport error
// ("dial tcp 127.0.0.1:1: connect: connection refused" -> "connection refused").
func cause(err error) string {
	var na *NoAnswerError
	if errors.As(err, &na) {
		return na.Error()
	}
	msg := oneLine(err.Error())
	for _, s := range []string{"connection refused", "no such host", "i/o timeout", "context deadline exceeded", "certificate signed by unknown authority"} {
		if strings.Contains(msg, s) {
			return s
		}
	}
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		return msg[i+2:]
	}
	return msg
}

// ConfigError explains a kubeconfig that cannot be used.
func ConfigError(err error) error {
	if err == nil {
		return nil
	}
	if clientcmd.IsEmptyConfig(err) {
		return errors.New("no Kubernetes configuration: set KUBECONFIG, pass --kubeconfig, or pass --server")
	}
	return fmt.Errorf("invalid Kubernetes configuration: %w", oneLineError{err})
}

// oneLineError is err told on one line (a multi-line kubeconfig error
// would break the one-line message), still unwrapping to err.
type oneLineError struct{ err error }

func (e oneLineError) Error() string { return oneLine(e.err.Error()) }
func (e oneLineError) Unwrap() error { return e.err }

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "\r", "")
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
