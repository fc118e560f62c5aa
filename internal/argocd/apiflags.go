package argocd

import (
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// APIFlags locate Argo CD's API server. Flags win over the argocd CLI's
// environment (ARGOCD_SERVER, ARGOCD_AUTH_TOKEN), which wins over its
// login config (~/.config/argocd/config, the current context), so
// `argocd drift` after `argocd login` needs no flag.
type APIFlags struct {
	Server    string
	Token     string
	PlainText bool
	Insecure  bool
}

func (f *APIFlags) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Server, "argocd-server", "", "Argo CD API server (host:port) whose own diff decides the Argo CD verdicts (default: $ARGOCD_SERVER, then the argocd CLI's current context)")
	fs.StringVar(&f.Token, "argocd-token", "", "Bearer token for --argocd-server (default: $ARGOCD_AUTH_TOKEN, then the argocd CLI's login)")
	fs.BoolVar(&f.PlainText, "argocd-plaintext", false, "Talk to the Argo CD API over plain HTTP (like argocd --plaintext)")
	fs.BoolVar(&f.Insecure, "argocd-insecure", false, "Skip TLS verification of the Argo CD API (like argocd --insecure)")
}

// options resolves the flags into the adapter's options.
func (f APIFlags) options(diffFile string) ArgoDiffOptions {
	o := ArgoDiffOptions{File: diffFile, Server: f.Server, Token: f.Token, PlainText: f.PlainText, Insecure: f.Insecure}
	if o.Server == "" {
		o.Server = os.Getenv("ARGOCD_SERVER")
	}
	if o.Token == "" {
		o.Token = os.Getenv("ARGOCD_AUTH_TOKEN")
	}
	if o.Server == "" {
		if c := readArgoCLIConfig(); c != nil {
			o.Server, o.PlainText, o.Insecure = c.server, o.PlainText || c.plainText, o.Insecure || c.insecure
			if o.Token == "" {
				o.Token = c.token
			}
		}
	}
	return o
}

// argoCLIContext is the current context of the argocd CLI's config.
type argoCLIContext struct {
	server, token       string
	plainText, insecure bool
}

// readArgoCLIConfig reads the argocd CLI's login config
// (util/localconfig/localconfig.go: $ARGOCD_CONFIG_DIR/config, else
// ~/.config/argocd/config, else the legacy ~/.argocd/config); nil when
// there is none or it has no usable current context.
func readArgoCLIConfig() *argoCLIContext {
	var paths []string
	if d := os.Getenv("ARGOCD_CONFIG_DIR"); d != "" {
		paths = append(paths, filepath.Join(d, "config"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".config", "argocd", "config"), filepath.Join(home, ".argocd", "config"))
	}
	for _, p := range paths {
		data, err := source.ReadFile(p, nil, 0)
		if err != nil {
			continue
		}
		var cfg struct {
			CurrentContext string `json:"current-context"`
			Contexts       []struct {
				Name, Server, User string
			} `json:"contexts"`
			Servers []struct {
				Server    string `json:"server"`
				PlainText bool   `json:"plain-text"`
				Insecure  bool   `json:"insecure"`
			} `json:"servers"`
			Users []struct {
				Name      string `json:"name"`
				AuthToken string `json:"auth-token"`
			} `json:"users"`
		}
		if yaml.Unmarshal(data, &cfg) != nil {
			return nil
		}
		for _, c := range cfg.Contexts {
			if c.Name != cfg.CurrentContext {
				continue
			}
			out := &argoCLIContext{server: c.Server}
			for _, s := range cfg.Servers {
				if s.Server == c.Server {
					out.plainText, out.insecure = s.PlainText, s.Insecure
				}
			}
			for _, u := range cfg.Users {
				if u.Name == c.User {
					out.token = u.AuthToken
				}
			}
			return out
		}
		return nil
	}
	return nil
}
