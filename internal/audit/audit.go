package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Extractor turns manifests into rules: the engine adapters'
// RulesFromDocuments. Errors are per document or per rule; the rest of the
// rules are still returned.
type Extractor func(docs []Document) ([]model.Rule, []error)

// Loader reads one file into documents. A file that is not valid YAML
// returns an error (*source.DocumentError with the line, possibly several
// joined) next to the documents it could read, never a panic.
type Loader func(file string) ([]Document, error)

// Options configure one audit run.
type Options struct {
	// Root is the directory findings are relative to: the Git top level,
	// so that SARIF and GitHub annotations point at repository paths.
	Root string
	// Paths are files or directories, absolute or relative to Root (not to
	// the working directory: the CLI makes them absolute).
	// Directories are walked for *.yaml, *.yml and *.json.
	Paths []string
	// Config is the parsed .drift-audit.yaml (nil: defaults).
	Config *Config
	// MaxRules overrides the configured total budget when > 0.
	MaxRules int
	// Load reads a file; Extractors turn its documents into rules.
	Load       Loader
	Extractors []Extractor
	// Engines say what each engine's rules are and add the engines' own
	// checks (the registered engines' Descriptor.Audit).
	Engines []auditapi.Engine
	// Values reads a Helm values file (values*.yaml, also inside charts)
	// into the documents it stands for (argo-cd chart configs.cm is an
	// argocd-cm); nil reads none.
	Values Loader
	// Exclude are gitignore-like patterns of paths not audited, added to
	// those of the .driftauditignore file at Root.
	Exclude []string
}

// IgnoreFile holds gitignore-like patterns of paths not audited, at the
// audit root.
const IgnoreFile = ".driftauditignore"

// Result is what an audit found.
type Result struct {
	Findings []Finding `json:"findings"`
	// Suppressed counts findings silenced by allow-list entries.
	Suppressed int `json:"suppressed"`
	Files      int `json:"files"`
	// Skipped counts files that hold no Kubernetes object (apiVersion, kind
	// and metadata): CI, Helm, Talos, Ansible configuration, templates.
	Skipped   int `json:"skipped"`
	Manifests int `json:"manifests"`
	Rules     int `json:"rules"`
	// Base is the --base revision, if any.
	Base string `json:"base,omitempty"`
}

// Worst returns the most severe severity among the findings ("" if none).
func (r *Result) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		if f.Severity.rank() > w.rank() {
			w = f.Severity
		}
	}
	return w
}

// snapshot is one tree's manifests and rules.
type snapshot struct {
	root     string
	docs     []Document
	rules    []model.Rule
	findings []Finding
	files    int
	skipped  int
	engines  engines
	// kustomize indexes the kustomization files: which files are patches,
	// which directories inflate remote charts.
	kustomize kustomizations
	// patches are the documents that are patch fragments (isPatch), by
	// file: they are read for rules, but are not whole objects.
	patches map[string]bool
}

// wholeObjects returns the documents that are whole objects: what the
// checks of objects (not of rules) look at.
func (s *snapshot) wholeObjects() []Document {
	if len(s.patches) == 0 {
		return s.docs
	}
	out := make([]Document, 0, len(s.docs))
	for _, d := range s.docs {
		if !s.patches[d.File] {
			out = append(out, d)
		}
	}
	return out
}

// prepare returns the configuration (the defaults when none was given) and
// the audited paths relative to the root.
func (opts Options) prepare() (*Config, []string, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = &Config{}
	}
	rel, err := relPaths(opts.Root, opts.Paths)
	return cfg, rel, err
}

// Run audits the paths.
func Run(opts Options) (*Result, error) {
	cfg, rel, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	snap, err := collect(opts, opts.Root, rel, false)
	if err != nil {
		return nil, err
	}
	res := &Result{Files: snap.files, Skipped: snap.skipped, Manifests: len(snap.docs), Rules: len(snap.rules)}
	fs := analyze(snap, cfg, opts.MaxRules)
	res.Findings, res.Suppressed = applyConfig(fs, cfg, opts.Root)
	res.Findings = mergeRepeats(res.Findings)
	return res, nil
}

