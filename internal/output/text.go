package output

import (
	"encoding/json"
	"fmt"
	"io"
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
	label := func(s string) string { return p.style(ansiBold, fmt.Sprintf("%-9s", s)) }
	p.w.printf("%s %s\n", label("RESOURCE"), r.Resource.String())
	if len(r.Owners) == 0 {
		p.w.printf("%s %s\n", label("OWNER"), "none found (no Argo CD tracking or Flux ownership labels)")
	}
	for i, o := range r.Owners {
		l := "OWNER"
		if i > 0 {
			l = ""
		}
		p.w.printf("%s %s\n", label(l), ownerLine(o))
	}
	p.w.printf("%s %s\n", label("DESIRED"), sourceLine(r.DesiredSource))
	// The engine's own object verdict (Argo CD's sync status): it decides
	// the exit code with --engine argocd, whatever the field list shows.
	for _, s := range r.Status {
		from := "computed here"
		if s.From != "" && s.From != "computed" {
			from = "read from " + s.From
		}
		p.w.printf("%s %s %s (%s)\n", label("STATUS"), s.Engine, s.Status, from)
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
		p.w.printf("Drift cannot be told: %s\n", r.Undetermined)
		return
	}
	if len(r.Drifts) == 0 {
		p.w.printf("No drift.\n")
		return
	}
	counting := 0
	for _, d := range r.Drifts {
		if d.Counts() {
			counting++
		}
	}
	noun := "fields"
	if len(r.Drifts) == 1 {
		noun = "field"
	}
	summary := fmt.Sprintf("%d drifted %s", len(r.Drifts), noun)
	if counting != len(r.Drifts) {
		summary += fmt.Sprintf(" (%d ignored by every engine)", len(r.Drifts)-counting)
	}
	p.w.printf("%s\n\n", p.style(ansiBold, summary+":"))

	engs := engines(r)
	head := []string{"FIELD", "CHANGE", "DESIRED", "LIVE", "CHANGED BY", "WHEN", "CAUSE"}
	for _, e := range engs {
		head = append(head, strings.ToUpper(string(e)))
	}
	rows := [][]string{head}
	styles := [][]string{nil}
	for _, d := range r.Drifts {
		row := []string{
			fieldName(d),
			string(d.Change),
			valueCell(d.Desired, d.Change == model.Added, r.DesiredSource),
			valueCell(d.Live, d.Change == model.Removed, ""),
			changedBy(d.Managers),
			p.when(d.Managers),
			string(d.Cause),
		}
		st := make([]string, len(row))
		st[1] = changeStyle(d.Change)
		for _, e := range engs {
			cell, code := "-", ""
			for _, v := range d.Verdicts {
				if v.Engine == e {
					cell, code = string(v.Kind), verdictStyle(v.Kind)
				}
			}
			row = append(row, cell)
			st = append(st, code)
		}
		rows = append(rows, row)
		styles = append(styles, st)
	}
	p.fit(rows, []int{2, 3}) // DESIRED, LIVE
	p.table(rows, styles)
	p.reasons(r)
}

// minValueWidth is as far as fit shrinks a value column.
const minValueWidth = 12

// fit shortens the cells of the given columns (values, whose full text is
// in -o json/yaml) until the table fits Options.Width, down to
// minValueWidth; other columns are never cut. Width 0 (-o wide) keeps all.
func (p *textPrinter) fit(rows [][]string, cols []int) {
	if p.opts.Width <= 0 || len(rows) == 0 {
		return
	}
	widths := make([]int, len(rows[0]))
	total := 0
	for i := range widths {
		for _, row := range rows {
			if n := utf8.RuneCountInString(row[i]); n > widths[i] {
				widths[i] = n
			}
		}
		total += widths[i] + 2
	}
	over := total - 2 - p.opts.Width
	for _, c := range cols {
		if over <= 0 {
			break
		}
		cut := min(over, widths[c]-minValueWidth)
		if cut <= 0 {
			continue
		}
		limit := widths[c] - cut
		for _, row := range rows[1:] {
			if utf8.RuneCountInString(row[c]) > limit {
				row[c] = string([]rune(row[c])[:limit-1]) + "…"
			}
		}
		over -= cut
	}
}

