package fight

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)

var deploy = Object{UID: "u1", Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}

// step is one write in a table: who (engine "kustomize-controller" or
// another manager), which value, minutes after t0.
type step struct {
	manager string
	value   string
	min     float64
}

func (s step) write() Write {
	return Write{Manager: s.manager, Engine: s.manager == "kustomize-controller" || s.manager == "argocd-controller",
		Hash: "h:" + s.value, Value: s.value, Time: t0.Add(time.Duration(s.min * float64(time.Minute)))}
}

func TestFights(t *testing.T) {
	const kc, hpa, kubectl = "kustomize-controller", "kube-controller-manager", "kubectl-edit"
	cases := []struct {
		name  string
		steps []step
		at    float64 // minutes after t0 when Fights is asked
		cfg   Config
		want  string // "" no fight, else "engine=value manager=value flips period"
	}{
		{name: "one-off edit reverted once is not a fight",
			steps: []step{{kc, "3", 0}, {kubectl, "5", 1}, {kc, "3", 2}}, at: 3},
		{name: "edit never reverted is not a fight",
			steps: []step{{kc, "3", 0}, {kubectl, "5", 1}}, at: 3},
		{name: "edit, revert, edit again: 3 flips is a fight",
			steps: []step{{kc, "3", 0}, {hpa, "5", 1}, {kc, "3", 2}, {hpa, "5", 3}}, at: 4,
			want: "kustomize-controller=3 kube-controller-manager=5 flips=3 period=1m0s"},
		{name: "a long fight keeps counting",
			steps: []step{{kc, "3", 0}, {hpa, "5", 1}, {kc, "3", 2}, {hpa, "6", 3}, {kc, "3", 4}, {hpa, "7", 5}}, at: 5,
			want: "kustomize-controller=3 kube-controller-manager=7 flips=5 period=1m0s"},
		{name: "flips spread beyond the window are not a fight",
			steps: []step{{kc, "3", 0}, {hpa, "5", 6}, {kc, "3", 12}, {hpa, "5", 18}}, at: 18},
		{name: "old flips leave the window",
			steps: []step{{kc, "3", 0}, {hpa, "5", 1}, {kc, "3", 2}, {hpa, "5", 3}}, at: 14},
		{name: "resyncs (same side, same value) are not flips",
			steps: []step{{kc, "3", 0}, {kc, "3", 0.5}, {hpa, "5", 1}, {hpa, "5", 1.5}, {hpa, "5", 1.7}, {kc, "3", 2}, {kc, "3", 2.5}}, at: 3},
		{name: "the engine rewriting the same value another manager set is no flip",
			steps: []step{{kc, "3", 0}, {hpa, "5", 1}, {kc, "5", 2}, {hpa, "5", 3}, {kc, "5", 4}}, at: 4},
		{name: "two outside managers taking turns are not fighting the engine",
			steps: []step{{kc, "3", 0}, {hpa, "5", 1}, {kubectl, "6", 2}, {hpa, "5", 3}, {kubectl, "6", 4}}, at: 4},
		{name: "threshold is configurable",
			steps: []step{{kc, "3", 0}, {kubectl, "5", 1}, {kc, "3", 2}}, at: 3, cfg: Config{Flips: 2},
			want: "kustomize-controller=3 kubectl-edit=5 flips=2 period=1m0s"},
		{name: "window is configurable",
			steps: []step{{kc, "3", 0}, {hpa, "5", 6}, {kc, "3", 12}, {hpa, "5", 18}}, at: 18, cfg: Config{Window: 30 * time.Minute},
			want: "kustomize-controller=3 kube-controller-manager=5 flips=3 period=6m0s"},
		{name: "the last outside manager is named when several take turns",
			steps: []step{{kc, "3", 0}, {hpa, "5", 1}, {kc, "3", 2}, {kubectl, "9", 3}}, at: 3,
			want: "kustomize-controller=3 kubectl-edit=9 flips=3 period=1m0s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.cfg)
			for _, s := range tc.steps {
				d.Observe(deploy, "/spec/replicas", s.write())
			}
			fs := d.Fights(t0.Add(time.Duration(tc.at * float64(time.Minute))))
			got := ""
			if len(fs) > 1 {
				t.Fatalf("%d fights, want at most 1: %+v", len(fs), fs)
			}
			if len(fs) == 1 {
				f := fs[0]
				if f.Object != deploy || f.Field != "/spec/replicas" {
					t.Errorf("fight on %+v %s", f.Object, f.Field)
				}
				got = fmt.Sprintf("%s=%s %s=%s flips=%d period=%s", f.EngineManager, f.EngineValue, f.Manager, f.Value, f.Flips, f.Period)
			}
			if got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestRevertsCounted(t *testing.T) {
	d := New(Config{})
	var reverts int
	for _, s := range []step{{"kustomize-controller", "3", 0}, {"kubectl", "5", 1}, {"kustomize-controller", "3", 2}, {"kustomize-controller", "3", 3}, {"kubectl", "5", 4}, {"kustomize-controller", "3", 5}} {
		if d.Observe(deploy, "/spec/replicas", s.write()) {
			reverts++
		}
	}
	if reverts != 2 || d.Reverts("u1", "/spec/replicas") != 2 {
		t.Errorf("reverts = %d (tracked %d), want 2", reverts, d.Reverts("u1", "/spec/replicas"))
	}
}

func TestSecretValuesNeverReported(t *testing.T) {
	secret := Object{UID: "s1", Kind: "Secret", Namespace: "shop", Name: "db"}
	d := New(Config{})
	for i, v := range []string{"hunter2", "letmein", "hunter2", "letmein"} {
		m := "kustomize-controller"
		if i%2 == 1 {
			m = "kubectl"
		}
		d.Observe(secret, "/data/password", Write{Manager: m, Engine: i%2 == 0, Hash: "h" + v, Value: v, Time: t0.Add(time.Duration(i) * time.Minute)})
	}
	fs := d.Fights(t0.Add(4 * time.Minute))
	if len(fs) != 1 {
		t.Fatalf("want the fight over a Secret's field to be seen (by hash), got %d", len(fs))
	}
	if s := fmt.Sprintf("%+v", fs[0]); strings.Contains(s, "hunter2") || strings.Contains(s, "letmein") {
		t.Errorf("secret value leaked: %s", s)
	}
	if fs[0].Value != Masked || fs[0].EngineValue != Masked {
		t.Errorf("values %q %q, want %q", fs[0].EngineValue, fs[0].Value, Masked)
	}
}

func TestForgetAndObjectsSeparate(t *testing.T) {
	d := New(Config{})
	other := deploy
	other.UID = "u2"
	for i := 0; i < 4; i++ {
		m, v := "kustomize-controller", "3"
		if i%2 == 1 {
			m, v = "kubectl", "5"
		}
		d.Observe(deploy, "/spec/replicas", step{m, v, float64(i)}.write())
		// The other object sees only half of the flips.
		if i < 2 {
			d.Observe(other, "/spec/replicas", step{m, v, float64(i)}.write())
		}
	}
	if fs := d.Fights(t0.Add(4 * time.Minute)); len(fs) != 1 || fs[0].Object.UID != "u1" {
		t.Fatalf("fights %+v, want one on u1", fs)
	}
	d.Forget("u1")
	if fs := d.Fights(t0.Add(4 * time.Minute)); len(fs) != 0 {
		t.Errorf("forgotten object still fights: %+v", fs)
	}
}

func TestBounded(t *testing.T) {
	d := New(Config{MaxWrites: 8, MaxFields: 4, MaxObjects: 10})
	for o := 0; o < 50; o++ {
		obj := Object{UID: fmt.Sprint("u", o), Kind: "ConfigMap", Namespace: "ns", Name: fmt.Sprint("cm", o)}
		for f := 0; f < 20; f++ {
			for i := 0; i < 30; i++ {
				d.Observe(obj, fmt.Sprint("/data/k", f), Write{Manager: "m", Engine: i%2 == 0, Hash: fmt.Sprint(i % 2), Time: t0.Add(time.Duration(o*1000+f*30+i) * time.Second)})
			}
		}
	}
	checkBounds(t, d)
	// The most recently written object survives eviction and still fights.
	if fs := d.Fights(t0.Add(50000 * time.Second)); len(fs) == 0 || fs[len(fs)-1].Object.UID == "u0" {
		t.Errorf("eviction kept the wrong objects: %d fights", len(fs))
	}
}

func checkBounds(t *testing.T, d *Detector) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.objects) > d.cfg.MaxObjects {
		t.Errorf("%d objects > cap %d", len(d.objects), d.cfg.MaxObjects)
	}
	for _, st := range d.objects {
		if len(st.fields) > d.cfg.MaxFields {
			t.Errorf("%d fields > cap %d", len(st.fields), d.cfg.MaxFields)
		}
		for _, fs := range st.fields {
			if len(fs.writes) > d.cfg.MaxWrites {
				t.Errorf("%d writes > cap %d", len(fs.writes), d.cfg.MaxWrites)
			}
		}
	}
}

// FuzzDetector drives the detector with arbitrary write sequences and checks
// the properties that must hold for any input: bounded memory, a fight has
// at least Flips flips within the window and both sides named, flips never
// exceed the writes that could make them, a Secret's values never come out,
// and a single revert never makes a fight at the default threshold.
func FuzzDetector(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 0, 1}, uint8(3))
	f.Add([]byte{0, 1, 0}, uint8(3))
	f.Add([]byte{0x10, 0x21, 0x30, 0x41, 0xf0, 0xf1, 0, 1}, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, flips uint8) {
		cfg := Config{Flips: int(flips%5) + 1, Window: 10 * time.Minute, MaxWrites: 6, MaxFields: 3, MaxObjects: 4}
		d := New(cfg)
		now := t0
		engineWrites := map[string]int{}
		for i, b := range data {
			// bit 0: engine or not; bits 1-2: value; bits 3-4: object;
			// bits 5-6: field; bit 7: a long pause.
			engine := b&1 == 0
			val := fmt.Sprint((b >> 1) & 3)
			objN := (b >> 3) & 3
			obj := Object{UID: fmt.Sprint("u", objN), Kind: "Deployment", Name: fmt.Sprint("d", objN)}
			if objN == 3 {
				obj.Kind = "Secret"
				val = "SECRET" + val
			}
			field := fmt.Sprint("/f", (b>>5)&3)
			if b&0x80 != 0 {
				now = now.Add(7 * time.Minute)
			} else {
				now = now.Add(time.Duration(i%7) * time.Second)
			}
			m := "kubectl"
			if engine {
				m = "kustomize-controller"
				engineWrites[obj.UID+field]++
			}
			d.Observe(obj, field, Write{Manager: m, Engine: engine, Hash: val, Value: val, Time: now})
			checkBounds(t, d)
		}
		for _, fg := range d.Fights(now) {
			if fg.Flips < cfg.Flips {
				t.Fatalf("fight with %d flips < %d", fg.Flips, cfg.Flips)
			}
			if fg.Flips > cfg.MaxWrites-1 {
				t.Fatalf("%d flips from at most %d writes", fg.Flips, cfg.MaxWrites)
			}
			if fg.Manager == "" || fg.EngineManager == "" {
				t.Fatalf("fight without both sides: %+v", fg)
			}
			if fg.First.After(fg.Last) || now.Sub(fg.First) > cfg.Window {
				t.Fatalf("flips outside the window: %+v (now %s)", fg, now)
			}
			if strings.Contains(fg.Value+fg.EngineValue, "SECRET") {
				t.Fatalf("secret value reported: %+v", fg)
			}
			// A fight at >= 3 flips needs the engine to have written
			// at least twice (two reverts or a write and a revert).
			if cfg.Flips >= 3 && engineWrites[fg.Object.UID+fg.Field] < 2 {
				t.Fatalf("fight with %d engine writes: %+v", engineWrites[fg.Object.UID+fg.Field], fg)
			}
		}
	})
}

func TestCheckAnnouncesOnce(t *testing.T) {
	d := New(Config{})
	steps := []step{{"kustomize-controller", "3", 0}, {"kubectl", "5", 1}, {"kustomize-controller", "3", 2}, {"kubectl", "5", 3}, {"kustomize-controller", "3", 4}}
	var news []int
	for i, s := range steps {
		d.Observe(deploy, "/spec/replicas", s.write())
		if f, isNew, ok := d.Check("u1", "/spec/replicas", s.write().Time); ok && isNew {
			news = append(news, i)
			if f.EngineManager != "kustomize-controller" || f.Manager != "kubectl" {
				t.Errorf("fight sides %q %q", f.EngineManager, f.Manager)
			}
		}
	}
	if fmt.Sprint(news) != "[3]" {
		t.Errorf("announced at steps %v, want [3] (the third flip, once)", news)
	}
	// Calm for longer than the window: no fight, and a new one is new.
	if _, _, ok := d.Check("u1", "/spec/replicas", t0.Add(30*time.Minute)); ok {
		t.Error("fight still reported after the window")
	}
}
