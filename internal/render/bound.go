package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"text/template"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubectl-drift/kubectl-drift/internal/bound"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// Bounds on rendering a chart: a template is a program (loops, recursion,
// string repetition), and a hostile or broken chart must end the command
// with one line, not hang it or exhaust the machine (in time and memory:
// bound.Run).
const (
	// MaxLoopItems bounds the items until, untilStep and seq may produce
	// in one rendering, all calls together: real charts loop over a few
	// replicas or ports; a nested `until` of a million each is an attack.
	MaxLoopItems = 1_000_000
	// MaxRepeatBytes bounds one repeat's, indent's or nindent's result.
	MaxRepeatBytes = 16 << 20
)

// ErrBound is wrapped by every error that stops a rendering at a bound.
var ErrBound = bound.ErrBound

// Rendering is one chart's rendering as its bounds see it: the loop
// budget its bounded functions share, the template it is in (named when
// bound.Run gives up on it) and whether it was given up. Go cannot stop a
// template: once given up (Stop, or a bounded function past its bound),
// every bounded function fails at its next call, so a rendering left
// running in its goroutine (scan and serve go on) ends at its next loop.
type Rendering struct {
	left     int // the loop items still allowed; the rendering's goroutine alone uses it
	stopped  atomic.Bool
	template atomic.Pointer[string]
}

// NewRendering returns the bounds of one rendering.
func NewRendering() *Rendering { return &Rendering{left: MaxLoopItems} }

// Stop gives the rendering up: its bounded functions fail from now on.
func (r *Rendering) Stop() { r.stopped.Store(true) }

// Template names the template the rendering is in ("" before the first),
// as "template NAME".
func (r *Rendering) Template() string {
	if p := r.template.Load(); p != nil {
		return "template " + *p
	}
	return ""
}

// Limits are l with the rendering's Where (its template) and OnStop
// (Stop), for bound.Run.
func (r *Rendering) Limits(l bound.Limits) bound.Limits {
	l.Where, l.OnStop = r.Template, r.Stop
	return l
}

// markFunc is the function Mark calls; a name no chart spells.
const markFunc = "_kubectlDriftTemplate"

// Mark makes every template of c and of its subcharts tell the rendering
// its name (as Helm names it: CHART/templates/FILE,
// CHART/charts/SUB/templates/FILE) when it runs. The call prints nothing
// and stays on the first line, so Helm's line numbers do not move.
// Partials (_*.tpl) are left alone: they run included from a template
// that is marked.
func (r *Rendering) Mark(c *chart.Chart) { mark(c, "") }

func mark(c *chart.Chart, prefix string) {
	for _, f := range c.Templates {
		if strings.HasPrefix(filepath.Base(f.Name), "_") {
			continue
		}
		f.Data = append([]byte(fmt.Sprintf("{{%s %q}}", markFunc, prefix+c.Name()+"/"+f.Name)), f.Data...)
	}
	for _, d := range c.Dependencies() {
		mark(d, prefix+c.Name()+"/charts/")
	}
}

// TemplateFuncs are the bounded functions of a rendering of its own (the
// tests' form of NewRendering().Funcs()).
func TemplateFuncs() template.FuncMap { return NewRendering().Funcs() }

// Funcs are bounded versions of the sprig functions that make work from
// a number alone (Helm's CustomTemplateFuncs take precedence over
// sprig's: helm.sh/helm/v4 pkg/engine/engine.go initFunMap), and Mark's
// function. Their results are those of sprig v3 (until, untilStep, seq,
// repeat, indent, nindent) until a bound is passed; then the template
// stops with an error naming the function, which text/template prefixes
// with the template's name and line, and the rendering is given up.
func (r *Rendering) Funcs() template.FuncMap {
	return template.FuncMap{
		markFunc: func(name string) string {
			r.template.Store(&name)
			return ""
		},
		"until": func(count int) ([]int, error) {
			step := 1
			if count < 0 {
				step = -1
			}
			return r.untilStep("until", 0, count, step)
		},
		"untilStep": func(start, stop, step int) ([]int, error) { return r.untilStep("untilStep", start, stop, step) },
		"seq":       r.seq,
		"indent":    func(spaces int, v string) (string, error) { return r.indent("indent", spaces, v) },
		"nindent":   r.nindent,
		"repeat":    r.repeat,
	}
}

