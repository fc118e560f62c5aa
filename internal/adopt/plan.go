package adopt

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Field is one drifted field to adopt: its live pointer and value.
type Field struct {
	Pointer string
	Value   any
	// Remove: the live object lacks the field, so Git should too.
	Remove bool
}

// FileEdit is the new content of one file.
type FileEdit struct {
	File   *File
	After  []byte
	Fields []string // live pointers written here
}

// Skip is a field that is not written, and why; the caller prints the
// value for the user to write by hand unless it is a Secret's.
type Skip struct {
	Pointer string
	Reason  Reason
	Message string
	Value   any
}

// Plan finds each field's source and computes the new file contents,
// writing nothing. A field whose source cannot be edited safely (a
// template, an anchor shared by aliases, an inline patch) is skipped with
// its reason; a missing file, a value of the wrong type or a broken
// YAML file is an error for the whole plan (nothing half-written).
func Plan(loc Locator, obj Object, live map[string]any, fields []Field) ([]*FileEdit, []Skip, error) {
	type pending struct {
		t *Target
		c Change
	}
	byFile := map[string][]pending{}
	named := map[string]string{}
	var skips []Skip
	for _, f := range fields {
		var refused *EditError
		if err := SecretRefusal(obj.Group, obj.Kind, f.Pointer); errors.As(err, &refused) {
			skips = append(skips, Skip{Pointer: f.Pointer, Reason: ReasonSecret, Message: refused.Msg})
			continue
		}
		t, err := loc.Locate(obj, f.Pointer, live)
		if err != nil {
			if s, ok := skipOf(err, f); ok {
				skips = append(skips, s)
				continue
			}
			return nil, nil, err
		}
		c := Change{Pointer: t.Pointer, Value: f.Value, Remove: f.Remove}
		if t.HasValue {
			c.Value = t.Value
		}
		// One edit per file on disk: two names of one file (a symlink
		// and its target) must not be written from the same old content.
		key := t.File
		if real, err := filepath.EvalSymlinks(t.File); err == nil {
			key = real
		}
		if _, ok := named[key]; !ok {
			named[key] = t.File // read by its name: ReadFile checks where a link leads
		}
		byFile[key] = append(byFile[key], pending{t, c})
	}
	names := slices.Sorted(maps.Keys(byFile))
	var edits []*FileEdit
	for _, key := range names {
		name := named[key]
		rf, err := ReadFile(name)
		if err != nil {
			return nil, nil, err
		}
		data := rf.Data
		var written []string
		for _, p := range byFile[key] {
			opts := Options{}
			if p.t.ObjectRoot {
				opts = KubernetesLists(live)
			}
			out, err := EditAt(data, p.t.Doc, []Change{p.c}, opts)
			if err != nil {
				var ee *EditError
				if errors.As(err, &ee) && ee.Reason != ReasonTypeMismatch && ee.Reason != ReasonNotFound {
					ee.Msg = fmt.Sprintf("%s: %s", name, ee.Msg)
					skips = append(skips, Skip{Pointer: p.c.Pointer, Reason: ee.Reason, Message: ee.Msg, Value: p.c.Value})
					continue
				}
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			data = out
			written = append(written, p.c.Pointer)
		}
		if string(data) != string(rf.Data) {
			edits = append(edits, &FileEdit{File: rf, After: data, Fields: written})
		}
	}
	return edits, skips, nil
}

func skipOf(err error, f Field) (Skip, bool) {
	var ee *EditError
	if errors.As(err, &ee) && (ee.Reason == ReasonTemplate || ee.Reason == ReasonShared || ee.Reason == ReasonUnsupported) {
		return Skip{Pointer: f.Pointer, Reason: ee.Reason, Message: ee.Msg, Value: f.Value}, true
	}
	return Skip{}, false
}

// Write writes the planned files, all or none: every file is checked
// first (unchanged since it was read, replaceable), then each is
// replaced atomically; when one fails, those written before it get
// their content back.
func Write(edits []*FileEdit) error {
	return write(edits, (*File).replace)
}

// write is Write with the replacing step given, so that a test can make
// the n-th write fail.
func write(edits []*FileEdit, replace func(*File, []byte) error) error {
	for _, e := range edits {
		if err := e.File.check(); err != nil {
			return err
		}
	}
	olds := make([][]byte, 0, len(edits))
	for i, e := range edits {
		old := e.File.Data
		if err := replace(e.File, e.After); err != nil {
			return restore(edits[:i], olds, e.File.Path, err, replace)
		}
		olds = append(olds, old)
	}
	return nil
}

// restore puts back olds, the content of the files written before failed.
func restore(written []*FileEdit, olds [][]byte, failed string, cause error, replace func(*File, []byte) error) error {
	var broken []string
	for i := len(written) - 1; i >= 0; i-- {
		f := written[i].File
		if err := replace(f, olds[i]); err != nil {
			broken = append(broken, fmt.Sprintf("%s (%v)", f.Path, err))
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("writing %s: %w; restoring the files written before it failed, they hold the new content: %s",
			failed, cause, strings.Join(broken, ", "))
	}
	return fmt.Errorf("writing %s: %w; nothing written (%d file(s) written before it were restored)", failed, cause, len(written))
}
