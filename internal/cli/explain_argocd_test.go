package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func TestExplainExitCodeFollowsArgoSyncStatus(t *testing.T) {
	// A live-only label Argo CD leaves alone: shown, but Synced.
	r := &model.Report{Drifts: []model.FieldDrift{{Path: "/metadata/labels/hotfix",
		Verdicts: []model.Verdict{{Engine: model.EngineArgoCD, Kind: model.LeftAlone}}}}}
	if got := explainExitCode("argocd", r); got != 0 {
		t.Fatalf("without an object status, only a left-alone field: exit %d, want 0 (field verdicts decide)", got)
	}
	// A field Argo CD shows as drift (reported: OutOfSync) makes exit 1
	// when no object status is known ...
	r.Drifts = append(r.Drifts, model.FieldDrift{Path: "/spec/replicas",
		Verdicts: []model.Verdict{{Engine: model.EngineArgoCD, Kind: model.Reported}}})
	if got := explainExitCode("argocd", r); got != 1 {
		t.Fatalf("without an object status, a reported field: exit %d, want 1", got)
	}
	// ... but Argo CD's own sync status wins with --engine argocd.
	r.SetStatus(model.ObjectStatus{Engine: model.EngineArgoCD, Drift: false, Status: "Synced"})
	if got := explainExitCode("argocd", r); got != 0 {
		t.Errorf("--engine argocd, Synced: exit %d, want 0", got)
	}
	if got := explainExitCode("auto", r); got != 1 {
		t.Errorf("--engine auto: exit %d, want 1 (field verdicts)", got)
	}
	r.SetStatus(model.ObjectStatus{Engine: model.EngineArgoCD, Drift: true, Status: "OutOfSync"})
	if len(r.Status) != 1 {
		t.Fatalf("SetStatus appended instead of replacing: %+v", r.Status)
	}
	if got := explainExitCode("argocd", r); got != 1 {
		t.Errorf("--engine argocd, OutOfSync: exit %d, want 1", got)
	}
}

func TestArgoAPIFlagsFromCLIConfig(t *testing.T) {
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
	o := ArgoAPIFlags{}.options("")
	if o.Server != "127.0.0.1:8080" || o.Token != "dev-token" || !o.PlainText {
		t.Errorf("from the CLI's current context: %+v", o)
	}
	t.Setenv("ARGOCD_SERVER", "env.example.com")
	if o := (ArgoAPIFlags{}).options(""); o.Server != "env.example.com" || o.Token != "" {
		t.Errorf("$ARGOCD_SERVER must win over the config (and not borrow its token): %+v", o)
	}
	if o := (ArgoAPIFlags{Server: "flag:1", Token: "t"}).options(""); o.Server != "flag:1" || o.Token != "t" {
		t.Errorf("flags must win: %+v", o)
	}
}
