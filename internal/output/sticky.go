package output

import (
	"fmt"
	"io"
)

// StickyWriter remembers the first write error so that a printer can write
// line after line and check once, at Flush (bufio.Writer's rule): a table
// printed to a closed pipe fails the command instead of losing its rows
// silently. Writes after an error are dropped.
type StickyWriter struct {
	w   io.Writer
	err error
}

// NewStickyWriter wraps w. When w has a Flush() error method (a
// tabwriter.Writer, a bufio.Writer), StickyWriter.Flush calls it.
func NewStickyWriter(w io.Writer) *StickyWriter {
	return &StickyWriter{w: w}
}

// Write writes p unless an earlier write failed; it returns that error then.
func (s *StickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// Printf formats like fmt.Fprintf; an error is kept for Flush.
func (s *StickyWriter) Printf(format string, args ...any) {
	if s.err == nil {
		_, s.err = fmt.Fprintf(s.w, format, args...)
	}
}

// Println formats like fmt.Fprintln; an error is kept for Flush.
func (s *StickyWriter) Println(args ...any) {
	if s.err == nil {
		_, s.err = fmt.Fprintln(s.w, args...)
	}
}

// Flush flushes the wrapped writer when it buffers, and returns the first
// error of any write or of the flush.
func (s *StickyWriter) Flush() error {
	if f, ok := s.w.(interface{ Flush() error }); ok && s.err == nil {
		s.err = f.Flush()
	}
	return s.err
}
