package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// ScanOptions are the flags of `scan`.
type ScanOptions struct {
	*GlobalOptions

	Selection
	Output       string
	Watch        bool
	WatchTimeout time.Duration
	// ReconcileInterval is assumed when an owner's interval is unknown.
	ReconcileInterval time.Duration
	QPS               float32
	Burst             int
	ChunkSize         int64
	Consistent        bool
	Concurrency       int
	// IncludeControllers also reports fields only built-in controllers own.
	IncludeControllers bool
	// Stats prints wall time and API requests by verb to stderr (hidden:
	// for hack/bench-scan.sh).
	Stats bool
	// Fleet scans several clusters (--contexts, --all-contexts).
	Fleet FleetOptions
	// EngineCluster is where the engines' objects live, when not on the
	// scanned cluster(s).
	EngineCluster EngineClusterOptions
	// RenderFlags: --source DIR compares each drifted object with its
	// owner rendered from the checkout (source_hook.go).
	RenderFlags

	started   time.Time
	namespace string
	client    *cluster.Client
	kinds     []scan.Kind
	adapters  []model.Adapter
	warnings  []string
	// source is --source's desired state, nil without it.
	source *drift.Rendered
	// The engine's cluster (--engine-context/--engine-kubeconfig): one
	// client and one cache for the whole command (engineSide).
	engineOnce   sync.Once
	engineClient *cluster.Client
	engineCache  *scan.CachingReader
	engineErr    error
}

// NewScanOptions returns the defaults.
func NewScanOptions(g *GlobalOptions) *ScanOptions {
	return &ScanOptions{
		GlobalOptions: g,
		Output:        scan.OutputTable,
		QPS:           50,
		Burst:         100,
		ChunkSize:     500,
		Concurrency:   4,
	}
}

