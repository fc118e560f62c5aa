package drift

// The pipeline's inputs, read once by a command and handed to Explain: the
// live object from a file (offline), the desired state from -f/-k, the
// engines' rule objects (--rules) and the adapters of the engines --engine
// selects. Commands own flags and printing; what the files mean, which
// document is the object and which engines judge it are decided here, so
// that explain, normalize and the commands built on explain
// (adopt, suggest) read their inputs the same way.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/konfig"

	"github.com/kubectl-drift/kubectl-drift/internal/engine"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Inputs says where a command's inputs are and whom it tells what it
// read. Every field but In may be empty.
type Inputs struct {
	// In is stdin, for a file named "-".
	In io.Reader
	// Remember is handed every object read (the command's Secret scrubber
	// learns the values to mask); nil forgets them.
	Remember func(objs ...*unstructured.Unstructured)
	// Warn prints a warning for the user; nil drops it.
	Warn func(msg string)
}

func (in Inputs) remember(objs ...*unstructured.Unstructured) {
	if in.Remember != nil {
		in.Remember(objs...)
	}
}

func (in Inputs) warn(msg string) {
	if in.Warn != nil {
		in.Warn(msg)
	}
}

// LiveFile reads the live object from file (--live-file, "-" for stdin):
// the one object it holds, or, when typ is given, the one of that type
// (kubectl's names and the common short names, offline: TypeMatchesKind)
// called name. A `kind: List` counts as its items.
func (in Inputs) LiveFile(file, typ, name string) (*unstructured.Unstructured, error) {
	docs, err := source.LoadFiles([]string{file}, in.In, source.Options{NoPositions: true})
	if err != nil {
		return nil, fmt.Errorf("--live-file: %w", LoadError(err))
	}
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		objs = append(objs, ExpandList(d.Object)...)
	}
	in.remember(objs...)
	if len(objs) == 0 {
		return nil, fmt.Errorf("--live-file %s holds no Kubernetes object", file)
	}
	if typ == "" {
		if len(objs) > 1 {
			return nil, fmt.Errorf("--live-file %s holds %d objects: name one as TYPE/NAME", file, len(objs))
		}
		return objs[0], nil
	}
	var match []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetName() == name && TypeMatchesKind(typ, obj.GetObjectKind().GroupVersionKind()) {
			match = append(match, obj)
		}
	}
	switch len(match) {
	case 0:
		return nil, fmt.Errorf("--live-file %s holds no %s named %q", file, typ, name)
	case 1:
		return match[0], nil
	}
	return nil, fmt.Errorf("--live-file %s holds %d objects named %s/%s: keep one", file, len(match), typ, name)
}

// TypeMatchesKind compares a command-line type with a kind without a
// cluster to ask: "deploy", "deployment", "deployments", "Deployment",
// "deployments.apps" all name apps/Deployment. Offline there is no
// discovery, so only the common short names are known.
func TypeMatchesKind(typ string, gvk schema.GroupVersionKind) bool {
	t := strings.ToLower(typ)
	res, group, _ := strings.Cut(t, ".")
	if group != "" {
		// "deployments.apps" or "deployments.v1.apps".
		if i := strings.LastIndex(group, "."); i >= 0 && strings.HasPrefix(group, "v") {
			group = group[i+1:]
		}
		if group != strings.ToLower(gvk.Group) {
			return false
		}
	}
	kind := strings.ToLower(gvk.Kind)
	if res == kind || res == kind+"s" || res == kind+"es" || (strings.HasSuffix(kind, "y") && res == kind[:len(kind)-1]+"ies") {
		return true
	}
	return offlineShortName(res) == kind
}

// offlineShortName maps kubectl's short names of built-in kinds to the
// lower-case kind, for --live-file without a cluster.
func offlineShortName(short string) string {
	switch short {
	case "deploy":
		return "deployment"
	case "cm":
		return "configmap"
	case "svc":
		return "service"
	case "sa":
		return "serviceaccount"
	case "ds":
		return "daemonset"
	case "sts":
		return "statefulset"
	case "rs":
		return "replicaset"
	case "po":
		return "pod"
	case "ns":
		return "namespace"
	case "ing":
		return "ingress"
	case "pvc":
		return "persistentvolumeclaim"
	case "pv":
		return "persistentvolume"
	case "hpa":
		return "horizontalpodautoscaler"
	case "cj":
		return "cronjob"
	case "netpol":
		return "networkpolicy"
	case "pdb":
		return "poddisruptionbudget"
	case "crd":
		return "customresourcedefinition"
	case "ep":
		return "endpoints"
	case "limits":
		return "limitrange"
	case "quota":
		return "resourcequota"
	case "no":
		return "node"
	case "sc":
		return "storageclass"
	}
	return ""
}

