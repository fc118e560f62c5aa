//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// deployWeb is the Deployment most e2e tests apply, put in Git or give to
// -f: its pods are selected and labelled app=web and run a container named
// "app". The fields are what the tests vary; a zero field is left out of
// the manifest. The string fields hold YAML flow content as it is written
// in the manifest ("app: web, team: shop"), so a test shows the object it
// works on in one line.
type deployWeb struct {
	Name        string // metadata.name; "" is web
	Namespace   string // "" leaves it to -n, the Kustomization or Helm
	Labels      string // body of the flow map metadata.labels
	Annotations string // body of the flow map metadata.annotations
	// Replicas: 0 leaves spec.replicas out (an HPA or a /scale writer owns it).
	Replicas        int
	MinReadySeconds int
	Image           string // the app container's image
	Env             string // body of the flow sequence of the app container's env
	Ports           string // body of the flow sequence of its ports
	// Sidecar adds a second container, sidecar (busybox:1.36, sleeping).
	Sidecar bool
}

// YAML returns the manifest, one document ending in a newline.
func (d deployWeb) YAML() string {
	name := d.Name
	if name == "" {
		name = "web"
	}
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	opt := func(value, format string) {
		if value != "" {
			line(format, value)
		}
	}
	line("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s", name)
	opt(d.Namespace, "  namespace: %s")
	opt(d.Labels, "  labels: {%s}")
	opt(d.Annotations, "  annotations: {%s}")
	line("spec:")
	if d.Replicas != 0 {
		line("  replicas: %d", d.Replicas)
	}
	if d.MinReadySeconds != 0 {
		line("  minReadySeconds: %d", d.MinReadySeconds)
	}
	line("  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}")
	line("    spec:\n      containers:\n      - name: app\n        image: %s", d.Image)
	opt(d.Env, "        env: [%s]")
	opt(d.Ports, "        ports: [%s]")
	if d.Sidecar {
		line(`      - {name: sidecar, image: "busybox:1.36", command: [sleep, "3600"]}`)
	}
	return b.String()
}

// moduleDir downloads module@version through the Go module proxy (no
// other network) and returns its directory in the module cache, where the
// tests find the CRDs that upstream ships.
func moduleDir(module string) (string, error) {
	dl := exec.Command("go", "mod", "download", "-json", module)
	dl.Dir = E.Root
	out, err := dl.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", module, err)
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no Dir in %s", module, out)
	}
	return info.Dir, nil
}