// fail gives the rendering up: text/template stops at the error, and a
// caller that went on (an abandoned goroutine) fails again.
func (r *Rendering) fail(format string, args ...any) error {
	r.Stop()
	return fmt.Errorf("%w: "+format, append([]any{ErrBound}, args...)...)
}

// given fails once the rendering was given up.
func (r *Rendering) given(fn string) error {
	if r.stopped.Load() {
		return fmt.Errorf("%w: %s called after the rendering was given up", ErrBound, fn)
	}
	return nil
}

// take counts n more loop items against the rendering's budget.
func (r *Rendering) take(fn string, n int) error {
	if err := r.given(fn); err != nil {
		return err
	}
	if n < 0 {
		n = 0
	}
	if n > r.left {
		return r.fail("%s would make %d more items, past the %d all loops of a rendering may make", fn, n, MaxLoopItems)
	}
	r.left -= n
	return nil
}

// indent is sprig's indent (strings.go) within MaxRepeatBytes.
func (r *Rendering) indent(fn string, spaces int, v string) (string, error) {
	if err := r.given(fn); err != nil {
		return "", err
	}
	if spaces < 0 {
		return "", fmt.Errorf("%s: negative count", fn) // sprig's strings.Repeat panics
	}
	lines := strings.Count(v, "\n") + 1
	if spaces > 0 && lines > (MaxRepeatBytes-len(v))/spaces {
		return "", r.fail("%s would make more than %d MiB", fn, MaxRepeatBytes>>20)
	}
	pad := strings.Repeat(" ", spaces)
	return pad + strings.ReplaceAll(v, "\n", "\n"+pad), nil
}

// nindent is sprig's nindent: a newline, then indent.
func (r *Rendering) nindent(spaces int, v string) (string, error) {
	s, err := r.indent("nindent", spaces, v)
	if err != nil {
		return "", err
	}
	if len(s) >= MaxRepeatBytes {
		return "", r.fail("nindent would make more than %d MiB", MaxRepeatBytes>>20)
	}
	return "\n" + s, nil
}

// untilStep is sprig's untilStep within the loop budget.
func (r *Rendering) untilStep(fn string, start, stop, step int) ([]int, error) {
	if step == 0 || (step > 0 && start >= stop) || (step < 0 && start <= stop) {
		return []int{}, nil
	}
	n := (stop - start + step - sign(step)) / step
	if err := r.take(fn, n); err != nil {
		return nil, err
	}
	out := make([]int, 0, n)
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, i)
	}
	return out, nil
}

