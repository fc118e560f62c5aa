package scan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

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

// Print renders res in format. Nothing here has colour, so NO_COLOR holds
// trivially; secrets were masked when the reports were built.
func Print(w io.Writer, format string, res *Result) error {
	switch format {
	case OutputJSON:
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case OutputYAML:
		b, err := yaml.Marshal(res)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case OutputPrometheus:
		return WritePrometheus(w, res)
	case OutputTable, "":
		return printTable(w, res)
	}
	return fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Outputs, ", "))
}

func printTable(w io.Writer, res *Result) error {
	// Both writers keep their first error: the table and the summary line
	// after it fail the command together (checked at each Flush).
	w = output.NewStickyWriter(w)
	tw := output.NewStickyWriter(tabwriter.NewWriter(w, 0, 8, 2, ' ', 0))
	if len(res.Items) > 0 {
		tw.Println("NAMESPACE\tKIND\tMANAGER\tCLASS\tENGINE\tOBJECTS\tFIELDS")
		for _, r := range res.Summary {
			tw.Printf("%s\t%s\t%s\t%s\t%s\t%d\t%d\n", dash(r.Namespace), r.Kind, r.Manager, r.Class, dash(string(r.Engine)), r.Objects, r.Fields)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		tw.Println("NAMESPACE\tKIND\tNAME\tFIELD\tMANAGER\tCLASS\tOWNER\tVERDICT")
		in := &Inspector{}
		for _, rep := range res.Items {
			owner := OwnerCell(rep.Owners)
			if len(rep.Drifts) == 0 {
				// Drifted as a whole with no field to show: an engine's
				// status (Argo CD records OutOfSync for a commit not
				// synced yet; which fields differ needs Git).
				tw.Printf("%s\t%s\t%s\t-\t-\t-\t%s\t%s\n", dash(rep.Resource.Namespace), rep.Resource.GroupKind(), rep.Resource.Name,
					owner, statuses(rep))
			}
			for _, d := range rep.Drifts {
				m := in.culprit(d)
				tw.Printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(rep.Resource.Namespace), rep.Resource.GroupKind(), rep.Resource.Name,
					d.FieldPath, m.Manager, d.Cause, owner, verdicts(d))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	s := res.Stats
	if s.Drifted == 0 && len(res.Items) == 0 {
		_, err := fmt.Fprintf(w, "No drift: %d GitOps-owned objects of %d listed in %d kinds.\n", s.Owned, s.Objects, s.Kinds)
		return err
	}
	_, err := fmt.Fprintf(w, "%d drifted objects (%d fields) of %d GitOps-owned objects; %d listed in %d kinds.\n",
		s.Drifted, s.Fields, s.Owned, s.Objects, s.Kinds)
	return err
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
