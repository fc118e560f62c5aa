package compare

import "testing"

func TestAnalyzeJQ(t *testing.T) {
	cases := []struct {
		expr string
		kind JQKind
		ptr  string
	}{
		{".spec.replicas", JQPath, "/spec/replicas"},
		{`.metadata.labels["app.kubernetes.io/version"]`, JQPath, "/metadata/labels/app.kubernetes.io~1version"},
		{".spec.template.spec.containers[0].image", JQPath, "/spec/template/spec/containers/0/image"},
		{`.data."tilde~key"`, JQPath, "/data/tilde~0key"},
		{".webhooks[]?.clientConfig.caBundle", JQIterate, "/webhooks/*/clientConfig/caBundle"},
		{`.spec.template.spec.containers[] | select(.name == "istio-proxy") | .image`, JQSelect, ""},
		{`.spec.containers[] | .image`, JQOther, ""},
		{".spec.x[-1]", JQOther, ""},
		{".spec[", JQInvalid, ""},
	}
	for _, c := range cases {
		got := analyzeJQ(c.expr)
		if got.Kind != c.kind {
			t.Errorf("%s: kind %d want %d (%s)", c.expr, got.Kind, c.kind, got.Reason)
			continue
		}
		if c.ptr != "" && got.Pattern.String() != c.ptr {
			t.Errorf("%s: path %s want %s", c.expr, got.Pattern.String(), c.ptr)
		}
	}
}

func TestPointerRoundTrip(t *testing.T) {
	for _, p := range []string{"", "/spec/replicas", "/metadata/annotations/a~1b~0c", "/x/0"} {
		pp, err := parsePointer(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := pp.Pointer(); !ok || got != p {
			t.Errorf("round trip %q -> %q", p, got)
		}
	}
	for _, bad := range []string{"spec", "/a~2"} {
		if _, err := parsePointer(bad); err == nil {
			t.Errorf("%q: want error", bad)
		}
	}
}

func TestRelatePaths(t *testing.T) {
	set := func(ps ...string) pathSet {
		var out pathSet
		for _, p := range ps {
			if p == "*" {
				out = append(out, analyzeJQ(".webhooks[].clientConfig.caBundle").Pattern)
				continue
			}
			pp, err := parsePointer(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, pp)
		}
		return out
	}
	cases := []struct {
		a, b pathSet
		want Relation
	}{
		{set("/spec/replicas"), set("/spec/replicas"), RelEqual},
		{set("/spec"), set("/spec", "/spec/replicas"), RelEqual},
		{set("/metadata/annotations/x"), set("/metadata/annotations"), RelSubset},
		{set("/a", "/b"), set("/b", "/c"), RelOverlap},
		{set("/a"), set("/b"), RelDisjoint},
		{set("*"), set("/webhooks/0/clientConfig/caBundle"), RelSuperset},
		{set(""), set("/anything"), RelSuperset},
	}
	for i, c := range cases {
		if got := relatePaths(c.a, c.b); got != c.want {
			t.Errorf("case %d: %s want %s", i, got, c.want)
		}
	}
}
