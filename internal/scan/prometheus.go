package scan

import (
	"io"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

// Metric names of `scan -o prometheus`. The output is meant for
// node-exporter's textfile collector, so samples carry no timestamps (the
// collector rejects them) and every family is a gauge of the last scan.
const (
	MetricFields        = "kubectl_drift_fields"
	MetricObjects       = "kubectl_drift_objects"
	MetricOldestChange  = "kubectl_drift_oldest_change_timestamp_seconds"
	MetricOwnedObjects  = "kubectl_drift_owned_objects"
	MetricScanObjects   = "kubectl_drift_scan_objects"
	MetricScanKinds     = "kubectl_drift_scan_kinds"
	MetricScanDuration  = "kubectl_drift_scan_duration_seconds"
	MetricScanTimestamp = "kubectl_drift_scan_timestamp_seconds"
)

// WritePrometheus writes res in the Prometheus text exposition format, via
// prometheus/common's own encoder so the output is valid by construction.
// Families and series are sorted: the same drift gives the same bytes.
func WritePrometheus(w io.Writer, res *Result) error {
	return WriteFamilies(w, Families(res))
}

// Families are the metric families of one scan, sorted, without empty
// families (expfmt refuses a family without samples): what WritePrometheus
// prints and what `serve` exposes on /metrics, so both carry the same names
// and labels by construction. labels (name, value pairs) come first on
// every sample: a fleet scan adds cluster=NAME and merges the families of
// its clusters.
func Families(res *Result, labels ...string) []*dto.MetricFamily {
	in := &Inspector{}
	with := func(l ...string) []string { return append(append([]string{}, labels...), l...) }
	type fieldKey struct{ ns, kind, manager, class, engine, verdict string }
	type objKey struct{ ns, kind, engine string }
	type ageKey struct{ ns, kind, manager, engine string }
	fields := map[fieldKey]float64{}
	objects := map[objKey]float64{}
	oldest := map[ageKey]float64{}
	for _, r := range res.Items {
		counted := map[objKey]bool{}
		for _, d := range r.Drifts {
			m := in.culprit(d)
			for _, eng := range engines(r) {
				fields[fieldKey{r.Resource.Namespace, r.Resource.GroupKind(), m.Manager, string(m.Class), string(eng), string(verdictOf(d, eng))}]++
				ok := objKey{r.Resource.Namespace, r.Resource.GroupKind(), string(eng)}
				if !counted[ok] {
					counted[ok] = true
					objects[ok]++
				}
				if m.Time != nil {
					ak := ageKey{r.Resource.Namespace, r.Resource.GroupKind(), m.Manager, string(eng)}
					ts := float64(m.Time.Unix())
					if cur, has := oldest[ak]; !has || ts < cur {
						oldest[ak] = ts
					}
				}
			}
		}
		// An object its engine records drifted with no field named (a
		// commit not synced yet: Argo CD's OutOfSync from its
		// Application's status) is a drifted object of the scan too.
		for _, st := range r.Status {
			ok := objKey{r.Resource.Namespace, r.Resource.GroupKind(), string(st.Engine)}
			if st.Drift && !counted[ok] {
				counted[ok] = true
				objects[ok]++
			}
		}
	}

	var fams []*dto.MetricFamily
	fam := func(name, help string) *dto.MetricFamily {
		f := &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: dto.MetricType_GAUGE.Enum()}
		fams = append(fams, f)
		return f
	}
	f := fam(MetricFields, "Drifted fields of GitOps-owned objects: fields owned by a non-GitOps field manager, by the engine's verdict (reverted, reported, ignored, left-alone, not-applied, not-watched, excluded, unknown).")
	for k, v := range fields {
		f.Metric = append(f.Metric, gauge(v, with("namespace", k.ns, "kind", k.kind, "manager", k.manager, "class", k.class, "engine", k.engine, "verdict", k.verdict)...))
	}
	f = fam(MetricObjects, "GitOps-owned objects with at least one drifted field, or that their engine records drifted (OutOfSync) with no field named.")
	for k, v := range objects {
		f.Metric = append(f.Metric, gauge(v, with("namespace", k.ns, "kind", k.kind, "engine", k.engine)...))
	}
	f = fam(MetricOldestChange, "Unix time of the oldest still-drifted write by the manager (managedFields time): time() minus this is how long drift has persisted.")
	for k, v := range oldest {
		f.Metric = append(f.Metric, gauge(v, with("namespace", k.ns, "kind", k.kind, "manager", k.manager, "engine", k.engine)...))
	}
	fam(MetricOwnedObjects, "GitOps-owned objects seen by the last scan.").Metric = []*dto.Metric{gauge(float64(res.Stats.Owned), labels...)}
	fam(MetricScanObjects, "Objects listed by the last scan.").Metric = []*dto.Metric{gauge(float64(res.Stats.Objects), labels...)}
	fam(MetricScanKinds, "Kinds the last scan listed, and skipped (Forbidden, not served).").Metric = []*dto.Metric{
		gauge(float64(res.Stats.Kinds), with("result", "listed")...),
		gauge(float64(res.Stats.KindsSkipped), with("result", "skipped")...),
	}
	fam(MetricScanDuration, "Wall time of the last scan.").Metric = []*dto.Metric{gauge(math.Round(res.Duration.Seconds()*1000)/1000, labels...)}
	fam(MetricScanTimestamp, "Unix time the last scan started (alert when it goes stale).").Metric = []*dto.Metric{gauge(float64(res.Started.Unix()), labels...)}
	return sortFamilies(fams)
}

// WriteFamilies writes families in the text exposition format, families
// and series sorted: the same drift gives the same bytes. Same-named
// families (from several clusters) must have been merged by the caller.
func WriteFamilies(w io.Writer, fams []*dto.MetricFamily) error {
	for _, f := range sortFamilies(fams) {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return err
		}
	}
	return nil
}

// sortFamilies sorts families by name and their series by labels, and
// drops empty families.
func sortFamilies(fams []*dto.MetricFamily) []*dto.MetricFamily {
	sort.Slice(fams, func(i, j int) bool { return fams[i].GetName() < fams[j].GetName() })
	out := fams[:0]
	for _, f := range fams {
		sort.Slice(f.Metric, func(i, j int) bool { return labelString(f.Metric[i]) < labelString(f.Metric[j]) })
		if len(f.Metric) == 0 {
			// No drift, no series: a resolved alert's series disappears.
			continue
		}
		out = append(out, f)
	}
	return out
}

// Gauge returns a gauge sample with labels (name, value pairs).
func Gauge(v float64, labels ...string) *dto.Metric { return gauge(v, labels...) }

func gauge(v float64, labels ...string) *dto.Metric {
	m := &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(v)}}
	for i := 0; i+1 < len(labels); i += 2 {
		m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(labels[i]), Value: proto.String(labels[i+1])})
	}
	return m
}

func labelString(m *dto.Metric) string {
	var b strings.Builder
	for _, l := range m.Label {
		b.WriteString(l.GetName())
		b.WriteByte('=')
		b.WriteString(l.GetValue())
		b.WriteByte(0)
	}
	return b.String()
}
