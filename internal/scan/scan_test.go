package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	prommodel "github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-drift/kubectl-drift/internal/argocd"
	"github.com/kubectl-drift/kubectl-drift/internal/flux"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// fileSource serves LIST responses captured from the real API server
// (testdata/capture.sh) and can refuse kinds like RBAC would.
type fileSource struct {
	files     map[string]string // resource -> testdata file
	forbidden map[string]bool
	broken    map[string]bool
	mu        sync.Mutex // Run lists kinds concurrently
	lists     []string
}

func (f *fileSource) List(_ context.Context, k Kind, namespace, selector string, fn func([]byte) error) (string, error) {
	f.mu.Lock()
	f.lists = append(f.lists, k.GVR.Resource)
	f.mu.Unlock()
	if f.forbidden[k.GVR.Resource] {
		return "", apierrors.NewForbidden(k.GVR.GroupResource(), "", errors.New(`User "reader" cannot list resource`))
	}
	if f.broken[k.GVR.Resource] {
		return "", errors.New("connection reset by peer")
	}
	name, ok := f.files[k.GVR.Resource]
	if !ok {
		return "1", nil
	}
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		return "", err
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return "", err
	}
	for _, it := range list.Items {
		if err := fn(it); err != nil {
			return "", err
		}
	}
	return list.Metadata.ResourceVersion, nil
}

var (
	kindDeployments = Kind{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespaced: true}
	kindConfigMaps = Kind{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespaced: true}
	kindSecrets = Kind{GVR: schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
		GVK: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Namespaced: true}
	kindServices = Kind{GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"},
		GVK: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, Namespaced: true}
)

func shopSource() *fileSource {
	return &fileSource{files: map[string]string{
		"deployments": "list-deployments.json",
		"configmaps":  "list-configmaps.json",
		"secrets":     "list-secrets.json",
	}}
}

