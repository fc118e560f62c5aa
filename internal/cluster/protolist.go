package cluster

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// protoMagic opens every protobuf body the API server sends: the
// runtime.Unknown envelope follows (k8s.io/apimachinery
// pkg/runtime/serializer/protobuf/protobuf.go, protoEncodingPrefix).
var protoMagic = []byte{'k', '8', 's', 0}

// ProtobufContentType is what the API server answers built-in kinds with
// when asked; controllers built on client-go's typed clients read it.
const ProtobufContentType = "application/vnd.kubernetes.protobuf"

// maxProtoItem bounds one object's size in a protobuf list (etcd stores at
// most ~1.5 MB per object): a corrupt length must not allocate gigabytes.
const maxProtoItem = 64 << 20

// Field numbers of the messages walked here (k8s.io/apimachinery
// pkg/runtime/generated.proto Unknown; pkg/apis/meta/v1/generated.proto
// ListMeta; every k8s.io/api XxxList has metadata = 1, items = 2).
const (
	unknownRaw          = 2
	unknownEncoding     = 3
	listMetadata        = 1
	listItems           = 2
	listMetaRV          = 2
	listMetaContinue    = 3
	wireBytes           = protowire.BytesType
	wireVarint          = protowire.VarintType
	wireFixed32         = protowire.Fixed32Type
	wireFixed64         = protowire.Fixed64Type
	errProtoItemTooLong = "decode protobuf list: item of %d bytes"
)

// decodeProtoList walks a protobuf List response (runtime.Unknown whose raw
// field holds an XxxList) field by field from r and calls fn with each
// item's bytes (one object message, no envelope) without ever holding more
// than one of them; the envelope's raw field is never read into memory as
// a whole.
func decodeProtoList(r *bufio.Reader, fn func(raw []byte) error) (rv, cont string, err error) {
	magic := make([]byte, len(protoMagic))
	if _, err := io.ReadFull(r, magic); err != nil || !bytes.Equal(magic, protoMagic) {
		return "", "", errors.New("decode protobuf list: no k8s envelope")
	}
	var item []byte
	for {
		num, typ, err := readTag(r)
		if errors.Is(err, io.EOF) {
			return rv, cont, nil
		}
		if err != nil {
			return "", "", err
		}
		switch {
		case num == unknownRaw && typ == wireBytes:
			n, err := readLen(r)
			if err != nil {
				return "", "", err
			}
			lr := &countingReader{r: r, left: n}
			if rv, cont, item, err = decodeProtoListBody(lr, item, fn); err != nil {
				return "", "", err
			}
			if lr.left != 0 {
				return "", "", errors.New("decode protobuf list: list shorter than its length")
			}
		case num == unknownEncoding && typ == wireBytes:
			b, err := readBytes(r, nil)
			if err != nil {
				return "", "", err
			}
			if len(b) > 0 {
				return "", "", fmt.Errorf("decode protobuf list: content encoding %q", b)
			}
		default:
			if err := skipField(r, typ); err != nil {
				return "", "", err
			}
		}
	}
}

// decodeProtoListBody walks the XxxList message: metadata (resourceVersion,
// continue) and items. item is the reused buffer, returned for reuse.
func decodeProtoListBody(r *countingReader, item []byte, fn func(raw []byte) error) (rv, cont string, _ []byte, err error) {
	for r.left > 0 {
		num, typ, err := readTag(r)
		if err != nil {
			return "", "", item, unexpectedEOF(err)
		}
		switch {
		case num == listItems && typ == wireBytes:
			if item, err = readBytes(r, item); err != nil {
				return "", "", item, err
			}
			if err := fn(item); err != nil {
				return "", "", item, callerError{err}
			}
		case num == listMetadata && typ == wireBytes:
			md, err := readBytes(r, nil)
			if err != nil {
				return "", "", item, err
			}
			if rv, cont, err = listMeta(md); err != nil {
				return "", "", item, err
			}
		default:
			if err := skipField(r, typ); err != nil {
				return "", "", item, err
			}
		}
	}
	return rv, cont, item, nil
}

// listMeta reads resourceVersion and continue from a ListMeta message.
func listMeta(b []byte) (rv, cont string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", "", fmt.Errorf("decode protobuf list metadata: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if typ == wireBytes && (num == listMetaRV || num == listMetaContinue) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", "", fmt.Errorf("decode protobuf list metadata: %w", protowire.ParseError(n))
			}
			if num == listMetaRV {
				rv = string(v)
			} else {
				cont = string(v)
			}
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return "", "", fmt.Errorf("decode protobuf list metadata: %w", protowire.ParseError(n))
		}
		b = b[n:]
	}
	return rv, cont, nil
}

// countingReader reads at most left bytes of r: one length-delimited field
// read as a stream.
type countingReader struct {
	r    *bufio.Reader
	left uint64
}

func (c *countingReader) ReadByte() (byte, error) {
	if c.left == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	b, err := c.r.ReadByte()
	if err == nil {
		c.left--
	}
	return b, err
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if uint64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= uint64(n)
	return n, err
}

// byteReader is what the field readers need: bufio.Reader or countingReader.
type byteReader interface {
	io.Reader
	io.ByteReader
}

func readTag(r byteReader) (protowire.Number, protowire.Type, error) {
	v, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, 0, err
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber {
		return 0, 0, errors.New("decode protobuf list: invalid field number")
	}
	return num, typ, nil
}

func readLen(r byteReader) (uint64, error) {
	n, err := binary.ReadUvarint(r)
	return n, unexpectedEOF(err)
}

// readBytes reads one length-delimited value into buf (reused when large
// enough).
func readBytes(r byteReader, buf []byte) ([]byte, error) {
	n, err := readLen(r)
	if err != nil {
		return buf, err
	}
	if n > maxProtoItem {
		return buf, fmt.Errorf(errProtoItemTooLong, n)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, unexpectedEOF(err)
	}
	return buf, nil
}

func skipField(r byteReader, typ protowire.Type) error {
	var n uint64
	switch typ {
	case wireVarint:
		_, err := binary.ReadUvarint(r)
		return unexpectedEOF(err)
	case wireFixed32:
		n = 4
	case wireFixed64:
		n = 8
	case wireBytes:
		var err error
		if n, err = readLen(r); err != nil {
			return err
		}
	default:
		return fmt.Errorf("decode protobuf list: wire type %d", typ)
	}
	_, err := io.CopyN(io.Discard, r, int64(n))
	return unexpectedEOF(err)
}

// unexpectedEOF turns an EOF inside a message into a decoding error.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("decode protobuf list: %w", io.ErrUnexpectedEOF)
	}
	if err != nil {
		return fmt.Errorf("decode protobuf list: %w", err)
	}
	return nil
}
