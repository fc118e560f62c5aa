package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/fleet"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// FleetOptions are scan's flags for several clusters at once.
type FleetOptions struct {
	// Contexts are kubeconfig contexts to scan (--contexts a,b,c).
	Contexts []string
	// AllContexts scans every context of the kubeconfig.
	AllContexts bool
	// MaxConcurrentClusters bounds the clusters scanned at once.
	MaxConcurrentClusters int
}

func addFleetFlags(f *pflag.FlagSet, o *FleetOptions) {
	o.MaxConcurrentClusters = fleet.DefaultMaxConcurrent
	f.StringSliceVar(&o.Contexts, "contexts", nil, "Scan these kubeconfig contexts (comma-separated), each row labelled with its cluster")
	f.BoolVar(&o.AllContexts, "all-contexts", false, "Scan every context of the kubeconfig, each row labelled with its cluster")
	f.IntVar(&o.MaxConcurrentClusters, "max-concurrent-clusters", o.MaxConcurrentClusters, "With --contexts/--all-contexts: clusters scanned at once")
}

func (o *FleetOptions) enabled() bool { return len(o.Contexts) > 0 || o.AllContexts }

// validateFleet checks the fleet flags against scan's others.
func (o *ScanOptions) validateFleet() error {
	f := &o.Fleet
	if !f.enabled() {
		return nil
	}
	if len(f.Contexts) > 0 && f.AllContexts {
		return errors.New("--contexts and --all-contexts are exclusive")
	}
	if f.MaxConcurrentClusters <= 0 {
		return errors.New("--max-concurrent-clusters must be positive")
	}
	if o.Watch {
		return errors.New("--watch follows one cluster: run one scan --watch per context")
	}
	// These would override every context's own cluster or user, so every
	// "cluster" would be the same one.
	cf := o.ConfigFlags
	for _, fl := range []struct {
		name string
		v    *string
	}{{"context", cf.Context}, {"cluster", cf.ClusterName}, {"user", cf.AuthInfoName}, {"server", cf.APIServer}} {
		if fl.v != nil && *fl.v != "" {
			return fmt.Errorf("--%s and --contexts/--all-contexts are exclusive: each context names its own cluster and user", fl.name)
		}
	}
	return nil
}

// runFleet scans every context and prints one result with a cluster label
// on each row: exit 1 when any scanned cluster has drift, 0 when none has,
// 2 when no cluster could be scanned.
func (o *ScanOptions) runFleet(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers, err := cluster.Contexts(o.ConfigFlags)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	targets, warnings := fleet.Targets(servers, o.Fleet.Contexts, o.Fleet.AllContexts)
	if len(targets) == 0 {
		return &ExitError{Code: ExitFailure, Err: errors.New("no contexts to scan: the kubeconfig has none")}
	}
	res := fleet.Run(ctx, targets, o.Fleet.MaxConcurrentClusters, o.scanContext)
	if err := ctx.Err(); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	res.Warnings = append(warnings, res.Warnings...)
	for _, w := range res.Warnings {
		stderrf(o.ErrOut, "warning: %s\n", w)
	}
	if err := fleet.Print(o.Out, o.Output, res); err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	switch {
	case res.Drifted():
		return errDrift
	case res.Unreachable() == len(res.Clusters):
		return &ExitError{Code: ExitFailure, Err: errors.New("no cluster could be scanned")}
	}
	return nil
}

// scanContext scans one cluster as a single-cluster scan does: its own
// client (rate limiter, discovery cache), kinds resolved against its own
// discovery, the engines' settings read from it, one LIST per kind.
func (o *ScanOptions) scanContext(ctx context.Context, t fleet.Target) (*scan.Result, error) {
	c, err := cluster.New(cluster.ForContext(o.ConfigFlags, t.Context), cluster.Options{QPS: o.QPS, Burst: o.Burst, PageSize: o.ChunkSize})
	if err != nil {
		return nil, err
	}
	namespace, err := o.resolveNamespace(c)
	if err != nil {
		return nil, err
	}
	kinds, warns, err := scan.ResolveKinds(c.Mapper(), c.Discovery(), c.Host(), o.Kinds, "list")
	if err != nil {
		return nil, err
	}
	if len(kinds) == 0 {
		return nil, errors.New("no kinds to scan: the server serves none of the requested kinds")
	}
	reader, rm, err := o.engineSide(c, t.Context)
	if err != nil {
		return nil, err
	}
	adapters, awarns, err := engineAdapters(ctx, o.Engine, reader, c, rm)
	if err != nil {
		return nil, err
	}
	streamer, err := c.NewStreamer()
	if err != nil {
		return nil, err
	}
	res, err := scan.Run(ctx, &scan.StreamSource{Client: c, Streamer: streamer, ChunkSize: o.ChunkSize, Consistent: o.Consistent}, scan.Options{
		Namespace:     namespace,
		LabelSelector: o.LabelSelector,
		Kinds:         kinds,
		Engine:        o.Engine,
		Inspector:     &scan.Inspector{Adapters: adapters, IncludeControllers: o.IncludeControllers},
		Concurrency:   o.Concurrency,
	})
	if err != nil {
		return nil, err
	}
	res.Warnings = append(append(warns, awarns...), res.Warnings...)
	return res, nil
}
