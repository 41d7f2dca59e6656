package decode

import (
	"connector/pkg/manifest"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// maxItemsDepth is how deep a JsonItemsDecoder walks a document towards its items, the
// nesting limit of every JSON response.
const maxItemsDepth = 512

// items is the CDK's JsonItemsParser (JsonItemsDecoder): the elements of the array at
// items_path, one at a time, as ijson.items(body, items_path + ".item") yields them. A
// value's ijson prefix is its keys from the root joined by dots, an array element adding
// "item"; every value whose prefix is the target is yielded whole (so an object member
// named "item" is one too, as in ijson), and a document without one yields nothing. Only
// the parts of the document on the way to the target are walked; the rest is skipped.
type items struct {
	dec    *json.Decoder
	target string
	stack  []itemsFrame
	// pending is the prefix of the value to read next; started says the root was read.
	pending string
	started bool
	n       int // the number of the item last returned
	// failed says the last call failed, on the way to item n+1.
	failed bool
}

type itemsFrame struct {
	array  bool
	prefix string
}

func newItems(in input, path string) *items {
	return &items{dec: json.NewDecoder(in.reader()), target: path + ".item"}
}

func (it *items) where() string {
	if it.failed {
		return fmt.Sprintf("item %d", it.n+1)
	}
	return fmt.Sprintf("item %d", it.n)
}

func (it *items) next() ([]byte, error) {
	v, err := it.read()
	it.failed = err != nil && err != io.EOF
	return v, err
}

func (it *items) read() ([]byte, error) {
	for {
		if !it.started || it.pending != "" {
			prefix := it.pending
			it.started, it.pending = true, ""
			if v, done, err := it.value(prefix); err != nil || done {
				return v, err
			}
			continue
		}
		if len(it.stack) == 0 {
			return nil, io.EOF
		}
		top := it.stack[len(it.stack)-1]
		if !it.dec.More() {
			if _, err := it.dec.Token(); err != nil { // the closing bracket
				return nil, jsonError(err)
			}
			it.stack = it.stack[:len(it.stack)-1]
			continue
		}
		if top.array {
			it.pending = join(top.prefix, "item")
			continue
		}
		key, err := it.dec.Token()
		if err != nil {
			return nil, jsonError(err)
		}
		it.pending = join(top.prefix, key.(string))
	}
}

// value reads the value at prefix: the item itself (done), or the way to it (a container
// entered), or something else (skipped).
func (it *items) value(prefix string) (v []byte, done bool, err error) {
	if prefix == it.target {
		var raw json.RawMessage
		if err := it.dec.Decode(&raw); err != nil {
			return nil, true, jsonError(err)
		}
		it.n++
		return raw, true, nil
	}
	if !strings.HasPrefix(it.target, prefix) || prefix != "" && it.target[len(prefix)] != '.' {
		var skip json.RawMessage
		if err := it.dec.Decode(&skip); err != nil {
			return nil, true, jsonError(err)
		}
		return nil, false, nil
	}
	tok, err := it.dec.Token()
	if err != nil {
		return nil, true, jsonError(err)
	}
	if d, ok := tok.(json.Delim); ok {
		if len(it.stack) >= maxItemsDepth {
			return nil, true, fmt.Errorf("JSON nested deeper than %d levels, a limit of connector", maxItemsDepth)
		}
		it.stack = append(it.stack, itemsFrame{array: d == '[', prefix: prefix})
	}
	return nil, false, nil
}

// join is ijson's prefix of a member or element key under prefix.
func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// jsonError words an error of encoding/json for a body that is not JSON; the end of the
// body before the document's end is one.
func jsonError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end of body")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// utf8Reader reads the text of in, written in encoding (one of manifest.CanonicalEncoding),
// as UTF-8: what the CDK's JsonItemsParser does for an encoding other than UTF-8.
func utf8Reader(in input, encoding string) io.Reader {
	return &recoder{t: newRunes(in.reader(), encoding)}
}

type recoder struct {
	t   *runes
	buf []byte
	err error
}

func (r *recoder) Read(p []byte) (int, error) {
	for len(r.buf) < len(p) && r.err == nil {
		c, err := r.t.decoded()
		if err != nil {
			r.err = err
			break
		}
		r.buf = utf8.AppendRune(r.buf, c)
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	if n == 0 && r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// itemsDecoder is JsonItemsDecoder: the elements of the array at items_path, in the body's
// encoding.
func itemsDecoder(_ *Decoder, m *manifest.Decoder, in input) (values, error) {
	if manifest.CanonicalEncoding(m.Encoding) == "utf-8" {
		return newItems(in, m.ItemsPath), nil
	}
	return newItems(input{r: utf8Reader(in, m.Encoding)}, m.ItemsPath), nil
}
