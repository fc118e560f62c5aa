package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// itemsMarker is how json.MarshalIndent writes a nil Items at the top
// level of a Result (two spaces in; a string value holding it would be
// escaped).
const itemsMarker = "\n  \"items\": null"

// PrintJSONList writes exactly what PrintObject writes in JSON (indented
// by two spaces, a newline) for head with its top-level "items" set to
// items, one item at a time: the whole document is never in memory,
// where json.MarshalIndent would hold it about three times over
// (compact, indented, with the newline appended). head must marshal its
// items as null (a nil slice): scan's list of 100,000 reports.
func PrintJSONList[T any](w io.Writer, head any, items []T) error {
	b, err := json.MarshalIndent(head, "", "  ")
	if err != nil {
		return err
	}
	before, after, ok := bytes.Cut(b, []byte(itemsMarker))
	if !ok {
		return fmt.Errorf("print json: no null items field in %T", head)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	_, _ = bw.Write(before)
	_, _ = bw.WriteString("\n  \"items\": [")
	for i, it := range items {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		item, err := json.MarshalIndent(it, "    ", "  ")
		if err != nil {
			return err
		}
		_, _ = bw.WriteString("\n    ")
		_, _ = bw.Write(item)
	}
	if len(items) > 0 {
		_, _ = bw.WriteString("\n  ")
	}
	_ = bw.WriteByte(']')
	_, _ = bw.Write(after)
	_ = bw.WriteByte('\n')
	// bufio keeps the first write error and returns it here.
	return bw.Flush()
}
