package serve

import (
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/kubectl-drift/kubectl-drift/internal/scan"
)

// Metric names serve adds to scan's (scan.Families).
const (
	// MetricFights counts fields in a fight (fight.Detector) now.
	MetricFights = "kubectl_drift_fights"
	// MetricFightFlips is the flips within the window of those fields.
	MetricFightFlips = "kubectl_drift_fight_flips"
	// MetricReverts counts engine writes that put Git's value back.
	MetricReverts = "kubectl_drift_reverts_total"
	// MetricEvents counts objects re-explained.
	MetricEvents = "kubectl_drift_serve_events_total"
	// MetricExplainErrors counts objects that could not be explained.
	MetricExplainErrors = "kubectl_drift_serve_explain_errors_total"
	// MetricWatchErrors counts failed LISTs/WATCHes of the informers.
	MetricWatchErrors = "kubectl_drift_serve_watch_errors_total"
	// MetricPersisted counts drifted fields that survived at least one
	// reconcile of their owner (model.FieldDrift.PersistedReconciles).
	MetricPersisted = "kubectl_drift_persisted_fields"
	// MetricReloads counts rebuilds of the adapters after a settings change.
	MetricReloads = "kubectl_drift_serve_reloads_total"
	// MetricReady is 1 once the informers synced.
	MetricReady = "kubectl_drift_serve_ready"
)

// gather computes the state-derived families at scrape time: scan's
// families from the drifted reports held (same names and labels as
// `scan -o prometheus`), and the fights.
func (s *Server) gather() ([]*dto.MetricFamily, error) {
	items, last := s.snapshot()
	pipe := s.pipe.Load()
	res := &scan.Result{Items: items, Started: last}
	res.Stats.Kinds = len(s.opts.Kinds)
	res.Stats.KindsSkipped = s.opts.SkippedKinds
	for _, inf := range s.informer {
		for _, o := range inf.GetStore().List() {
			res.Stats.Objects++
			// Owned as the transform judged it: asking again would
			// decode every owned object on every scrape.
			if e, ok := o.(*entry); ok && e.owned() {
				res.Stats.Owned++
			}
		}
	}
	fams := scan.Families(res)

	type key struct{ ns, kind, name, field, engine, manager string }
	count := map[key]float64{}
	flips := map[key]float64{}
	for _, f := range s.detector.Fights(s.opts.Now()) {
		k := key{ns: f.Object.Namespace, kind: groupKind(f.Object.Group, f.Object.Kind), field: f.Field, engine: engineOf(f.EngineManager), manager: f.Manager}
		if s.opts.FightNames {
			k.name = f.Object.Name
		}
		count[k]++
		flips[k] += float64(f.Flips)
	}
	labels := func(k key) []string {
		l := []string{"namespace", k.ns, "kind", k.kind}
		if s.opts.FightNames {
			l = append(l, "name", k.name)
		}
		return append(l, "field", k.field, "engine", k.engine, "manager", k.manager)
	}
	fightFam := &dto.MetricFamily{Name: proto.String(MetricFights), Type: dto.MetricType_GAUGE.Enum(),
		Help: proto.String("Fields that a GitOps engine and another field manager keep writing in turn (at least --fight-flips flips within --fight-window); manager is the other writer.")}
	flipFam := &dto.MetricFamily{Name: proto.String(MetricFightFlips), Type: dto.MetricType_GAUGE.Enum(),
		Help: proto.String("Flips within the window of the fields in a fight.")}
	for k, v := range count {
		fightFam.Metric = append(fightFam.Metric, gaugeOf(v, labels(k)...))
		flipFam.Metric = append(flipFam.Metric, gaugeOf(flips[k], labels(k)...))
	}
	if len(fightFam.Metric) > 0 {
		fams = append(fams, fightFam, flipFam)
	}
	type pkey struct{ ns, kind, manager, engine string }
	persisted := map[pkey]float64{}
	for _, r := range items {
		for _, d := range r.Drifts {
			if d.PersistedReconciles == 0 || !d.Counts() {
				continue
			}
			m := pipe.Culprit(d)
			for _, o := range r.Owners {
				persisted[pkey{r.Resource.Namespace, r.Resource.GroupKind(), m.Manager, string(o.Engine)}]++
			}
		}
	}
	if len(persisted) > 0 {
		pf := &dto.MetricFamily{Name: proto.String(MetricPersisted), Type: dto.MetricType_GAUGE.Enum(),
			Help: proto.String("Drifted fields that survived at least one reconcile of their owner: the engine ran and did not, or could not, revert them.")}
		for k, v := range persisted {
			pf.Metric = append(pf.Metric, gaugeOf(v, "namespace", k.ns, "kind", k.kind, "manager", k.manager, "engine", k.engine))
		}
		fams = append(fams, pf)
	}
	ready := 0.0
	if s.Ready() {
		ready = 1
	}
	fams = append(fams, &dto.MetricFamily{Name: proto.String(MetricReady), Type: dto.MetricType_GAUGE.Enum(),
		Help:   proto.String("1 once every informer synced its first LIST."),
		Metric: []*dto.Metric{gaugeOf(ready)}})
	return fams, nil
}

func gaugeOf(v float64, labels ...string) *dto.Metric {
	m := &dto.Metric{Gauge: &dto.Gauge{Value: proto.Float64(v)}}
	for i := 0; i+1 < len(labels); i += 2 {
		m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(labels[i]), Value: proto.String(labels[i+1])})
	}
	return m
}

func groupKind(group, kind string) string {
	if group == "" {
		return kind
	}
	return kind + "." + group
}
