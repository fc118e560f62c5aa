// Command argoparity runs Argo CD's own diff code (argo-cd v3.2.12,
// util/argo/diff and util/argo/normalizers, with gitops-engine's pkg/diff
// underneath) over the parity corpus of kubectl-drift and writes one golden
// JSON file per case. The main module's internal/argocd tests replay the same
// corpus through our own implementation and fail on any disagreement.
//
// It lives in its own Go module because argo-cd pins k8s.io to v0.34 and drags
// in ~1,300 packages; the plugin must never link it (DESIGN.md).
//
// Usage: argoparity -corpus internal/argocd/testdata/parity
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kube-openapi/pkg/util/proto"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	argodiff "github.com/argoproj/argo-cd/v3/util/argo/diff"
	"github.com/argoproj/argo-cd/v3/util/argo/normalizers"
	"github.com/argoproj/argo-cd/v3/util/settings"
	resourceutil "github.com/argoproj/gitops-engine/pkg/sync/resource"
)

// Golden is what Argo CD computed for one case. The main module reads the
// same shape (internal/argocd/parity_test.go).
type Golden struct {
	// Generator names the code that produced the file.
	Generator string `json:"generator"`
	// Error is set when Argo CD could not compare at all (the Application
	// would show a ComparisonError condition), e.g. an invalid jq rule.
	Error string `json:"error,omitempty"`
	// Modified is StateDiff's verdict: true means OutOfSync.
	Modified bool `json:"modified"`
	// NormalizedLive and NormalizedTarget are util/argo/diff.Normalize's
	// output: the objects as Argo sees them before the diff.
	NormalizedLive   any `json:"normalizedLive"`
	NormalizedTarget any `json:"normalizedTarget"`
	// DiffNormalizedLive and DiffPredictedLive are StateDiff's byte outputs
	// (the managed-resources API's normalizedLiveState/predictedLiveState).
	DiffNormalizedLive any `json:"diffNormalizedLive"`
	DiffPredictedLive  any `json:"diffPredictedLive"`
}

func main() {
	corpus := flag.String("corpus", "internal/argocd/testdata/parity", "parity corpus directory (holds openapi-v2.json.gz and cases/)")
	only := flag.String("case", "", "regenerate only this case")
	flag.Parse()
	log.SetLevel(log.ErrorLevel)
	if err := run(*corpus, *only); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(2)
	}
}

func run(corpus, only string) error {
	parser, err := loadGVKParser(filepath.Join(corpus, "openapi-v2.json.gz"))
	if err != nil {
		return err
	}
	dirs, err := filepath.Glob(filepath.Join(corpus, "cases", "*"))
	if err != nil {
		return err
	}
	sort.Strings(dirs)
	n := 0
	for _, dir := range dirs {
		if only != "" && filepath.Base(dir) != only {
			continue
		}
		g := runCase(dir, parser)
		data, err := json.MarshalIndent(g, "", "  ")
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if err := os.WriteFile(filepath.Join(dir, "argo-golden.json"), append(data, '\n'), 0o644); err != nil {
			return err
		}
		n++
	}
	fmt.Printf("argoparity: wrote %d goldens\n", n)
	return nil
}

// loadGVKParser builds the parser the way gitops-engine's KubectlCmd does for
// the application controller (pkg/utils/kube/ctl.go newGVKParser): the
// cluster's OpenAPI v2 document through proto.NewOpenAPIData and
// managedfields.NewGVKParser(models, false). The document was saved from our
// real API server (hack/argoparity/capture.sh).
func loadGVKParser(path string) (*managedfields.GvkParser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	doc, err := openapi_v2.ParseDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("parse openapi: %w", err)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		return nil, err
	}
	return managedfields.NewGVKParser(models, false)
}

func readObject(path string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(data)) == "null" {
		return nil, nil
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, err
	}
	return u, nil
}

