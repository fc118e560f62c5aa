package render

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	helmchart "helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/common"
	helmchartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/cli/values"
	"helm.sh/helm/v4/pkg/getter"
	ri "helm.sh/helm/v4/pkg/release"
	helmrelease "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sversion "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
	"github.com/kubectl-drift/kubectl-drift/internal/render"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// renderHelm mirrors repository.go helmTemplate and util/helm/cmd.go
// template: `helm template . --name-template <releaseName or app name>
// --namespace <helm.namespace or destination namespace> --values <each
// valueFile> --values <values/valuesObject> --set/--set-string/--set-file
// <parameters> --include-crds (unless skipCrds) [--skip-tests]
// [--kube-version] [--api-versions]`, here with Helm's own library in
// client-only mode (the `helm template` code path). Value files resolve
// as pathutil.ResolveValueFilePathOrUrl resolves them: relative to the
// chart, absolute ones from the repository root, `$ref/...` from the root
// of the source with that ref; none may leave its repository. Without
// kubeVersion/apiVersions in the source, the cluster's are used as Argo CD
// passes the destination cluster's (env.Capabilities), Helm's defaults
// offline.
func (r *Renderer) renderHelm(ctx context.Context, app *application, s *appSource, env *render.Env, chartDir, repoRoot string, refs map[string]string) ([]*unstructured.Unstructured, error) {
	h := s.Helm
	if h == nil {
		h = &helmSource{}
	}
	vals, err := helmValues(h, chartDir, repoRoot, refs, r.appEnv(app, s))
	if err != nil {
		return nil, err
	}
	chrt, err := loadChart(chartDir, repoRoot)
	if err != nil {
		return nil, err
	}
	// The rendering's bounds: its functions, its templates marked so
	// that a time or memory bound names the one running.
	rendering := render.NewRendering()
	rendering.Mark(chrt)
	cfg := action.NewConfiguration()
	cfg.CustomTemplateFuncs = rendering.Funcs()
	install := action.NewInstall(cfg)
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName, install.Namespace = releaseOf(app, h)
	install.IncludeCRDs = !h.SkipCrds
	install.SkipSchemaValidation = h.SkipSchemaValidation
	if install.KubeVersion, install.APIVersions, err = helmCapabilities(ctx, h, env); err != nil {
		return nil, err
	}
	rel, err := bound.Run(ctx, "chart "+relTo(repoRoot, chartDir), rendering.Limits(env.RenderLimits), func(ctx context.Context) (ri.Releaser, error) {
		return install.RunWithContext(ctx, chrt, vals)
	})
	if errors.Is(err, render.ErrBound) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("failed to execute helm template command: %w", err)
	}
	rv, ok := rel.(*helmrelease.Release)
	if !ok {
		return nil, fmt.Errorf("chart %s: only Helm chart API v2 releases are supported", relTo(repoRoot, chartDir))
	}
	return splitYAML(templateOutput(rv, h.SkipTests))
}

// releaseOf is helm template's --name-template (releaseName, else the
// Application's name: argo.ParseInstanceName's name part) and --namespace
// (helm.namespace, else the destination's: GetNamespaceOrDefault).
func releaseOf(app *application, h *helmSource) (name, namespace string) {
	name = app.Metadata.Name
	if h.ReleaseName != "" {
		name = h.ReleaseName
	}
	namespace = app.Spec.Destination.Namespace
	if h.Namespace != "" {
		namespace = h.Namespace
	}
	if namespace == "" {
		// No --namespace: helm's own default, the repo-server having no
		// kubeconfig context.
		namespace = "default"
	}
	return name, namespace
}

