package output

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// maxValueWidth keeps DESIRED/LIVE cells scannable; the full values are
// in -o json/yaml.
const maxValueWidth = 40

// ANSI styles, used only when Options.Color is set.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiDim    = "\x1b[2m"
)

type textPrinter struct {
	w    *errWriter
	opts Options
	now  time.Time
}

// errWriter remembers the first write error so the printer can write
// freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	_, e.err = fmt.Fprintf(e.w, format, args...)
}

func (p *textPrinter) style(code, s string) string {
	if !p.opts.Color || s == "" {
		return s
	}
	return code + s + ansiReset
}

func printText(w io.Writer, r *model.Report, opts Options) error {
	p := &textPrinter{w: &errWriter{w: w}, opts: opts, now: opts.now().UTC()}
	p.header(r)
	p.drifts(r)
	p.notes(r)
	return p.w.err
}

func (p *textPrinter) header(r *model.Report) {
	// Labels take 10 columns; a long value wraps under its start.
	line := func(l, text string) {
		for i, s := range p.lines(fmt.Sprintf("%-10s", l), text, 10) {
			if i == 0 && l != "" {
				s = strings.Replace(s, l, p.style(ansiBold, l), 1)
			}
			p.w.printf("%s\n", s)
		}
	}
	line("RESOURCE", r.Resource.String())
	if len(r.Owners) == 0 {
		line("OWNER", "none found (no Argo CD tracking or Flux ownership labels)")
	}
	for i, o := range r.Owners {
		l := "OWNER"
		if i > 0 {
			l = ""
		}
		line(l, ownerLine(o))
	}
	line("DESIRED", sourceLine(r.DesiredSource))
	// The engine's own object verdict (Argo CD's sync status): it decides
	// the exit code with --engine argocd, whatever the field list shows.
	for _, s := range r.Status {
		from := "computed here"
		if s.From != "" && s.From != "computed" {
			from = "read from " + s.From
		}
		line("STATUS", fmt.Sprintf("%s %s (%s)", s.Engine, s.Status, from))
	}
}

func ownerLine(o model.Owner) string {
	parts := []string{string(o.Engine) + " " + o.Ref()}
	if o.Interval != "" {
		parts = append(parts, "every "+o.Interval)
	}
	var mode []string
	if o.Mode != "" {
		mode = append(mode, o.Mode)
	} else {
		if o.AutoSync {
			mode = append(mode, "auto-sync")
		}
		if o.SelfHeal {
			mode = append(mode, "self-heal")
		}
		if o.Suspended {
			mode = append(mode, "suspended")
		}
		if o.DriftDetection != "" {
			mode = append(mode, "drift detection "+o.DriftDetection)
		}
	}
	if len(mode) > 0 {
		parts = append(parts, strings.Join(mode, ", "))
	}
	if o.Via != "" {
		parts = append(parts, "via "+o.Via)
	}
	switch {
	case o.NotJudged:
		parts = append(parts, "(not judged: --engine leaves this engine out)")
	case o.Missing:
		parts = append(parts, "(does not exist: nothing reconciles this object)")
	case !o.Found:
		parts = append(parts, "(engine object not readable)")
	}
	return strings.Join(parts, "; ")
}

func sourceLine(s model.DesiredSource) string {
	switch s {
	case model.SourceManagedFields:
		return "inferred from field ownership (managedFields): fields a GitOps engine no longer owns, or that another manager took over"
	case model.SourceFile:
		return "from file (-f)"
	case model.SourceKustomize:
		return "from kustomize build (-k)"
	case model.SourceServerDryRun:
		return "from a server-side dry-run"
	case model.SourceRendered:
		return "rendered from the checkout as the engine renders it (--source)"
	case "":
		return "unknown"
	}
	return string(s)
}

