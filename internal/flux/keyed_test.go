package flux

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func mustObj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// An injected sidecar ahead of the manifest's container: live index 1 is
// the manifest's index 0, paired by the containers' merge key (name).
func TestLookupKeyedPairsByMergeKey(t *testing.T) {
	live := mustObj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - {name: sidecar, image: proxy:1}
      - name: app
        image: nginx:1.26
        ports: [{containerPort: 80, protocol: TCP}]
`)
	desired := mustObj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx:1.25
        ports: [{containerPort: 80}]
`)
	cases := []struct {
		ptr    string
		want   any
		wantOK bool
	}{
		{"/spec/template/spec/containers/1/image", "nginx:1.25", true},
		// The port's protocol key defaults to TCP, as the API server fills it.
		{"/spec/template/spec/containers/1/ports/0/containerPort", float64(80), true},
		// The sidecar is not in the manifest at all.
		{"/spec/template/spec/containers/0/image", nil, false},
	}
	for _, c := range cases {
		got, ok := lookupKeyed(nil, live, desired.Object, c.ptr)
		if ok != c.wantOK || (ok && got != c.want) {
			t.Errorf("lookupKeyed(%s) = %v, %v; want %v, %v", c.ptr, got, ok, c.want, c.wantOK)
		}
	}
	// By index, the old behaviour, the sidecar's image would have been
	// compared with the manifest's app container.
	if got, _ := lookup(desired.Object, "/spec/template/spec/containers/0/image"); got != "nginx:1.25" {
		t.Fatalf("plain lookup = %v", got)
	}
}