// helmValues merges the values as helm template's --values (valueFiles,
// then values/valuesObject), --set, --set-string and --set-file do; every
// file is read through the bounded reader first.
func helmValues(h *helmSource, chartDir, repoRoot string, refs map[string]string, vars envVars) (map[string]any, error) {
	opts := values.Options{}
	for _, vf := range h.ValueFiles {
		p, err := resolveValueFile(vf, chartDir, repoRoot, refs, vars)
		if err != nil {
			return nil, fmt.Errorf("error resolving helm value files: %w", err)
		}
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) && h.IgnoreMissingValueFiles {
			continue
		}
		opts.ValueFiles = append(opts.ValueFiles, p)
	}
	if y := h.valuesYAML(); len(y) > 0 {
		tmp, err := writeTemp(y)
		if err != nil {
			return nil, fmt.Errorf("writing the Application's helm values: %w", err)
		}
		defer func() { _ = os.Remove(tmp) }()
		opts.ValueFiles = append(opts.ValueFiles, tmp)
	}
	for _, p := range h.Parameters {
		v := p.Name + "=" + cleanSetParameter(vars.subst(p.Value))
		if p.ForceString {
			opts.StringValues = append(opts.StringValues, v)
		} else {
			opts.Values = append(opts.Values, v)
		}
	}
	for _, p := range h.FileParameters {
		path, err := resolveValueFile(p.Path, chartDir, repoRoot, refs, vars)
		if err != nil {
			return nil, fmt.Errorf("error resolving set-file path: %w", err)
		}
		opts.FileValues = append(opts.FileValues, p.Name+"="+cleanSetParameter(path))
	}
	// Argo CD hands helm maps: its flags come in no fixed order, which
	// matters only for parameters that set the same key; sorted here.
	sort.Strings(opts.Values)
	sort.Strings(opts.StringValues)
	sort.Strings(opts.FileValues)
	for _, f := range opts.ValueFiles {
		// Read through the bounded reader first: helm reads without a limit.
		if _, err := source.ReadFile(f, nil, 0); err != nil {
			return nil, fmt.Errorf("values file: %w", err)
		}
	}
	vals, err := opts.MergeValues(getter.Providers{})
	if err != nil {
		return nil, fmt.Errorf("merging helm values: %w", err)
	}
	return vals, nil
}

// writeTemp writes b to a temporary file and returns its name.
func writeTemp(b []byte) (string, error) {
	tmp, err := os.CreateTemp("", "drift-argocd-values-*.yaml")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// loadChart loads an installable chart whose dependencies are vendored.
// Helm's loader reads every file of the chart whole and follows symlinks:
// sizes and where links lead are checked first.
func loadChart(chartDir, repoRoot string) (*helmchartv2.Chart, error) {
	if err := render.CheckTree(chartDir, repoRoot); err != nil {
		return nil, fmt.Errorf("chart %s: %w", relTo(repoRoot, chartDir), err)
	}
	chrt, err := loader.LoadDir(chartDir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", relTo(repoRoot, chartDir), err)
	}
	if t := chrt.Metadata.Type; t != "" && t != "application" {
		return nil, fmt.Errorf("%s charts are not installable", t)
	}
	ac, err := helmchart.NewAccessor(chrt)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", relTo(repoRoot, chartDir), err)
	}
	if req := ac.MetaDependencies(); len(req) > 0 {
		if err := action.CheckDependencies(chrt, req); err != nil {
			// Argo CD then runs `helm dependency build`, which fetches.
			return nil, fmt.Errorf("chart %s: dependencies are not in its charts/ directory and fetching them is not available offline: %w", relTo(repoRoot, chartDir), err)
		}
	}
	return chrt, nil
}

// helmCapabilities are helm template's --kube-version and --api-versions:
// the source's, else the destination cluster's as the controller sends
// them to the repo-server (gitops-engine pkg/cache GetServerVersion as
// major.minor; controller/state.go APIResourcesToStrings with kinds),
// else Helm's defaults (nil, offline).
func helmCapabilities(ctx context.Context, h *helmSource, env *render.Env) (*common.KubeVersion, common.VersionSet, error) {
	kubeVersion, apiVersions := h.KubeVersion, h.APIVersions
	if (kubeVersion == "" || len(apiVersions) == 0) && env.Capabilities != nil {
		caps, err := env.Capabilities(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the cluster's capabilities: %w", err)
		}
		if caps != nil {
			if kubeVersion == "" && caps.Major != "" {
				kubeVersion = strings.TrimSuffix(caps.Major+"."+caps.Minor, "+")
			}
			if len(apiVersions) == 0 {
				apiVersions = caps.APIVersions
			}
		}
	}
	if kubeVersion == "" {
		return nil, common.VersionSet(apiVersions), nil
	}
	// repository.go parseKubeVersion: k8s's generic parse, printed back
	// (major.minor.patch), then helm's --kube-version parse.
	gv, err := k8sversion.ParseGeneric(kubeVersion)
	if err != nil {
		return nil, nil, fmt.Errorf("could not parse kubernetes version %s: %w", kubeVersion, err)
	}
	// The repo-server's helm (v3) prints --kube-version as full semver
	// (pkg/chartutil ParseKubeVersion: "v" + semver String, so "1.37" is
	// v1.37.0); helm v4's parse keeps the input as given.
	full := fmt.Sprintf("%d.%d.%d", gv.Major(), gv.Minor(), gv.Patch())
	parsed, err := common.ParseKubeVersion(full)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid kube version '%s': %w", full, err)
	}
	return parsed, common.VersionSet(apiVersions), nil
}

