package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// This file is the one home of --source for the commands that compare
// (explain, scan, normalize) and of the render environment every --source
// command (render, adopt) builds: the flags are RenderFlags (render.go).

// renderEnv reads the checkout. g's Scrubber learns every Secret value a
// renderer reads, its stderr hears of remote bases fetched, and its
// --request-timeout bounds such a fetch as it bounds a request; reader,
// when not nil, is the cluster the engines read (engine objects, sources,
// ConfigMaps and Secrets) and c, when not nil, the cluster whose
// discovery gives templates their Capabilities.
func (f *RenderFlags) renderEnv(g *GlobalOptions, reader model.Reader, c *cluster.Client) (*render.Env, error) {
	env, err := f.env()
	if err != nil {
		return nil, err
	}
	if g.Secrets != nil {
		env.Secrets = g.Secrets
	}
	env.Warn = g.warn
	// An engine object of the checkout without metadata.namespace is
	// looked up in the namespace its parent applies it to.
	env.Lands = render.LandsBy(env, engine.Renderers(nil))
	if env.FetchTimeout, err = g.fetchTimeout(); err != nil {
		return nil, err
	}
	env.Reader = reader
	switch {
	case c != nil:
		env.Capabilities = clusterCapabilities(c)
	case f.KubeVersion != "" || len(f.APIVersions) > 0:
		caps, err := render.StaticCapabilities(f.KubeVersion, f.APIVersions)
		if err != nil {
			return nil, err
		}
		env.Capabilities = func(context.Context) (*render.Capabilities, error) { return caps, nil }
	}
	return env, nil
}

// warn says msg on stderr, as a warning.
func (g *GlobalOptions) warn(msg string) {
	if g.ErrOut != nil {
		stderrf(g.ErrOut, "warning: %s\n", msg)
	}
}

// fetchTimeout bounds a fetch the way --request-timeout bounds a
// request: its value (kubectl's forms: "10s", "2m", or seconds), no
// limit for "0", and 0 when the flag is not given (the fetch's default).
func (g *GlobalOptions) fetchTimeout() (time.Duration, error) {
	if g.ConfigFlags == nil || g.ConfigFlags.Timeout == nil || *g.ConfigFlags.Timeout == "" {
		return 0, nil
	}
	v := *g.ConfigFlags.Timeout
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, fmt.Errorf("--request-timeout %q: %w", v, err)
		}
		d = time.Duration(n) * time.Second
	}
	if d == 0 {
		return math.MaxInt64, nil
	}
	return d, nil
}

// kustomizeOptions are -k's build options: remote bases said on stderr
// and bounded by --request-timeout, as --source's are.
func (g *GlobalOptions) kustomizeOptions() (source.KustomizeOptions, error) {
	d, err := g.fetchTimeout()
	return source.KustomizeOptions{FetchTimeout: d, Warn: g.warn}, err
}

// clusterCapabilities reads c's version and API versions once, on the
// first chart that asks (a checkout of Kustomizations never does).
func clusterCapabilities(c *cluster.Client) func(context.Context) (*render.Capabilities, error) {
	var (
		once sync.Once
		caps *render.Capabilities
		err  error
	)
	return func(context.Context) (*render.Capabilities, error) {
		once.Do(func() {
			v, apis, e := c.Capabilities()
			if e != nil {
				err = e
				return
			}
			caps = &render.Capabilities{KubeVersion: v.GitVersion, Major: v.Major, Minor: v.Minor, APIVersions: apis}
		})
		return caps, err
	}
}

// validateSourceFor checks --source and its companions for a command
// that compares one object (explain, normalize): it names at most one
// owner.
func (f *RenderFlags) validateSourceFor(command string) error {
	if len(f.refs()) > 1 {
		return fmt.Errorf("%s renders one owner: %s", command, f.oneOwnerOf())
	}
	return f.validate()
}

// validateSource checks --source and its companions against -f/-k.
func (o *ExplainOptions) validateSource() error {
	if o.Source != "" && (len(o.Filenames) > 0 || o.Kustomize != "") {
		return errors.New("--source and -f/-k are mutually exclusive: give the desired state one way")
	}
	return o.validateSourceFor("explain")
}

// desiredFromSource is explain's --source hook: the rendered document of
// live, which then goes the way of a -f document (the rendered objects
// join fileDocs, so the Flux adapter reads their ssa marks as it reads
// those of -f files): verdicts are those of -f with the rendered files.
func (o *ExplainOptions) desiredFromSource(ctx context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, model.DesiredSource, error) {
	src := model.SourceRendered
	var reader model.Reader
	if o.client != nil {
		reader = o.client
	}
	env, err := o.renderEnv(o.GlobalOptions, reader, o.client)
	if err != nil {
		return nil, src, err
	}
	defer func() { _ = env.Close() }()
	obj, ref, objs, err := drift.NewRendered(env, engine.Renderers(o.engineFlags), o.owner(), nil).Desired(ctx, live, o.namespace)
	o.remember(objs...)
	if err != nil {
		return nil, src, err
	}
	for _, r := range objs {
		o.fileDocs = append(o.fileDocs, source.Document{Object: r, File: ref.String()})
	}
	return obj, src, nil
}
