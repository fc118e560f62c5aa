package model

import (
	"encoding/json"
	"testing"
)

func TestValueKind(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"x", "string"},
		{true, "boolean"},
		{int64(1), "number"},
		{1.5, "number"},
		{json.Number("2"), "number"},
		{map[string]any{}, "mapping"},
		{[]any{}, "sequence"},
		{struct{}{}, "struct {}"},
	} {
		if got := ValueKind(tc.v, "mapping", "sequence"); got != tc.want {
			t.Errorf("ValueKind(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
