package adopt

import (
	"errors"
	"fmt"
	"maps"
	"slices"
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
	var skips []Skip
	for _, f := range fields {
		if err := SecretRefusal(obj.Group, obj.Kind, f.Pointer); err != nil {
			skips = append(skips, Skip{Pointer: f.Pointer, Reason: ReasonSecret, Message: err.(*EditError).Msg})
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
		byFile[t.File] = append(byFile[t.File], pending{t, c})
	}
	names := slices.Sorted(maps.Keys(byFile))
	var edits []*FileEdit
	for _, name := range names {
		rf, err := ReadFile(name)
		if err != nil {
			return nil, nil, err
		}
		data := rf.Data
		var written []string
		for _, p := range byFile[name] {
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

// Write writes the planned files; each is checked against the hash read
// and replaced atomically. All files are checked writable first, so a
// read-only checkout writes none.
func Write(edits []*FileEdit) error {
	for _, e := range edits {
		if err := e.File.Writable(); err != nil {
			return err
		}
	}
	for _, e := range edits {
		if err := e.File.Write(e.After); err != nil {
			return err
		}
	}
	return nil
}
