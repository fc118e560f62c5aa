package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/fight"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
	"github.com/kubectl-drift/kubectl-drift/internal/serve"
)

// ServeOptions are the flags of `serve`.
type ServeOptions struct {
	*GlobalOptions

	Selection
	Resync             time.Duration
	MetricsBindAddress string
	Pprof              bool
	FightFlips         int
	FightWindow        time.Duration
	FightNames         bool
	IncludeControllers bool
	QPS                float32
	Burst              int
	// EngineCluster is where the engines' objects live, when not on the
	// watched cluster (an Argo CD hub, a Flux management cluster).
	EngineCluster EngineClusterOptions

	namespace string
	server    *serve.Server
	kinds     int
}

// NewServeOptions returns the defaults.
func NewServeOptions(g *GlobalOptions) *ServeOptions {
	return &ServeOptions{
		GlobalOptions:      g,
		Resync:             10 * time.Minute,
		MetricsBindAddress: ":8080",
		FightFlips:         fight.DefaultFlips,
		FightWindow:        fight.DefaultWindow,
		QPS:                20,
		Burst:              40,
	}
}

// serveGCPercent is serve's GOGC unless the environment sets one. Its heap
// is mostly the informer cache, live for the whole run; Go's default (100)
// lets the heap grow to twice that before collecting. A quarter of that
// headroom keeps serve over 10,000 objects under 300 MB RSS (264 MB with
// 25, 311 MB with 50: hack/bench-serve.sh, docs/serve.md); the price is GC
// CPU while the cache changes much (start-up, a re-list), little at steady
// state, where the cache changes slowly.
const serveGCPercent = 25

// ownerKinds are the engines' objects the adapters judge with
// (engine.OwnerKind), cached by informers over all namespaces.
func ownerKinds() []schema.GroupKind {
	var out []schema.GroupKind
	for _, d := range engine.All() {
		for _, k := range d.OwnerKinds {
			out = append(out, k.GVK.GroupKind())
		}
	}
	return out
}

func newServeCommand(g *GlobalOptions) *cobra.Command {
	o := NewServeOptions(g)
	cmd := &cobra.Command{
		Use:   "serve [-A | -n NAMESPACE] [-l SELECTOR] [--kinds KINDS] [--metrics-bind-address ADDR]",
		Short: "Watch drift continuously and expose it, and fights, as Prometheus metrics",
		Long: `Serve watches the kinds scan covers with shared informers (one LIST and one
WATCH per kind, re-listing after 410 Gone and reconnecting after an API server
restart) and re-explains an object on each change with scan's pipeline, from
the cache: no request per event. It serves /metrics (scan -o prometheus's
metrics, plus fights and reverts), /healthz, /readyz (once the informers
synced) and, with --pprof, /debug/pprof, until SIGTERM or interrupt.

A fight is a field that a GitOps engine and another field manager keep writing
in turn: --fight-flips flips (engine→other or other→engine, with a different
value) within --fight-window. An edit that the engine reverts once is two
flips, not a fight. kubectl_drift_fights{namespace,kind,field,engine,manager}
names the other writer; --fight-names adds the object name (one series per
object).

--engine-context/--engine-kubeconfig: the engines' objects and settings
(Applications, argocd-cm, Kustomizations, HelmReleases) are watched on the
cluster where the engine runs, as explain and scan read them there; the
watched objects stay the current context's, and each owner must deploy to
it (an Argo CD Application's destination, a Flux spec.kubeConfig).

RBAC: get, list and watch only. A kind that may not be listed is a warning and
counts in kubectl_drift_scan_kinds{result="skipped"}.

Exit codes: 0 stopped by a signal, 2 error.`,
		Example: `  # Every namespace, metrics on :8080
  ` + g.Frontend.Name + ` serve -A

  # A spoke of an Argo CD hub: Applications and argocd-cm are the hub's
  ` + g.Frontend.Name + ` serve -A --engine-kubeconfig /etc/drift/hub.kubeconfig

  # One namespace, fights named per object, profiling on
  ` + g.Frontend.Name + ` serve -n shop --fight-names --pprof --metrics-bind-address 127.0.0.1:9402`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			if err := o.Complete(cmd.Context()); err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.addSelectionFlags(cmd, "watch")
	f.DurationVar(&o.Resync, "resync", o.Resync, "Re-explain every cached object this often (0: only on change)")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "Address to serve /metrics, /healthz and /readyz on")
	f.BoolVar(&o.Pprof, "pprof", false, "Also serve /debug/pprof on the metrics address")
	f.IntVar(&o.FightFlips, "fight-flips", o.FightFlips, "Flips between the engine's value and another manager's that make a fight")
	f.DurationVar(&o.FightWindow, "fight-window", o.FightWindow, "Window the flips of a fight must fall in")
	f.BoolVar(&o.FightNames, "fight-names", false, "Add the object name to kubectl_drift_fights (one series per object)")
	f.BoolVar(&o.IncludeControllers, "include-controllers", false, "Also report fields owned only by built-in controllers (kube-controller-manager...)")
	f.Float32Var(&o.QPS, "qps", o.QPS, "Client-side limit of API requests per second")
	f.IntVar(&o.Burst, "burst", o.Burst, "Client-side burst of API requests")
	addEngineClusterFlags(f, &o.EngineCluster)
	return cmd
}

