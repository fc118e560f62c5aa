package argocd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/jq"
	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// failingSecretRules are jq path expressions that fail on a Secret's
// values, one or more per gojq error form a builtin can produce, on the
// value as stored (base64), decoded, and transformed (lowercased,
// prefixed, re-encoded): every form that once printed a value's first
// 24 bytes, or the whole value, in a note.
var failingSecretRules = []string{
	`.data[] | select(tonumber > 0)`,
	`.data[] | select(@base64d | tonumber > 0)`,
	`.data[] | select(@base64d | ascii_downcase | tonumber > 0)`,
	`.data[] | select(@base64d | fromjson)`,
	`.data[] | select(fromjson)`,
	`.data[] | select(@base64d | strptime("%Y-%m-%d"))`,
	`.data[] | select(@base64d | error)`,
	`.data[] | select(@base64d | error("x" + .))`,
	`.data[] | select(@base64d | ascii_downcase | error)`,
	`.data[] | select(@base64d | halt_error)`,
	`.data[] | select(keys)`,
	`.data[] | select(@base64d | implode)`,
	`.data[] | select(@base64d | test(. + "("))`,
	`.data[] | select(@base64d | test("(" + .))`,
	`.data[] | select(@base64d | splits("[" + .))`,
	`.data[] | select(@base64d | . - 1)`,
	`.data[] | select(-(@base64d))`,
	`.data[] | select(@base64d | .[])`,
	`.data[] | select(@base64d | .["k"])`,
	`.data[] | select(@base64d | getpath(["a"]))`,
	`.data[] | select(@base64d | ltrimstr(1) | .[0:"x"])`,
	`.data[] | select(@base64d | . * 1e18)`,
	`.data[] | select(@base64d | . / 0)`,
	`.data[] | select(@base64d | {(.): 1} | .[0])`,
	`.data[] | select(@base64d | [.] | implode)`,
	`.data[] | select(@base64d | mktime)`,
	`.data[] | select(@base64d | todate)`,
	`.data[] | select(@base64d | @base32d)`,
	`.data[] | select(@base64d | tojson | fromjson | tonumber)`,
	`.data[] | select(@base64d | ascii_downcase | @base64d | fromjson)`,
	`.data[] | select(@base64d | ("x" + .) | tonumber)`,
	`.data[] | select(@base64d | flatten(-1))`,
	`.data[] | select(@base64d | setpath([.]; 1))`,
	`.data[] | select(@base64d | ltrimstr(.) | error(.))`,
	`.data[] | select(@base64d | [.] | @csv | tonumber)`,
	`.data[] | select(@base64d | [{}] | @tsv)`,
	`.data[] | select(@base64d | indices(1))`,
}

// judgeSecretJQ judges a Secret whose password (data and desired
// stringData) is value under an Application rule of one jq expression,
// and returns the report as JSON: everything a printer could print.
func judgeSecretJQ(t testing.TB, value, expr string) (string, *model.Report) {
	t.Helper()
	dir := "testdata/parity/cases/secret-data-drift/"
	read := func(name string) *unstructured.Unstructured {
		b, err := os.ReadFile(dir + name)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		j, err := yaml.YAMLToJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		return u
	}
	live, desired := read("live.json"), read("desired.yaml")
	enc := base64.StdEncoding.EncodeToString([]byte(value))
	live.Object["data"] = map[string]any{"password": enc}
	desired.Object["data"] = map[string]any{"token": enc}
	desired.Object["stringData"] = map[string]any{"password": value}
	app := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "parity", "namespace": "argocd"},
		"spec": map[string]any{"project": "default",
			"destination":       map[string]any{"server": "https://kubernetes.default.svc", "namespace": "argo-parity"},
			"ignoreDifferences": []any{map[string]any{"kind": "Secret", "jqPathExpressions": []any{expr}}}}}}
	a, err := New(Options{Inputs: []Input{{Object: app}}})
	if err != nil {
		t.Fatal(err)
	}
	rep := model.NewReport(model.ResourceID{Version: "v1", Kind: "Secret", Namespace: live.GetNamespace(), Name: live.GetName()}, model.SourceFile)
	rep.Drifts = []model.FieldDrift{{Path: "/data/password", Change: model.Changed}}
	if err := a.Judge(context.Background(), model.JudgeInput{Live: live, Desired: desired, Report: rep}); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), rep
}

// valueForms are the texts of value a leak would show: as written, as
// stored, lowercased (ascii_downcase), in 6-byte windows (gojq's preview
// cut any of them at 24 bytes).
func valueForms(value string) []string {
	var forms []string
	for _, f := range []string{value, base64.StdEncoding.EncodeToString([]byte(value)), strings.ToLower(value)} {
		if len(f) < 6 {
			continue
		}
		for i := 0; i+6 <= len(f); i += 3 {
			forms = append(forms, f[i:i+6])
		}
	}
	return forms
}