// table pads on the plain text and colours after padding, so escape codes
// never break the alignment.
func (p *textPrinter) table(rows, styles [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			if n := utf8.RuneCountInString(c); n > widths[i] {
				widths[i] = n
			}
		}
	}
	for ri, row := range rows {
		var b strings.Builder
		for i, c := range row {
			cell := c
			if i < len(row)-1 {
				cell += strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2)
			}
			switch {
			case ri == 0:
				cell = p.style(ansiBold, cell)
			case styles[ri] != nil && styles[ri][i] != "":
				cell = p.style(styles[ri][i], cell)
			}
			b.WriteString(cell)
		}
		p.w.printf("%s\n", strings.TrimRight(b.String(), " "))
	}
}

func (p *textPrinter) reasons(r *model.Report) {
	var rows [][]string
	// A reason shared by several fields (one long sentence per field made
	// 250-column walls) is said once; later fields point back to it.
	first := map[string]string{}
	for _, d := range r.Drifts {
		for _, v := range d.Verdicts {
			if v.Reason == "" {
				continue
			}
			reason := v.Reason
			if v.Rule != nil && !strings.Contains(reason, v.Rule.String()) {
				reason += " (rule: " + v.Rule.String() + ")"
			}
			key := string(v.Engine) + "\x00" + string(v.Kind) + "\x00" + reason
			if f, seen := first[key]; seen {
				reason = "same as " + f
			} else {
				first[key] = fieldName(d)
			}
			rows = append(rows, []string{fieldName(d), string(v.Engine), string(v.Kind) + ":", reason})
		}
	}
	if len(rows) == 0 {
		return
	}
	widths := make([]int, 3)
	for _, row := range rows {
		for i := range widths {
			if n := utf8.RuneCountInString(row[i]); n > widths[i] {
				widths[i] = n
			}
		}
	}
	p.w.printf("\n%s\n", p.style(ansiBold, "Why:"))
	indent := 2
	for _, w := range widths {
		indent += w + 2
	}
	for _, row := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i := range widths {
			b.WriteString(row[i] + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(row[i])+2))
		}
		lines := wrap(row[3], p.opts.Width-indent)
		b.WriteString(lines[0])
		for _, l := range lines[1:] {
			b.WriteString("\n" + strings.Repeat(" ", indent) + l)
		}
		p.w.printf("%s\n", b.String())
	}
}

// minWrap is the narrowest reason column worth wrapping to: below it (very
// long field names) the reason goes on as one line.
const minWrap = 30

// wrap breaks s at spaces into lines of at most width runes (a longer
// word keeps its own line). width < minWrap does not wrap.
func wrap(s string, width int) []string {
	if width < minWrap || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	var cur strings.Builder
	n := 0
	for _, word := range strings.Fields(s) {
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
		switch n.Level {
		case model.NoteWarning:
			prefix = p.style(ansiYellow, prefix)
		case model.NoteError:
			prefix = p.style(ansiRed, prefix)
		}
		msg := n.Message
		if n.Rule != nil {
			msg += " (rule: " + n.Rule.String() + ")"
		}
		p.w.printf("  %s: %s\n", prefix, msg)
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
// "kubectl (Update, scale)".
func changedBy(ms []model.ManagerRef) string {
	if len(ms) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		detail := m.Operation
		if m.Subresource != "" {
			detail += ", " + m.Subresource
		}
		if detail == "" {
			parts = append(parts, m.Manager)
			continue
		}
		parts = append(parts, m.Manager+" ("+detail+")")
	}
	return strings.Join(parts, "; ")
}

// when shows the most recent manager time as "5m ago (RFC3339 UTC)". The
// API server leaves time unset on some entries (updates through the scale
// subresource, for one), so later managers are tried before "unknown".
func (p *textPrinter) when(ms []model.ManagerRef) string {
	for _, m := range ms {
		if m.Time == nil || m.Time.IsZero() {
			continue
		}
		t := m.Time.UTC()
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
