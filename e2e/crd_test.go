//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// WaitEstablished waits until every named CRD is Established. Right after a
// create, `kubectl wait --for=condition=Established` can fail at once with
// ".status.conditions accessor error: <nil>" because the API server has not
// written any condition yet; that is retried, any other failure is not.
func (e *Env) WaitEstablished(t testing.TB, crds ...string) error {
	t.Helper()
	return e.WaitEstablishedOn(t, "", crds...)
}

// WaitEstablishedOn is WaitEstablished on the cluster of kubeconfig (""
// the shared one): a private control plane's CRDs are waited for the same
// way.
func (e *Env) WaitEstablishedOn(t testing.TB, kubeconfig string, crds ...string) error {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		args := append([]string{"wait", "--for=condition=Established", "--timeout=30s"}, crds...)
		res := e.Run(t, RunOpts{Kubeconfig: kubeconfig}, "kubectl", args...)
		if res.Code == 0 {
			return nil
		}
		if !strings.Contains(res.Stderr, "accessor error") || time.Now().After(deadline) {
			return fmt.Errorf("CRDs %v not established: %s", crds, res.Stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
