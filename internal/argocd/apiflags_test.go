package argocd

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAPIFlagsFromCLIConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := `contexts:
- {name: prod, server: argocd.example.com, user: prod}
- {name: dev, server: 127.0.0.1:8080, user: dev}
current-context: dev
servers:
- {server: argocd.example.com}
- {server: 127.0.0.1:8080, plain-text: true}
users:
- {name: prod, auth-token: prod-token}
- {name: dev, auth-token: dev-token}
`
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ARGOCD_CONFIG_DIR", dir)
	t.Setenv("ARGOCD_SERVER", "")
	t.Setenv("ARGOCD_AUTH_TOKEN", "")
	o := APIFlags{}.options("")
	if o.Server != "127.0.0.1:8080" || o.Token != "dev-token" || !o.PlainText {
		t.Errorf("from the CLI's current context: %+v", o)
	}
	t.Setenv("ARGOCD_SERVER", "env.example.com")
	if o := (APIFlags{}).options(""); o.Server != "env.example.com" || o.Token != "" {
		t.Errorf("$ARGOCD_SERVER must win over the config (and not borrow its token): %+v", o)
	}
	if o := (APIFlags{Server: "flag:1", Token: "t"}).options(""); o.Server != "flag:1" || o.Token != "t" {
		t.Errorf("flags must win: %+v", o)
	}
}
