package adopt

import (
	"errors"
	"fmt"

	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"
)

// ValuesLayer is a source of Helm values laid over a chart's values file:
// the values at Prefix ("" for a values file, "/spec/values" for a Flux
// HelmRelease's inline values) of the document of File that is Object
// (the first document when Object is nil).
type ValuesLayer struct {
	File   string
	Prefix string
	Object *Object
}

// LayeredHelmLocator is a HelmLocator whose values key is written in the
// layer that sets it: the first of Layers (highest precedence first)
// holding the key, else the chart's values file, where a new key goes.
type LayeredHelmLocator struct {
	Helm   HelmLocator
	Layers []ValuesLayer
}

// Locate implements Locator.
func (l LayeredHelmLocator) Locate(obj Object, pointer string, live any) (*Target, error) {
	t, err := l.Helm.Locate(obj, pointer, live)
	if err != nil || t.Kind != InValues {
		return t, err
	}
	for _, layer := range l.Layers {
		rf, err := ReadFile(layer.File)
		if err != nil {
			return nil, err
		}
		docs, err := parseDocs(rf.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", layer.File, err)
		}
		i := 0
		if layer.Object != nil {
			if i, err = FindDocument(rf.Data, *layer.Object); err != nil {
				return nil, fmt.Errorf("%s: %w", layer.File, err)
			}
			if i < 0 {
				return nil, fmt.Errorf("%s: no document is %s", layer.File, layer.Object)
			}
		}
		if i >= len(docs) {
			continue
		}
		p := layer.Prefix + t.Pointer
		if _, ok := jsonpointer.Get(docs[i].value, p); ok {
			return &Target{File: layer.File, Doc: i, Pointer: p, Kind: InValues}, nil
		}
	}
	return t, nil
}

// FirstLocator tries its locators in order and returns the first target
// found; when none finds one, the first error.
type FirstLocator []Locator

// Locate implements Locator.
func (l FirstLocator) Locate(obj Object, pointer string, live any) (*Target, error) {
	var first error
	for _, loc := range l {
		t, err := loc.Locate(obj, pointer, live)
		if err == nil {
			return t, nil
		}
		var ee *EditError
		if errors.As(err, &ee) {
			// Found, but not editable: that is the answer.
			return nil, err
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = fmt.Errorf("no source holds %s", obj)
	}
	return nil, first
}
