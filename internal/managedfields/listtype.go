package managedfields

// ListKind says how the API server identifies the items of a list, in the
// terms of structured-merge-diff's list types (x-kubernetes-list-type).
type ListKind string

// List kinds.
const (
	// ListUnknown: nothing says how items are identified; treat by index.
	ListUnknown ListKind = ""
	// ListAtomic: the list is replaced as a whole; items by index (i:).
	ListAtomic ListKind = "atomic"
	// ListMap: an associative list, items identified by Keys (k:{...}).
	ListMap ListKind = "map"
	// ListSet: a set of scalars, items identified by their value (v:...).
	ListSet ListKind = "set"
)

// ListType describes one list: its kind and, for ListMap, its key fields
// (sorted, as structured-merge-diff sorts them in a k: element).
type ListType struct {
	Kind ListKind
	Keys []string
	// Defaults are values the API server defaults into key fields when a
	// manifest leaves them out (ports' protocol is TCP), so that a desired
	// item without the field still matches its live twin.
	Defaults map[string]any
}

var tcpDefault = map[string]any{"protocol": "TCP"}

// BuiltinListType is the list type of core Kubernetes lists whose keys are
// fixed by the API's +listType/+listMapKey markers (k8s.io/api/core/v1/types.go,
// k8s.io/api/admissionregistration/v1/types.go). It is the fallback when an
// object carries no managedFields to learn the keys from. tokens are the
// unescaped tokens of the list's pointer; list indices may be any number.
func BuiltinListType(tokens []string) ListType {
	n := len(tokens)
	if n == 0 {
		return ListType{}
	}
	last := tokens[n-1]
	parent := ""
	if n >= 2 {
		parent = tokens[n-2]
	}
	inContainer := n >= 3 && isIndex(tokens[n-2]) && isContainerList(tokens[n-3])
	switch {
	case isContainerList(last) && parent == "spec":
		return ListType{Kind: ListMap, Keys: []string{"name"}}
	case inContainer && last == "env":
		return ListType{Kind: ListMap, Keys: []string{"name"}}
	case inContainer && last == "ports":
		return ListType{Kind: ListMap, Keys: []string{"containerPort", "protocol"}, Defaults: tcpDefault}
	case inContainer && last == "volumeMounts":
		return ListType{Kind: ListMap, Keys: []string{"mountPath"}}
	case inContainer && last == "volumeDevices":
		return ListType{Kind: ListMap, Keys: []string{"devicePath"}}
	case inContainer && (last == "args" || last == "command" || last == "envFrom" || last == "resizePolicy"):
		return ListType{Kind: ListAtomic}
	case n == 2 && parent == "spec" && last == "ports":
		// Service spec.ports: +listMapKey=port +listMapKey=protocol.
		return ListType{Kind: ListMap, Keys: []string{"port", "protocol"}, Defaults: tcpDefault}
	case parent == "spec" && (last == "volumes" || last == "imagePullSecrets" || last == "resourceClaims" || last == "schedulingGates"):
		return ListType{Kind: ListMap, Keys: []string{"name"}}
	case parent == "spec" && last == "hostAliases":
		return ListType{Kind: ListMap, Keys: []string{"ip"}}
	case parent == "spec" && last == "topologySpreadConstraints":
		return ListType{Kind: ListMap, Keys: []string{"topologyKey", "whenUnsatisfiable"}}
	case parent == "spec" && (last == "tolerations" || last == "readinessGates"):
		return ListType{Kind: ListAtomic}
	case parent == "resources" && last == "claims":
		return ListType{Kind: ListMap, Keys: []string{"name"}}
	case n == 2 && parent == "metadata" && last == "finalizers":
		return ListType{Kind: ListSet}
	case n == 2 && parent == "metadata" && last == "ownerReferences":
		return ListType{Kind: ListMap, Keys: []string{"uid"}}
	case n == 1 && last == "webhooks":
		return ListType{Kind: ListMap, Keys: []string{"name"}}
	}
	return ListType{}
}

// keyDefaults returns the builtin defaults for a list whose keys were learnt
// from managedFields, when the builtin table agrees on the keys.
func keyDefaults(tokens []string, keys []string) map[string]any {
	b := BuiltinListType(tokens)
	if b.Defaults == nil || len(b.Keys) != len(keys) {
		return nil
	}
	for i := range keys {
		if b.Keys[i] != keys[i] {
			return nil
		}
	}
	return b.Defaults
}

func isContainerList(s string) bool {
	return s == "containers" || s == "initContainers" || s == "ephemeralContainers"
}

// isIndex reports a JSON pointer array index (decimal digits, no sign).
func isIndex(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