// ExpandList flattens a `kind: List` (what kubectl get -o yaml prints for
// several objects) into its items.
func ExpandList(obj *unstructured.Unstructured) []*unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	if !obj.IsList() {
		return []*unstructured.Unstructured{obj}
	}
	var out []*unstructured.Unstructured
	_ = obj.EachListItem(func(o runtime.Object) error {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
		return nil
	})
	return out
}

// DesiredFiles names the desired state given as files: Filenames (-f) or
// a kustomization (-k), at most one of them.
type DesiredFiles struct {
	Filenames []string
	Kustomize string
	// KustomizeOptions bound the -k build.
	KustomizeOptions source.KustomizeOptions
	// Namespace is where an object of the files without one is.
	Namespace string
}

// Desired is the desired state read from files.
type Desired struct {
	// Object is the document that is the live object; nil when no file is
	// named (inferred from managedFields).
	Object *unstructured.Unstructured
	// Source says where it came from.
	Source model.DesiredSource
	// FileDocs are the -f documents, read once and handed to the engines
	// for the marks they carry (Flux's ssa annotations); set even when
	// reading failed part way.
	FileDocs []source.Document
}

// Desired loads the desired state: the document of -f/-k that is live,
// or none (inferred) when neither is given. Even one bad document fails:
// a desired state read in part would report drift that is not there.
func (in Inputs) Desired(files DesiredFiles, live *unstructured.Unstructured) (Desired, error) {
	var (
		docs []source.Document
		err  error
		out  Desired
		from string
	)
	switch {
	case len(files.Filenames) > 0:
		out.Source, from = model.SourceFile, strings.Join(files.Filenames, ", ")
		// Compared, not cited: no YAML node trees kept (a 4 MB
		// manifest would hold hundreds of MB of them).
		docs, err = source.LoadFiles(files.Filenames, in.In, source.Options{NoPositions: true})
		out.FileDocs = docs
		if hint := overlayHint(files.Filenames); hint != "" {
			if err != nil {
				return out, fmt.Errorf("%w (%s)", LoadError(err), hint)
			}
			in.warn(hint)
		}
	case files.Kustomize != "":
		out.Source, from = model.SourceKustomize, files.Kustomize
		docs, err = source.LoadKustomizeWith(files.Kustomize, files.KustomizeOptions)
	default:
		out.Source = model.SourceManagedFields
		return out, nil
	}
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		objs = append(objs, ExpandList(d.Object)...)
	}
	in.remember(objs...)
	if err != nil {
		return out, LoadError(err)
	}
	if out.Object, err = PickDocument(objs, live, files.Namespace); err != nil {
		return out, fmt.Errorf("%s: %w", from, err)
	}
	return out, nil
}

// overlayHint tells that a -f names a kustomization directory: the raw
// files of an overlay are not what gets applied (patches, name prefixes,
// generated ConfigMaps...). The last such directory is named.
func overlayHint(filenames []string) string {
	hint := ""
	for _, f := range filenames {
		if k := kustomizationIn(f); k != "" {
			hint = fmt.Sprintf("%s holds %s: -f reads its files as they are; use -k %s to compare with its kustomize build", f, k, f)
		}
	}
	return hint
}

// kustomizationIn returns the kustomization file name in dir ("" when
// path is not a directory or holds none), by the names kustomize looks for.
func kustomizationIn(path string) string {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return ""
	}
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if _, err := os.Stat(filepath.Join(path, name)); err == nil {
			return name
		}
	}
	return ""
}

