package source_test

import (
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestLoadKustomizeRemoteBaseBounded: -k on a kustomization whose remote
// base is on a server that never answers ends, naming the URL, instead
// of hanging (issue 29). The bound is bound.DefaultTimeout (30 s), which
// the test waits out once.
func TestLoadKustomizeRemoteBaseBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 30 s fetch bound")
	}
	srv := testutil.NewSilentServer(t)
	url := "http://" + srv.Addr + "/base/deploy.yaml"
	dir := testutil.WriteTree(t, map[string]string{"kustomization.yaml": "resources:\n- " + url + "\n"})
	_, err := source.LoadKustomize(dir)
	if err == nil || !strings.Contains(err.Error(), "still running after 30s (fetching "+url+")") {
		t.Fatalf("LoadKustomize = %v", err)
	}
}
