package smpatch

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// gen draws small random objects whose lists collide on purpose: a few
// keys, duplicates, keys of another JSON type ("1" and 1), items without
// their key, directives ($patch, $setElementOrder, $retainKeys,
// $deleteFromPrimitiveList) where a patch or a broken input could hold
// them, nulls and type changes.
type gen struct{ r *rand.Rand }

func (g gen) pick(n int) int { return g.r.IntN(n) }

func (g gen) chance(pct int) bool { return g.r.IntN(100) < pct }

// key is a merge-key value: mostly a few strings, sometimes a number or
// null (strategicpatch matches by fmt %v in its diffs and by == when
// merging: "1" and 1 sort alike but never merge).
func (g gen) key(prefix string) any {
	switch {
	case g.chance(4):
		return float64(g.pick(3))
	case g.chance(8):
		return nil
	}
	return fmt.Sprintf("%s%d", prefix, g.pick(6))
}

func (g gen) scalar() any {
	switch g.pick(8) {
	case 0:
		return nil
	case 1:
		return float64(g.pick(4))
	case 2:
		return g.chance(50)
	}
	return fmt.Sprintf("v%d", g.pick(4))
}

// keyedList is a list merged by mergeKey, its items made by item.
func (g gen) keyedList(mergeKey, prefix string, item func(map[string]any)) []any {
	n := g.pick(6)
	out := make([]any, 0, n)
	for range n {
		m := map[string]any{}
		if !g.chance(3) {
			m[mergeKey] = g.key(prefix)
		}
		if item != nil {
			item(m)
		}
		if g.chance(3) {
			m["$patch"] = []string{"delete", "replace", "merge", "bogus"}[g.pick(4)]
		}
		out = append(out, m)
	}
	return out
}

func (g gen) container() map[string]any {
	c := map[string]any{"name": g.key("c")}
	if g.chance(70) {
		c["env"] = g.keyedList("name", "E", func(m map[string]any) {
			if g.chance(80) {
				m["value"] = g.scalar()
			}
		})
	}
	if g.chance(40) {
		c["ports"] = g.keyedList("containerPort", "", func(m map[string]any) {
			if cp, ok := m["containerPort"]; ok {
				if s, ok := cp.(string); ok {
					m["containerPort"] = float64(len(s)*7 + int(s[len(s)-1]))
				}
			}
			if g.chance(50) {
				m["protocol"] = []string{"TCP", "UDP"}[g.pick(2)]
			}
		})
	}
	if g.chance(30) {
		c["volumeMounts"] = g.keyedList("mountPath", "/m", func(m map[string]any) { m["name"] = g.key("v") })
	}
	if g.chance(30) {
		c["args"] = []any{g.scalar(), g.scalar()}
	}
	if g.chance(30) {
		c["image"] = g.scalar()
	}
	return c
}

func (g gen) volume() map[string]any {
	v := map[string]any{"name": g.key("v")}
	switch g.pick(4) {
	case 0:
		v["configMap"] = map[string]any{"name": g.scalar()}
	case 1:
		v["emptyDir"] = map[string]any{}
	case 2:
		v["secret"] = map[string]any{"secretName": g.scalar()}
	}
	return v
}

// deployment is a random Deployment-shaped document.
func (g gen) deployment() map[string]any {
	pod := map[string]any{}
	if g.chance(90) {
		var cs []any
		for range g.pick(4) {
			cs = append(cs, g.container())
		}
		pod["containers"] = cs
	}
	if g.chance(40) {
		var vs []any
		for range g.pick(5) {
			vs = append(vs, g.volume())
		}
		pod["volumes"] = vs
	}
	if g.chance(20) {
		pod["tolerations"] = []any{map[string]any{"key": g.scalar()}}
	}
	md := map[string]any{"name": "d"}
	if g.chance(30) {
		var fs []any
		for range g.pick(5) {
			fs = append(fs, g.key("f"))
		}
		md["finalizers"] = fs
	}
	if g.chance(40) {
		md["labels"] = map[string]any{"a": g.scalar(), "b": g.scalar()}
	}
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md,
		"spec": map[string]any{"replicas": g.scalar(), "template": map[string]any{"spec": pod}}}
	if g.chance(3) {
		obj["spec"] = g.scalar()
	}
	return obj
}