// relPaths makes the audited paths relative to root, so that the same
// paths can be read from a base revision's tree.
func relPaths(root string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var out []string
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(root, p)
		}
		r, err := filepath.Rel(root, abs)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("path %s is outside the audit root %s", p, root)
		}
		out = append(out, r)
	}
	return out, nil
}

// collect loads the files under root/paths and extracts their rules. Files
// and rule origins are rewritten relative to root. With missingOK a path
// that does not exist is skipped (a base revision may predate it).
func collect(opts Options, root string, paths []string, missingOK bool) (*snapshot, error) {
	s := &snapshot{root: root, engines: newEngines(opts.Engines)}
	ign, err := loadIgnore(root, opts.Exclude)
	if err != nil {
		return nil, err
	}
	files, explicit, chartValues, err := walk(root, paths, missingOK, ign)
	if err != nil {
		return nil, err
	}
	s.files = len(files)
	s.kustomize = readKustomizations(root, files)
	s.patches = map[string]bool{}
	load := opts.Load
	if load == nil {
		load = loadFile
	}
	var settingsDocs []Document
	for _, f := range files {
		abs := filepath.Join(root, filepath.FromSlash(f))
		docs, err := load(abs)
		objs := docs[:0]
		for _, d := range docs {
			d.File = f
			// A Kubernetes object has metadata; kustomization.yaml and
			// other tools' files with apiVersion and kind only are not.
			if d.Object != nil && d.Object.Object["metadata"] == nil && !explicit[f] {
				continue
			}
			if d.Object != nil && d.Object.GetKind() == "CustomResourceDefinition" {
				// A CRD's YAML node tree is ten times its text (2 MB
				// CRDs are common) and no rule lives in it: positions
				// fall back to the document's line.
				d.Node = nil
			}
			if s.kustomize.isPatch(d) {
				s.patches[f] = true
			}
			objs = append(objs, d)
		}
		docs = objs
		if !explicit[f] && (bracePlaceholderDocs(docs) || err != nil && len(docs) == 0 && bracePlaceholderError(err, abs)) {
			// A script's template ({TENANT_ID} where it writes a name):
			// not a manifest until filled in, as {{ }} templates are.
			docs, err = nil, nil
		}
		s.docs = append(s.docs, docs...)
		if err != nil && !explicit[f] && len(docs) == 0 && (onlyNotObjects(err) || s.kustomize.dataFiles[f] || jsonWithComments(abs) || templated(abs) || terraformTemplate(abs) || placeholderTemplate(err, abs) || halfObjects(err, abs)) {
			err = nil
		}
		if err != nil {
			s.findings = append(s.findings, loadFindings(root, f, err)...)
		}
		if len(docs) == 0 && err == nil {
			s.skipped++
		}
		if opts.Values != nil && isValuesName(f) {
			settingsDocs = append(settingsDocs, loadValues(opts.Values, root, f)...)
		}
	}
	if opts.Values != nil {
		for _, f := range chartValues {
			settingsDocs = append(settingsDocs, loadValues(opts.Values, root, f)...)
		}
	}
	for _, ex := range opts.Extractors {
		rules, errs := ex(append(s.docs[:len(s.docs):len(s.docs)], settingsDocs...))
		for i := range rules {
			rules[i].Origin.File = relFile(root, rules[i].Origin.File)
		}
		s.rules = append(s.rules, rules...)
		for _, f := range extractFindings(root, rules, errs) {
			// What an engine cannot read of a patch fragment (an
			// ApplicationSet patch without spec.template) is what the
			// whole object, after kustomize, has.
			if !s.patches[f.File] {
				s.findings = append(s.findings, f)
			}
		}
	}
	return s, nil
}

// loadValues reads one values file with the Values loader; its documents
// are rule sources, not manifests.
func loadValues(load Loader, root, f string) []Document {
	docs, _ := load(filepath.Join(root, filepath.FromSlash(f)))
	for i := range docs {
		docs[i].File = f
	}
	return docs
}

