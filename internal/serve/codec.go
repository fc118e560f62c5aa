package serve

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// codecLevel is the flate level of cached objects: 2, the fastest that
// uses a preset dictionary (compress/flate's level 1, BestSpeed, ignores
// it). BenchmarkEntry measures it.
const codecLevel = 2

// maxDict is flate's window: a preset dictionary longer than that is only
// used for its end.
const maxDict = 32 << 10

// codec compresses the JSON of one kind's cached objects (issue 35).
// Objects of a kind share most of their bytes: the keys, the shape of
// their managedFields, the values their engine sets on all of them. With
// the kind's first object as flate's preset dictionary, what stays of each
// is mostly what makes it differ: 106 bytes on average for real
// Deployments and ConfigMaps of 1,952 bytes of JSON (BenchmarkEntry). Safe for concurrent use; the dictionary is
// set once and never changes, so every entry of the kind decodes with it.
type codec struct {
	dict atomic.Pointer[[]byte]
	// writers hold *flate.Writer made with dict; readers the flate
	// readers (flate.Resetter) and scratch buffers are reused too: a
	// flate.Writer weighs ~600 KiB.
	writers sync.Pool
	readers sync.Pool
	buffers sync.Pool
}

// dictionary is the kind's preset dictionary, raw's end when none was set
// yet.
func (c *codec) dictionary(raw []byte) []byte {
	if d := c.dict.Load(); d != nil {
		return *d
	}
	d := bytes.Clone(raw[max(0, len(raw)-maxDict):])
	if c.dict.CompareAndSwap(nil, &d) {
		return d
	}
	return *c.dict.Load()
}

// compress returns raw compressed, in a slice of its own.
func (c *codec) compress(raw []byte) ([]byte, error) {
	dict := c.dictionary(raw)
	buf, _ := c.buffers.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer c.buffers.Put(buf)
	buf.Reset()
	w, _ := c.writers.Get().(*flate.Writer)
	if w == nil {
		var err error
		if w, err = flate.NewWriterDict(buf, codecLevel, dict); err != nil {
			return nil, err
		}
	} else {
		w.Reset(buf)
	}
	defer c.writers.Put(w)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// decompress returns the n bytes z holds.
func (c *codec) decompress(z []byte, n int) ([]byte, error) {
	d := c.dict.Load()
	if d == nil {
		return nil, fmt.Errorf("serve: cached object without its kind's dictionary")
	}
	src := bytes.NewReader(z)
	r, _ := c.readers.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReaderDict(src, *d)
	} else if err := r.(flate.Resetter).Reset(src, *d); err != nil {
		return nil, err
	}
	defer c.readers.Put(r)
	out := make([]byte, n)
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("serve: decompress a cached object: %w", err)
	}
	return out, nil
}
