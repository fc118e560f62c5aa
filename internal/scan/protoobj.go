package scan

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// A built-in kind is listed in protobuf (cluster.StreamOptions.Protobuf), as
// client-go's typed clients and the controllers built on them read it: the
// first pass walks only the metadata field of each object message, without
// decoding anything else; a candidate is decoded into its Go type and
// turned into the JSON the API server would have sent, so that what the
// engines judge is unchanged.

// isProto says raw is a protobuf object message: its first field is
// metadata (number 1, length-delimited: tag 0x0a), where a JSON object
// starts with '{'.
func isProto(raw []byte) bool { return len(raw) > 0 && raw[0] == 0x0a }

// errProtoSkew: a protobuf object holds fields this client's Go types do
// not know (an API server newer than client-go). Decoding it would drop
// them silently; Run lists the kind again as JSON instead.
var errProtoSkew = errors.New("object has fields this client does not know")

// Field numbers (k8s.io/apimachinery pkg/apis/meta/v1/generated.proto:
// ObjectMeta, ManagedFieldsEntry; every object has metadata = 1).
const (
	objMetadata     = 1
	metaName        = 1
	metaNamespace   = 3
	metaLabels      = 11
	metaAnnotations = 12
	metaManaged     = 17
	mapKey          = 1
	mapValue        = 2
	mfManager       = 1
	mfOperation     = 2
	mfSubresource   = 8
)

// protoLight reads the first pass's metadata from a protobuf object.
func protoLight(raw []byte) (lightMeta, error) {
	var md lightMeta
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return md, protowire.ParseError(n)
		}
		raw = raw[n:]
		if num == objMetadata && typ == protowire.BytesType {
			b, n := protowire.ConsumeBytes(raw)
			if n < 0 {
				return md, protowire.ParseError(n)
			}
			// metadata is the object's first field: the rest (spec,
			// data, status) is never looked at.
			return md, md.readObjectMeta(b)
		}
		if n = protowire.ConsumeFieldValue(num, typ, raw); n < 0 {
			return md, protowire.ParseError(n)
		}
		raw = raw[n:]
	}
	return md, nil
}

func (md *lightMeta) readObjectMeta(b []byte) error {
	return eachField(b, func(num protowire.Number, v []byte) error {
		switch num {
		case metaName:
			md.name = string(v)
		case metaNamespace:
			md.namespace = string(v)
		case metaLabels, metaAnnotations:
			k, val, err := mapEntry(v)
			if err != nil {
				return err
			}
			m := &md.labels
			if num == metaAnnotations {
				m = &md.annotations
			}
			if *m == nil {
				*m = map[string]any{}
			}
			(*m)[k] = val
		case metaManaged:
			var e lightManager
			err := eachField(v, func(num protowire.Number, v []byte) error {
				switch num {
				case mfManager:
					e.manager = string(v)
				case mfOperation:
					e.operation = string(v)
				case mfSubresource:
					e.subresource = string(v)
				}
				return nil
			})
			if err != nil {
				return err
			}
			md.managers = append(md.managers, e)
		}
		return nil
	})
}

// eachField calls fn with each length-delimited field of message b and
// skips the others.
func eachField(b []byte, fn func(num protowire.Number, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
}

// mapEntry reads one map<string, string> entry.
func mapEntry(b []byte) (k, v string, err error) {
	err = eachField(b, func(num protowire.Number, f []byte) error {
		switch num {
		case mapKey:
			k = string(f)
		case mapValue:
			v = string(f)
		}
		return nil
	})
	return k, v, err
}

// protoMessage is what gogo-generated Kubernetes types implement.
type protoMessage interface {
	Unmarshal([]byte) error
	Size() int
}

// decodeProto decodes a protobuf object into its Go type and then into the
// map the JSON path builds: encoding/json of the typed object is the body
// the API server writes for it (k8s.io/apimachinery
// pkg/runtime/serializer/json/json.go encodes with encoding/json), so the
// unstructured object is the one a JSON LIST would have given.
func decodeProto(kind Kind, raw []byte) (map[string]any, error) {
	obj, err := scheme.Scheme.New(kind.GVK)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", kind.GVR.GroupResource(), err)
	}
	m, ok := obj.(protoMessage)
	if !ok {
		return nil, fmt.Errorf("decode %s: %T is not a protobuf message", kind.GVR.GroupResource(), obj)
	}
	if err := m.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("decode %s: %w", kind.GVR.GroupResource(), err)
	}
	// Generated Marshal writes every known field back the way the server
	// wrote it (maps sorted): a shorter size means fields were dropped.
	if m.Size() != len(raw) {
		return nil, fmt.Errorf("decode %s: %w", kind.GVR.GroupResource(), errProtoSkew)
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}