// isValuesName: Helm values files are named values.yaml, values-prod.yaml...
func isValuesName(f string) bool {
	base := strings.ToLower(path.Base(f))
	ext := path.Ext(base)
	return (ext == ".yaml" || ext == ".yml") && strings.Contains(base, "values")
}

// templated reports a file with template actions ({{ }}): Helm, helmfile
// and gomplate templates are not YAML until rendered.
func templated(file string) bool {
	data, err := source.ReadFile(file, nil, 0)
	return err == nil && bytes.Contains(data, []byte("{{")) && bytes.Contains(data, []byte("}}"))
}

// placeholderTemplate reports a file that fails to parse at lines that are
// each a single <UPPER_SNAKE> placeholder: a template that a tool fills in
// before the files reach a cluster (kubefirst's gitops-template writes
// <CERT_MANAGER_ISSUER_ANNOTATION_1> where its CLI puts an annotation), as
// {{ }} templates are. A parse error anywhere else is a broken manifest.
func placeholderTemplate(err error, file string) bool {
	des := source.DocumentErrors(err)
	if len(des) == 0 {
		return false
	}
	data, rerr := source.ReadFile(file, nil, 0)
	if rerr != nil {
		return false
	}
	lines := strings.Split(string(data), "\n")
	for _, de := range des {
		if de.Line < 1 || de.Line > len(lines) || !placeholderLine.MatchString(lines[de.Line-1]) {
			return false
		}
	}
	return true
}

var placeholderLine = regexp.MustCompile(`^\s*<[A-Z][A-Z0-9]*(_[A-Z0-9]+)*>\s*$`)

// upperSnake is a placeholder's name: TENANT_ID, RELEASE_VERSION.
var upperSnake = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// bracePlaceholder is a {UPPER_SNAKE} placeholder in a line, not a Flux
// ${VAR} nor a {{ }} action: the holder of a value a script substitutes
// (aws-samples/eks-saas-gitops' tier templates, filled in by sed).
var bracePlaceholder = regexp.MustCompile(`(?m)(^|[^${])\{[A-Z][A-Z0-9]*(_[A-Z0-9]+)*\}`)

// bracePlaceholderDocs reports documents that hold a {UPPER_SNAKE}
// placeholder as a whole value: YAML reads "name: {TENANT_ID}" as a flow
// mapping with one key and no value, where a manifest has a string.
func bracePlaceholderDocs(docs []Document) bool {
	for _, d := range docs {
		if d.Node != nil && hasBracePlaceholder(d.Node, 0) {
			return true
		}
	}
	return false
}

func hasBracePlaceholder(n *yaml.Node, depth int) bool {
	if n == nil || depth > 64 {
		return false
	}
	if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle != 0 && len(n.Content) == 2 &&
		upperSnake.MatchString(n.Content[0].Value) && n.Content[1].Tag == "!!null" && n.Content[1].Value == "" {
		return true
	}
	for _, c := range n.Content {
		if hasBracePlaceholder(c, depth+1) {
			return true
		}
	}
	return false
}

// bracePlaceholderError reports a file that fails to parse and holds
// {UPPER_SNAKE} placeholders ("name: {TENANT_ID}-basic"): yaml.v3 places
// the error where the enclosing mapping starts, not at the placeholder's
// line, so the file as a whole is judged a template.
func bracePlaceholderError(err error, file string) bool {
	if len(source.DocumentErrors(err)) == 0 {
		return false
	}
	data, rerr := source.ReadFile(file, nil, 0)
	return rerr == nil && bracePlaceholder.Match(data)
}

// terraformTemplate reports a file with Terraform template syntax
// (templatefile) that breaks YAML: a %{ if }/%{ for } directive line, or
// an unquoted ${ cond ? a : b } conditional. Terraform renders it before
// Helm or kubectl reads it (awslabs/data-on-eks' helm-values). Other ${ }
// expressions (kro's CEL, Flux variables) parse as YAML strings: a file
// holding them that fails to parse is broken for real.
func terraformTemplate(file string) bool {
	data, err := source.ReadFile(file, nil, 0)
	return err == nil && (terraformDirective.Match(data) || terraformExpression.Match(data))
}

