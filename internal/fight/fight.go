// Package fight tells a fight over a field from a one-off edit.
//
// A fight is a field that a GitOps engine and another field manager keep
// writing back and forth: the engine puts Git's value back, an HPA, an
// operator, a webhook or a person's script writes its own again, and so on.
// Neither Argo CD (OutOfSync) nor Flux (Ready=False) can tell that from a
// single edit that the next reconcile reverted; this package can, from the
// sequence of writes of each field as a watcher observes them.
//
// A flip is a write whose writer differs in kind (engine vs. other manager)
// from the previous write of the field and whose value differs too. An edit
// that the engine reverts is two flips (engine→other, other→engine); the
// default threshold, 3 flips within 10 minutes, is the first count that
// means "it came back after the engine reverted it".
//
// The package is pure (no clock, no I/O, no Kubernetes types) and bounded:
// writes per field, fields per object and objects are capped, and writes
// older than the window are evicted.
package fight

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/redact"
)

// Defaults of Config.
const (
	DefaultFlips      = 3
	DefaultWindow     = 10 * time.Minute
	DefaultMaxWrites  = 32
	DefaultMaxFields  = 64
	DefaultMaxObjects = 20000
	// Masked is the value reported for fields of Secrets: their values
	// never leave the detector (the hash still tells values apart); the
	// mask is redact's, the one every output shows.
	Masked = redact.Mask
)

// Config tunes a Detector. Zero fields take the defaults.
type Config struct {
	// Flips within Window that make a fight.
	Flips  int
	Window time.Duration
	// MaxWrites is the history kept per field (oldest evicted first).
	MaxWrites int
	// MaxFields is the number of fields tracked per object (the least
	// recently written evicted first).
	MaxFields int
	// MaxObjects is the number of objects tracked (the least recently
	// written evicted first).
	MaxObjects int
}

func (c Config) withDefaults() Config {
	if c.Flips <= 0 {
		c.Flips = DefaultFlips
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MaxWrites <= 0 {
		c.MaxWrites = DefaultMaxWrites
	}
	if c.MaxWrites < c.Flips+1 {
		c.MaxWrites = c.Flips + 1 // a fight needs Flips+1 writes to be seen
	}
	if c.MaxFields <= 0 {
		c.MaxFields = DefaultMaxFields
	}
	if c.MaxObjects <= 0 {
		c.MaxObjects = DefaultMaxObjects
	}
	return c
}

// Object identifies the object a field belongs to. UID tells a recreated
// object from its predecessor; the rest is for reports and metrics.
type Object struct {
	UID       string
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// Secret reports whether the object is a core Secret, whose values are
// never reported.
func (o Object) Secret() bool { return o.Group == "" && o.Kind == "Secret" }

// id is the object as reports name it, for their order.
func (o Object) id() model.ResourceID {
	return model.ResourceID{Group: o.Group, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// Write is one observed write of a field.
type Write struct {
	// Manager is the field manager that owns the field after the write.
	Manager string
	// Engine says Manager is a GitOps engine (it writes Git's value).
	Engine bool
	// Hash identifies the value (equal values, equal hashes); a value of a
	// Secret must be given only as a hash.
	Hash string
	// Value is the value for display (compact JSON, truncated by the
	// caller); ignored for Secrets.
	Value string
	// Time the write was observed (or managedFields time).
	Time time.Time
}

// Fight is a field the engine and another manager write in turn.
type Fight struct {
	Object Object
	// Field is the field (a JSON pointer or a field path, as observed).
	Field string
	// EngineManager wrote Git's value; Manager is the other writer (the
	// most recent one when several took turns).
	EngineManager string
	Manager       string
	// EngineValue and Value are the values each side wrote, Masked for
	// Secrets.
	EngineValue string
	Value       string
	// Flips within the window, and the time from the first to the last of
	// them.
	Flips int
	First time.Time
	Last  time.Time
	// Period is the mean time between flips.
	Period time.Duration
}

// Detector tracks writes and finds fights. It is safe for concurrent use.
type Detector struct {
	cfg Config

	mu      sync.Mutex
	objects map[string]*objectState
}

type objectState struct {
	obj    Object
	last   time.Time
	fields map[string]*fieldState
}

type fieldState struct {
	last   time.Time
	writes []Write
	// reverts counts other→engine flips ever seen (for a counter metric).
	reverts int
	// announced: Check reported the current fight already.
	announced bool
}

// New returns a Detector.
func New(cfg Config) *Detector {
	return &Detector{cfg: cfg.withDefaults(), objects: map[string]*objectState{}}
}

// Config returns the effective configuration (defaults applied).
func (d *Detector) Config() Config { return d.cfg }

// Observe records w for field of obj. It returns whether the write is a
// revert (the engine writing over another manager's different value), for a
// reverts counter. A write equal to the field's last (same manager kind and
// value) is a repeat (resync, unrelated change of the object) and changes
// nothing.
func (d *Detector) Observe(obj Object, field string, w Write) (revert bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if obj.Secret() {
		w.Value = Masked
	}
	st := d.objects[obj.UID]
	if st == nil {
		st = &objectState{fields: map[string]*fieldState{}, last: w.Time}
		d.objects[obj.UID] = st
		d.evictObjects(obj.UID)
	}
	st.obj = obj
	fs := st.fields[field]
	if fs == nil {
		fs = &fieldState{last: w.Time}
		st.fields[field] = fs
		evictFields(st, field, d.cfg.MaxFields)
	}
	if n := len(fs.writes); n > 0 {
		prev := fs.writes[n-1]
		if prev.Engine == w.Engine && prev.Hash == w.Hash {
			// Same side, same value (a resync, another field of the object
			// changed): keep the time the value was first written, and the
			// latest manager name.
			fs.writes[n-1].Manager = w.Manager
			return false
		}
		if w.Time.Before(prev.Time) {
			w.Time = prev.Time // out-of-order clocks: never go back
		}
		revert = w.Engine && !prev.Engine && w.Hash != prev.Hash
	}
	if revert {
		fs.reverts++
	}
	fs.writes = append(fs.writes, w)
	if len(fs.writes) > d.cfg.MaxWrites {
		fs.writes = append(fs.writes[:0], fs.writes[len(fs.writes)-d.cfg.MaxWrites:]...)
	}
	fs.last, st.last = w.Time, w.Time
	return revert
}

// Forget drops an object (deleted).
func (d *Detector) Forget(uid string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.objects, uid)
}

// Len is the number of objects tracked.
func (d *Detector) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.objects)
}

// Fights returns the fields in a fight at now, sorted by object and field.
// It also evicts history older than the window.
func (d *Detector) Fights(now time.Time) []Fight {
	d.mu.Lock()
	defer d.mu.Unlock()
	since := now.Add(-d.cfg.Window)
	var out []Fight
	for uid, st := range d.objects {
		for name, fs := range st.fields {
			trim(fs, since)
			if len(fs.writes) <= 1 && fs.last.Before(since) {
				delete(st.fields, name)
				continue
			}
			if f, ok := judge(fs.writes, since, d.cfg.Flips); ok {
				f.Object, f.Field = st.obj, name
				out = append(out, f)
			}
		}
		if len(st.fields) == 0 {
			delete(d.objects, uid)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Object, out[j].Object
		if ai, bi := a.id(), b.id(); ai != bi {
			return ai.Less(bi)
		}
		if a.UID != b.UID {
			return a.UID < b.UID
		}
		return out[i].Field < out[j].Field
	})
	return out
}

// trim drops writes older than since, keeping the last of them: it is the
// state the first write in the window flipped from.
func trim(fs *fieldState, since time.Time) {
	i := 0
	for i+1 < len(fs.writes) && fs.writes[i+1].Time.Before(since) {
		i++
	}
	if i > 0 {
		fs.writes = append(fs.writes[:0], fs.writes[i:]...)
	}
}

// judge counts flips in the window and describes the fight.
func judge(ws []Write, since time.Time, minFlips int) (Fight, bool) {
	var f Fight
	for i := 1; i < len(ws); i++ {
		prev, cur := ws[i-1], ws[i]
		if cur.Time.Before(since) || prev.Engine == cur.Engine || prev.Hash == cur.Hash {
			continue
		}
		if f.Flips == 0 {
			f.First = cur.Time
		}
		f.Flips++
		f.Last = cur.Time
	}
	if f.Flips < minFlips {
		return Fight{}, false
	}
	// Both sides as last seen.
	for i := len(ws) - 1; i >= 0 && (f.EngineManager == "" || f.Manager == ""); i-- {
		w := ws[i]
		if w.Engine && f.EngineManager == "" {
			f.EngineManager, f.EngineValue = w.Manager, w.Value
		}
		if !w.Engine && f.Manager == "" {
			f.Manager, f.Value = w.Manager, w.Value
		}
	}
	if f.Flips > 1 {
		f.Period = f.Last.Sub(f.First) / time.Duration(f.Flips-1)
	}
	return f, true
}

// Reverts returns the total other→engine reverts seen per object and field
// still tracked (for tests and debugging).
func (d *Detector) Reverts(uid, field string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.objects[uid]; st != nil {
		if fs := st.fields[field]; fs != nil {
			return fs.reverts
		}
	}
	return 0
}

// Fields returns the fields tracked for an object (sorted): the fields
// whose later writes (the engine taking them back) the caller must keep
// observing.
func (d *Detector) Fields(uid string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.objects[uid]
	if st == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(st.fields))
}