func newScanCommand(g *GlobalOptions) *cobra.Command {
	o := NewScanOptions(g)
	cmd := &cobra.Command{
		Use:   "scan [-A | -n NAMESPACE] [-l SELECTOR] [--kinds KINDS] [-o table|json|yaml|prometheus] [--watch]",
		Short: "Find every GitOps-owned object whose fields another manager owns",
		Long: `Scan lists GitOps-owned objects (Argo CD tracking annotation, Flux ownership
labels) and reports every field a non-GitOps field manager owns, inferred from
managedFields: who changed it (cause class: manual, autoscaler, operator...)
and what each engine will do about it where its rules are known. A summary
grouped by namespace, kind and manager comes first, then the objects.

Cost: one paginated LIST per kind (never a GET per object), answered from the
API server's watch cache (resourceVersion=0; --consistent reads etcd), decoded
one object at a time. Kinds: --kinds takes resource names as kubectl get does,
plus "default" (the common workload and config kinds, used when --kinds is not
given) and "all" (every listable namespaced kind). A kind you may not list is
a warning; the rest is scanned. Fields that only built-in controllers or
status writers own are bookkeeping and are left out (--include-controllers).

--watch prints the drift that exists as events, then keeps a watch open per
kind and prints drift as it appears ("drifted") and as it ends: "reverted"
when a GitOps engine took the field back, "resolved" when a person or another
controller removed or restored it, "deleted" with its object; with how long it
lived and how many reconcile intervals of its owner it survived (Flux's
spec.interval; --reconcile-interval where the owner's is unknown, as for
Argo CD, whose interval is controller-wide). Persistent drift is what to
alert on. Interrupt it (or set --watch-timeout) to stop: exit 0.

--source DIR compares each object another manager wrote with the object
its owner would apply, rendered from the checkout as explain --source
renders it (the owner named by the object's ownership labels; with
--kustomization/--helmrelease only those owners): each owner is rendered
once per scan, and what differs from the render is drift even where
managedFields alone would not tell. An owner that fails to render is one
warning naming it and its file; its objects are left out and the others
scanned (exit 2 only when no object could be compared). Objects of owners
--source does not render are scanned from managedFields.

The table fits the terminal (or $COLUMNS; not a terminal: nothing is cut,
as kubectl get): names shorten first, field paths and object names from the
middle ("…"), then columns are dropped: CLASS, OWNER, KIND, NAMESPACE,
MANAGER in that order (the summary table: CLASS, NAMESPACE, KIND). NAME,
FIELD and VERDICT stay; -o json has everything.

Exit codes: 0 no drift, 1 drift, 2 error.`,
		Example: `  # Drift in the current namespace
  ` + g.Frontend.Name + ` scan

  # Every namespace, every listable kind, as JSON
  ` + g.Frontend.Name + ` scan -A --kinds all -o json

  # Metrics for node-exporter's textfile collector (exit 1 means drift)
  ` + g.Frontend.Name + ` scan -A -o prometheus > drift.prom.tmp; mv drift.prom.tmp /var/lib/node-exporter/drift.prom

  # Three clusters at once, each row labelled with its context
  ` + g.Frontend.Name + ` scan -A --contexts hub,spoke-a,spoke-b

  # Compare with what Flux would apply from a local checkout
  ` + g.Frontend.Name + ` scan -n shop --source ~/src/fleet-infra

  # Follow drift as it comes and goes
  ` + g.Frontend.Name + ` scan -n shop --watch`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.started = time.Now()
			if err := o.Validate(); err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			if o.Fleet.enabled() {
				return o.runFleet(cmd.Context())
			}
			if err := o.Complete(); err != nil {
				return &ExitError{Code: ExitFailure, Err: err}
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.addSelectionFlags(cmd, "scan")
	addOutputFlag(cmd, &o.Output, scan.Outputs, "")
	f.BoolVarP(&o.Watch, "watch", "w", false, "After the scan, watch and print drift as it appears and is reverted")
	f.DurationVar(&o.WatchTimeout, "watch-timeout", 0, "Stop watching after this long (0: until interrupted)")
	f.DurationVar(&o.ReconcileInterval, "reconcile-interval", 0, "With --watch: reconcile interval to assume when the owner's is unknown (Argo CD's is controller-wide)")
	f.Float32Var(&o.QPS, "qps", o.QPS, "Client-side limit of API requests per second")
	f.IntVar(&o.Burst, "burst", o.Burst, "Client-side burst of API requests")
	f.Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "LIST page size (limit/continue)")
	f.BoolVar(&o.Consistent, "consistent", false, "List with consistent reads from etcd instead of the watch cache (resourceVersion=0)")
	f.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "Kinds listed at once")
	f.BoolVar(&o.IncludeControllers, "include-controllers", false, "Also report fields owned only by built-in controllers (kube-controller-manager...)")
	f.BoolVar(&o.Stats, "stats", false, "Print wall time and API requests by verb to stderr")
	_ = f.MarkHidden("stats")
	addFleetFlags(f, &o.Fleet)
	addEngineClusterFlags(f, &o.EngineCluster)
	o.addFlags(cmd)
	_ = cmd.MarkFlagDirname("source")
	return cmd
}

// Validate checks the flags alone, before any cluster access.
func (o *ScanOptions) Validate() error {
	if err := o.ValidateEngine(); err != nil {
		return err
	}
	out, err := canonicalOutput(o.Output, scan.Outputs)
	if err != nil {
		return err
	}
	o.Output = out
	if !o.Watch && o.ReconcileInterval != 0 {
		return errors.New("--reconcile-interval needs --watch")
	}
	if o.Watch && o.Output == scan.OutputPrometheus {
		return errors.New("--watch prints events; -o prometheus is for one scan (run it periodically instead)")
	}
	if !o.Watch && o.WatchTimeout != 0 {
		return errors.New("--watch-timeout needs --watch")
	}
	if o.WatchTimeout < 0 {
		return errors.New("--watch-timeout must not be negative")
	}
	if err := o.validateSelector(); err != nil {
		return err
	}
	if o.QPS <= 0 || o.Burst <= 0 {
		return errors.New("--qps and --burst must be positive")
	}
	if o.ChunkSize <= 0 {
		return errors.New("--chunk-size must be positive")
	}
	if o.Concurrency <= 0 {
		return errors.New("--concurrency must be positive")
	}
	if o.Source != "" && o.Fleet.enabled() {
		return errors.New("--source compares with one cluster's owners: it cannot be used with --contexts/--all-contexts")
	}
	if err := o.validate(); err != nil {
		return err
	}
	return o.validateFleet()
}

