package cli

import (
	"errors"
	"fmt"
	"sort"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-drift/kubectl-drift/internal/cluster"
	"github.com/kubectl-drift/kubectl-drift/internal/engine"
)

// EngineClusterOptions say where the engines' objects and settings live
// when that is not the live object's cluster: an Argo CD hub whose
// Applications deploy to spokes, a Flux management cluster whose
// Kustomizations apply to remote clusters through spec.kubeConfig.
type EngineClusterOptions struct {
	// Context is the kubeconfig context of the engine's cluster.
	Context string
	// Kubeconfig is a kubeconfig file for the engine's cluster (its
	// current context, or Context).
	Kubeconfig string
}

func addEngineClusterFlags(f *pflag.FlagSet, o *EngineClusterOptions) {
	f.StringVar(&o.Context, "engine-context", "", "Kubeconfig context of the cluster where the engine runs (Argo CD hub, Flux management cluster): its Applications, argocd-cm, Kustomizations and HelmReleases are read there, the live object from the current context")
	f.StringVar(&o.Kubeconfig, "engine-kubeconfig", "", "Kubeconfig file of the cluster where the engine runs (its current context, or --engine-context)")
}

func (o *EngineClusterOptions) enabled() bool { return o.Context != "" || o.Kubeconfig != "" }

// validate checks the flags alone.
func (o *EngineClusterOptions) validate(offline bool) error {
	if o.enabled() && offline {
		return errors.New("--engine-context and --engine-kubeconfig read a cluster: they cannot be used with --live-file")
	}
	return nil
}

// flags are the kubeconfig flags of the engine's cluster: the live
// object's, with its kubeconfig and context.
func (o *EngineClusterOptions) flags(flags *genericclioptions.ConfigFlags) *genericclioptions.ConfigFlags {
	ef := cluster.ForContext(flags, o.Context)
	if o.Kubeconfig != "" {
		kc := o.Kubeconfig
		ef.KubeConfig = &kc
	}
	return ef
}

// client is a client of the engine's cluster; nil without the flags.
func (o *EngineClusterOptions) client(flags *genericclioptions.ConfigFlags, opts cluster.Options) (*cluster.Client, error) {
	if !o.enabled() {
		return nil, nil
	}
	ec, err := cluster.New(o.flags(flags), opts)
	if err != nil {
		return nil, fmt.Errorf("--engine-context: %w", err)
	}
	return ec, nil
}

// configure points cfg.Reader at the engine's cluster and tells the
// engines where the live object is (engine.Remote); the schema and
// dry-runs stay the live cluster's. It does nothing without the flags.
func (o *EngineClusterOptions) configure(cfg *engine.Config, flags *genericclioptions.ConfigFlags, live *cluster.Client, opts cluster.Options) error {
	if !o.enabled() || live == nil {
		return nil
	}
	ec, err := o.client(flags, opts)
	if err != nil {
		return err
	}
	rm, err := o.remote(flags, "", live, ec)
	if err != nil {
		return err
	}
	cfg.Reader, cfg.Remote = ec, rm
	return nil
}

// remote says where the engine and the live objects are: the engine's
// client ec, the live client, and the live context (by default the one
// the flags select).
func (o *EngineClusterOptions) remote(flags *genericclioptions.ConfigFlags, liveContext string, live, ec *cluster.Client) (*engine.Remote, error) {
	servers, err := cluster.Contexts(flags)
	if err != nil {
		return nil, fmt.Errorf("--engine-context: reading the kubeconfig's contexts: %w", err)
	}
	byServer := map[string][]string{}
	for name, s := range servers {
		byServer[s] = append(byServer[s], name)
	}
	for _, names := range byServer {
		sort.Strings(names)
	}
	if liveContext == "" && flags.Context != nil {
		liveContext = *flags.Context
	}
	if liveContext == "" {
		if raw, err := flags.ToRawKubeConfigLoader().RawConfig(); err == nil {
			liveContext = raw.CurrentContext
		}
	}
	engineContext := o.Context
	if engineContext == "" {
		engineContext = o.Kubeconfig
	}
	return &engine.Remote{
		EngineContext: engineContext, EngineServer: ec.Host(),
		LiveContext: liveContext, LiveServer: live.Host(),
		Contexts: byServer,
	}, nil
}
