package managedfields

import (
	"encoding/json"
	"testing"
)

func mustJSON(t testing.TB, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