// Complete builds the client, resolves the kinds once and picks the
// adapters of the selected engine(s).
func (o *ScanOptions) Complete() error {
	c, err := cluster.New(o.ConfigFlags, cluster.Options{QPS: o.QPS, Burst: o.Burst, PageSize: o.ChunkSize})
	if err != nil {
		return err
	}
	o.client = c
	if o.namespace, err = o.resolveNamespace(c); err != nil {
		return err
	}
	verbs := []string{"list"}
	if o.Watch {
		verbs = append(verbs, "watch")
	}
	kinds, warns, err := scan.ResolveKinds(c.Mapper(), c.Discovery(), c.Host(), o.Kinds, verbs...)
	if err != nil {
		return err
	}
	if len(kinds) == 0 {
		return errors.New("no kinds to scan: the server serves none of the requested kinds")
	}
	o.kinds, o.warnings = kinds, warns
	reader, rm, err := o.engineSide(c, "")
	if err != nil {
		return err
	}
	adapters, warns, err := engineAdapters(context.Background(), o.Engine, reader, c, rm)
	if err != nil {
		return err
	}
	o.adapters, o.warnings = adapters, append(o.warnings, warns...)
	if o.Source != "" {
		// The adapters' reader: engine objects, sources and
		// valuesFrom/substituteFrom objects are read once each, where the
		// engines' objects are; charts see the scanned cluster's
		// capabilities, which a remote helm-controller's install reads.
		env, err := o.renderEnv(o.GlobalOptions, reader, c)
		if err != nil {
			return err
		}
		o.source = drift.NewRendered(env, engine.Renderers(nil), nil, o.refs())
	}
	return nil
}

// engineSide returns the reader of the engines' objects and, with
// --engine-context/--engine-kubeconfig, where the engine and the scanned
// cluster c are (liveContext: the scanned context, "" for the one the
// flags select). The reader is a CachingReader, so each engine object
// behind the drifted objects is read once (an engine kind: one LIST). On
// the scanned cluster it is one per scanned cluster; on the engine's
// cluster it is built once per command and shared by the adapters, by
// --source's render (engine objects, sources, valuesFrom/substituteFrom
// objects: the controllers read them there) and by every context of a
// fleet scan. The schema stays the scanned cluster's.
func (o *ScanOptions) engineSide(c *cluster.Client, liveContext string) (*scan.CachingReader, *engine.Remote, error) {
	if !o.EngineCluster.enabled() {
		return scan.NewCachingReader(c), nil, nil
	}
	o.engineOnce.Do(func() {
		ec, err := o.EngineCluster.client(o.ConfigFlags, cluster.Options{QPS: o.QPS, Burst: o.Burst})
		if err != nil {
			o.engineErr = err
			return
		}
		o.engineClient, o.engineCache = ec, scan.NewCachingReader(ec)
	})
	if o.engineErr != nil {
		return nil, nil, o.engineErr
	}
	rm, err := o.EngineCluster.remote(o.ConfigFlags, liveContext, c, o.engineClient)
	if err != nil {
		return nil, nil, err
	}
	return o.engineCache, rm, nil
}

