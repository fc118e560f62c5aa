package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// auditCorpus is the labelled corpus of real repositories (issue 33):
// trimmed copies and the reviewer's label of every finding.
const (
	auditCorpus       = "../audit/testdata/corpus"
	auditCorpusLabels = "../audit/testdata/corpus-labels.yaml"
)

// soundCorpusRepos are the corpus repositories whose rules a reviewer
// judged sound (no rule hides what it must not, no file the engines read
// is broken), with the reason: `kubectl drift audit` must exit 0 on each.
var soundCorpusRepos = map[string]string{
	"Azure-Samples_aks-platform-engineering":                        "ApplicationSet rules on remote charts' CRDs and webhooks; only notes and missing comments",
	"argoproj-labs_argocd-agent":                                    "one argocd-cm with the default status rule",
	"argoproj_argo-cd":                                              "the shipped argocd-cm and documented examples: narrow rules",
	"argoproj_argo-helm":                                            "argo-cd chart values: default status rule and exclusions",
	"aws-samples_eks-blueprints-add-ons":                            "caBundle and generated-field rules on add-on charts",
	"aws-samples_eks-blueprints-for-terraform-workshop":             "argo-cd chart values with exclusions only",
	"aws-samples_eks-saas-gitops":                                   "no rules; its tier templates are script templates, not manifests",
	"bjw-s-labs_home-ops":                                           "Flux prune marks on Namespaces only",
	"buroa_k8s-gitops":                                              "Flux prune marks on Namespaces only",
	"cnoe-io_reference-implementation-aws":                          "one exclusion of a Crossplane usage kind",
	"cnoe-io_stacks":                                                "narrow webhook and controller-owned field rules",
	"fluxcd_flux2-hub-spoke-example":                                "one driftDetection ignore of /spec/replicas",
	"fluxcd_flux2-kustomize-helm-example":                           "no rules",
	"fluxcd_flux2-monitoring-example":                               "one prune mark",
	"fluxcd_flux2-multi-tenancy":                                    "no rules",
	"fluxcd_helm-controller":                                        "no rules; one HelmRelease of a chart in the same repository",
	"gitops-bridge-dev_gitops-bridge-argocd-control-plane-template": "argo-cd chart values and ApplicationSet rules on generated fields",
	"gitops-ziichat-app_argo-config":                                "instance-wide rules of controller-written fields (failurePolicy, defaultCompositionRef, env)",
	"kubefirst_gitops-template":                                     "webhook caBundle and replica rules of remote charts",
	"onedr0p_home-ops":                                              "Flux prune marks on Namespaces only",
	"opencenter-cloud_openCenter-gitops-base":                       "istio webhook caBundle/failurePolicy drift ignored",
	"redhat-cop_gitops-catalog":                                     "ArgoCD resource exclusions of Tekton runs",
	"redhat-na-ssa_demo-ai-gitops-catalog":                          "ArgoCD resource exclusions of Tekton runs",
	"ricsanfre_pi-cluster":                                          "no rules; generator data with Flux variables is not a manifest",
	"xunholy_k8s-gitops":                                            "Flux prune, ssa and driftDetection rules of operator-owned fields",
}

// TestAuditCorpusExitCodes runs `kubectl drift audit DIR -o json` on a copy
// of every corpus repository (outside any Git checkout, as a user's clone
// is its own root): it exits 0 on the repositories judged sound (at least
// 10, issue 33) and 1 on the others, each of whose error findings is
// labelled true in the corpus labels.
func TestAuditCorpusExitCodes(t *testing.T) {
	trueErrors := labelledTrue(t)
	ents, err := os.ReadDir(auditCorpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(soundCorpusRepos) < 10 {
		t.Fatalf("%d repositories judged sound, issue 33 wants at least 10", len(soundCorpusRepos))
	}
	seen := map[string]bool{}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			dir := testutil.CopyTree(t, filepath.Join(auditCorpus, name), filepath.Join(t.TempDir(), name))
			code, out, errOut := runAudit(t, dir, "-o", "json")
			var report struct {
				Findings []struct {
					Check, Severity, File string
					Line, Column          int
				} `json:"findings"`
			}
			if err := json.Unmarshal([]byte(out), &report); err != nil {
				t.Fatalf("exit %d, -o json does not parse: %v\nstderr:\n%s", code, err, errOut)
			}
			var errs []string
			for _, f := range report.Findings {
				if f.Severity == "error" {
					errs = append(errs, fmt.Sprintf("%s %s:%d:%d", f.Check, f.File, f.Line, f.Column))
				}
			}
			sort.Strings(errs)
			if reason, sound := soundCorpusRepos[name]; sound {
				if code != 0 {
					t.Errorf("judged sound (%s) but audit exits %d with errors %q\nstderr:\n%s", reason, code, errs, errOut)
				}
				return
			}
			if code != 1 || len(errs) == 0 {
				t.Errorf("not in soundCorpusRepos but audit exits %d with errors %q: judge the repository and list it with a reason", code, errs)
			}
			for _, e := range errs {
				if !trueErrors[name+" "+e] {
					t.Errorf("error finding %s is not labelled true in %s: a repository may fail only on true findings", e, auditCorpusLabels)
				}
			}
		})
	}
	for name := range soundCorpusRepos {
		if !seen[name] {
			t.Errorf("soundCorpusRepos names %s, which is not in the corpus", name)
		}
	}
}

// labelledTrue reads the corpus labels: "repo check file:line:col" of every
// finding labelled true.
func labelledTrue(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(auditCorpusLabels)
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct {
		Repo, Check, At string
		Label           *bool
	}
	if err := yaml.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, l := range labels {
		if l.Label != nil && *l.Label {
			out[l.Repo+" "+l.Check+" "+l.At] = true
		}
	}
	return out
}
