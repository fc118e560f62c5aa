package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