// engineAdapters builds the adapters of the selected engine(s) over reader
// (scan passes engineSide's, serve its informer cache); rm is set when
// reader reads the engine's own cluster. Each engine reads its settings
// before it is asked about ownership (Owner never reads the cluster).
func engineAdapters(ctx context.Context, selected string, reader model.Reader, c *cluster.Client, rm *engine.Remote) ([]model.Adapter, []string, error) {
	cfg := engine.Config{Purpose: engine.ForScan, Reader: reader, Schema: c.OpenAPIModels, Server: c.Host(), Remote: rm}
	adapters, notes, err := drift.Adapters(ctx, selected, cfg, nil)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	for _, n := range notes {
		warnings = append(warnings, n.Message)
	}
	return adapters, warnings, nil
}

// scanGCPercent is a one-shot scan's GOGC unless the environment sets one.
// Its live heap is small (the drifted objects' reports, about 1.2 KB each,
// and the object being judged) while it allocates fast, so Go's default
// collects tens of times for little; twice the headroom took a tenth off
// scan's CPU at 10,000 objects and kept it under 150 MB at 100,000
// (hack/bench-scan.sh, docs/performance.md). A watch keeps the default.
const scanGCPercent = 200

// scanMemoryLimit caps the Go heap that headroom may grow to (a soft limit,
// unless GOMEMLIMIT sets one): at 100,000 objects GOGC 200 alone reached
// 169 MiB RSS, the limit makes the collector work harder only once the
// heap nears it, as the default GOGC would, and keeps scan under 150 MB
// (the binary's own pages are ~75 MiB of that RSS).
const scanMemoryLimit = 64 << 20

// Run scans, prints, and maps the outcome to the exit code.
func (o *ScanOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	streamer, err := o.client.NewStreamer()
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	src := &scan.StreamSource{Client: o.client, Streamer: streamer, ChunkSize: o.ChunkSize, Consistent: o.Consistent}
	in := &scan.Inspector{Adapters: o.adapters, IncludeControllers: o.IncludeControllers}
	if o.source != nil {
		in.Desired, in.Secrets = o.scanDesired, o.Secrets
		defer func() { _ = o.source.Close() }()
	}
	for _, w := range o.warnings {
		stderrf(o.ErrOut, "warning: %s\n", w)
	}
	if o.Watch {
		return o.watch(ctx, src, in)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(scanGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(scanMemoryLimit)
	}
	res, err := scan.Run(ctx, src, scan.Options{
		Namespace:     o.namespace,
		LabelSelector: o.LabelSelector,
		Kinds:         o.kinds,
		Engine:        o.Engine,
		Inspector:     in,
		Concurrency:   o.Concurrency,
	})
	if res != nil {
		for _, w := range res.Warnings {
			stderrf(o.ErrOut, "warning: %s\n", w)
		}
		res.Warnings = append(o.warnings, res.Warnings...)
	}
	if err != nil {
		// A kind failed for another reason than RBAC: print nothing partial
		// that a cron job could mistake for the whole truth.
		return &ExitError{Code: ExitFailure, Err: err}
	}
	if err := o.sourceOutcome(res); err != nil {
		return err
	}
	if perr := scan.Print(o.Out, o.Output, res, output.TextWidth(o.Output, o.Out, os.Getenv)); perr != nil {
		return &ExitError{Code: ExitFailure, Err: perr}
	}
	if o.Stats {
		o.printStats(res, time.Since(o.started), streamer.Requests())
	}
	if res.Stats.Drifted > 0 {
		return errDrift
	}
	return nil
}

// watch follows drift until interrupted or --watch-timeout: exit 0 then,
// 2 when the watch fails.
func (o *ScanOptions) watch(ctx context.Context, src *scan.StreamSource, in *scan.Inspector) error {
	if o.WatchTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.WatchTimeout)
		defer cancel()
	}
	w := &scan.Watcher{
		Source:          src,
		Inspector:       in,
		Namespace:       o.namespace,
		LabelSelector:   o.LabelSelector,
		Kinds:           o.kinds,
		DefaultInterval: o.ReconcileInterval,
		Emit:            scan.EventPrinter(o.Out, o.Output),
		Warn:            func(msg string) { stderrf(o.ErrOut, "warning: %s\n", msg) },
	}
	owners, ownerSrc, err := o.watchedOwners(src)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	w.Owners, w.OwnerSource = owners, ownerSrc
	if err := w.Run(ctx); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	return nil
}

