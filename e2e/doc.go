// Package e2e holds the end-to-end tests of kubectl-drift. They build the
// plugin binaries and run them, as a user would, against the real
// kube-apiserver + etcd that hack/cluster.sh builds and starts.
//
// The tests carry the build tag `e2e`:
//
//	make e2e                       # starts the cluster, then runs them
//	go test -tags e2e ./e2e/...    # the same, cluster started by TestMain
//
// Harness (harness_test.go), for tests in this package:
//
//	E.Kubectl(t, args...)            kubectl v1.37.2 from hack/cluster.sh, admin kubeconfig
//	E.Namespace(t, "area")           a fresh namespace "area-<test>-<rand>", deleted after the test
//	E.Drift(t, args...)              run bin/kubectl-drift; returns Result{Stdout, Stderr, Code}
//	E.Run(t, RunOpts{...}, bin, ...) any built binary with extra env / stdin / kubeconfig
//	DecodeJSON(t, data, &v)          strict JSON decode with a readable failure
package e2e
