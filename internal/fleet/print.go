package fleet

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-drift/kubectl-drift/internal/drift"
	"github.com/kubectl-drift/kubectl-drift/internal/output"
	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// Metric names a fleet scan adds to the single-cluster ones (each of which
// carries a cluster label in a fleet scan).
const (
	MetricScanClusters     = "kubectl_drift_scan_clusters"
	MetricFleetScanSeconds = "kubectl_drift_fleet_scan_duration_seconds"
)

// Print renders res in format (scan's formats). Secrets were masked when
// the reports were built; nothing has colour.
func Print(w io.Writer, format string, res *Result) error {
	switch format {
	case scan.OutputJSON, scan.OutputYAML:
		return output.PrintObject(w, output.Format(format), res)
	case scan.OutputPrometheus:
		return WritePrometheus(w, res)
	case scan.OutputTable, "":
		return printTable(w, res)
	}
	return fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(scan.Outputs, ", "))
}

func printTable(w io.Writer, res *Result) error {
	// Both writers keep their first error (checked at each Flush): a table
	// printed to a closed pipe fails the command.
	out := output.NewStickyWriter(w)
	tw := output.NewStickyWriter(tabwriter.NewWriter(out, 0, 8, 2, ' ', 0))
	if len(res.Items) > 0 {
		tw.Println("CLUSTER\tNAMESPACE\tKIND\tMANAGER\tCLASS\tENGINE\tOBJECTS\tFIELDS")
		for _, r := range res.Summary {
			tw.Printf("%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", r.Cluster, dash(r.Namespace), r.Kind, r.Manager, r.Class, dash(string(r.Engine)), r.Objects, r.Fields)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		out.Println()
		tw.Println("CLUSTER\tNAMESPACE\tKIND\tNAME\tFIELD\tMANAGER\tCLASS\tOWNER\tVERDICT")
		for _, it := range res.Items {
			rep := it.Report
			owner := scan.OwnerCell(rep.Owners)
			for _, d := range rep.Drifts {
				m := drift.Culprit(d, false)
				verdict := "-"
				if len(d.Verdicts) > 0 {
					var vs []string
					for _, v := range d.Verdicts {
						vs = append(vs, string(v.Engine)+": "+string(v.Kind))
					}
					verdict = strings.Join(vs, ", ")
				}
				tw.Printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.Cluster, dash(rep.Resource.Namespace), rep.Resource.GroupKind(), rep.Resource.Name,
					d.FieldPath, m.Manager, d.Cause, owner, verdict)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		out.Println()
	}
	s := res.Stats
	scanned := len(res.Clusters) - res.Unreachable()
	clusters := fmt.Sprintf("%d of %d clusters scanned", scanned, len(res.Clusters))
	if s.Drifted == 0 && len(res.Items) == 0 {
		out.Printf("No drift: %d GitOps-owned objects of %d listed; %s.\n", s.Owned, s.Objects, clusters)
	} else {
		out.Printf("%d drifted objects (%d fields) of %d GitOps-owned objects; %d listed; %s.\n",
			s.Drifted, s.Fields, s.Owned, s.Objects, clusters)
	}
	return out.Flush()
}

// WritePrometheus writes every scanned cluster's metrics with a cluster
// label, plus kubectl_drift_scan_clusters{result=scanned|unreachable} and
// the fleet scan's wall time. An unreachable cluster has no per-cluster
// series: its drift is unknown, not zero (alert on the clusters gauge).
func WritePrometheus(w io.Writer, res *Result) error {
	merged := map[string]*dto.MetricFamily{}
	var fams []*dto.MetricFamily
	for _, c := range res.Clusters {
		r := res.scans[c.Name]
		if r == nil {
			continue
		}
		for _, f := range scan.Families(r, "cluster", c.Name) {
			if m, ok := merged[f.GetName()]; ok {
				m.Metric = append(m.Metric, f.Metric...)
				continue
			}
			merged[f.GetName()] = f
			fams = append(fams, f)
		}
	}
	n := len(res.Clusters) - res.Unreachable()
	help := "Clusters the last fleet scan scanned, and those it could not (unreachable, credentials refused, context missing)."
	typ := dto.MetricType_GAUGE
	name := MetricScanClusters
	fams = append(fams, &dto.MetricFamily{Name: &name, Help: &help, Type: &typ, Metric: []*dto.Metric{
		scan.Gauge(float64(n), "result", Scanned),
		scan.Gauge(float64(res.Unreachable()), "result", Unreachable),
	}})
	dname, dhelp := MetricFleetScanSeconds, "Wall time of the last fleet scan (clusters scanned concurrently)."
	fams = append(fams, &dto.MetricFamily{Name: &dname, Help: &dhelp, Type: &typ, Metric: []*dto.Metric{
		scan.Gauge(math.Round(res.Duration.Seconds()*1000) / 1000),
	}})
	return scan.WriteFamilies(w, fams)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