// seq mirrors sprig's seq (1 to N, or start to end by step, end included)
// on the bounded untilStep.
func (r *Rendering) seq(params ...int) (string, error) {
	start, end, step, incr, ok := seqRange(params)
	if !ok {
		return "", nil
	}
	items, err := r.untilStep("seq", start, end+incr, step)
	if err != nil {
		return "", err
	}
	b := make([]byte, 0, len(items)*4)
	for i, v := range items {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(b), nil
}

// seqRange reads seq's one to three parameters as sprig does: the first
// and last number, the step, and incr, which moves the end past the last
// number (seq includes it); ok is false when seq prints nothing.
func seqRange(params []int) (start, end, step, incr int, ok bool) {
	switch len(params) {
	case 1:
		start, end, step, incr = 1, params[0], 1, 1
		if end < start {
			step, incr = -1, -1
		}
	case 2:
		start, end, step = params[0], params[1], 1
		if end < start {
			step = -1
		}
		incr = step
	case 3:
		start, step, end, incr = params[0], params[1], params[2], 1
		if end < start {
			incr = -1
			if step > 0 {
				return 0, 0, 0, 0, false
			}
		}
	default:
		return 0, 0, 0, 0, false
	}
	return start, end, step, incr, true
}

// repeat is sprig's repeat within MaxRepeatBytes.
func (r *Rendering) repeat(count int, str string) (string, error) {
	if err := r.given("repeat"); err != nil {
		return "", err
	}
	if count < 0 {
		return "", errors.New("repeat: negative count") // sprig's strings.Repeat panics
	}
	if count == 0 || str == "" {
		return "", nil
	}
	if count > MaxRepeatBytes/len(str) {
		return "", r.fail("repeat would make more than %d MiB", MaxRepeatBytes>>20)
	}
	b := make([]byte, 0, count*len(str))
	for range count {
		b = append(b, str...)
	}
	return string(b), nil
}

func sign(n int) int {
	if n < 0 {
		return -1
	}
	return 1
}

// CheckTree checks a directory before a loader reads it whole (Helm's
// LoadDir follows symlinks and reads every file without a limit): every
// regular file at most source.DefaultMaxFileBytes, and every symlink
// resolving inside root (the checkout: nothing outside --source is read).
// A link to a directory is checked through.
func CheckTree(dir, root string) error {
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var walk func(dir, shown string) error
	walk = func(dir, shown string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			name := filepath.Join(shown, rel)
			if d.Type()&fs.ModeSymlink != 0 {
				real, err := filepath.EvalSymlinks(p)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				if !within(rootReal, real) {
					return fmt.Errorf("%s is a symlink to %s, outside the checkout %s: not read", name, real, root)
				}
				st, err := os.Stat(real)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				if st.IsDir() {
					return walk(real, name)
				}
				return checkSize(name, st)
			}
			if d.Type().IsRegular() {
				st, err := d.Info()
				if err != nil {
					return err
				}
				return checkSize(name, st)
			}
			return nil
		})
	}
	return walk(dir, dir)
}

func checkSize(name string, st fs.FileInfo) error {
	if st.Size() > source.DefaultMaxFileBytes {
		return fmt.Errorf("%s is %d MiB, over the %d MiB limit on a file: not read", name, st.Size()>>20, source.DefaultMaxFileBytes>>20)
	}
	return nil
}

// ErrRemoteRefused is wrapped by the error for a remote kustomize base
// under --no-remote-bases.
var ErrRemoteRefused = errors.New("refused by --no-remote-bases")

// BuildRemote runs a kustomize build of dir (build) the way remote bases
// call for: with env.NoRemoteBases, a remote entry anywhere in the tree
// is refused before the build (kustomize would first try to fetch it,
// and a refused clone reads as a confusing FS error); otherwise the
// fetch is said through env.Warn and the build is bounded by
// env.FetchTimeout, naming the URLs when it runs out (kustomize's HTTP
// loader has no deadline of its own: a server that never answers would
// hang the command).
func BuildRemote[T any](ctx context.Context, env *Env, fs filesys.FileSystem, dir, kfile string, build func(context.Context) (T, error)) (T, error) {
	refs := source.RemoteRefs(fs, dir, kfile)
	if len(refs) == 0 {
		return build(ctx)
	}
	var zero T
	if env.NoRemoteBases {
		return zero, fmt.Errorf("%s: remote base %q %w", refs[0].File, refs[0].URL, ErrRemoteRefused)
	}
	if env.Warn != nil {
		env.Warn(fmt.Sprintf("kustomize build of %s fetches remote bases: %s (--no-remote-bases refuses them)", dir, source.RemoteURLs(refs)))
	}
	return bound.Run(ctx, "kustomize build of "+dir, bound.Limits{Timeout: env.FetchTimeout, Hint: "fetching " + source.RemoteURLs(refs)}, build)
}