// templateOutput is what helm template prints: the manifest, then every
// hook but tests with --skip-tests (helm pkg/cmd/template.go).
func templateOutput(rv *helmrelease.Release, skipTests bool) []byte {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(rv.Manifest))
	b.WriteString("\n")
	for _, hk := range rv.Hooks {
		if skipTests && isTestHook(hk) {
			continue
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", hk.Path, hk.Manifest)
	}
	return []byte(b.String())
}

func isTestHook(h *helmrelease.Hook) bool {
	for _, e := range h.Events {
		if e == helmrelease.HookTest {
			return true
		}
	}
	return false
}

// valuesYAML mirrors ApplicationSourceHelm.ValuesYAML: valuesObject wins
// over values.
func (h *helmSource) valuesYAML() []byte {
	if h.ValuesObject == nil || len(*h.ValuesObject) == 0 || string(*h.ValuesObject) == "null" {
		return []byte(h.Values)
	}
	b, err := yaml.JSONToYAML(*h.ValuesObject)
	if err != nil {
		return nil
	}
	return b
}

// cleanSetParameter mirrors util/helm/cmd.go cleanSetParameters: a
// value in braces is a Helm list and passes as is; otherwise every comma
// not already escaped is escaped, so that helm does not split the value.
func cleanSetParameter(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var b strings.Builder
	var prev rune
	for _, r := range v {
		if r == ',' && prev != '\\' {
			b.WriteString(`\,`)
		} else {
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// resolveValueFile mirrors repository.go getResolvedValueFiles for one
// file: $ref/... from the ref source's root, URLs refused (not offline),
// paths resolved and kept inside their repository.
func resolveValueFile(raw, appPath, repoRoot string, refs map[string]string, vars envVars) (string, error) {
	if strings.HasPrefix(raw, "$") {
		ref := strings.Split(raw, "/")[0]
		if root, ok := refs[ref]; ok {
			rest := strings.TrimPrefix(raw, ref)
			return resolveInRepo(root, root, vars.subst(rest), raw)
		}
	}
	v := vars.subst(raw)
	if u, err := url.Parse(v); err == nil && u.Scheme != "" {
		if u.Scheme == "http" || u.Scheme == "https" {
			return "", fmt.Errorf("remote value file %s: not available offline", v)
		}
		return "", fmt.Errorf("the URL scheme '%s' is not allowed", u.Scheme)
	}
	return resolveInRepo(appPath, repoRoot, v, raw)
}

// resolveInRepo is pathutil resolveFileOrDirectory: a relative path from
// appPath, an absolute one from repoRoot; never outside repoRoot (".." or
// symlinks).
func resolveInRepo(appPath, repoRoot, p, raw string) (string, error) {
	var full string
	if filepath.IsAbs(p) {
		full = filepath.Join(repoRoot, p)
	} else {
		full = filepath.Join(appPath, p)
	}
	rel, err := filepath.Rel(repoRoot, full)
	if err != nil {
		return "", err
	}
	got, err := render.Join(repoRoot, rel)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no such file") {
			// Missing: helm (or ignoreMissingValueFiles) decides.
			return full, nil
		}
		return "", fmt.Errorf("value file %s: %w", raw, err)
	}
	return got, nil
}