// Rules reads the --rules files (the engines' own objects to judge with)
// once. When they hold only objects of engines selected leaves out (or of
// no engine), which would be ignored silently, it warns and returns the
// warning as a note.
func (in Inputs) Rules(selected string, files []string) ([]source.Document, []model.Note, error) {
	if len(files) == 0 {
		return nil, nil, nil
	}
	docs, err := source.LoadFiles(files, in.In, source.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("--rules: %w", LoadError(err))
	}
	for _, d := range docs {
		in.remember(d.Object)
	}
	msg := RulesEngineMismatch(selected, docs, files)
	if msg == "" {
		return docs, nil, nil
	}
	in.warn(msg)
	return docs, []model.Note{{Level: model.NoteWarning, Reason: "rules-unused", Message: msg}}, nil
}

// RulesEngineMismatch is the warning when the rule documents read from
// files hold only objects of engines selected leaves out (or of no
// engine); "" when some selected engine uses them.
func RulesEngineMismatch(selected string, docs []source.Document, files []string) string {
	count := map[model.Engine]int{}
	for _, d := range source.WithObject(docs) {
		if e, ok := engine.EngineOf(d.Object); ok {
			count[e.Name]++
		}
	}
	what := strings.Join(files, ", ")
	var kinds, present, use []string
	for _, d := range engine.All() {
		kinds = append(kinds, d.RuleObjects)
		if count[d.Name] > 0 {
			present = append(present, d.Title)
			use = append(use, "--engine "+string(d.Name))
		}
	}
	switch {
	case len(present) == 0:
		return fmt.Sprintf("--rules %s holds no %s: it adds no rule", what, strings.Join(kinds, " and no "))
	case selected != engine.Auto && count[model.Engine(selected)] == 0:
		return fmt.Sprintf("--rules %s holds only %s objects, which --engine %s does not use (use %s or auto)", what, engine.Or(present), selected, strings.Join(use, ", "))
	}
	return ""
}

// Adapters builds, through the registry, the adapters of the engines
// selected names (auto: all), each with its own flags and told whether
// it was named; commands never reach into an adapter's internals.
// Problems that leave an engine partly blind (no OpenAPI schema) come
// back as notes.
func Adapters(ctx context.Context, selected string, cfg engine.Config, flags map[model.Engine]engine.Flags) ([]model.Adapter, []model.Note, error) {
	var out []model.Adapter
	var notes []model.Note
	for _, d := range engine.Selected(selected) {
		cfg.Flags, cfg.Named = flags[d.Name], selected == string(d.Name)
		a, n, err := d.New(ctx, cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		out = append(out, a)
		notes = append(notes, n...)
	}
	return out, notes, nil
}

// Bystanders are the adapters of the engines selected leaves out, asked
// only who owns the object (Request.Bystanders). An engine whose adapter
// cannot be built is left out: a bystander never fails the command.
func Bystanders(ctx context.Context, selected string, flags map[model.Engine]engine.Flags) []model.Adapter {
	var out []model.Adapter
	for _, d := range engine.Others(selected) {
		if a, _, err := d.New(ctx, engine.Config{Purpose: engine.ForOwner, Flags: flags[d.Name]}); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// ComparesStatus says whether a status in the desired state is compared
// (Request.CompareStatus): only for an engine that judges it (Argo CD,
// per resource.compareoptions ignoreResourceStatusField); Flux applies
// with server-side apply, which never writes status.
func ComparesStatus(selected string) bool {
	d, ok := engine.Lookup(selected)
	return ok && d.ComparesStatus
}

// LoadError keeps a loader's error to one line: the loaders join one
// error per bad document, and the user needs the first, and how many
// more. It unwraps to the loader's error.
func LoadError(err error) error {
	des := source.DocumentErrors(err)
	switch {
	case len(des) > 1:
		return fmt.Errorf("%w (and %d more problems)", oneLineError{des[0]}, len(des)-1)
	case len(des) == 1:
		return oneLineError{des[0]}
	}
	return oneLineError{err}
}

// OneLineError is err told on one line (a YAML, label-selector or
// address error may span lines; a command's error is one line), still
// unwrapping to err so that callers can tell what failed.
func OneLineError(err error) error { return oneLineError{err} }

type oneLineError struct{ err error }

func (e oneLineError) Error() string { return strings.Join(strings.Fields(e.err.Error()), " ") }
func (e oneLineError) Unwrap() error { return e.err }
