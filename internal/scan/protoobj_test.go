package scan

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-drift/kubectl-drift/internal/testutil"
)

// protoItems decodes a protobuf LIST body captured from the real API server
// (testdata/bench-*.pb, beside bench-*.json: the same first page of the
// same namespace, read once in each encoding) with apimachinery's own
// protobuf serializer, not ours, and returns each item's object message.
func protoItems(t testing.TB, file string) [][]byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), "application/vnd.kubernetes.protobuf")
	if !ok {
		t.Fatal("no protobuf serializer")
	}
	list, _, err := info.Serializer.Decode(body, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(objs))
	for i, o := range objs {
		b, err := o.(interface{ Marshal() ([]byte, error) }).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// jsonToProto re-encodes a JSON object of a built-in kind as the protobuf
// object message the API server sends for it.
func jsonToProto(t testing.TB, k Kind, raw []byte) []byte {
	t.Helper()
	obj, err := scheme.Scheme.New(k.GVK)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		t.Fatal(err)
	}
	b, err := obj.(interface{ Marshal() ([]byte, error) }).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type encodedPair struct {
	name     string
	kind     Kind
	json, pb []byte
}

// realPairs are the same real objects in both encodings: the bench
// captures (each encoding as the server sent it) and the shop captures
// (JSON as sent, protobuf through the Go type).
func realPairs(t *testing.T) []encodedPair {
	var pairs []encodedPair
	for _, c := range []struct {
		kind Kind
		name string
	}{{kindDeployments, "deployments"}, {kindConfigMaps, "configmaps"}} {
		js := testutil.ListItems(t, "testdata", "bench-"+c.name+".json")
		pbs := protoItems(t, "bench-"+c.name+".pb")
		if len(js) != len(pbs) || len(js) < 20 {
			t.Fatalf("%s: %d JSON items, %d protobuf items", c.name, len(js), len(pbs))
		}
		for i := range js {
			pairs = append(pairs, encodedPair{name: "bench " + c.name, kind: c.kind, json: js[i], pb: pbs[i]})
		}
	}
	for k, file := range map[Kind]string{kindDeployments: "list-deployments.json", kindConfigMaps: "list-configmaps.json", kindSecrets: "list-secrets.json"} {
		for _, js := range testutil.ListItems(t, "testdata", file) {
			pairs = append(pairs, encodedPair{name: "shop " + file, kind: k, json: js, pb: jsonToProto(t, k, js)})
		}
	}
	return pairs
}

// TestProtoAndJSONDecodeAlike runs both decoders on identical real objects:
// the first pass keeps the same candidates with the same light objects,
// the full decode gives the same unstructured object, and the report (the
// real engines judging) is the same.
func TestProtoAndJSONDecodeAlike(t *testing.T) {
	in := bothEngines(t)
	var mu sync.Mutex
	reports := 0
	for _, p := range realPairs(t) {
		if !isProto(p.pb) || isProto(p.json) {
			t.Fatalf("%s: isProto wrong", p.name)
		}
		cj, oj, errJ := in.Precheck(p.kind, p.json)
		cp, op, errP := in.Precheck(p.kind, p.pb)
		if errJ != nil || errP != nil {
			t.Fatalf("%s: precheck: %v / %v", p.name, errJ, errP)
		}
		if oj != op || (cj == nil) != (cp == nil) {
			t.Fatalf("%s: precheck owned %v/%v candidate %v/%v", p.name, oj, op, cj != nil, cp != nil)
		}
		if cj != nil && (!reflect.DeepEqual(cj.Light.Object, cp.Light.Object) || cj.Clean != cp.Clean || len(cj.Owners) != len(cp.Owners)) {
			t.Fatalf("%s: light objects differ:\n%s", p.name, cmp.Diff(cj.Light.Object, cp.Light.Object))
		}
		dj, err := Decode(p.kind, p.json)
		if err != nil {
			t.Fatal(err)
		}
		dp, err := Decode(p.kind, p.pb)
		if err != nil {
			t.Fatalf("%s %s: %v", p.name, dj.GetName(), err)
		}
		if !reflect.DeepEqual(dj.Object, dp.Object) {
			t.Fatalf("%s %s: decoded objects differ (-json +protobuf):\n%s", p.name, dj.GetName(), cmp.Diff(dj.Object, dp.Object))
		}
		rj, _, wj, err := in.inspect(context.Background(), &mu, p.kind, p.json)
		if err != nil {
			t.Fatal(err)
		}
		rp, _, wp, err := in.inspect(context.Background(), &mu, p.kind, p.pb)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(wj, wp) || !cmp.Equal(mustJSON(t, rj), mustJSON(t, rp)) {
			t.Fatalf("%s %s: reports differ:\n%s", p.name, dj.GetName(), cmp.Diff(mustJSON(t, rj), mustJSON(t, rp)))
		}
		if rj != nil {
			reports++
		}
	}
	// The captures hold drift (kubectl scale, set image, label, patch): the
	// comparison covered real reports, not only clean objects.
	if reports < 5 {
		t.Errorf("only %d drifted objects compared", reports)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withUnknownField appends a field this client's types do not know (as a
// newer API server would send), at the end of the object message.
func withUnknownField(pb []byte) []byte {
	out := append([]byte(nil), pb...)
	out = protowire.AppendTag(out, 999, protowire.BytesType)
	return protowire.AppendString(out, "from a newer server")
}

func TestDecodeProtoSkew(t *testing.T) {
	pb := protoItems(t, "bench-deployments.pb")[0]
	if _, err := Decode(kindDeployments, withUnknownField(pb)); !errors.Is(err, errProtoSkew) {
		t.Fatalf("err = %v, want errProtoSkew", err)
	}
	if _, err := Decode(kindDeployments, pb[:len(pb)-3]); err == nil {
		t.Fatal("truncated object decoded")
	}
}

// skewSource serves the bench deployments in protobuf, one of them with an
// unknown field, and in JSON on ListJSON.
type skewSource struct {
	t         *testing.T
	jsonLists int
}

func (s *skewSource) List(_ context.Context, _ Kind, _, _ string, fn func([]byte) error) (string, error) {
	for i, pb := range protoItems(s.t, "bench-deployments.pb") {
		if i == 0 { // web-00001: scaled by kubectl, so decoded in full
			pb = withUnknownField(pb)
		}
		if err := fn(pb); err != nil {
			return "", err
		}
	}
	return "1", nil
}

func (s *skewSource) ListJSON(_ context.Context, _ Kind, _, _ string, fn func([]byte) error) (string, error) {
	s.jsonLists++
	for _, js := range testutil.ListItems(s.t, "testdata", "bench-deployments.json") {
		if err := fn(js); err != nil {
			return "", err
		}
	}
	return "1", nil
}

// TestRunListsJSONOnSkew: a kind whose protobuf objects hold unknown fields
// is listed again as JSON, and the result is the JSON one (nothing counted
// twice).
func TestRunListsJSONOnSkew(t *testing.T) {
	src := &skewSource{t: t}
	in := bothEngines(t)
	got, err := Run(context.Background(), src, Options{Kinds: []Kind{kindDeployments}, Inspector: in, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(context.Background(), fileList{t: t, file: "bench-deployments.json"}, Options{Kinds: []Kind{kindDeployments}, Inspector: in, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if src.jsonLists != 1 {
		t.Errorf("JSON lists = %d, want 1", src.jsonLists)
	}
	if got.Stats != want.Stats || got.Stats.Drifted == 0 || mustJSON(t, got) != mustJSON(t, want) {
		t.Errorf("after the fallback %+v, JSON alone %+v", got.Stats, want.Stats)
	}
}

// fileList serves one JSON capture.
type fileList struct {
	t    testing.TB
	file string
}

func (f fileList) List(_ context.Context, _ Kind, _, _ string, fn func([]byte) error) (string, error) {
	for _, js := range testutil.ListItems(f.t, "testdata", f.file) {
		if err := fn(js); err != nil {
			return "", err
		}
	}
	return "1", nil
}