// evictObjects drops the least recently written objects beyond the cap,
// never keep (the object being written).
func (d *Detector) evictObjects(keep string) {
	for len(d.objects) > d.cfg.MaxObjects {
		delete(d.objects, leastRecent(d.objects, keep, func(st *objectState) time.Time { return st.last }))
	}
}

func evictFields(st *objectState, keep string, max int) {
	for len(st.fields) > max {
		delete(st.fields, leastRecent(st.fields, keep, func(fs *fieldState) time.Time { return fs.last }))
	}
}

// leastRecent is the key of m's least recently written entry, never keep.
func leastRecent[V any](m map[string]V, keep string, last func(V) time.Time) string {
	var oldest string
	var t time.Time
	first := true
	for k, v := range m {
		if k != keep && (first || last(v).Before(t)) {
			oldest, t, first = k, last(v), false
		}
	}
	return oldest
}

// LastManager is the manager of the field's last write by the engine side
// (engine true) or the other side, "" if none is remembered.
func (d *Detector) LastManager(uid, field string, engine bool) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.objects[uid]; st != nil {
		if fs := st.fields[field]; fs != nil {
			for i := len(fs.writes) - 1; i >= 0; i-- {
				if fs.writes[i].Engine == engine {
					return fs.writes[i].Manager
				}
			}
		}
	}
	return ""
}

// Check returns the fight over one field at now, if it is in one, and
// whether this is the first time Check saw it (to log a fight once; a field
// that calms down and starts again is new again).
func (d *Detector) Check(uid, field string, now time.Time) (f Fight, isNew, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.objects[uid]
	if st == nil || st.fields[field] == nil {
		return Fight{}, false, false
	}
	fs := st.fields[field]
	f, ok = judge(fs.writes, now.Add(-d.cfg.Window), d.cfg.Flips)
	if !ok {
		fs.announced = false
		return Fight{}, false, false
	}
	f.Object, f.Field = st.obj, field
	isNew = !fs.announced
	fs.announced = true
	return f, isNew, true
}