// Validate checks the flags alone, before any cluster access.
func (o *ServeOptions) Validate() error {
	if err := o.ValidateEngine(); err != nil {
		return err
	}
	if err := o.validateSelector(); err != nil {
		return err
	}
	if o.Resync < 0 {
		return errors.New("--resync must not be negative")
	}
	if o.FightFlips < 2 {
		return errors.New("--fight-flips must be at least 2 (one flip is any edit)")
	}
	if o.FightWindow <= 0 {
		return errors.New("--fight-window must be positive")
	}
	if o.QPS <= 0 || o.Burst <= 0 {
		return errors.New("--qps and --burst must be positive")
	}
	if _, _, err := net.SplitHostPort(o.MetricsBindAddress); err != nil {
		return fmt.Errorf("invalid --metrics-bind-address %q: %w", o.MetricsBindAddress, drift.OneLineError(err))
	}
	return o.EngineCluster.validate(false)
}

// Complete builds the clients, resolves and checks the kinds, builds the
// adapters over the informer cache and listens on the metrics address.
func (o *ServeOptions) Complete(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	c, err := cluster.New(o.ConfigFlags, cluster.Options{QPS: o.QPS, Burst: o.Burst})
	if err != nil {
		return err
	}
	if o.namespace, err = o.resolveNamespace(c); err != nil {
		return err
	}
	dyn, err := o.informerClient(o.ConfigFlags)
	if err != nil {
		return err
	}
	owner, err := o.engineCluster(c, dyn)
	if err != nil {
		return err
	}
	usable, skipped, warns, err := o.watchedKinds(ctx, c, dyn)
	if err != nil {
		return err
	}
	owners, owarns := cachedOwnerKinds(ctx, owner)
	cache := serve.NewOwnerCache(owner.dyn, owners)
	// The adapters' settings (argocd-cm...) are read now, directly; the
	// owner cache then watches them, and a change rebuilds the adapters
	// from its informers (no restart, no request).
	pipeline := o.pipeline(cache, c, owner.remote)
	pipe, awarns, err := pipeline(ctx)
	if err != nil {
		return err
	}
	for _, w := range slices.Concat(warns, owarns, awarns) {
		stderrf(o.ErrOut, "warning: %s\n", w)
	}
	ln, err := net.Listen("tcp", o.MetricsBindAddress)
	if err != nil {
		return fmt.Errorf("--metrics-bind-address: %w", err)
	}
	o.server, err = serve.New(serve.Options{
		Client:        dyn,
		Kinds:         usable,
		SkippedKinds:  skipped,
		Owners:        cache,
		Namespace:     o.namespace,
		LabelSelector: o.LabelSelector,
		Resync:        o.Resync,
		Explain:       pipe.Explain,
		Owned:         pipe.Owned,
		Culprit:       pipe.Culprit,
		Precheck:      pipe.Precheck,
		Follow:        pipe.Follow,
		Touches:       pipe.Touches,
		Reload: func(ctx context.Context) (serve.Pipeline, error) {
			p, warns, err := pipeline(ctx)
			for _, w := range warns {
				stderrf(o.ErrOut, "warning: %s\n", w)
			}
			return p, err
		},
		Fight:      fight.Config{Flips: o.FightFlips, Window: o.FightWindow},
		FightNames: o.FightNames,
		Listener:   ln,
		Pprof:      o.Pprof,
		Warn:       func(msg string) { stderrf(o.ErrOut, "warning: %s\n", msg) },
		Log:        func(msg string) { stderrf(o.ErrOut, "%s\n", msg) },
	})
	if err != nil {
		_ = ln.Close()
		return err
	}
	o.kinds = len(usable)
	return nil
}

// ownerSide is where the engines' objects are read: a dynamic client and
// mapper for their informers, and the remote setup the adapters are told
// of (nil on the watched cluster).
type ownerSide struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	remote *engine.Remote
}

// engineCluster is the watched cluster, or with --engine-context /
// --engine-kubeconfig the engine's, through its own informers.
func (o *ServeOptions) engineCluster(c *cluster.Client, dyn dynamic.Interface) (ownerSide, error) {
	if !o.EngineCluster.enabled() {
		return ownerSide{dyn: dyn, mapper: c.Mapper()}, nil
	}
	ec, err := o.EngineCluster.client(o.ConfigFlags, cluster.Options{QPS: o.QPS, Burst: o.Burst})
	if err != nil {
		return ownerSide{}, err
	}
	rm, err := o.EngineCluster.remote(o.ConfigFlags, "", c, ec)
	if err != nil {
		return ownerSide{}, err
	}
	odyn, err := o.informerClient(o.EngineCluster.flags(o.ConfigFlags))
	if err != nil {
		return ownerSide{}, fmt.Errorf("--engine-context: %w", err)
	}
	return ownerSide{dyn: odyn, mapper: ec.Mapper(), remote: rm}, nil
}

