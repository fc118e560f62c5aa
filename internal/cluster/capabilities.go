package cluster

import (
	"fmt"
	"path"
	"sort"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
)

// Capabilities returns the server's version and the API versions it
// serves, "group/version" and "group/version/Kind", the way Helm's
// action.Configuration reads them for a release against a cluster
// (helm.sh/helm/v4 pkg/action/action.go getCapabilities and GetVersionSet,
// which helm-controller's installs and upgrades go through): discovery is
// invalidated first, and a group whose discovery fails (an orphaned
// APIService) leaves out its versions instead of failing. Sorted.
func (c *Client) Capabilities() (kubeVersion *version.Info, apiVersions []string, err error) {
	c.discovery.Invalidate()
	v, err := c.discovery.ServerVersion()
	if err != nil {
		return nil, nil, fmt.Errorf("server version: %w", err)
	}
	groups, resources, err := c.discovery.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, nil, fmt.Errorf("API versions: %w", err)
	}
	set := map[string]bool{}
	for _, g := range groups {
		for _, gv := range g.Versions {
			set[gv.GroupVersion] = true
		}
	}
	for _, r := range resources {
		for _, res := range r.APIResources {
			set[path.Join(r.GroupVersion, res.Kind)] = true
		}
	}
	for k := range set {
		apiVersions = append(apiVersions, k)
	}
	sort.Strings(apiVersions)
	return v, apiVersions, nil
}
