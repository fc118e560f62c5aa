package output

import (
	"errors"
	"strings"
	"testing"
	"text/tabwriter"
)

// failAfter accepts n writes, then fails every write.
type failAfter struct {
	n   int
	buf strings.Builder
}

var errBrokenPipe = errors.New("broken pipe")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errBrokenPipe
	}
	f.n--
	return f.buf.Write(p)
}

func TestStickyWriterKeepsFirstError(t *testing.T) {
	dst := &failAfter{n: 1}
	w := NewStickyWriter(dst)
	w.Println("one")
	w.Printf("%s\n", "two")
	w.Println("three")
	if err := w.Flush(); !errors.Is(err, errBrokenPipe) {
		t.Fatalf("Flush() = %v, want %v", err, errBrokenPipe)
	}
	if got := dst.buf.String(); got != "one\n" {
		t.Errorf("written %q, want only the line before the failure", got)
	}
	if _, err := w.Write([]byte("four")); !errors.Is(err, errBrokenPipe) {
		t.Errorf("Write after a failure = %v, want the first error", err)
	}
}

func TestStickyWriterFlushesTabwriter(t *testing.T) {
	var out strings.Builder
	w := NewStickyWriter(tabwriter.NewWriter(&out, 0, 8, 2, ' ', 0))
	w.Println("A\tB")
	w.Printf("%s\t%s\n", "long-name", "x")
	if out.Len() != 0 {
		t.Fatalf("tabwriter wrote before Flush: %q", out.String())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "A          B\nlong-name  x\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestStickyWriterFlushReportsTabwriterError(t *testing.T) {
	w := NewStickyWriter(tabwriter.NewWriter(&failAfter{}, 0, 8, 2, ' ', 0))
	w.Println("A\tB")
	if err := w.Flush(); !errors.Is(err, errBrokenPipe) {
		t.Fatalf("Flush() = %v, want the tabwriter's write error", err)
	}
}
