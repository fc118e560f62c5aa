package output

import (
	"bytes"
	"strings"
	"testing"
)

type listDoc struct {
	Kind  string           `json:"kind"`
	Items []map[string]any `json:"items"`
	After int              `json:"after"`
}

// TestPrintJSONList: the streamed list is PrintObject's JSON byte for
// byte, with items and without; a head whose items are not null is an
// error, not a document without them.
func TestPrintJSONList(t *testing.T) {
	for _, items := range [][]map[string]any{nil, {{"a": 1}}, {{"a": 1}, {"b": []any{"x", "y"}}}} {
		var want, got bytes.Buffer
		if err := PrintObject(&want, JSON, listDoc{Kind: "L", Items: append([]map[string]any{}, items...), After: 2}); err != nil {
			t.Fatal(err)
		}
		if err := PrintJSONList(&got, listDoc{Kind: "L", After: 2}, items); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d items:\n got %q\nwant %q", len(items), got.String(), want.String())
		}
	}
	err := PrintJSONList(&bytes.Buffer{}, listDoc{Items: []map[string]any{}}, []int{1})
	if err == nil || !strings.Contains(err.Error(), "no null items field") {
		t.Errorf("head with items set: %v", err)
	}
}