// engines returns the engines that gave any verdict, sorted, so each gets
// a column.
func engines(r *model.Report) []model.Engine {
	seen := map[model.Engine]bool{}
	for _, d := range r.Drifts {
		for _, v := range d.Verdicts {
			seen[v.Engine] = true
		}
	}
	out := make([]model.Engine, 0, len(seen))
	for e := range seen {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (p *textPrinter) drifts(r *model.Report) {
	p.w.printf("\n")
	if len(r.Drifts) == 0 && r.Undetermined != "" {
		p.para("", "Drift cannot be told: "+r.Undetermined, 2)
		return
	}
	if len(r.Drifts) == 0 {
		p.w.printf("No drift.\n")
		return
	}
	engs := engines(r)
	p.summary(r, engs)
	groups, ref := reasonGroups(r)
	p.w.printf("\n")
	p.fieldTable(r, engs, ref)
	p.reasons(groups)
}

// summary answers the question before any detail: per engine, how many
// fields it will revert and when, and how many it leaves be or cannot tell.
func (p *textPrinter) summary(r *model.Report, engs []model.Engine) {
	if len(engs) == 0 {
		p.para("", plural(len(r.Drifts), "drifted field")+"; no GitOps engine judged them.", 2)
		return
	}
	for _, e := range engs {
		count := map[model.VerdictKind]int{}
		for _, d := range r.Drifts {
			judged := false
			for _, v := range d.Verdicts {
				if v.Engine == e {
					count[v.Kind]++
					judged = true
				}
			}
			if !judged {
				count[noVerdict]++
			}
		}
		var parts []string
		for _, k := range summaryOrder {
			if n := count[k]; n > 0 {
				subject := fmt.Sprint(n)
				if len(parts) == 0 {
					subject = plural(n, "field")
				}
				parts = append(parts, subject+" "+verdictPhrase(k, n, interval(r, e), r.DesiredSource))
			}
		}
		lines := p.lines("", string(e)+": "+strings.Join(parts, "; ")+".", 2)
		lines[0] = strings.Replace(lines[0], string(e)+":", p.style(ansiBold, string(e)+":"), 1)
		for _, l := range lines {
			p.w.printf("%s\n", l)
		}
	}
}

// summaryOrder puts what the engine will do before what it will not.
var summaryOrder = []model.VerdictKind{model.Reverted, model.ApplyFails, model.Reported, model.NotApplied,
	model.NotWatched, model.LeftAlone, model.Ignored, model.Excluded, model.Unknown, noVerdict}

// noVerdict counts, in a summary, the fields an engine gave no verdict on.
const noVerdict model.VerdictKind = ""

// verdictPhrase says a verdict kind as the rest of a summary sentence whose
// subject is n fields.
func verdictPhrase(k model.VerdictKind, n int, every string, src model.DesiredSource) string {
	is := "is"
	if n != 1 {
		is = "are"
	}
	switch k {
	case model.Reverted:
		s := "will be reverted at the next reconcile"
		if every != "" {
			s += " (in ≤" + every + ")"
		}
		return s
	case model.ApplyFails:
		return "will make the next apply fail"
	case model.Reported:
		return is + " reported as drift, not reverted"
	case model.NotApplied:
		return is + " not applied (the engine does not apply the object)"
	case model.NotWatched:
		return is + " not watched for drift"
	case model.LeftAlone:
		return is + " left alone"
	case model.Ignored:
		return is + " ignored by a rule"
	case model.Excluded:
		return is + " excluded (invisible to the engine)"
	case noVerdict:
		if n == 1 {
			return "has no verdict"
		}
		return "have no verdict"
	case model.Unknown:
		if src == model.SourceManagedFields {
			return "cannot be told without -f"
		}
		return "cannot be told"
	}
	return is + " " + string(k)
}

// interval is the reconcile interval of the engine's owner, if known.
func interval(r *model.Report, e model.Engine) string {
	for _, o := range r.Owners {
		if o.Engine == e && o.Interval != "" {
			return o.Interval
		}
	}
	return ""
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// fieldColumns is the drift table's layout and the order columns give way
// to a narrow terminal (see Column): values and managers shorten first,
// the field path from the middle; then CAUSE, CHANGE, WHEN, DESIRED,
// CHANGED BY and LIVE are dropped in that order. FIELD and the engines'
// verdicts are always kept. -o wide keeps everything.
func fieldColumns(engs []model.Engine) []Column {
	cols := []Column{
		{Name: "FIELD", Shrink: CutMiddle, Min: 28},
		{Name: "CHANGE", Drop: 2},
		{Name: "DESIRED", Shrink: CutEnd, Min: 12, Drop: 4},
		{Name: "LIVE", Shrink: CutEnd, Min: 12, Drop: 6},
		{Name: "CHANGED BY", Shrink: CutEnd, Min: 16, Drop: 5},
		{Name: "WHEN", Drop: 3},
		{Name: "CAUSE", Drop: 1},
	}
	for _, e := range engs {
		cols = append(cols, Column{Name: strings.ToUpper(string(e))})
	}
	return cols
}

func (p *textPrinter) fieldTable(r *model.Report, engs []model.Engine, ref map[refKey]int) {
	cols := fieldColumns(engs)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = c.Name
	}
	rows := [][]string{head}
	for i, d := range r.Drifts {
		row := []string{
			fieldName(d),
			string(d.Change),
			valueCell(d.Desired, d.Change == model.Added, r.DesiredSource),
			valueCell(d.Live, d.Change == model.Removed, ""),
			changedBy(d.Managers, p.opts.Wide),
			p.when(d.Managers),
			string(d.Cause),
		}
		for _, e := range engs {
			cell := "-"
			for _, v := range d.Verdicts {
				if v.Engine == e {
					cell = string(v.Kind)
					if n, ok := ref[refKey{i, e}]; ok {
						cell += fmt.Sprintf(" [%d]", n)
					}
				}
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	cols, rows = FitTable(cols, rows, p.width())
	lines := FormatTable(rows, func(ri, ci int, cell string) string {
		switch {
		case ri == 0:
			return p.style(ansiBold, cell)
		case cols[ci].Name == "CHANGE":
			return p.style(changeStyle(model.ChangeKind(strings.TrimSpace(cell))), cell)
		case ci >= len(cols)-len(engs):
			kind, _, _ := strings.Cut(strings.TrimSpace(cell), " ")
			return p.style(verdictStyle(model.VerdictKind(kind)), cell)
		}
		return cell
	})
	for _, l := range lines {
		p.w.printf("%s\n", l)
	}
}

// width is the width text is fitted to; 0 (-o wide) fits nothing.
func (p *textPrinter) width() int {
	if p.opts.Wide {
		return 0
	}
	return p.opts.Width
}

// refKey names one verdict: the drift's index and the engine.
type refKey struct {
	drift  int
	engine model.Engine
}

// reasonGroup is one distinct reason and the fields it decides.
type reasonGroup struct {
	engine model.Engine
	kind   model.VerdictKind
	// text is the reason with the fields' managers put back (see key).
	text     string
	fields   []string
	managers []string
}

// reasonGroups gathers the verdicts with a reason by (engine, verdict,
// reason), numbered in the order the table meets them; ref maps each
// verdict to its group's number.
//
// The reason texts are the engines' sentences and name the manager that
// wrote the field ("set by kubectl-edit (Update): ..."); the model has no
// reason code, so fields that differ only by their manager would each get
// a paragraph. The grouping key replaces the names of the field's own
// non-GitOps managers (structured data: FieldDrift.Managers) with a
// placeholder, which needs no knowledge of any engine's wording.
func reasonGroups(r *model.Report) ([]*reasonGroup, map[refKey]int) {
	var groups []*reasonGroup
	index := map[string]*reasonGroup{}
	number := map[*reasonGroup]int{}
	ref := map[refKey]int{}
	for i, d := range r.Drifts {
		names := culprits(d)
		for _, v := range d.Verdicts {
			reason := v.Reason
			if reason == "" {
				continue
			}
			if v.Rule != nil && !strings.Contains(reason, v.Rule.String()) {
				reason += " (rule: " + v.Rule.String() + ")"
			}
			norm, used := withoutManagers(reason, names)
			key := string(v.Engine) + "\x00" + string(v.Kind) + "\x00" + norm
			g := index[key]
			if g == nil {
				g = &reasonGroup{engine: v.Engine, kind: v.Kind, text: norm}
				index[key] = g
				groups = append(groups, g)
				number[g] = len(groups)
			}
			g.fields = append(g.fields, fieldName(d))
			for _, m := range used {
				if !slices.Contains(g.managers, m) {
					g.managers = append(g.managers, m)
				}
			}
			ref[refKey{i, v.Engine}] = number[g]
		}
	}
	for _, g := range groups {
		g.text = strings.ReplaceAll(g.text, managerMark, strings.Join(g.managers, ", "))
	}
	return groups, ref
}

// managerMark stands for the field's manager in a grouping key.
const managerMark = "\x00manager\x00"

// culprits are the names of the field's managers that are not a GitOps
// engine, longest first (so "kubectl-edit" is replaced before "kubectl").
func culprits(d model.FieldDrift) []string {
	var names []string
	for _, m := range d.Managers {
		if m.Class != model.CauseGitOps && m.Manager != "" && !slices.Contains(names, m.Manager) {
			names = append(names, m.Manager)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	return names
}

// withoutManagers replaces each whole-word occurrence of names in s with
// managerMark, and says which names it replaced.
func withoutManagers(s string, names []string) (string, []string) {
	var used []string
	for _, n := range names {
		var b strings.Builder
		found := false
		rest := s
		for {
			i := strings.Index(rest, n)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(n)
			if wordEdge(rest, i-1) && wordEdge(rest, end) {
				b.WriteString(rest[:i] + managerMark)
				found = true
			} else {
				b.WriteString(rest[:end])
			}
			rest = rest[end:]
		}
		if found {
			s = b.String()
			used = append(used, n)
		}
	}
	return s, used
}

// wordEdge says whether the byte at i (out of range: the string's end) does
// not continue a manager name: names are letters, digits, '-' and '_'.
func wordEdge(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	c := s[i]
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_')
}

// maxReasonLines is how many lines a reason takes in the default view.
const maxReasonLines = 3

func (p *textPrinter) reasons(groups []*reasonGroup) {
	if len(groups) == 0 {
		return
	}
	p.w.printf("\n%s\n", p.style(ansiBold, "Why:"))
	cut := false
	for i, g := range groups {
		mark := fmt.Sprintf("[%d] ", i+1)
		lines := p.lines(mark, string(g.engine)+" "+string(g.kind)+": "+g.text, len(mark))
		if !p.opts.Wide && !p.opts.Why && p.width() > 0 && len(lines) > maxReasonLines {
			lines = lines[:maxReasonLines]
			last := lines[maxReasonLines-1]
			if utf8.RuneCountInString(last)+2 > p.width() {
				last = Shorten(last, p.width()-2, CutEnd)
				last = strings.TrimSuffix(last, "…")
			}
			lines[maxReasonLines-1] = last + " …"
			cut = true
		}
		for _, l := range lines {
			p.w.printf("%s\n", l)
		}
		for _, f := range g.fields {
			if w := p.width(); w > 0 {
				f = Shorten(f, w-len(mark)-2, CutMiddle)
			}
			p.w.printf("%s- %s\n", strings.Repeat(" ", len(mark)), f)
		}
	}
	if cut {
		p.para("", "(reasons cut to three lines: --why or -o wide prints them whole)", 0)
	}
}

// lines wraps text to the width after first (the first line's prefix),
// continuing at indent columns; width 0 (-o wide) does not wrap.
func (p *textPrinter) lines(first, text string, indent int) []string {
	w := p.width()
	if w <= 0 {
		return []string{first + text}
	}
	ws := Wrap(text, w-indent)
	out := make([]string, len(ws))
	for i, l := range ws {
		if i == 0 {
			out[i] = first + l
		} else {
			out[i] = strings.Repeat(" ", indent) + l
		}
	}
	return out
}

// para prints text as a wrapped paragraph after first, continuing at
// indent columns.
func (p *textPrinter) para(first, text string, indent int) {
	for _, l := range p.lines(first, text, indent) {
		p.w.printf("%s\n", l)
	}
}

// Wrap breaks s at spaces into lines of at most width runes; a word longer
// than width is cut into pieces, so no line is wider. width <= 0 does not
// wrap.
func Wrap(s string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	var cur strings.Builder
	n := 0
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > width {
			if n > 0 {
				lines = append(lines, cur.String())
				cur.Reset()
				n = 0
			}
			r := []rune(word)
			lines = append(lines, string(r[:width]))
			word = string(r[width:])
		}
		wl := utf8.RuneCountInString(word)
		if n > 0 && n+1+wl > width {
			lines = append(lines, cur.String())
			cur.Reset()
			n = 0
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(word)
		n += wl
	}
	if n > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

func (p *textPrinter) notes(r *model.Report) {
	if len(r.Notes) == 0 {
		return
	}
	p.w.printf("\n%s\n", p.style(ansiBold, "Notes:"))
	for _, n := range r.Notes {
		prefix := string(n.Level)
		if n.Engine != "" {
			prefix += " [" + string(n.Engine) + "]"
		}
		msg := n.Message
		if n.Rule != nil {
			msg += " (rule: " + n.Rule.String() + ")"
		}
		lines := p.lines("  ", prefix+": "+msg, 4)
		switch n.Level {
		case model.NoteWarning:
			lines[0] = strings.Replace(lines[0], prefix, p.style(ansiYellow, prefix), 1)
		case model.NoteError:
			lines[0] = strings.Replace(lines[0], prefix, p.style(ansiRed, prefix), 1)
		}
		for _, l := range lines {
			p.w.printf("%s\n", l)
		}
	}
}

func fieldName(d model.FieldDrift) string {
	if d.FieldPath != "" {
		return d.FieldPath
	}
	return d.Path
}

// valueCell renders a JSON value compactly: strings bare, the rest as
// JSON, truncated. absent says the side has no value by the change kind.
func valueCell(v any, absent bool, src model.DesiredSource) string {
	if v == nil {
		switch {
		case absent:
			return "<none>"
		case src == model.SourceManagedFields:
			// managedFields record who owns a field, not the value the
			// engine applied.
			return "<unknown>"
		}
		return "<none>"
	}
	var s string
	switch t := v.(type) {
	case string:
		s = t
		if s == "" {
			s = `""`
		}
	default:
		b, err := json.Marshal(t)
		if err != nil {
			s = fmt.Sprint(t)
		} else {
			s = string(b)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxValueWidth {
		s = string([]rune(s)[:maxValueWidth-1]) + "…"
	}
	return s
}

// changedBy names the managers of a field, most recent first:
// "kubectl (Update, scale)" in -o wide. The default view leaves out the
// Update operation (every kubectl edit, set, label... is one) and keeps
// Apply and the subresource, which say something: "kubectl (scale)".
func changedBy(ms []model.ManagerRef, wide bool) string {
	if len(ms) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		var detail []string
		if m.Operation != "" && (wide || m.Operation != "Update") {
			detail = append(detail, m.Operation)
		}
		if m.Subresource != "" {
			detail = append(detail, m.Subresource)
		}
		if len(detail) == 0 {
			parts = append(parts, m.Manager)
			continue
		}
		parts = append(parts, m.Manager+" ("+strings.Join(detail, ", ")+")")
	}
	return strings.Join(parts, "; ")
}

// when shows the most recent manager time as "5m ago", with
// " (RFC3339 UTC)" after it in -o wide. The
// API server leaves time unset on some entries (updates through the scale
// subresource, for one), so later managers are tried before "unknown".
func (p *textPrinter) when(ms []model.ManagerRef) string {
	for _, m := range ms {
		if m.Time == nil || m.Time.IsZero() {
			continue
		}
		t := m.Time.UTC()
		if !p.opts.Wide {
			return Relative(p.now, t)
		}
		return Relative(p.now, t) + " (" + t.Format(time.RFC3339) + ")"
	}
	return "unknown"
}

// Relative renders t against now the way kubectl prints ages: "5m ago",
// "3d4h ago"; "just now" under a second, "in 2m" for clock skew.
func Relative(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0 && -d >= time.Second:
		return "in " + duration.HumanDuration(-d)
	case d < time.Second:
		return "just now"
	}
	return duration.HumanDuration(d) + " ago"
}

func changeStyle(c model.ChangeKind) string {
	switch c {
	case model.Changed:
		return ansiYellow
	case model.Added:
		return ansiGreen
	case model.Removed:
		return ansiRed
	}
	return ""
}

func verdictStyle(k model.VerdictKind) string {
	switch k {
	case model.Reverted, model.ApplyFails:
		return ansiRed
	case model.Reported:
		return ansiYellow
	case model.Ignored, model.Excluded:
		return ansiDim
	case model.LeftAlone:
		return ansiCyan
	}
	return ""
}
