package cluster

import (
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// ForContext returns kubectl's flags with the context replaced by name:
// the same kubeconfig, cache, timeout and impersonation, for one cluster of
// a fleet. The copy has its own client config, discovery and RESTMapper
// caches, and its own Bound: the latch that fails every request at once
// after a server did not answer must cost that cluster only.
func ForContext(flags *genericclioptions.ConfigFlags, name string) *genericclioptions.ConfigFlags {
	ctx := name
	f := &genericclioptions.ConfigFlags{
		CacheDir:             flags.CacheDir,
		KubeConfig:           flags.KubeConfig,
		ClusterName:          flags.ClusterName,
		AuthInfoName:         flags.AuthInfoName,
		Context:              &ctx,
		Namespace:            flags.Namespace,
		APIServer:            flags.APIServer,
		TLSServerName:        flags.TLSServerName,
		Insecure:             flags.Insecure,
		CertFile:             flags.CertFile,
		KeyFile:              flags.KeyFile,
		CAFile:               flags.CAFile,
		BearerToken:          flags.BearerToken,
		Impersonate:          flags.Impersonate,
		ImpersonateUID:       flags.ImpersonateUID,
		ImpersonateGroup:     flags.ImpersonateGroup,
		ImpersonateUserExtra: flags.ImpersonateUserExtra,
		Username:             flags.Username,
		Password:             flags.Password,
		DisableCompression:   flags.DisableCompression,
		ProxyURL:             flags.ProxyURL,
	}
	// Bound turns an explicit "0" into "" (the flag's absence) on the
	// flags it is given; here the flags were parsed already, so keep the
	// value the user gave.
	var timeout *string
	if flags.Timeout != nil {
		t := *flags.Timeout
		timeout = &t
	}
	f.Timeout = nil
	Bound(f)
	f.Timeout = timeout
	return f
}

// Contexts are the kubeconfig's context names and the server URL each
// points at ("" when its cluster entry is missing).
func Contexts(flags *genericclioptions.ConfigFlags) (map[string]string, error) {
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, ConfigError(err)
	}
	out := map[string]string{}
	for name, c := range raw.Contexts {
		server := ""
		if cl, ok := raw.Clusters[c.Cluster]; ok {
			server = cl.Server
		}
		out[name] = server
	}
	return out, nil
}

// lineError is a one-line message over the error it came from.
type lineError struct {
	msg string
	err error
}

func (e *lineError) Error() string { return e.msg }
func (e *lineError) Unwrap() error { return e.err }