var (
	terraformDirective  = regexp.MustCompile(`(?m)^\s*%\{[^}]*\}\s*$`)
	terraformExpression = regexp.MustCompile(`(?m)^[^"'#\n]*\$\{[^}\n]* \? [^}\n]* : [^}\n]*\}`)
)

// jsonWithComments reports a .json file with // or /* comment lines:
// JSONC (tsconfig.json, devcontainer.json, VS Code settings), which no
// Kubernetes client reads; a manifest in JSON has no comments.
func jsonWithComments(file string) bool {
	if !strings.EqualFold(filepath.Ext(file), ".json") {
		return false
	}
	data, err := source.ReadFile(file, nil, 0)
	return err == nil && jsoncComment.Match(data)
}

var jsoncComment = regexp.MustCompile(`(?m)^\s*(//|/\*)`)

// halfObjects reports a file whose documents have an apiVersion or a kind
// but never metadata: Helm's index.yaml and Chart.yaml, chart values with a
// kind: key. A Kubernetes object needs all three; a manifest with one of
// them missing but metadata present is still reported.
func halfObjects(err error, file string) bool {
	des := source.DocumentErrors(err)
	if len(des) == 0 {
		return false
	}
	data, rerr := source.ReadFile(file, nil, 0)
	if rerr != nil || topLevelMetadata.Match(data) {
		return false
	}
	for _, de := range des {
		msg := de.Err.Error()
		switch {
		case strings.Contains(msg, " without kind"):
			// "kind": with no value is a manifest's mistake; no kind
			// key at all is another tool's file.
			if kindKey.Match(data) {
				return false
			}
		case strings.Contains(msg, " without apiVersion"), strings.Contains(msg, "apiVersion and kind are missing"),
			strings.Contains(msg, "not a Kubernetes object"):
		default:
			return false
		}
	}
	return true
}

var (
	topLevelMetadata = regexp.MustCompile(`(?m)^(- )?"?metadata"?:`)
	kindKey          = regexp.MustCompile(`(?m)^\s*"?kind"?\s*:`)
)

// onlyNotObjects reports whether every problem of a file is a well-formed
// YAML document that is not a Kubernetes object at all (no apiVersion, no
// kind): kustomization.yaml, Helm values, CI configuration. Such files in an
// audited directory are not manifests and are skipped, not reported, unless
// they also hold a manifest. A document with one of the two (a manifest
// with a mistake) still counts.
// internal/source has no sentinel error for this, so its message is matched.
func onlyNotObjects(err error) bool {
	des := source.DocumentErrors(err)
	if len(des) == 0 {
		return false
	}
	for _, de := range des {
		msg := de.Err.Error()
		if !strings.Contains(msg, "apiVersion and kind are missing") && !strings.Contains(msg, "not a Kubernetes object") {
			return false
		}
	}
	return true
}

// loadFindings turns a loader error into one DRIFT012 finding for the
// file, at the first bad document's line (a file is fixed as a whole).
func loadFindings(root, file string, err error) []Finding {
	des := source.DocumentErrors(err)
	if len(des) == 0 {
		des = []*source.DocumentError{{File: file, Err: err}}
	}
	abs := filepath.Join(root, filepath.FromSlash(file))
	msg := oneLine(strings.TrimPrefix(des[0].Err.Error(), abs+": "))
	if !strings.Contains(msg, "YAML") && !strings.Contains(msg, "JSON") && !strings.Contains(msg, "object") {
		msg = "not a manifest: " + msg
	}
	if len(des) > 1 {
		msg += fmt.Sprintf(" (and %d more bad documents)", len(des)-1)
	}
	f := newFinding(auditapi.CheckUnparsableFile, msg)
	f.File, f.Line, f.Column = file, max(des[0].Line, 1), 1
	return []Finding{f}
}

