package source_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/source"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// TestLoadKustomizeRemoteBaseBounded: -k on a kustomization whose remote
// base is on a server that never answers ends at the fetch timeout,
// naming the URL, instead of hanging, and says first that it fetches
// (issue 29).
func TestLoadKustomizeRemoteBaseBounded(t *testing.T) {
	srv := testutil.NewSilentServer(t)
	url := "http://" + srv.Addr + "/base/deploy.yaml"
	dir := testutil.WriteTree(t, map[string]string{"kustomization.yaml": "resources:\n- " + url + "\n"})
	var warned []string
	_, err := source.LoadKustomizeWith(dir, source.KustomizeOptions{FetchTimeout: 300 * time.Millisecond, Warn: func(m string) { warned = append(warned, m) }})
	if err == nil || !strings.Contains(err.Error(), "still running after 300ms (fetching "+url+")") {
		t.Fatalf("LoadKustomizeWith = %v", err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "fetches remote bases: "+url) {
		t.Errorf("warned %q", warned)
	}
}
