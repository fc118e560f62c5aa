package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// protoBody encodes a ConfigMapList of n items with apimachinery's own
// protobuf serializer, as the API server does; it returns the body and
// each item's object message.
func protoBody(t testing.TB, n int, rv, cont string) ([]byte, [][]byte) {
	t.Helper()
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	var items [][]byte
	for i := range n {
		cm := corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "shop", Labels: map[string]string{"app": "web"}},
			Data:       map[string]string{"k": strings.Repeat("v", i*50)},
		}
		list.Items = append(list.Items, cm)
		b, err := cm.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, b)
	}
	info, _ := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), ProtobufContentType)
	enc := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	var buf bytes.Buffer
	if err := enc.Encode(list, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), items
}

func TestDecodeProtoListStreamsItems(t *testing.T) {
	body, want := protoBody(t, 40, "42", "abc")
	var got [][]byte
	// A small buffer: items span many reads.
	rv, cont, err := decodeBody(bufio.NewReaderSize(bytes.NewReader(body), 16), func(raw []byte) error {
		got = append(got, append([]byte(nil), raw...)) // copy: raw is reused
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rv != "42" || cont != "abc" || len(got) != len(want) {
		t.Fatalf("rv=%q continue=%q items=%d", rv, cont, len(got))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("item %d differs", i)
		}
	}
}

func TestDecodeProtoListErrors(t *testing.T) {
	body, _ := protoBody(t, 3, "1", "")
	for cut := 5; cut < len(body); cut += 7 {
		_, _, err := decodeBody(bytes.NewReader(body[:cut]), func([]byte) error { return nil })
		if err == nil {
			t.Fatalf("body cut at %d of %d: no error", cut, len(body))
		}
	}
	stop := fmt.Errorf("stop")
	if _, _, err := decodeBody(bytes.NewReader(body), func([]byte) error { return stop }); err == nil || err.Error() != "stop" {
		t.Errorf("caller error = %v", err)
	}
}

// protoServer answers configmaps in protobuf when asked, JSON otherwise.
type protoServer struct {
	accept []string
	body   []byte
}

func (s *protoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.accept = append(s.accept, r.Header.Get("Accept"))
	if strings.HasPrefix(r.Header.Get("Accept"), ProtobufContentType) {
		w.Header().Set("Content-Type", ProtobufContentType)
		_, _ = w.Write(s.body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"a"}}]}`)
}

func TestStreamerProtobuf(t *testing.T) {
	body, want := protoBody(t, 5, "8", "")
	api := &protoServer{body: body}
	_, s := testStreamer(t, api)
	n := 0
	rv, err := s.List(context.Background(), cmMapping, "shop", StreamOptions{Protobuf: true}, func(raw []byte) error {
		if !bytes.Equal(raw, want[n]) {
			t.Errorf("item %d differs", n)
		}
		n++
		return nil
	})
	if err != nil || rv != "8" || n != 5 {
		t.Fatalf("rv=%q n=%d err=%v", rv, n, err)
	}
	// A kind client-go's scheme does not know (a CR) is asked as JSON.
	m := *cmMapping
	m.GroupVersionKind.Group, m.Resource.Group = "example.com", "example.com"
	n = 0
	if rv, err := s.List(context.Background(), &m, "shop", StreamOptions{Protobuf: true}, func(raw []byte) error {
		n++
		return nil
	}); err != nil || rv != "9" || n != 1 {
		t.Fatalf("CR: rv=%q n=%d err=%v", rv, n, err)
	}
	if len(api.accept) != 2 || !strings.HasPrefix(api.accept[0], ProtobufContentType) || strings.Contains(api.accept[1], "protobuf") {
		t.Errorf("Accept headers %q", api.accept)
	}
}