// mutate returns a changed copy of v: items dropped, added, swapped,
// values changed, the copy sharing nothing with v.
func (g gen) mutate(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if g.chance(8) {
				continue
			}
			out[k] = g.mutate(x)
		}
		if g.chance(5) {
			out["value"] = g.scalar()
		}
		return out
	case []any:
		out := make([]any, 0, len(t)+1)
		for _, x := range t {
			if g.chance(15) {
				continue
			}
			out = append(out, g.mutate(x))
		}
		if len(out) > 1 && g.chance(30) {
			i, j := g.pick(len(out)), g.pick(len(out))
			out[i], out[j] = out[j], out[i]
		}
		if len(t) > 0 && g.chance(25) {
			out = append(out, g.mutate(t[g.pick(len(t))]))
		}
		return out
	default:
		if g.chance(10) {
			return g.scalar()
		}
		return t
	}
}

// patchLike turns a document into a hand-written patch: directives a
// three-way patch never makes ($setElementOrder with keys of its own,
// $retainKeys, $deleteFromPrimitiveList, a list of deletions).
func (g gen) patchLike(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range m {
		switch y := x.(type) {
		case map[string]any:
			out[k] = g.patchLike(y)
		case []any:
			items := make([]any, len(y))
			for i, it := range y {
				items[i] = g.patchLike(it)
			}
			out[k] = items
			if g.chance(30) {
				var order []any
				for _, it := range items {
					if im, ok := it.(map[string]any); ok && g.chance(80) {
						order = append(order, map[string]any{"name": im["name"], "containerPort": im["containerPort"], "mountPath": im["mountPath"]})
					} else if !ok {
						order = append(order, it)
					}
				}
				if g.chance(20) {
					order = append(order, map[string]any{"name": g.key("E")})
				}
				out["$setElementOrder/"+k] = order
			}
			if g.chance(10) {
				out["$deleteFromPrimitiveList/"+k] = []any{g.key("f")}
			}
		default:
			out[k] = y
		}
	}
	if g.chance(5) {
		out["$retainKeys"] = []any{"name", "configMap"}
	}
	if g.chance(3) {
		out["$patch"] = []string{"delete", "replace", "bogus"}[g.pick(3)]
	}
	return out
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// outcome is what a call gave: its bytes, its error, or that it panicked.
type outcome struct {
	out      string
	err      string
	panicked bool
}

// sameAs says whether got is an outcome of f: strategicpatch walks maps
// in Go's random order, and where a patch holds both a list and a
// directive on it its result depends on which it meets first, so f is
// run until it gives got or 64 times. Failures compare as failures: which
// of two bad keys an error names depends on that order too. Whether a
// failure is an error or a panic depends on that order as well, and one
// kind can be rare (seed 8964 of the patch test: an error 2 times in 100,
// a panic otherwise), so while f only fails, and fails the other way, it
// is run up to 2048 times before the kinds are called different.
func sameAs(got outcome, f func() ([]byte, error)) (bool, outcome) {
	var first outcome
	onlyOtherFailures := got.failed()
	for i := 0; i < 64 || (onlyOtherFailures && i < 2048); i++ {
		o := run(f)
		if o == got || (o.err != "" && got.err != "") || (o.panicked && got.panicked) {
			return true, o
		}
		if !o.failed() {
			onlyOtherFailures = false
		}
		if i == 0 {
			first = o
		}
	}
	return false, first
}

func (o outcome) failed() bool { return o.err != "" || o.panicked }

func run(f func() ([]byte, error)) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{panicked: true}
		}
	}()
	b, err := f()
	if err != nil {
		return outcome{err: err.Error()}
	}
	return outcome{out: string(b)}
}