// adapter returns the engine's real adapter, offline (no cluster, no
// files): ownership from the object's own marks, verdicts from the
// engine's defaults.
func adapter(t testing.TB, e model.Engine) model.Adapter {
	t.Helper()
	var a model.Adapter
	var err error
	switch e {
	case model.Engine("argocd"):
		// As scan builds it (engine.ForScan): inventory mode.
		a, err = argocd.New(argocd.Options{Inventory: true})
	case model.Engine("flux"):
		a, err = flux.New(flux.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func bothEngines(t testing.TB) *Inspector {
	return &Inspector{Adapters: []model.Adapter{adapter(t, model.Engine("argocd")), adapter(t, model.Engine("flux"))}}
}

var fixedNow = func() time.Time { return time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC) }

func runShop(t *testing.T, src Source, in *Inspector, kinds ...Kind) *Result {
	t.Helper()
	if len(kinds) == 0 {
		kinds = []Kind{kindConfigMaps, kindSecrets, kindDeployments}
	}
	res, err := Run(context.Background(), src, Options{Kinds: kinds, Engine: "auto", Inspector: in, Now: fixedNow})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// drifted flattens a result to "Kind name pointer manager class" lines.
func drifted(res *Result) []string {
	var out []string
	for _, r := range res.Items {
		for _, d := range r.Drifts {
			m := (&Inspector{}).culprit(d)
			out = append(out, fmt.Sprintf("%s %s %s %s %s", r.Resource.Kind, r.Resource.Name, d.Path, m.Manager, d.Cause))
		}
	}
	sort.Strings(out)
	return out
}

func TestRunFindsExactlyTheDriftedFields(t *testing.T) {
	res := runShop(t, shopSource(), bothEngines(t))
	want := []string{
		"ConfigMap cfg-csa /data/LOG_LEVEL kubectl-patch manual",
		"ConfigMap cfg-labelled /metadata/labels/team kubectl-label manual",
		"ConfigMap cfg-patched /data/LOG_LEVEL kubectl-patch manual",
		"Deployment web-hpa /spec/replicas kube-controller-manager autoscaler",
		"Deployment web-image /spec/template/spec/containers/0/image kubectl-set manual",
		"Deployment web-scaled /spec/replicas kubectl manual",
		"Secret db /data/password kubectl-patch manual",
	}
	if diff := cmp.Diff(want, drifted(res)); diff != "" {
		t.Errorf("drifted fields (-want +got):\n%s", diff)
	}
	// loose is not GitOps-owned; web-clean only has controller bookkeeping;
	// cfg-copied carries Flux's labels but Flux never applied it.
	wantStats := Stats{Kinds: 3, Objects: 11, Owned: 10, Drifted: 7, Fields: 7}
	if diff := cmp.Diff(wantStats, res.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	for _, r := range res.Items {
		if len(r.Owners) != 1 {
			t.Errorf("%s: owners = %v, want exactly one", r.Resource, r.Owners)
		}
		if r.DesiredSource != model.SourceManagedFields {
			t.Errorf("%s: desired source %q", r.Resource, r.DesiredSource)
		}
	}
}

func TestRunChangeKindsAndDesiredValues(t *testing.T) {
	res := runShop(t, shopSource(), bothEngines(t), kindConfigMaps)
	got := map[string]string{}
	for _, r := range res.Items {
		for _, d := range r.Drifts {
			got[r.Resource.Name+" "+d.Path] = fmt.Sprintf("%s desired=%v live=%v", d.Change, d.Desired, d.Live)
		}
	}
	want := map[string]string{
		// Argo CD's client-side sync left its last-applied-configuration.
		"cfg-csa /data/LOG_LEVEL": "changed desired=info live=debug",
		// A label key the engine does not own was added.
		"cfg-labelled /metadata/labels/team": "added desired=<nil> live=oncall",
		// Server-side apply leaves no record of the engine's value.
		"cfg-patched /data/LOG_LEVEL": "changed desired=<nil> live=debug",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drifts (-want +got):\n%s", diff)
	}
}

func TestRunMasksSecretValues(t *testing.T) {
	res := runShop(t, shopSource(), bothEngines(t))
	var out bytes.Buffer
	for _, f := range Outputs {
		if err := Print(&out, f, res, 0); err != nil {
			t.Fatalf("Print %s: %v", f, err)
		}
	}
	if strings.Contains(out.String(), "hunter2") || strings.Contains(out.String(), "aHVudGVyMg") {
		t.Errorf("secret value printed:\n%s", out.String())
	}
	for _, r := range res.Items {
		if r.Resource.Kind == "Secret" {
			if len(r.Drifts) != 1 || r.Drifts[0].Live != "***" {
				t.Errorf("secret drift not masked: %+v", r.Drifts)
			}
		}
	}
}

func TestRunIncludeControllers(t *testing.T) {
	in := bothEngines(t)
	in.IncludeControllers = true
	res := runShop(t, shopSource(), in, kindDeployments)
	got := drifted(res)
	want := "Deployment web-clean /metadata/annotations/deployment.kubernetes.io~1revision kube-controller-manager controller"
	found := false
	for _, g := range got {
		if g == want {
			found = true
		}
		if strings.Contains(g, "/status") {
			t.Errorf("status field reported: %s", g)
		}
	}
	if !found {
		t.Errorf("with IncludeControllers, want %q among:\n%s", want, strings.Join(got, "\n"))
	}
}

func TestRunEngineSelection(t *testing.T) {
	for _, tc := range []struct {
		engine model.Engine
		kinds  []string
	}{
		{model.Engine("argocd"), []string{"ConfigMap"}},
		{model.Engine("flux"), []string{"Deployment", "Secret"}},
	} {
		t.Run(string(tc.engine), func(t *testing.T) {
			res := runShop(t, shopSource(), &Inspector{Adapters: []model.Adapter{adapter(t, tc.engine)}})
			kinds := map[string]bool{}
			for _, r := range res.Items {
				kinds[r.Resource.Kind] = true
				for _, o := range r.Owners {
					if o.Engine != tc.engine {
						t.Errorf("%s owned by %s", r.Resource, o.Engine)
					}
				}
			}
			var got []string
			for k := range kinds {
				got = append(got, k)
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.kinds, got); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunForbiddenKindIsAWarning(t *testing.T) {
	src := shopSource()
	src.forbidden = map[string]bool{"secrets": true}
	res := runShop(t, src, bothEngines(t))
	if res.Stats.KindsSkipped != 1 || res.Stats.Kinds != 2 {
		t.Errorf("stats = %+v, want 2 kinds listed, 1 skipped", res.Stats)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "secrets not scanned") || !strings.Contains(res.Warnings[0], "forbidden") {
		t.Errorf("warnings = %q", res.Warnings)
	}
	for _, r := range res.Items {
		if r.Resource.Kind == "Secret" {
			t.Errorf("secret reported although its kind was forbidden")
		}
	}
	if res.Stats.Drifted != 6 {
		t.Errorf("drifted = %d, want the 6 of the other kinds", res.Stats.Drifted)
	}
}

func TestRunOtherListErrorsFail(t *testing.T) {
	src := shopSource()
	src.broken = map[string]bool{"configmaps": true}
	_, err := Run(context.Background(), src, Options{Kinds: []Kind{kindConfigMaps, kindDeployments}, Inspector: bothEngines(t)})
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v, want the list error", err)
	}
}

func TestRunEveryKindForbiddenFails(t *testing.T) {
	src := shopSource()
	src.forbidden = map[string]bool{"configmaps": true}
	_, err := Run(context.Background(), src, Options{Kinds: []Kind{kindConfigMaps}, Inspector: bothEngines(t)})
	if err == nil || !strings.Contains(err.Error(), "no kind could be listed") {
		t.Fatalf("err = %v", err)
	}
}

func TestRunListsEachKindOnce(t *testing.T) {
	src := shopSource()
	runShop(t, src, bothEngines(t), kindConfigMaps, kindSecrets, kindDeployments, kindServices)
	sort.Strings(src.lists)
	if diff := cmp.Diff([]string{"configmaps", "deployments", "secrets", "services"}, src.lists); diff != "" {
		t.Errorf("LISTs (-want +got):\n%s", diff)
	}
}

func TestRunIsStable(t *testing.T) {
	var first string
	for i := 0; i < 5; i++ {
		var b bytes.Buffer
		if err := Print(&b, OutputJSON, runShop(t, shopSource(), bothEngines(t)), 0); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b.String()
		} else if b.String() != first {
			t.Fatalf("run %d printed different JSON", i)
		}
	}
}

func TestPrintGolden(t *testing.T) {
	res := runShop(t, shopSource(), bothEngines(t))
	for _, tc := range []struct{ format, golden string }{
		{OutputTable, "shop-table.golden"},
		{OutputJSON, "shop-json.golden"},
		{OutputPrometheus, "shop-prometheus.golden"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Print(&b, tc.format, res, 0); err != nil {
				t.Fatal(err)
			}
			assertGolden(t, tc.golden, b.String())
		})
	}
}

// prometheusFamilies writes res in the text exposition format and parses
// it back with Prometheus's own parser.
func prometheusFamilies(t *testing.T, res *Result) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	var b bytes.Buffer
	if err := WritePrometheus(&b, res); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(prommodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("text exposition does not parse: %v\n%s", err, b.String())
	}
	return fams, b.String()
}

func TestPrometheusOutputParses(t *testing.T) {
	res := runShop(t, shopSource(), bothEngines(t))
	fams, text := prometheusFamilies(t, res)
	fields := fams[MetricFields]
	if fields == nil {
		t.Fatalf("no %s family:\n%s", MetricFields, text)
	}
	total := 0.0
	for _, m := range fields.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for _, want := range []string{"namespace", "kind", "manager", "engine", "verdict"} {
			if labels[want] == "" {
				t.Errorf("series %v lacks label %s", labels, want)
			}
		}
		if m.TimestampMs != nil {
			t.Errorf("sample with a timestamp: the textfile collector rejects those")
		}
		total += m.GetGauge().GetValue()
	}
	if int(total) != res.Stats.Fields {
		t.Errorf("sum of %s = %v, want %d fields", MetricFields, total, res.Stats.Fields)
	}
	objs := 0.0
	for _, m := range fams[MetricObjects].Metric {
		objs += m.GetGauge().GetValue()
	}
	if int(objs) != res.Stats.Drifted {
		t.Errorf("sum of %s = %v, want %d", MetricObjects, objs, res.Stats.Drifted)
	}
	if got := fams[MetricScanObjects].Metric[0].GetGauge().GetValue(); int(got) != res.Stats.Objects {
		t.Errorf("%s = %v, want %d", MetricScanObjects, got, res.Stats.Objects)
	}
}

func TestPrometheusNoDriftStillParses(t *testing.T) {
	res := runShop(t, shopSource(), &Inspector{}) // no engine: nothing owned
	fams, _ := prometheusFamilies(t, res)
	if _, ok := fams[MetricFields]; ok {
		t.Errorf("no drift but %s series present", MetricFields)
	}
	if _, ok := fams[MetricScanTimestamp]; !ok {
		t.Errorf("%s missing: staleness alerts need it", MetricScanTimestamp)
	}
}

func assertGolden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), []byte(got))
}

