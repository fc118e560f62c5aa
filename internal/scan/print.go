package scan

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
)

// Output formats of a scan.
const (
	OutputTable      = "table"
	OutputJSON       = "json"
	OutputYAML       = "yaml"
	OutputPrometheus = "prometheus"
)

// Outputs lists the -o values scan accepts.
var Outputs = []string{OutputTable, OutputJSON, OutputYAML, OutputPrometheus}

// Print renders res in format. The table fits width columns (0: nothing
// is cut, as when the output is not a terminal; see tableColumns). Nothing
// here has colour, so NO_COLOR holds trivially; secrets were masked when
// the reports were built.
func Print(w io.Writer, format string, res *Result, width int) error {
	switch format {
	case OutputJSON:
		return printJSON(w, res)
	case OutputYAML:
		return output.PrintObject(w, output.Format(format), res)
	case OutputPrometheus:
		return WritePrometheus(w, res)
	case OutputTable, "":
		return printTable(w, res, width)
	}
	return fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Outputs, ", "))
}

// summaryColumns and driftColumns say how the tables give way to a narrow
// terminal (output.Column): names shorten first (field paths and object
// names from the middle), then columns are dropped in this order: the
// summary's CLASS, NAMESPACE, KIND; the drift table's CLASS, OWNER, KIND,
// NAMESPACE, MANAGER. The object's NAME, the FIELD and the VERDICT stay.
var (
	summaryColumns = []output.Column{
		{Name: "NAMESPACE", Shrink: output.CutEnd, Min: 12, Drop: 2},
		{Name: "KIND", Shrink: output.CutEnd, Min: 10, Drop: 3},
		{Name: "MANAGER", Shrink: output.CutEnd, Min: 12},
		{Name: "CLASS", Drop: 1},
		{Name: "ENGINE"}, {Name: "OBJECTS"}, {Name: "FIELDS"},
	}
	driftColumns = []output.Column{
		{Name: "NAMESPACE", Shrink: output.CutEnd, Min: 12, Drop: 4},
		{Name: "KIND", Shrink: output.CutEnd, Min: 10, Drop: 3},
		{Name: "NAME", Shrink: output.CutMiddle, Min: 16},
		{Name: "FIELD", Shrink: output.CutMiddle, Min: 24},
		{Name: "MANAGER", Shrink: output.CutEnd, Min: 12, Drop: 5},
		{Name: "CLASS", Drop: 1},
		{Name: "OWNER", Shrink: output.CutEnd, Min: 16, Drop: 2},
		{Name: "VERDICT"},
	}
)

func printTable(w io.Writer, res *Result, width int) error {
	// The writer keeps its first error: the tables and the summary line
	// after them fail the command together (checked at Flush).
	sw := output.NewStickyWriter(w)
	table := func(cols []output.Column, rows [][]string) {
		head := make([]string, len(cols))
		for i, c := range cols {
			head[i] = c.Name
		}
		_, rows = output.FitTable(slices.Clone(cols), append([][]string{head}, rows...), width)
		for _, l := range output.FormatTable(rows, nil) {
			sw.Println(l)
		}
		sw.Println()
	}
	if len(res.Items) > 0 {
		var rows [][]string
		for _, r := range res.Summary {
			rows = append(rows, []string{dash(r.Namespace), r.Kind, r.Manager, string(r.Class), dash(string(r.Engine)),
				strconv.Itoa(r.Objects), strconv.Itoa(r.Fields)})
		}
		table(summaryColumns, rows)
		rows = nil
		in := &Inspector{}
		for _, rep := range res.Items {
			owner := OwnerCell(rep.Owners)
			if len(rep.Drifts) == 0 {
				// Drifted as a whole with no field to show: an engine's
				// status (Argo CD records OutOfSync for a commit not
				// synced yet; which fields differ needs Git).
				rows = append(rows, []string{dash(rep.Resource.Namespace), rep.Resource.GroupKind(), rep.Resource.Name,
					"-", "-", "-", owner, statuses(rep)})
			}
			for _, d := range rep.Drifts {
				m := in.culprit(d)
				rows = append(rows, []string{dash(rep.Resource.Namespace), rep.Resource.GroupKind(), rep.Resource.Name,
					d.FieldPath, m.Manager, string(d.Cause), owner, verdicts(d)})
			}
		}
		table(driftColumns, rows)
	}
	s := res.Stats
	line := fmt.Sprintf("No drift: %d GitOps-owned objects of %d listed in %d kinds.", s.Owned, s.Objects, s.Kinds)
	if s.Drifted > 0 || len(res.Items) > 0 {
		line = fmt.Sprintf("%d drifted objects (%d fields) of %d GitOps-owned objects; %d listed in %d kinds.",
			s.Drifted, s.Fields, s.Owned, s.Objects, s.Kinds)
	}
	for _, l := range output.Wrap(line, width) {
		sw.Println(l)
	}
	return sw.Flush()
}

func verdicts(d model.FieldDrift) string {
	if len(d.Verdicts) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(d.Verdicts))
	for _, v := range d.Verdicts {
		parts = append(parts, string(v.Engine)+": "+string(v.Kind))
	}
	return strings.Join(parts, ", ")
}

// statuses is the VERDICT cell of an object drifted as a whole:
// "engine: Status (from)" per engine.
func statuses(r *model.Report) string {
	parts := make([]string, 0, len(r.Status))
	for _, st := range r.Status {
		parts = append(parts, fmt.Sprintf("%s: %s (%s)", st.Engine, st.Status, st.From))
	}
	return strings.Join(parts, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OwnerCell is the OWNER column of a drift row: "engine ns/name" of each
// owner, or "-" when nothing reconciles the object.
func OwnerCell(owners []model.Owner) string {
	if len(owners) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(owners))
	for _, o := range owners {
		parts = append(parts, string(o.Engine)+" "+o.Ref())
	}
	return strings.Join(parts, ", ")
}

// printJSON writes exactly what output.PrintObject writes for res, one
// item at a time (output.PrintJSONList): at 100,000 objects the whole
// document in memory was most of scan's memory.
func printJSON(w io.Writer, res *Result) error {
	head := *res
	head.Items = nil
	return output.PrintJSONList(w, &head, res.Items)
}
