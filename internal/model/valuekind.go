package model

import (
	"encoding/json"
	"fmt"
)

// ValueKind names the kind of a decoded YAML/JSON value for error messages:
// "null", "string", "boolean", "number", or mapWord / listWord for a map and
// a list. The words are parameters because each reader speaks its input's
// language: the YAML reader says "mapping"/"sequence", managedFields (JSON)
// say "object"/"list", and their messages are part of what users see.
func ValueKind(v any, mapWord, listWord string) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int32, int64, float32, float64, json.Number:
		return "number"
	case map[string]any:
		return mapWord
	case []any:
		return listWord
	}
	return fmt.Sprintf("%T", v)
}
