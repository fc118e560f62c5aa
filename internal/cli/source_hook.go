package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
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

// sourceDesired is --source's desired state: the engine object that
// applies a live object (named by its ownership marks, Renderer.Owner, or
// by the flags) is rendered from the checkout once, whatever the number of
// its objects asked about, and the live object's document in that render
// is its desired state, which then goes the way of a -f document. Safe for
// concurrent use (scan's workers).
type sourceDesired struct {
	env       *render.Env
	renderers []render.Renderer
	// override is the owner the flags name for explain and normalize,
	// whatever the marks say (an object without them).
	override *render.Ref
	// only limits scan to the owners the flags name (none: every owner).
	only []render.Ref

	mu    sync.Mutex
	cache map[render.Ref]*renderedOwner
	// Counts for scan's summary: objects compared with a render, objects
	// whose owner failed to render, objects no renderer's owner applies.
	compared, failed, unowned int
}

type renderedOwner struct {
	objs []*unstructured.Unstructured
	err  error
}

func newSourceDesired(env *render.Env, flags map[model.Engine]engine.Flags, override *render.Ref, only []render.Ref) *sourceDesired {
	return &sourceDesired{env: env, renderers: engine.Renderers(flags), override: override, only: only, cache: map[render.Ref]*renderedOwner{}}
}

// notRendered is the error of an object whose owner --source does not
// render (no renderer knows it, or scan's flags leave it out): scan infers
// its drift from managedFields, as without --source.
type notRendered struct{ err error }

func (e *notRendered) Error() string { return e.err.Error() }
func (e *notRendered) Unwrap() error { return e.err }

// owner is the engine object that applies live.
func (s *sourceDesired) owner(ctx context.Context, live *unstructured.Unstructured) (render.Ref, error) {
	if s.override != nil {
		return *s.override, nil
	}
	ref, ok := render.OwnerOf(s.renderers, live)
	if !ok {
		// No owner: ForLive says so, with the flags that name one.
		_, _, err := render.ForLive(ctx, s.env, s.renderers, live, nil)
		return ref, &notRendered{err}
	}
	if len(s.only) > 0 && !containsRef(s.only, ref) {
		return ref, &notRendered{fmt.Errorf("its owner %s is not among the engine objects named", ref)}
	}
	return ref, nil
}

func containsRef(refs []render.Ref, r render.Ref) bool {
	for _, x := range refs {
		if x.GVK.GroupKind() == r.GVK.GroupKind() && x.Namespace == r.Namespace && x.Name == r.Name {
			return true
		}
	}
	return false
}

// render returns the objects of ref, rendering it on first use. A render
// error names the engine object and, when the checkout holds it, its file.
func (s *sourceDesired) render(ctx context.Context, live *unstructured.Unstructured, ref render.Ref) ([]*unstructured.Unstructured, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Renders run one at a time: they share the Env (its Secret scrubber
	// and cluster reader) and a scan has few owners for many objects.
	if r, ok := s.cache[ref]; ok {
		return r.objs, r.err
	}
	_, objs, err := render.ForLive(ctx, s.env, s.renderers, live, &ref)
	if f := s.fileOf(ref); err != nil && f != "" {
		err = fmt.Errorf("%w (%s is in %s)", err, ref.GVK.Kind, f)
	}
	s.cache[ref] = &renderedOwner{objs: objs, err: err}
	return objs, err
}

// fileOf is the checkout file that holds the engine object ref, relative
// to the checkout, or "".
func (s *sourceDesired) fileOf(ref render.Ref) string {
	for _, f := range s.env.Files {
		if containsRef([]render.Ref{ref}, render.RefOf(f)) {
			p := s.env.FileOf(f)
			if rel, err := filepath.Rel(s.env.Root, p); err == nil {
				return rel
			}
			return p
		}
	}
	return ""
}

// desired returns live's document in its owner's render (a copy: the
// pipeline may change it), the owner, and the owner's rendered objects.
// namespace is where live objects without one are (explain's -n).
func (s *sourceDesired) desired(ctx context.Context, live *unstructured.Unstructured, namespace string) (*unstructured.Unstructured, render.Ref, []*unstructured.Unstructured, error) {
	ref, err := s.owner(ctx, live)
	if err != nil {
		s.count(&s.unowned)
		return nil, ref, nil, err
	}
	objs, err := s.render(ctx, live, ref)
	if err != nil {
		s.count(&s.failed)
		return nil, ref, nil, err
	}
	obj, err := drift.PickDocument(objs, live, namespace)
	if err != nil {
		s.count(&s.failed)
		return nil, ref, objs, fmt.Errorf("%s rendered from %s: %w", ref, s.env.Root, err)
	}
	s.count(&s.compared)
	return obj.DeepCopy(), ref, objs, nil
}

func (s *sourceDesired) count(n *int) {
	s.mu.Lock()
	*n++
	s.mu.Unlock()
}

// counts returns how many objects were compared with a render, failed to
// render and had no owner --source renders.
func (s *sourceDesired) counts() (compared, failed, unowned int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compared, s.failed, s.unowned
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
	obj, ref, objs, err := newSourceDesired(env, o.engineFlags, o.owner(), nil).desired(ctx, live, o.namespace)
	o.remember(objs...)
	if err != nil {
		return nil, src, err
	}
	for _, r := range objs {
		o.fileDocs = append(o.fileDocs, source.Document{Object: r, File: ref.String()})
	}
	return obj, src, nil
}
