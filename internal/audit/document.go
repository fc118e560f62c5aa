package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Document is one manifest of the audited files with its position.
//
// TEMPORARY: this mirrors internal/source.Document until that package lands;
// it then becomes `type Document = source.Document`.
type Document struct {
	Object *unstructured.Unstructured
	File   string
	Line   int
	Index  int
}

// loadFile is the default Loader. TEMPORARY until internal/source lands:
// it then calls source.LoadFiles.
func loadFile(file string) ([]Document, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, &FileError{File: file, Err: err}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []Document
	for i := 0; ; i++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, &FileError{File: file, Line: yamlErrLine(err), Err: err}
		}
		if len(n.Content) == 0 {
			continue
		}
		var m map[string]any
		if err := n.Decode(&m); err != nil {
			return out, &FileError{File: file, Line: n.Content[0].Line, Err: fmt.Errorf("document %d is not a mapping: %w", i+1, err)}
		}
		if m == nil {
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			return out, &FileError{File: file, Line: n.Content[0].Line, Err: err}
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return out, &FileError{File: file, Line: n.Content[0].Line, Err: err}
		}
		out = append(out, Document{Object: u, File: file, Line: n.Content[0].Line, Index: i})
	}
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErrLine(err error) int {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}