// refusing is an adapter that owns nothing called name and says so after
// the scan, as Argo CD's does for an Application of a hub that deploys to
// another cluster than the scanned one.
type refusing struct {
	model.Adapter
	name    string
	refused atomic.Int32 // Owner runs in the scan's workers
}

func (r *refusing) Owner(obj *unstructured.Unstructured) *model.Owner {
	if obj.GetName() == r.name {
		r.refused.Add(1)
		return nil
	}
	return r.Adapter.Owner(obj)
}

func (r *refusing) OwnerWarnings() []string {
	return []string{fmt.Sprintf("%d object(s) named %s not owned", r.refused.Load(), r.name)}
}

func TestRunOwnerWarnings(t *testing.T) {
	in := &Inspector{Adapters: []model.Adapter{&refusing{Adapter: adapter(t, model.Engine("flux")), name: "web-image"}, adapter(t, model.Engine("argocd"))}}
	res := runShop(t, shopSource(), in)
	for _, r := range res.Items {
		if r.Resource.Name == "web-image" {
			t.Errorf("web-image reported although its owner refused it: %+v", r.Owners)
		}
	}
	if want := []string{"1 object(s) named web-image not owned"}; !reflect.DeepEqual(res.Warnings, want) {
		t.Errorf("warnings = %q, want %q", res.Warnings, want)
	}
}

