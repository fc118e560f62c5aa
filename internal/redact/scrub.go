package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
)

// MinScrubLen is the shortest secret value the Scrubber replaces in free
// text. Shorter values ("true", "1") would mangle unrelated output; they
// are hidden by the structural maskers (Object, Pair, Drifts; jq errors
// on Secrets are told without values at their source, jq.Redact),
// which know where values are.
const MinScrubLen = 6

// Scrubber is the last line of defence: it remembers the values of every
// Secret a command read (data values raw and decoded, stringData values
// raw and encoded, the same inside serialized annotations) and replaces
// them with Mask in any text. The zero value is not usable; NewScrubber
// makes one. It is safe for concurrent use (scan judges kinds in
// parallel).
type Scrubber struct {
	mu       sync.Mutex
	values   map[string]bool
	replacer *strings.Replacer
}

// NewScrubber returns a Scrubber that knows no value yet.
func NewScrubber() *Scrubber { return &Scrubber{values: map[string]bool{}} }

// Add remembers the values of obj if it is a Secret (anything else is
// ignored), so that later text is scrubbed of them. A nil Scrubber does
// nothing.
func (s *Scrubber) Add(obj map[string]any) {
	if s == nil || !IsSecretObject(obj) {
		return
	}
	vals := SecretValues(obj)
	if len(vals) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for _, v := range vals {
		if !s.values[v] {
			s.values[v] = true
			added = true
		}
	}
	if added {
		s.replacer = nil
	}
}

// SecretValues lists the strings of a Secret that must never be printed,
// in every encoding they may be printed in: data values as stored
// (base64) and decoded, stringData values as written and base64-encoded,
// the JSON-escaped form of each, each line of a multi-line value, and the
// same for objects serialized in annotations (last-applied-configuration).
// Values shorter than MinScrubLen are left out (see MinScrubLen).
func SecretValues(obj map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		forms := []string{v}
		if j, err := json.Marshal(v); err == nil {
			forms = append(forms, string(j[1:len(j)-1]))
		}
		for _, l := range strings.Split(v, "\n") {
			forms = append(forms, strings.TrimSpace(l))
		}
		for _, f := range forms {
			if len(f) >= MinScrubLen && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	var collect func(o map[string]any, depth int)
	collect = func(o map[string]any, depth int) {
		if d, ok := o["data"].(map[string]any); ok {
			for _, v := range d {
				if s, ok := v.(string); ok {
					add(s)
					if b, err := base64.StdEncoding.DecodeString(s); err == nil {
						add(string(b))
					}
				}
			}
		}
		if d, ok := o["stringData"].(map[string]any); ok {
			for _, v := range d {
				if s, ok := v.(string); ok {
					add(s)
					add(base64.StdEncoding.EncodeToString([]byte(s)))
				}
			}
		}
		if depth > 0 {
			return
		}
		for _, a := range annotations(o) {
			if inner, ok := decodedObject(a); ok {
				collect(inner, depth+1)
			}
		}
	}
	collect(obj, 0)
	return out
}

func (s *Scrubber) rep() *strings.Replacer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.values) == 0 {
		return nil
	}
	if s.replacer == nil {
		vals := make([]string, 0, len(s.values))
		for v := range s.values {
			vals = append(vals, v)
		}
		// Longest first: the replacer takes the first listed match at a
		// position, and a value may contain another.
		sort.Slice(vals, func(i, j int) bool {
			if len(vals[i]) != len(vals[j]) {
				return len(vals[i]) > len(vals[j])
			}
			return vals[i] < vals[j]
		})
		args := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			args = append(args, v, Mask)
		}
		s.replacer = strings.NewReplacer(args...)
	}
	return s.replacer
}

// String replaces every remembered value in text. A nil Scrubber returns
// text unchanged.
func (s *Scrubber) String(text string) string {
	if s == nil {
		return text
	}
	r := s.rep()
	if r == nil {
		return text
	}
	return r.Replace(text)
}

// Err returns err with its text scrubbed (errors.Is/As still see the
// original); nil stays nil.
func (s *Scrubber) Err(err error) error {
	if err == nil || s == nil {
		return err
	}
	msg := s.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &Error{Msg: msg, Err: err}
}

// Report scrubs every free-text field of a report (notes, verdict
// reasons, owner modes) and every string inside drift values, after
// masking the drifts of a Secret at secret paths (Drifts).
func (s *Scrubber) Report(r *model.Report) {
	if r == nil {
		return
	}
	Drifts(r.Resource, r.Drifts)
	if s == nil || s.rep() == nil {
		return
	}
	for i := range r.Drifts {
		d := &r.Drifts[i]
		d.Desired, d.Live = s.value(d.Desired), s.value(d.Live)
		for j := range d.Verdicts {
			d.Verdicts[j].Reason = s.String(d.Verdicts[j].Reason)
		}
	}
	for i := range r.Notes {
		r.Notes[i].Message = s.String(r.Notes[i].Message)
	}
	for i := range r.Owners {
		r.Owners[i].Mode = s.String(r.Owners[i].Mode)
	}
}

func (s *Scrubber) value(v any) any {
	switch t := v.(type) {
	case string:
		return s.String(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = s.value(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = s.value(x)
		}
		return out
	}
	return v
}

// ScrubReport masks one report with a Scrubber that knows only objs: for
// code that builds a report per object (scan) without a command-wide
// Scrubber.
func ScrubReport(r *model.Report, objs ...map[string]any) {
	s := NewScrubber()
	for _, o := range objs {
		s.Add(o)
	}
	s.Report(r)
}

// Writer scrubs a stream line by line: a value can only be replaced when
// it is whole, so text is held until its line ends (or Flush). Commands
// write their stdout and stderr through one, so whatever path produced a
// string, a remembered Secret value does not reach the terminal.
type Writer struct {
	mu  sync.Mutex
	s   *Scrubber
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer over w scrubbing with s.
func NewWriter(w io.Writer, s *Scrubber) *Writer { return &Writer{s: s, w: w} }

// Write buffers p and writes every complete line, scrubbed.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	i := bytes.LastIndexByte(w.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	out := w.s.String(string(w.buf[:i+1]))
	w.buf = append(w.buf[:0], w.buf[i+1:]...)
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is left of the last line, scrubbed.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	out := w.s.String(string(w.buf))
	w.buf = w.buf[:0]
	_, err := io.WriteString(w.w, out)
	return err
}

// Unwrap returns the writer under w, for callers that need the terminal
// itself (colour and width detection).
func (w *Writer) Unwrap() io.Writer { return w.w }
