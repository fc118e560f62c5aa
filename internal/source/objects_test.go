package source

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDecodeObjectsMatchesDecode: the JSON path of DecodeObjects gives the
// same objects as the YAML path (numbers as int64/float64, Lists
// flattened), keeps document lines and drops only the YAML nodes.
func TestDecodeObjectsMatchesDecode(t *testing.T) {
	for line, data := range map[int]string{
		1: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"n":"1"},"x":{"i":3,"f":1.5,"big":12345678901,"neg":-2}}`,
		3: "\n\n" + `{"apiVersion":"v1","kind":"List","items":[
  {"apiVersion":"v1","kind":"Service","metadata":{"name":"b"},"spec":{"ports":[{"port":80}]}},
  {"apiVersion":"v1","kind":"Service","metadata":{"name":"c"}}]}`,
	} {
		want, err := Decode([]byte(data), "f.json")
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeObjects([]byte(data), "f.json")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("got %d documents, Decode %d", len(got), len(want))
		}
		for i := range got {
			if d := cmp.Diff(want[i].Object.Object, got[i].Object.Object); d != "" {
				t.Errorf("document %d (-Decode +DecodeObjects):\n%s", i, d)
			}
			if got[i].Node != nil {
				t.Errorf("document %d keeps its YAML node", i)
			}
			// List items carry the List's line: JSON has no nodes.
			if got[i].Line != line {
				t.Errorf("document %d at line %d, want %d", i, got[i].Line, line)
			}
		}
	}
	// Several JSON objects in one stream (kubectl get -o json | jq -c).
	if got, err := DecodeObjects([]byte(`{"apiVersion":"v1","kind":"A"}`+"\n"+`{"apiVersion":"v1","kind":"B"}`), "s.json"); err != nil || len(got) != 2 || got[1].Line != 2 {
		t.Errorf("JSON stream: %d documents, %v", len(got), err)
	}
	if _, err := DecodeObjects([]byte(`{"apiVersion":"v1","kind":`), "bad.json"); err == nil || !strings.Contains(err.Error(), "bad.json:1: invalid JSON") {
		t.Errorf("truncated JSON: %v", err)
	}
}

// TestReadFileBounds: over-size files are refused before reading, endless
// devices are cut at the limit, and a FIFO without a writer does not block.
func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 2048); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big, nil, 1024); err == nil || err.Error() != big+": file is 2.0 KiB, over the 1.0 KiB limit" {
		t.Errorf("big file: %v", err)
	}
	if _, err := ReadFile("/dev/zero", nil, 1024); err == nil || !strings.Contains(err.Error(), "input is over the 1.0 KiB limit") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := ReadFile("-", strings.NewReader(strings.Repeat("a", 2000)), 1024); err == nil || !strings.HasPrefix(err.Error(), "stdin: ") {
		t.Errorf("stdin: %v", err)
	}
	if _, err := ReadFile(dir, nil, 0); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	data, err := ReadFile(fifo, nil, 0)
	if err != nil || len(data) != 0 {
		t.Errorf("FIFO without writer: %q, %v", data, err)
	}
}