// secretValue is a value of n bytes of upper-case letters and digits:
// no window of it, stored or lowercased, occurs in the texts the judge
// writes itself.
func secretValue(r *rand.Rand, n int) string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// jqClassRE finds the redacted error in a jq note: an optional builtin
// name (spelt by the rule), then the class.
var jqClassRE = regexp.MustCompile(`JQ patch returned error: jq ((?:@?[A-Za-z_][A-Za-z0-9_]*: )?)(.*?); Argo CD skips`)

// jqNotes are the jq notes of a report, the texts a failing rule leaves,
// with the error's class checked (jq.IsClass), its builtin's name
// checked to be spelt by the rule, and both replaced by CLASS: which
// builtin fails, and how, may depend on the value (a string that is not
// base64 fails in @base64d, one that is in fromjson); nothing else may.
func jqNotes(t testing.TB, rep *model.Report) []string {
	t.Helper()
	var out []string
	for _, n := range rep.Notes {
		if n.Reason != "jq-error" && n.Reason != "jq-timeout" {
			continue // jq-no-match and the like quote no value
		}
		msg := n.Message
		if m := jqClassRE.FindStringSubmatchIndex(msg); m != nil {
			if name := strings.TrimSuffix(msg[m[2]:m[3]], ": "); name != "" && !strings.Contains(msg[:m[2]], name) {
				t.Fatalf("jq note names %q, which its rule does not spell: %s", name, msg)
			}
			if class := msg[m[4]:m[5]]; !jq.IsClass(class) {
				t.Fatalf("jq note says %q, not a class: %s", class, msg)
			}
			msg = msg[:m[2]] + "CLASS" + msg[m[5]:]
		}
		out = append(out, n.Reason+": "+msg)
	}
	return out
}

// checkSecretJQ runs expr on two Secrets whose values differ in every
// byte and have the same length: the jq notes must say the same thing of
// both (so no byte of either is in them, whatever its length), and no
// window of either value may appear anywhere in the report.
func checkSecretJQ(t testing.TB, a, b, expr string) (failed bool) {
	t.Helper()
	outA, repA := judgeSecretJQ(t, a, expr)
	outB, repB := judgeSecretJQ(t, b, expr)
	for _, c := range []struct{ out, value string }{{outA, a}, {outB, b}} {
		for _, f := range valueForms(c.value) {
			if strings.Contains(c.out, f) {
				t.Fatalf("%s on a %d-byte value: report holds %q of it:\n%s", expr, len(c.value), f, c.out)
			}
		}
	}
	na, nb := jqNotes(t, repA), jqNotes(t, repB)
	if len(na) > 0 && len(nb) > 0 && strings.Join(na, "\n") != strings.Join(nb, "\n") {
		t.Fatalf("%s: the notes depend on the value:\n%q\n%q", expr, na, nb)
	}
	return len(na) > 0 || len(nb) > 0
}

// TestSecretJQErrorsTellNoValue runs every failing rule on values of 1 to
// 4,096 bytes. Each rule must fail at least once (else it tests nothing)
// and no note may carry a byte of the value.
func TestSecretJQErrorsTellNoValue(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 1))
	for _, expr := range failingSecretRules {
		failedOnce := false
		for _, n := range []int{1, 5, 22, 24, 29, 64, 4096} {
			a, b := secretValue(r, n), secretValue(r, n)
			for a == b {
				b = secretValue(r, n)
			}
			if checkSecretJQ(t, a, b, expr) {
				failedOnce = true
			}
		}
		if !failedOnce {
			t.Errorf("%s never failed: it tests no error form", expr)
		}
	}
}

// FuzzSecretJQErrorTellsNoValue: any value, any of the failing rules.
// `go test -run '^$' -fuzz FuzzSecretJQErrorTellsNoValue ./internal/argocd/`
func FuzzSecretJQErrorTellsNoValue(f *testing.F) {
	f.Add([]byte("hunter2"), uint8(0))
	f.Add([]byte(strings.Repeat("Z", 30)), uint8(6))
	f.Add([]byte(`{"a":`), uint8(4))
	f.Add([]byte("2026-13-45"), uint8(5))
	f.Fuzz(func(t *testing.T, raw []byte, pick uint8) {
		if len(raw) == 0 || len(raw) > 4096 {
			return
		}
		expr := failingSecretRules[int(pick)%len(failingSecretRules)]
		// b and c differ from a in every byte and keep its length: where
		// two of them fail, their notes may not differ (a note that
		// quoted any byte of its value would).
		var notes []string
		for _, flip := range []byte{0, 1, 2} {
			v := make([]byte, len(raw))
			for i, c := range raw {
				v[i] = c ^ flip
			}
			_, rep := judgeSecretJQ(t, string(v), expr)
			if n := strings.Join(jqNotes(t, rep), "\n"); n != "" {
				notes = append(notes, n)
			}
		}
		for _, n := range notes[min(1, len(notes)):] {
			if n != notes[0] {
				t.Fatalf("%s: the notes depend on the value:\n%q\n%q", expr, notes[0], n)
			}
		}
	})
}
