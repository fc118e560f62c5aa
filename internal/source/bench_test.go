package source

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkDecode reads a 200-document stream of the kind audit and compare
// load from repositories.
func BenchmarkDecode(b *testing.B) {
	one, err := os.ReadFile("testdata/manifests/app.yaml")
	if err != nil {
		b.Fatal(err)
	}
	data := []byte(strings.Repeat(string(one)+"\n---\n", 100))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		docs, err := Decode(data, "bench.yaml")
		if err != nil || len(docs) != 200 {
			b.Fatalf("%d docs, %v", len(docs), err)
		}
	}
}

// BenchmarkAliasBombRefusal: what refusing a billion-laughs document costs.
func BenchmarkAliasBombRefusal(b *testing.B) {
	bomb := []byte(billionLaughs())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(bomb, "bomb.yaml"); err == nil {
			b.Fatal("bomb accepted")
		}
	}
}