// TestRunDesiredHook: with Inspector.Desired (scan --source), an object
// is compared with the desired object the hook gives (the value the
// engine would apply, which managedFields alone cannot tell); a nil
// desired infers as before; an error leaves the object out with its text
// as a warning, once however many objects share it.
func TestRunDesiredHook(t *testing.T) {
	in := bothEngines(t)
	in.Desired = func(_ context.Context, live *unstructured.Unstructured) (*unstructured.Unstructured, model.DesiredSource, error) {
		switch {
		case live.GetName() == "cfg-patched":
			d := live.DeepCopy()
			if err := unstructured.SetNestedField(d.Object, "info", "data", "LOG_LEVEL"); err != nil {
				return nil, "", err
			}
			return d, model.SourceRendered, nil
		case live.GetKind() == "Deployment":
			return nil, "", errors.New("HelmRelease/shop/web: chart fails to template")
		}
		return nil, model.SourceManagedFields, nil
	}
	res := runShop(t, shopSource(), in)
	got := map[string]string{}
	for _, r := range res.Items {
		for _, d := range r.Drifts {
			got[r.Resource.Kind+" "+r.Resource.Name+" "+d.Path] = fmt.Sprintf("%s %s desired=%v live=%v", r.DesiredSource, d.Change, d.Desired, d.Live)
		}
	}
	want := map[string]string{
		"ConfigMap cfg-csa /data/LOG_LEVEL":            "managed-fields changed desired=info live=debug",
		"ConfigMap cfg-labelled /metadata/labels/team": "managed-fields added desired=<nil> live=oncall",
		// The hook's desired value, which inference does not have.
		"ConfigMap cfg-patched /data/LOG_LEVEL": "rendered changed desired=info live=debug",
		"Secret db /data/password":              "managed-fields changed desired=<nil> live=***",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drifts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"HelmRelease/shop/web: chart fails to template"}, res.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// The table fits the terminal at 80, 100 and 120 columns (issue 34): no
// line is wider, every drifted field keeps its row with its FIELD and
// VERDICT (paths shortened from the middle), and the goldens show which
// columns gave way.
func TestPrintTableFits(t *testing.T) {
	res := runShop(t, shopSource(), bothEngines(t))
	for _, width := range []int{80, 100, 120} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			var b bytes.Buffer
			if err := Print(&b, OutputTable, res, width); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, l := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(l); n > width {
					t.Errorf("line is %d columns at %d: %q", n, width, l)
				}
			}
			rows := 0
			for _, rep := range res.Items {
				for _, d := range rep.Drifts {
					rows++
					if !strings.Contains(out, verdicts(d)) {
						t.Errorf("verdict %q of %s is not printed:\n%s", verdicts(d), d.FieldPath, out)
					}
				}
			}
			if got := strings.Count(out, ": reverted") + strings.Count(out, ": unknown") + strings.Count(out, ": reported") + strings.Count(out, ": left-alone"); got != rows {
				t.Errorf("%d verdict cells, want one per drifted field (%d):\n%s", got, rows, out)
			}
			assertGolden(t, fmt.Sprintf("shop-table-%dcol.golden", width), out)
		})
	}
}
