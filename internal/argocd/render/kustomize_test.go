package render

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
)

// The enum flags of kustomize.buildOptions take exactly kustomize's names;
// anything else is a one-line error naming the flag and the value.
func TestApplyBuildOptionsEnums(t *testing.T) {
	k := krusty.MakeDefaultOptions()
	if err := applyBuildOptions(k, "--load_restrictor=LoadRestrictionsNone --reorder none"); err != nil {
		t.Fatal(err)
	}
	if k.LoadRestrictions != kustypes.LoadRestrictionsNone || k.Reorder != krusty.ReorderOptionNone {
		t.Errorf("options %+v, want LoadRestrictionsNone and reorder none", k)
	}
	for opts, want := range map[string]string{
		"--load-restrictor LoadRestrictionsAll": `argocd-cm kustomize.buildOptions: --load-restrictor "LoadRestrictionsAll" is not a load restrictor`,
		"--reorder=alpha":                       `argocd-cm kustomize.buildOptions: --reorder "alpha" is not legacy or none`,
	} {
		if err := applyBuildOptions(krusty.MakeDefaultOptions(), opts); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", opts, err, want)
		}
	}
}