func runCase(dir string, parser *managedfields.GvkParser) Golden {
	g := Golden{Generator: "argo-cd v3.2.12 util/argo/diff.StateDiff + Normalize (hack/argoparity)"}
	fail := func(err error) Golden { g.Error = err.Error(); return g }

	desired, err := readObject(filepath.Join(dir, "desired.yaml"))
	if err != nil {
		return fail(err)
	}
	live, err := readObject(filepath.Join(dir, "live.json"))
	if err != nil {
		return fail(err)
	}
	app := &v1alpha1.Application{}
	if data, err := os.ReadFile(filepath.Join(dir, "application.yaml")); err == nil {
		if err := yaml.Unmarshal(data, app); err != nil {
			return fail(fmt.Errorf("application.yaml: %w", err))
		}
	}
	cm := &corev1.ConfigMap{}
	if data, err := os.ReadFile(filepath.Join(dir, "argocd-cm.yaml")); err == nil {
		if err := yaml.Unmarshal(data, cm); err != nil {
			return fail(fmt.Errorf("argocd-cm.yaml: %w", err))
		}
	}
	opts := normalizers.IgnoreNormalizerOpts{}
	serverSideParam := false
	if data, err := os.ReadFile(filepath.Join(dir, "argocd-cmd-params-cm.yaml")); err == nil {
		params := &corev1.ConfigMap{}
		if err := yaml.Unmarshal(data, params); err != nil {
			return fail(fmt.Errorf("argocd-cmd-params-cm.yaml: %w", err))
		}
		if v := params.Data["controller.diff.server.side"]; v != "" {
			serverSideParam, _ = strconv.ParseBool(v)
		}
		if v := params.Data["ignore.normalizer.jq.timeout"]; v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fail(err)
			}
			opts.JQExecutionTimeout = d
		}
	}

	// The controller reads argocd-cm through the SettingsManager (informer on
	// ConfigMaps labelled part-of=argocd); a fake clientset gives us the very
	// same parsing code without a cluster.
	cm.Name = "argocd-cm"
	cm.Namespace = "argocd"
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["app.kubernetes.io/part-of"] = "argocd"
	secret := &corev1.Secret{}
	secret.Name = "argocd-secret"
	secret.Namespace = "argocd"
	secret.Labels = map[string]string{"app.kubernetes.io/part-of": "argocd"}
	client := fake.NewSimpleClientset(cm, secret)
	mgr := settings.NewSettingsManager(context.Background(), client, "argocd")

	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		return fail(fmt.Errorf("GetResourceOverrides: %w", err))
	}
	compareOptions, err := mgr.GetResourceCompareOptions()
	if err != nil {
		// controller/state.go falls back to the defaults on error.
		compareOptions = settings.GetDefaultDiffOptions()
	}
	labelKey, err := mgr.GetAppInstanceLabelKey()
	if err != nil {
		return fail(err)
	}
	tracking, err := mgr.GetTrackingMethod()
	if err != nil {
		return fail(err)
	}
	ignores := app.Spec.IgnoreDifferences
	if ignores == nil {
		ignores = []v1alpha1.ResourceIgnoreDifferences{}
	}

	// Same builder calls as controller/state.go CompareAppState, minus the
	// cache (WithNoCache) and server-side diff (needs a live dry-run).
	b := argodiff.NewDiffConfigBuilder().
		WithDiffSettings(ignores, overrides, compareOptions.IgnoreAggregatedRoles, opts).
		WithTracking(labelKey, tracking).
		WithNoCache().
		WithGVKParser(parser).
		WithManager("argocd-controller")
	if app.Spec.SyncPolicy != nil && app.Spec.SyncPolicy.SyncOptions.HasOption("ServerSideApply=true") {
		b.WithStructuredMergeDiff(true)
	}
	// Server-side diff as controller/state.go decides it; the dry-run's
	// answer was recorded from the real API server by capture.sh.
	ssd := serverSideParam || resourceutil.HasAnnotationOption(app, "argocd.argoproj.io/compare-options", "ServerSideDiff=true")
	if resourceutil.HasAnnotationOption(app, "argocd.argoproj.io/compare-options", "ServerSideDiff=false") {
		ssd = false
	}
	if resourceutil.HasAnnotationOption(app, "argocd.argoproj.io/compare-options", "IncludeMutationWebhook=true") {
		b.WithIgnoreMutationWebhook(false)
	}
	if ssd {
		data, err := os.ReadFile(filepath.Join(dir, "dryrun.json"))
		if err != nil {
			return fail(fmt.Errorf("server-side diff case without dryrun.json: %w", err))
		}
		b.WithServerSideDiff(true).WithServerSideDryRunner(recordedDryRun(data))
	}
	cfg, err := b.Build()
	if err != nil {
		return fail(err)
	}

	norm, err := argodiff.Normalize([]*unstructured.Unstructured{live}, []*unstructured.Unstructured{desired}, cfg)
	if err != nil {
		return fail(fmt.Errorf("Normalize: %w", err))
	}
	g.NormalizedLive = objOrNil(norm.Lives[0])
	g.NormalizedTarget = objOrNil(norm.Targets[0])

	res, err := argodiff.StateDiff(live, desired, cfg)
	if err != nil {
		return fail(fmt.Errorf("StateDiff: %w", err))
	}
	g.Modified = res.Modified
	g.DiffNormalizedLive = rawJSON(res.NormalizedLive)
	g.DiffPredictedLive = rawJSON(res.PredictedLive)
	return g
}

// recordedDryRun answers the server-side apply dry-run with what the real
// API server answered at capture time.
type recordedDryRun []byte

func (r recordedDryRun) Run(context.Context, *unstructured.Unstructured, string) (string, error) {
	return string(r), nil
}

func objOrNil(u *unstructured.Unstructured) any {
	if u == nil {
		return nil
	}
	return u.Object
}

func rawJSON(b []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return string(b)
	}
	return v
}
