package diff

// ProjectMap keeps only the fields of live that desired sets, with live's
// values, as Argo CD's two-way diff does before it compares (gitops-engine
// pkg/diff/diff.go removeFields, pkg/utils/json RemoveMapFields and
// RemoveListFields): server defaults, status and the metadata the server
// adds do not show. Extra live list items are kept so that they do show.
func ProjectMap(desired, live map[string]any) map[string]any {
	out := map[string]any{}
	for k, dv := range desired {
		lv, ok := live[k]
		if !ok {
			continue
		}
		if lv != nil {
			lv = Project(dv, lv)
		}
		out[k] = lv
	}
	return out
}

// Project is ProjectMap for any JSON value: maps and lists are projected
// onto desired's, item by item for lists; a value whose type differs from
// desired's, or a scalar, is live's.
func Project(desired, live any) any {
	switch d := desired.(type) {
	case map[string]any:
		if l, ok := live.(map[string]any); ok {
			return ProjectMap(d, l)
		}
	case []any:
		if l, ok := live.([]any); ok {
			out := make([]any, 0, len(l))
			for i, lv := range l {
				if i < len(d) && lv != nil {
					lv = Project(d[i], lv)
				}
				out = append(out, lv)
			}
			return out
		}
	}
	return live
}
