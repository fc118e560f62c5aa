package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-drift/kubectl-drift/internal/version"
)

// Bounds of a request when --request-timeout is not given. kubectl itself
// waits forever by default (--request-timeout=0), which is how a server that
// accepts TCP and never answers TLS kept the tool hanging for minutes: a
// read-only explainer has no request that needs more than DefaultRequestTimeout.
const (
	// DefaultRequestTimeout bounds one request (headers and body), as
	// --request-timeout does. Watches are exempt: they are meant to stay open.
	DefaultRequestTimeout = 30 * time.Second
	// DialTimeout bounds the TCP connect; client-go already bounds the TLS
	// handshake at 10s (k8s.io/apimachinery/pkg/util/net SetTransportDefaults).
	DialTimeout = 10 * time.Second
)

// UserAgent is what every request of this build says it is:
// "kubectl-drift/v0.1.0 (linux/amd64)", the shape kubectl uses
// (k8s.io/client-go/rest/config.go DefaultKubernetesUserAgent).
func UserAgent() string {
	return fmt.Sprintf("kubectl-drift/%s (%s/%s)", version.Version(), runtime.GOOS, runtime.GOARCH)
}

// Bound makes every client built from flags (rest configs, discovery,
// RESTMapper, dry-run clients) identify as UserAgent and give up on a server
// that does not answer: DialTimeout to connect, DefaultRequestTimeout per
// request unless --request-timeout says otherwise, and, once the server
// failed to answer at all, every later request fails at once with the same
// error instead of waiting out its own timeout (discovery alone makes a
// dozen requests). Call it once per ConfigFlags, before AddFlags: it makes
// the --request-timeout default empty so an explicit "0" (no limit, as in
// kubectl) can be told from the flag's absence.
func Bound(flags *genericclioptions.ConfigFlags) {
	if flags.Timeout != nil && *flags.Timeout == "0" {
		*flags.Timeout = ""
	}
	l := &latch{}
	prev := flags.WrapConfigFn
	flags.WrapConfigFn = func(cfg *rest.Config) *rest.Config {
		if prev != nil {
			cfg = prev(cfg)
		}
		cfg.UserAgent = UserAgent()
		if cfg.Dial == nil {
			cfg.Dial = (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext
		}
		timeout := time.Duration(0)
		if flags.Timeout == nil || *flags.Timeout == "" {
			// No --request-timeout: ours, for everything but watches.
			timeout = DefaultRequestTimeout
		}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return &boundTransport{rt: rt, timeout: timeout, latch: l}
		})
		return cfg
	}
}

// TimeoutFlagUsage is the --request-timeout help with kubectl-drift's default.
const TimeoutFlagUsage = "The length of time to wait before giving up on a single server request (e.g. 10s, 2m). Default: 30s per request and 10s to connect; 0 means no limit."

// latch remembers that the server did not answer, for the rest of the
// command. It belongs to one ConfigFlags, so to one command run.
type latch struct {
	mu  sync.Mutex
	err error
}

func (l *latch) get() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *latch) set(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.mu.Unlock()
}

type boundTransport struct {
	rt      http.RoundTripper
	timeout time.Duration
	latch   *latch
}

func (t *boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.latch.get(); err != nil {
		return nil, err
	}
	parent := req.Context()
	cancel := context.CancelFunc(func() {})
	if t.timeout > 0 && !isWatch(req) {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(parent, t.timeout)
		req = req.WithContext(ctx)
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		cancel()
		// The caller giving up (Ctrl-C, --watch-timeout) says nothing
		// about the server.
		if parent.Err() == nil && noAnswer(err) {
			if errors.Is(err, context.DeadlineExceeded) && t.timeout > 0 {
				err = &NoAnswerError{Timeout: t.timeout, Err: err}
			}
			t.latch.set(err)
		}
		return nil, err
	}
	// The deadline covers reading the body too, as http.Client.Timeout does.
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

func isWatch(req *http.Request) bool {
	w := req.URL.Query().Get("watch")
	return w == "true" || w == "1"
}

// noAnswer is a failure that means the server did not answer at all (as
// opposed to a reset connection client-go retries, or an HTTP error).
func noAnswer(err error) bool {
	var (
		netErr net.Error
		dnsErr *net.DNSError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ECONNREFUSED),
		errors.As(err, &dnsErr):
		return true
	case errors.As(err, &netErr) && netErr.Timeout():
		return true
	}
	return strings.Contains(err.Error(), "TLS handshake timeout")
}

// NoAnswerError is a request that got no answer within DefaultRequestTimeout.
type NoAnswerError struct {
	Timeout time.Duration
	Err     error
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("no answer within %s (--request-timeout)", e.Timeout)
}

func (e *NoAnswerError) Unwrap() error { return e.Err }

type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// WrappedRoundTripper lets client-go reach the transport underneath
// (k8s.io/apimachinery/pkg/util/net RoundTripperWrapper), for CancelRequest.
func (t *boundTransport) WrappedRoundTripper() http.RoundTripper { return t.rt }
