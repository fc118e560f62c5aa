package audit

import (
	"os"
	"strings"
	"testing"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// A path no object of the target kind can have is flagged from the kind's
// schema even when no manifest of the kind is in the repository: built-in
// kinds from the API types, custom kinds from their CRD in the tree.
func TestPathThatCanNeverMatchTheKindsSchema(t *testing.T) {
	data, err := os.ReadFile("testdata/schema/widget-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := testutil.Documents(t, "crds/widget.yaml", string(data))
	for _, tc := range []struct {
		name string
		rule model.Rule
		want string // substring; "" = no finding about the path
	}{
		{"pod list without index", fluxKs("a").gk("", "Pod").ptr("/spec/containers/resources/limits").rule(), "/spec/containers is a list: name an item by index"},
		{"pod list with index", fluxKs("a").gk("", "Pod").ptr("/spec/containers/0/resources/limits").rule(), ""},
		{"deployment typo", argoApp("a").gk("apps", "Deployment").ptr("/spec/replica").rule(), `DeploymentSpec has no field "replica"`},
		{"quantity leaf", fluxKs("a").gk("", "Pod").ptr("/spec/containers/0/resources/limits/cpu").rule(), ""},
		{"annotation key", fluxKs("a").gk("", "Pod").ptr("/metadata/annotations/example.com~1x").rule(), ""},
		{"scalar has no fields", argoApp("a").gk("apps", "Deployment").ptr("/spec/replicas/value").rule(), "is a int32"},
		{"crd list without index", fluxKs("a").gk("example.com", "Widget").ptr("/spec/parts/name").rule(), "/spec/parts is a list"},
		{"crd unknown field", fluxKs("a").gk("example.com", "Widget").ptr("/spec/sise").rule(), `has no field "sise"`},
		{"crd map and free-form", fluxKs("a").gk("example.com", "Widget").ptr("/spec/free/any/thing").rule(), ""},
		{"crd additionalProperties", fluxKs("a").gk("example.com", "Widget").ptr("/spec/labels/team").rule(), ""},
		{"unknown kind", fluxKs("a").gk("example.com", "Gadget").ptr("/spec/x/y").rule(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := only(runChecks(t, t.TempDir(), nil, crd, tc.rule), auditapi.CheckMatchesNothing)
			var msgs []string
			for _, f := range got {
				if strings.Contains(f.Message, "can never match") {
					msgs = append(msgs, f.Message)
				}
			}
			switch {
			case tc.want == "" && len(msgs) > 0:
				t.Errorf("unexpected %q", msgs)
			case tc.want != "" && (len(msgs) != 1 || !strings.Contains(msgs[0], tc.want)):
				t.Errorf("got %q, want one containing %q", msgs, tc.want)
			}
		})
	}
}
