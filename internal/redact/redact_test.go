package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/itchyny/gojq"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

func secret(data, stringData map[string]any, lastApplied string) map[string]any {
	obj := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db"}}
	if data != nil {
		obj["data"] = data
	}
	if stringData != nil {
		obj["stringData"] = stringData
	}
	if lastApplied != "" {
		obj["metadata"].(map[string]any)["annotations"] = map[string]any{LastAppliedAnnotation: lastApplied, "team": "db"}
	}
	return obj
}

func TestObjectMasksDataStringDataAndLastApplied(t *testing.T) {
	obj := secret(map[string]any{"token": "aHVudGVyMg=="}, map[string]any{"pw": "hunter2"},
		`{"apiVersion":"v1","kind":"Secret","stringData":{"pw":"hunter2"},"data":{"token":"aHVudGVyMg=="}}`)
	Object(obj)
	b, _ := json.Marshal(obj)
	if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "aHVudGVyMg") {
		t.Fatalf("value left: %s", b)
	}
	want := `{"apiVersion":"v1","data":{"token":"***"},"kind":"Secret","stringData":{"pw":"***"}}` + "\n"
	if got := obj["metadata"].(map[string]any)["annotations"].(map[string]any)[LastAppliedAnnotation]; got != want {
		t.Errorf("last-applied = %q, want %q", got, want)
	}
	if got := obj["metadata"].(map[string]any)["annotations"].(map[string]any)["team"]; got != "db" {
		t.Errorf("plain annotation changed: %v", got)
	}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "v"}}
	Object(cm)
	if cm["data"].(map[string]any)["k"] != "v" {
		t.Error("a ConfigMap was masked")
	}
}

func TestPairFollowsKubectlDiff(t *testing.T) {
	live := secret(map[string]any{"same": "YQ==", "changed": "Yg==", "gone": "Yw=="}, nil, "")
	desired := secret(map[string]any{"same": "YQ==", "changed": "ZA==", "new": "ZQ=="}, nil, "")
	Pair(live, desired)
	if diff := cmp.Diff(map[string]any{"same": Mask, "changed": MaskBefore, "gone": Mask}, live["data"]); diff != "" {
		t.Errorf("live (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"same": Mask, "changed": MaskAfter, "new": Mask}, desired["data"]); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
}

// jqErr runs a jq expression the way Argo CD does (del(EXPR)) and returns
// gojq's own error text.
func jqErr(t *testing.T, expr string, v any) string {
	t.Helper()
	q, err := gojq.Parse("del(" + expr + ")")
	if err != nil {
		t.Fatal(err)
	}
	it := q.Run(v)
	out, _ := it.Next()
	e, ok := out.(error)
	if !ok {
		t.Fatalf("%s did not fail: %v", expr, out)
	}
	return e.Error()
}

func TestJQErrorHidesEveryPreview(t *testing.T) {
	obj := map[string]any{"data": map[string]any{"pw": "c3VwZXJzZWNyZXQ="}, "s": "supersecret"}
	for _, expr := range []string{
		`.data.pw | .[]`,            // cannot iterate over: string ("...")
		`.data | keys[0] | .[]`,     // cannot iterate over: string ("pw") -- a key, still hidden
		`.data | .[0]`,              // expected an array but got: object ({...})
		`.s | error`,                // error: supersecret
		`.s | error("x" + .)`,       // error: xsupersecret
		`.data.pw | keys`,           // keys cannot be applied to: string (...)
		`.data.pw | test(1)`,        // test(1) cannot be applied to: ...
		`.data.pw | . - 1`,          // cannot subtract: string (...) and number (1)
		`.data.pw | .[] as $x | $x`, // iterate
	} {
		raw := jqErr(t, expr, obj)
		got := JQError(raw)
		if strings.Contains(got, "supersecret") || strings.Contains(got, "c3VwZXJ") {
			t.Errorf("%s: %q -> %q still quotes the value", expr, raw, got)
		}
		if !strings.Contains(got, Mask) {
			t.Errorf("%s: %q -> %q: nothing masked", expr, raw, got)
		}
	}
	if got := JQError("cannot iterate over: null"); got != "cannot iterate over: null" {
		t.Errorf("null rewritten: %q", got)
	}
	if got := JQError("length mismatch"); got != "length mismatch" {
		t.Errorf("value-less message rewritten: %q", got)
	}
	base := errors.New("cannot iterate over: string (\"supersecret\")")
	if err := JQErr(base); !errors.Is(err, base) || strings.Contains(err.Error(), "supersecret") {
		t.Errorf("JQErr = %v", err)
	}
}

func TestScrubberFindsEveryEncoding(t *testing.T) {
	s := NewScrubber()
	s.Add(secret(map[string]any{"token": "bWFya2VyLXRva2Vu"}, map[string]any{"pw": "marker-pw\nsecond-line-x"},
		`{"stringData":{"old":"marker-old"}}`))
	s.Add(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "not-a-secret"}})
	for _, in := range []string{
		"bWFya2VyLXRva2Vu",                 // data as stored
		"marker-token",                     // data decoded
		"marker-pw",                        // stringData as written
		"bWFya2VyLXB3CnNlY29uZC1saW5lLXg=", // stringData encoded
		`marker-pw\nsecond-line-x`,         // JSON-escaped
		"second-line-x",                    // one line of it
		"marker-old",                       // in last-applied
	} {
		if got := s.String("x " + in + " y"); got != "x "+Mask+" y" {
			t.Errorf("String(%q) = %q", in, got)
		}
	}
	if got := s.String("not-a-secret"); got != "not-a-secret" {
		t.Errorf("ConfigMap value scrubbed: %q", got)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, s)
	_, _ = w.Write([]byte("a marker-"))
	_, _ = w.Write([]byte("token b\nc marker-old"))
	if buf.String() != "a *** b\n" {
		t.Errorf("after first line: %q", buf.String())
	}
	_ = w.Flush()
	if buf.String() != "a *** b\nc ***" {
		t.Errorf("after flush: %q", buf.String())
	}
	if err := s.Err(errors.New("bad marker-token")); err.Error() != "bad ***" {
		t.Errorf("Err = %v", err)
	}
	var nilS *Scrubber
	if nilS.String("marker-token") != "marker-token" || nilS.Err(nil) != nil {
		t.Error("nil Scrubber changed text")
	}
}

func TestScrubberReport(t *testing.T) {
	r := &model.Report{
		Resource: model.ResourceID{Kind: "Secret", Version: "v1", Name: "db"},
		Drifts: []model.FieldDrift{
			{Path: "/data/pw", Desired: "YQ==", Live: "Yg=="},
			{Path: "/metadata/annotations/x", Desired: "leaky-value-1", Live: nil},
			{Path: "/metadata/labels/app", Desired: "web", Live: "api",
				Verdicts: []model.Verdict{{Reason: "quotes leaky-value-1"}}},
		},
		Notes: []model.Note{{Message: "jq: cannot iterate over leaky-value-1"}},
	}
	s := NewScrubber()
	s.Add(secret(nil, map[string]any{"x": "leaky-value-1"}, ""))
	s.Report(r)
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "leaky-value-1") || strings.Contains(string(b), "YQ==") {
		t.Errorf("report leaks: %s", b)
	}
	if r.Drifts[2].Desired != "web" {
		t.Errorf("label value masked: %v", r.Drifts[2].Desired)
	}
}
