package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestProject(t *testing.T) {
	parse := func(s string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name, desired, live, want string
	}{{
		name:    "server-set fields and status are dropped",
		desired: `{spec: {replicas: 2}}`,
		live:    `{spec: {replicas: 3, revisionHistoryLimit: 10}, status: {ready: 1}}`,
		want:    `{spec: {replicas: 3}}`,
	}, {
		name:    "a field desired sets but live lacks stays absent",
		desired: `{spec: {replicas: 2, paused: false}}`,
		live:    `{spec: {replicas: 2}}`,
		want:    `{spec: {replicas: 2}}`,
	}, {
		name:    "list items are projected by position; extra live items are kept",
		desired: `{ports: [{port: 80}]}`,
		live:    `{ports: [{port: 80, protocol: TCP}, {port: 443, protocol: TCP}]}`,
		want:    `{ports: [{port: 80}, {port: 443, protocol: TCP}]}`,
	}, {
		name:    "a value of another type than desired's is live's, whole",
		desired: `{a: {b: 1}, c: [1], d: x}`,
		live:    `{a: [1, 2], c: {e: 1}, d: {f: 1}}`,
		want:    `{a: [1, 2], c: {e: 1}, d: {f: 1}}`,
	}, {
		name:    "a null live value is kept as null",
		desired: `{a: {b: 1}}`,
		live:    `{a: null}`,
		want:    `{a: null}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ProjectMap(parse(tc.desired), parse(tc.live))
			if d := cmp.Diff(parse(tc.want), got); d != "" {
				t.Errorf("ProjectMap (-want +got):\n%s", d)
			}
		})
	}
}
