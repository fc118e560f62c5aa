package managedfields_test

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/managedfields"
)

// Who changed the sidecar's image, on a Deployment applied by
// kustomize-controller and then changed with `kubectl set image`.
func Example() {
	raw, err := os.ReadFile("testdata/deployment-ssa-then-kubectl-drifted.yaml")
	if err != nil {
		panic(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		panic(err)
	}
	live := &unstructured.Unstructured{}
	if err := live.UnmarshalJSON(js); err != nil {
		panic(err)
	}
	ix, err := managedfields.Parse(live)
	if err != nil {
		panic(err)
	}
	const pointer = "/spec/template/spec/containers/1/image"
	fmt.Println(managedfields.FieldPath(live, pointer))
	for _, o := range ix.Owners(live, pointer) {
		fmt.Println(o.Manager, o.Operation, o.Class)
	}
	// Output:
	// .spec.template.spec.containers[name=sidecar].image
	// kubectl-set Update manual
}