// TestSameAsStrategicPatch is the differential test of the copy: on
// many random small objects (lists colliding by key, duplicate and
// missing keys, directives in inputs, nulls), the three-way patch and the
// patched object are byte for byte strategicpatch's, the same error when
// it fails, a panic where it panics.
func TestSameAsStrategicPatch(t *testing.T) {
	meta, err := strategicpatch.NewPatchMetaFromStruct(&appsv1.Deployment{})
	if err != nil {
		t.Fatal(err)
	}
	runs, identical, failed := 20000, 0, 0
	if testing.Short() {
		runs = 2000
	}
	for seed := range runs {
		g := gen{rand.New(rand.NewPCG(uint64(seed), 29))}
		base := g.deployment()
		config := g.mutate(base)
		orig := config
		if g.chance(60) {
			orig = g.mutate(base)
		}
		live := g.mutate(base)
		o, c, l := marshal(t, orig), marshal(t, config), marshal(t, live)

		got := run(func() ([]byte, error) { return CreateThreeWayMergePatch(o, c, l, meta) })
		same, want := sameAs(got, func() ([]byte, error) { return strategicpatch.CreateThreeWayMergePatch(o, c, l, meta, true) })
		if !same {
			t.Fatalf("seed %d: three-way patch of\norig   %s\nconfig %s\nlive   %s\nstrategicpatch %+v\nsmpatch        %+v", seed, o, c, l, want, got)
		}
		patches := []string{}
		if got.err == "" && !got.panicked {
			patches = append(patches, got.out)
		}
		// A patch written by hand: directives a three-way patch never holds.
		patches = append(patches, string(marshal(t, g.patchLike(g.mutate(base)))))
		for _, p := range patches {
			got := run(func() ([]byte, error) { return StrategicMergePatch(l, []byte(p), meta) })
			same, want := sameAs(got, func() ([]byte, error) {
				return strategicpatch.StrategicMergePatchUsingLookupPatchMeta(l, []byte(p), meta)
			})
			if !same {
				t.Fatalf("seed %d: patch\n%s\napplied to\n%s\nstrategicpatch %+v\nsmpatch        %+v", seed, p, l, want, got)
			}
			if got.err != "" || got.panicked {
				failed++
			} else {
				identical++
			}
		}
	}
	// The generator must reach both the results and the failures.
	t.Logf("%d patched objects identical, %d failures identical", identical, failed)
	if identical < runs/2 || failed < runs/50 {
		t.Errorf("the generator drew %d successes and %d failures in %d runs: not enough of each", identical, failed, runs)
	}
}

// TestDeleteAllAsDeleteMatchingEntries: deleteAll leaves the backing
// array of the list as strategicpatch's deletions one by one do, past the
// new length too (mergePatchIntoOriginal reads it there through its own
// header of the list), on random lists with duplicate keys, items without
// a key and deletions of absent, repeated and last items.
func TestDeleteAllAsDeleteMatchingEntries(t *testing.T) {
	for seed := range 5000 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		n := r.IntN(8)
		list := make([]any, n)
		for i := range list {
			m := map[string]any{"i": i}
			if r.IntN(10) > 0 {
				m["k"] = fmt.Sprint(r.IntN(5))
			}
			list[i] = m
		}
		var values []any
		for range r.IntN(5) {
			values = append(values, fmt.Sprint(r.IntN(6)))
		}
		want := append([]any(nil), list...)
		wantOut := want
		for _, v := range values {
			var err error
			if wantOut, err = deleteMatchingEntries(wantOut, "k", v); err != nil {
				t.Fatal(err)
			}
		}
		got := append([]any(nil), list...)
		gotOut := deleteAll(got, "k", values)
		if len(gotOut) != len(wantOut) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: deleting %v from %v:\nstrategicpatch leaves %v (length %d)\ndeleteAll leaves      %v (length %d)", seed, values, list, want, len(wantOut), got, len(gotOut))
		}
	}
}

// TestMapIndexAsScan: mapIndex finds what findMapInSliceBasedOnKeyValue
// finds while the list changes as mergeSliceWithoutSpecialElements
// changes it: items merged (a null key merged away), items appended,
// lists holding a non-map.
func TestMapIndexAsScan(t *testing.T) {
	for seed := range 3000 {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		key := func() any {
			if r.IntN(4) == 0 {
				return nil
			}
			return fmt.Sprint(r.IntN(4))
		}
		var list []any
		for range r.IntN(6) {
			if r.IntN(20) == 0 {
				list = append(list, "not a map")
				continue
			}
			list = append(list, map[string]any{"k": key()})
		}
		ix := newMapIndex(list, "k")
		for range 6 {
			v := key()
			m, k, found, err := ix.find(v)
			wm, wk, wfound, werr := findMapInSliceBasedOnKeyValue(list, "k", v)
			if found != wfound || k != wk || fmt.Sprint(err) != fmt.Sprint(werr) || fmt.Sprintf("%p", m) != fmt.Sprintf("%p", wm) {
				t.Fatalf("seed %d: find(%v) in %v: got %v %d %v, want %v %d %v", seed, v, list, found, k, err, wfound, wk, werr)
			}
			switch {
			case err != nil:
			case found && r.IntN(2) == 0:
				delete(m, "k") // a null key merged as a deletion
				ix.replaced(k, v)
			case found:
				ix.replaced(k, v)
			default:
				list = append(list, map[string]any{"k": v})
				ix.appended(list, v)
			}
		}
	}
}