// watchedOwners are the engines' kinds scan --watch follows (ownerKinds
// the engine's cluster serves), and where: the scanned cluster, or with
// --engine-context/--engine-kubeconfig the engine's. Their changes reach
// the adapters, so verdicts follow an Application's recorded status or a
// Kustomization's suspension after the watch began.
func (o *ScanOptions) watchedOwners(src *scan.StreamSource) ([]scan.Kind, scan.WatchSource, error) {
	c := o.client
	var ownerSrc scan.WatchSource = src
	if o.engineClient != nil {
		c = o.engineClient
		streamer, err := c.NewStreamer()
		if err != nil {
			return nil, nil, err
		}
		ownerSrc = &scan.StreamSource{Client: c, Streamer: streamer, ChunkSize: o.ChunkSize}
	}
	var out []scan.Kind
	for _, gk := range ownerKinds() {
		m, err := c.Mapper().RESTMapping(gk)
		if err != nil {
			continue // engine not installed
		}
		out = append(out, scan.Kind{GVR: m.Resource, GVK: m.GroupVersionKind, Namespaced: true})
	}
	return out, ownerSrc, nil
}

func (o *ScanOptions) printStats(res *scan.Result, wall time.Duration, kindLists int64) {
	// kind_lists are the LISTs of the scanned kinds (the cost that grows
	// with the cluster); requests{} are all API requests by verb, including
	// the engines' settings and owners (a constant few).
	stderrf(o.ErrOut, "scan stats: wall=%.3fs kinds=%d objects=%d owned=%d drifted=%d fields=%d kind_lists=%d requests{%s} total_requests=%d\n",
		wall.Seconds(), res.Stats.Kinds, res.Stats.Objects, res.Stats.Owned, res.Stats.Drifted, res.Stats.Fields, kindLists,
		o.client.Counter().String(), o.client.Counter().Total())
}

// scanDesired is the Inspector's Desired under --source: the object's
// document in its owner's render. An object whose owner --source does not
// render (an engine without a renderer, or one the flags leave out) is
// scanned from managedFields, as without --source.
func (o *ScanOptions) scanDesired(ctx context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, model.DesiredSource, error) {
	obj, _, _, err := o.source.Desired(ctx, live, live.GetNamespace())
	var nr *drift.NotRendered
	if errors.As(err, &nr) {
		return nil, model.SourceManagedFields, nil
	}
	if err != nil {
		return nil, "", err
	}
	return obj, model.SourceRendered, nil
}

// sourceOutcome says what --source compared. Objects whose owner failed
// to render were left out (one warning per owner, on stderr like every
// scan warning); when that is every object the scan looked at in full,
// nothing was scanned against the checkout: exit 2, as when no kind could
// be listed.
func (o *ScanOptions) sourceOutcome(res *scan.Result) error {
	if o.source == nil {
		return nil
	}
	return o.renderOutcome(o.source.Counts(), res)
}

// renderOutcome is sourceOutcome for the counts c.
func (o *ScanOptions) renderOutcome(c drift.RenderCounts, res *scan.Result) error {
	compared, failed, unowned := c.Compared, c.Failed, c.Unowned
	if unowned > 0 {
		msg := fmt.Sprintf("--source: %d objects another manager wrote have no owner that --source renders: their drift is inferred from managedFields", unowned)
		stderrf(o.ErrOut, "warning: %s\n", msg)
		res.Warnings = append(res.Warnings, msg)
	}
	if failed > 0 && compared == 0 && unowned == 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("--source: no object could be compared with its render (%d failed; see the warnings)", failed)}
	}
	return nil
}