// watchedKinds resolves --kinds to the kinds that may be listed and
// watched; the others are counted as skipped, each with a warning.
func (o *ServeOptions) watchedKinds(ctx context.Context, c *cluster.Client, dyn dynamic.Interface) (usable []scan.Kind, skipped int, warns []string, err error) {
	kinds, warns, err := scan.ResolveKinds(c.Mapper(), c.Discovery(), c.Host(), o.Kinds, "list", "watch")
	if err != nil {
		return nil, 0, nil, err
	}
	for _, k := range kinds {
		if err := canList(ctx, dyn, k, o.namespace); err != nil {
			warns = append(warns, fmt.Sprintf("%s not watched: %s", k, oneLine(err.Error())))
			skipped++
			continue
		}
		usable = append(usable, k)
	}
	if len(usable) == 0 {
		return nil, 0, nil, errors.New("no kinds to watch: the server serves none of the requested kinds, or none may be listed")
	}
	return usable, skipped, warns, nil
}

// cachedOwnerKinds are the engines' kinds installed and listable on the
// owner side, cached by informers; an engine not installed is left out,
// a kind that may not be listed is read one object at a time (warned).
func cachedOwnerKinds(ctx context.Context, owner ownerSide) (owners []scan.Kind, warns []string) {
	for _, gk := range ownerKinds() {
		m, err := owner.mapper.RESTMapping(gk)
		if err != nil {
			continue // engine not installed
		}
		k := scan.Kind{GVR: m.Resource, GVK: m.GroupVersionKind, Namespaced: true}
		if err := canList(ctx, owner.dyn, k, ""); err != nil {
			warns = append(warns, fmt.Sprintf("%s not cached (owners read one by one): %s", k, oneLine(err.Error())))
			continue
		}
		owners = append(owners, k)
	}
	return owners, warns
}

// pipeline builds the adapters over the owner cache and serve's per-object
// steps from them; serve calls it again when an engine's settings change.
func (o *ServeOptions) pipeline(cache *serve.OwnerCache, c *cluster.Client, rm *engine.Remote) func(context.Context) (serve.Pipeline, []string, error) {
	return func(ctx context.Context) (serve.Pipeline, []string, error) {
		adapters, warns, err := engineAdapters(ctx, o.Engine, cache, c, rm)
		if err != nil {
			return serve.Pipeline{}, nil, err
		}
		in := &scan.Inspector{Adapters: adapters, IncludeControllers: o.IncludeControllers}
		return serve.Pipeline{
			Explain: in.ExplainObject,
			Owned: func(k scan.Kind, obj *unstructured.Unstructured) bool {
				_, owned := in.PrecheckObject(k, obj)
				return owned
			},
			Culprit: in.Culprit,
			Precheck: func(k scan.Kind, raw []byte) (bool, error) {
				cand, _, err := in.Precheck(k, raw)
				return cand != nil, err
			},
			Follow:  in.UpdateOwner,
			Touches: in.Touches,
		}, warns, nil
	}
}

// informerClient is a dynamic client for informers, built from flags'
// kubeconfig without the command-wide "server did not answer" latch of
// cluster.Bound: a long-running process must outlive an API server
// restart, which client-go's reflectors ride out by retrying.
func (o *ServeOptions) informerClient(flags *genericclioptions.ConfigFlags) (dynamic.Interface, error) {
	cfg, err := flags.ToRawKubeConfigLoader().ClientConfig()
	if err != nil {
		return nil, cluster.ConfigError(err)
	}
	cfg.UserAgent = cluster.UserAgent()
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, cluster.ConfigError(err)
	}
	return dyn, nil
}

// canList is the one start-up LIST (limit 1) per kind that tells a kind we
// may not list from one we may: a Forbidden kind is skipped with a warning
// instead of an informer retrying it forever.
func canList(ctx context.Context, dyn dynamic.Interface, k scan.Kind, namespace string) error {
	r := dyn.Resource(k.GVR)
	var err error
	if namespace != "" && k.Namespaced {
		_, err = r.Namespace(namespace).List(ctx, metav1.ListOptions{Limit: 1})
	} else {
		_, err = r.List(ctx, metav1.ListOptions{Limit: 1})
	}
	if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
		return err
	}
	return nil // anything else (a hiccup) is left to the informer's retries
}

// Run serves until SIGTERM or interrupt: exit 0; 2 when the metrics
// address fails.
func (o *ServeOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	scope := "namespace " + o.namespace
	if o.AllNamespaces {
		scope = "all namespaces"
	}
	stderrf(o.ErrOut, "serving /metrics on %s, watching %d kind(s) in %s\n", o.MetricsBindAddress, o.kinds, scope)
	if err := o.server.Run(ctx); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	return nil
}