// extractFindings turns adapter errors into DRIFT005 findings, except those
// that repeat a rule's own Error (that rule is reported by checkInvalid).
func extractFindings(root string, rules []model.Rule, errs []error) []Finding {
	var out []Finding
	for _, e := range errs {
		msg := e.Error()
		dup := false
		for _, r := range rules {
			if r.Error != "" && strings.HasSuffix(msg, r.Error) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		f := newFinding(auditapi.CheckInvalid, oneLine(msg))
		// No rule, so no pointer or jq to fix (see invalidHint).
		f.Hint = "Fix what the message names; the engine cannot read the object's rules as written."
		var de *source.DocumentError
		if errors.As(e, &de) {
			f.File, f.Line = relFile(root, de.File), de.Line
			f.Message = oneLine(de.Err.Error())
		} else if m := errPosition.FindStringSubmatch(msg); m != nil {
			// The adapters cite origins as text ("Kind ns/name .field at
			// file:line:col: problem"); that is the only position they give.
			f.File = relFile(root, m[1])
			f.Line, _ = strconv.Atoi(m[2])
			f.Column, _ = strconv.Atoi(m[3])
		}
		out = append(out, f)
	}
	return out
}

var errPosition = regexp.MustCompile(`(?:^|\s)([^\s:]+\.(?:ya?ml|json)):(\d+)(?::(\d+))?`)

func relFile(root, f string) string {
	if f == "" || !filepath.IsAbs(f) {
		return filepath.ToSlash(f)
	}
	if r, err := filepath.Rel(root, f); err == nil {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(f)
}

// walk lists the files to audit, relative to root, sorted.
//
// Inside directories, Helm charts (a directory with Chart.yaml) are skipped:
// their templates are not YAML until Argo CD or Flux render them. Files
// named on the command line are returned in explicit.
//
// The values files of skipped charts are returned in chartValues: the
// argo-cd chart's configs.cm is an argocd-cm. Paths matched by ign are
// left out; files named on the command line are always audited.
func walk(root string, paths []string, missingOK bool, ign *ignoreList) (out []string, explicit map[string]bool, chartValues []string, err error) {
	seen := map[string]bool{}
	explicit = map[string]bool{}
	add := func(abs string) {
		r, err := filepath.Rel(root, abs)
		if err != nil {
			return
		}
		r = filepath.ToSlash(r)
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, p := range paths {
		abs := filepath.Join(root, p)
		st, err := os.Stat(abs)
		if err != nil {
			if missingOK && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, nil, nil, err
		}
		if !st.IsDir() {
			add(abs) // named explicitly: audited whatever its extension
			if r, err := filepath.Rel(root, abs); err == nil {
				explicit[filepath.ToSlash(r)] = true
			}
			continue
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if source.HiddenDir(abs, path, d) {
					return filepath.SkipDir
				}
				if path != abs && ign.match(rel, true) {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "Chart.yaml")); err == nil {
					if ents, err := os.ReadDir(path); err == nil {
						for _, e := range ents {
							if !e.IsDir() && isValuesName(e.Name()) && !ign.match(rel+"/"+e.Name(), false) {
								chartValues = append(chartValues, strings.TrimPrefix(rel+"/"+e.Name(), "./"))
							}
						}
					}
					return filepath.SkipDir
				}
				return nil
			}
			if d.Name() == DefaultConfigFile || d.Name() == IgnoreFile || ign.match(rel, false) {
				return nil
			}
			switch strings.ToLower(filepath.Ext(d.Name())) {
			case ".yaml", ".yml", ".json":
				add(path)
			}
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	sort.Strings(out)
	sort.Strings(chartValues)
	return out, explicit, chartValues, nil
}

// analyze runs every check on a snapshot. Findings keep default severities;
// applyConfig adjusts them.
func analyze(s *snapshot, cfg *Config, maxRules int) []Finding {
	a := &analysis{ix: newManifestIndex(s.docs), cfg: cfg, maxRules: maxRules, engines: s.engines, kustomize: s.kustomize, root: s.root}
	cache := map[string][]string{}
	a.lines = func(file string) []string {
		if l, ok := cache[file]; ok {
			return l
		}
		data, err := source.ReadFile(filepath.Join(s.root, filepath.FromSlash(file)), nil, 0)
		var l []string
		if err == nil {
			l = strings.Split(string(data), "\n")
		}
		cache[file] = l
		return l
	}
	for _, r := range s.rules {
		a.rules = append(a.rules, prepareRule(r, s.engines))
	}
	out := append([]Finding(nil), s.findings...)
	for _, c := range checkFuncs() {
		if !cfg.enabled(c.id) && c.id != auditapi.CheckShadowed {
			continue
		}
		out = append(out, c.fn(a)...)
	}
	return append(out, a.engineChecks(s)...)
}

// engineChecks runs the engines' own checks (auditapi.Engine.Checks), in
// the order of the engines' names.
func (a *analysis) engineChecks(s *snapshot) []Finding {
	names := make([]string, 0, len(a.engines))
	for n := range a.engines {
		names = append(names, string(n))
	}
	sort.Strings(names)
	in := auditapi.Input{Documents: s.wholeObjects(), Rules: s.rules, Policy: auditapi.Policy{RequireSelfHeal: a.cfg.Policy.RequireSelfHeal}}
	var out []Finding
	for _, n := range names {
		e := a.engines[model.Engine(n)]
		for _, c := range e.Checks {
			if !a.cfg.enabled(c.ID) {
				continue
			}
			for _, ef := range c.Run(in) {
				out = append(out, a.engineFinding(e.Name, c.ID, ef))
			}
		}
	}
	return out
}

// engineFinding turns an engine check's finding into the audit's.
func (a *analysis) engineFinding(e model.Engine, id CheckID, ef auditapi.Finding) Finding {
	f := newFinding(id, ef.Message)
	if ef.Rule != nil {
		f = f.atOrigin(ef.Rule.Origin)
		f.ruleKey = ruleKey(*ef.Rule, a.engines.global(*ef.Rule))
	} else {
		f.File, f.Line, f.Column, f.Object, f.Field = ef.File, ef.Line, ef.Column, ef.Object, ef.Field
	}
	f.Engine = e
	if ef.Hint != "" {
		f.Hint = ef.Hint
	}
	return f
}

// applyConfig drops disabled checks, applies severities and the allow list,
// adds findings about the allow list itself, and sorts.
func applyConfig(in []Finding, cfg *Config, root string) ([]Finding, int) {
	var out []Finding
	suppressed := 0
	for i, al := range cfg.Allow {
		if strings.TrimSpace(al.Reason) != "" {
			continue
		}
		f := newFinding(auditapi.CheckAllowWithoutReason, fmt.Sprintf("allow entry %d (check %q) has no reason and suppresses nothing", i+1, al.Check))
		f.File, f.Line, f.Column = relFile(root, cfg.file), al.line, al.column
		in = append(in, f)
	}
	for _, f := range in {
		if !cfg.enabled(f.Check) {
			continue
		}
		f.Severity = cfg.severity(f.Check, f.Severity)
		if _, ok := cfg.allowed(f); ok {
			suppressed++
			continue
		}
		out = append(out, f)
	}
	sortFindings(out)
	return out, suppressed
}

// mergeRepeats folds findings that say the same thing at the same place
// into one with Repeats set: one argocd-cm resource.exclusions item with
// several groups and kinds is several rules on one line, and 49 identical
// lines helped nobody. fs is sorted, so repeats are adjacent.
func mergeRepeats(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if n := len(out); n > 0 && sameFinding(out[n-1], f) {
			out[n-1].Repeats = max(out[n-1].Repeats, 1) + 1
			continue
		}
		out = append(out, f)
	}
	return out
}

func sameFinding(a, b Finding) bool {
	return a.Check == b.Check && a.Severity == b.Severity && a.Message == b.Message && a.File == b.File &&
		a.Line == b.Line && a.Column == b.Column && a.Object == b.Object && a.Field == b.Field && a.Change == b.Change
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].less(fs[j]) })
}
