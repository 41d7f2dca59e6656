// Package record is the unit a read emits: one record of a stream, either the bytes the API
// sent (untouched, the common case) or an object a transformation edited. Object is the
// ordered JSON object both the requests and the edited records are built from: keys keep the
// order they were set in, numbers keep their spelling, and nothing is HTML-escaped.
package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
)

// Record is one record to write. Exactly one of Raw and Object is set.
type Record struct {
	// Raw is the record's JSON text as the API sent it (compact). It may share the memory of
	// the page it came from: it is valid only until the emitter it is handed to returns.
	Raw []byte
	// Object is a record a transformation edited.
	Object *Object
	// File is where the record's file was written (a stream's file_uploader); nil: none.
	File *FileRef
}

// FileRef is where the file of a record went, as the Airbyte protocol's
// AirbyteRecordMessageFileReference says it.
type FileRef struct {
	// StagingFileURL is the file's absolute path.
	StagingFileURL string
	// SourceFileRelativePath is its path under the files folder: the stream's folder, then
	// its name.
	SourceFileRelativePath string
	FileSizeBytes          int64
}

// AppendJSON appends the record's JSON text to dst: Raw as it is, Object encoded.
func (r Record) AppendJSON(dst []byte) ([]byte, error) {
	if r.Object == nil {
		return append(dst, r.Raw...), nil
	}
	return appendValue(dst, r.Object)
}

// Object is a JSON object that keeps the order of its keys. Its values are nil, bool,
// string, json.Number, int, int64, float64, *Object, []any, or map[string]any (written
// with sorted keys). The zero value is an empty object.
type Object struct {
	keys []string
	vals []any
	// raw and spans are Shallow's: spans[i] says where keys[i] and its value are in raw,
	// and whether vals[i] holds the value yet (see span).
	raw   []byte
	spans []span
	// index finds a key's place once the object has more than indexFrom keys; smaller
	// objects (most records) are searched in order, which is faster than a map.
	index map[string]int
}

const indexFrom = 32

// find is the place of a key, or -1.
func (o *Object) find(k string) int {
	if o.index != nil {
		if i, ok := o.index[k]; ok {
			return i
		}
		return -1
	}
	for i, x := range o.keys {
		if x == k {
			return i
		}
	}
	return -1
}

// Set adds or replaces a key; a new key goes last, an existing key keeps its place.
func (o *Object) Set(k string, v any) {
	if i := o.find(k); i >= 0 {
		o.vals[i] = v
		if o.spans != nil {
			o.spans[i] = span{}
		}
		return
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
	if o.spans != nil {
		o.spans = append(o.spans, span{})
	}
	switch {
	case o.index != nil:
		o.index[k] = len(o.keys) - 1
	case len(o.keys) > indexFrom:
		o.reindex()
	}
}

func (o *Object) reindex() {
	o.index = make(map[string]int, len(o.keys))
	for i, x := range o.keys {
		o.index[x] = i
	}
}

// Get returns the value of a key.
func (o *Object) Get(k string) (any, bool) {
	if i := o.find(k); i >= 0 {
		return o.value(i), true
	}
	return nil, false
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// keyCache remembers recent object keys, so that a key that comes again (in every record
// of a page) is the same string, not a new one. Lock-free: a slot holds the last key that
// hashed to it.
var keyCache [1024]atomic.Pointer[string]

func internKey(b []byte) string { return internHashed(b, keyHash(b)) }

// keyHash is the FNV-1a hash of a key's bytes.
func keyHash[T string | []byte](b T) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(b); i++ {
		h = (h ^ uint32(b[i])) * 16777619
	}
	return h
}

// internHashed is internKey for a key whose keyHash is h.
func internHashed(b []byte, h uint32) string {
	if len(b) > 64 {
		return string(b)
	}
	slot := &keyCache[h%uint32(len(keyCache))]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}

// Delete removes a key, the others keeping their order, and reports whether it was there.
func (o *Object) Delete(k string) bool {
	i := o.find(k)
	if i < 0 {
		return false
	}
	o.keys = slices.Delete(o.keys, i, i+1)
	o.vals = slices.Delete(o.vals, i, i+1)
	if o.spans != nil {
		o.spans = slices.Delete(o.spans, i, i+1)
	}
	if o.index != nil {
		o.reindex()
	}
	return true
}

// Keys returns the keys in order. The slice must not be changed.
func (o *Object) Keys() []string { return o.keys }

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Marshal encodes v as compact JSON without HTML escaping (see Object for the values).
func Marshal(v any) ([]byte, error) {
	return appendValue(nil, v)
}

func appendValue(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendString(b, x), nil
	case json.Number:
		return append(b, x...), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return appendFloat(b, x), nil
		}
	case *Object:
		return x.appendJSON(b)
	case map[string]any:
		o := &Object{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			o.Set(k, x[k])
		}
		return appendValue(b, o)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("cannot encode %T as JSON: %w", v, err)
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// appendFloat writes a computed number (a template's float) as Python's json writes a float,
// the CDK's spelling: repr, so an integral value keeps its ".0" (1485302400000.0) and a very
// large or small one takes an exponent (1e+16, 1.5e-05). Numbers read from an API are
// json.Number and keep the API's spelling.
func appendFloat(b []byte, f float64) []byte {
	if a := math.Abs(f); f != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	if !bytes.ContainsRune(b[start:], '.') {
		b = append(b, ".0"...)
	}
	return b
}

// appendString writes s as a JSON string as encoding/json does without HTML escaping: plain
// ASCII is copied, anything else goes through the encoder.
func appendString(b []byte, s string) []byte {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if special(w) {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(s)
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// special reports whether any of eight bytes is a quote, a backslash, a control character
// or not ASCII (the high bit of a lane says it; a borrow can only mark a lane above one
// that is marked already).
func special(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ (ones * '"')
	bs := w ^ (ones * '\\')
	return ((q-ones)&^q|(bs-ones)&^bs|(w-ones*0x20)|w)&highs != 0
}

// Decode decodes one JSON value as a read works with it: objects as *Object (keys in the
// order written; a key written twice keeps its last value at its first place, as Python's
// json does), arrays as []any, numbers as json.Number (spelled as sent), strings, bools and
// nil. Nesting is limited to maxDepth.
func Decode(data []byte) (any, error) {
	d := decoder{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.data) {
		return nil, d.fail("unexpected data after the JSON value")
	}
	return v, nil
}

// maxDepth bounds the nesting Decode reads, as responses are bounded (pkg/extract).
const maxDepth = 512

type decoder struct {
	data []byte
	i    int
}

func (d *decoder) fail(msg string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", d.i, msg)
}

func (d *decoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if d.i >= len(d.data) {
		return nil, d.fail("unexpected end")
	}
	switch c := d.data[d.i]; {
	case c == '{':
		if depth >= maxDepth {
			return nil, d.fail("nested too deep")
		}
		d.i++
		o := &Object{}
		d.space()
		if d.i < len(d.data) && d.data[d.i] == '}' {
			d.i++
			return o, nil
		}
		for {
			d.space()
			if d.i >= len(d.data) || d.data[d.i] != '"' {
				return nil, d.fail("expected a key")
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			d.space()
			if d.i >= len(d.data) || d.data[d.i] != ':' {
				return nil, d.fail("expected ':'")
			}
			d.i++
			d.space()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
			d.space()
			if d.i < len(d.data) && d.data[d.i] == ',' {
				d.i++
				continue
			}
			if d.i < len(d.data) && d.data[d.i] == '}' {
				d.i++
				return o, nil
			}
			return nil, d.fail("expected ',' or '}'")
		}
	case c == '[':
		if depth >= maxDepth {
			return nil, d.fail("nested too deep")
		}
		d.i++
		l := []any{}
		d.space()
		if d.i < len(d.data) && d.data[d.i] == ']' {
			d.i++
			return l, nil
		}
		for {
			d.space()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			d.space()
			if d.i < len(d.data) && d.data[d.i] == ',' {
				d.i++
				continue
			}
			if d.i < len(d.data) && d.data[d.i] == ']' {
				d.i++
				return l, nil
			}
			return nil, d.fail("expected ',' or ']'")
		}
	case c == '"':
		return d.str()
	case c == 't':
		return d.word("true", true)
	case c == 'f':
		return d.word("false", false)
	case c == 'n':
		return d.word("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, d.fail(fmt.Sprintf("unexpected %q", d.data[d.i]))
}

func (d *decoder) word(w string, v any) (any, error) {
	if !bytes.HasPrefix(d.data[d.i:], []byte(w)) {
		return nil, d.fail("invalid literal")
	}
	d.i += len(w)
	return v, nil
}

// number reads a JSON number and keeps its spelling.
func (d *decoder) number() (any, error) {
	start := d.i
	if d.data[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.i < len(d.data) && d.data[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, d.fail("invalid number")
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, d.fail("invalid number")
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, d.fail("invalid number")
		}
	}
	return json.Number(d.data[start:d.i]), nil
}

// str reads a JSON string: copied as it is when it has no escape, else through
// encoding/json.
func (d *decoder) str() (string, error) { return d.strAs(false) }

// key reads an object key: a plain one is interned (records repeat the same keys).
func (d *decoder) key() (string, error) { return d.strAs(true) }

func (d *decoder) strAs(intern bool) (string, error) {
	start := d.i
	if intern {
		// A plain key: no escape, no control character before its closing quote.
		if j := bytes.IndexByte(d.data[start+1:], '"'); j >= 0 {
			body := d.data[start+1 : start+1+j]
			if bytes.IndexByte(body, '\\') < 0 && !hasControl(body) {
				d.i = start + j + 2
				return internKey(body), nil
			}
		}
	}
	d.i++
	escaped := false
	for d.i < len(d.data) {
		switch c := d.data[d.i]; {
		case c == '"':
			d.i++
			if !escaped {
				if intern {
					return internKey(d.data[start+1 : d.i-1]), nil
				}
				return string(d.data[start+1 : d.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(d.data[start:d.i], &s); err != nil {
				d.i = start
				return "", d.fail("invalid string")
			}
			return s, nil
		case c == '\\':
			escaped = true
			d.i += 2
		case c < 0x20:
			return "", d.fail("control character in a string")
		default:
			d.i++
		}
	}
	return "", d.fail("unterminated string")
}

// Field returns the value of a top-level key of a JSON object, decoded (the last one when the
// key is written twice, as Python's json keeps); found is false when data is not an object
// or has no such key. Other values are skipped without being decoded.
func Field(data []byte, key string) (v any, found bool) {
	d := decoder{data: data}
	d.space()
	if d.i >= len(d.data) || d.data[d.i] != '{' {
		return nil, false
	}
	d.i++
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return v, found
		}
		k, err := d.str()
		if err != nil {
			return v, found
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return v, found
		}
		d.i++
		d.space()
		if k == key {
			x, err := d.value(1)
			if err != nil {
				return v, found
			}
			v, found = x, true
		} else if !d.skip() {
			return v, found
		}
		d.space()
		if d.i < len(d.data) && d.data[d.i] == ',' {
			d.i++
			continue
		}
		return v, found
	}
}

// skip moves past one JSON value without decoding it; false when the data ends first.
func (d *decoder) skip() bool {
	depth := 0
	for d.i < len(d.data) {
		switch c := d.data[d.i]; c {
		case '"':
			if !d.skipString() {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true // the end of a number or a word
			}
			depth--
			if depth == 0 {
				d.i++
				return true
			}
		case ',':
			if depth == 0 {
				return true
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return true
			}
		}
		d.i++
	}
	return depth == 0
}

func (d *decoder) skipString() bool {
	d.i++
	for {
		j := bytes.IndexByte(d.data[d.i:], '"')
		if j < 0 {
			d.i = len(d.data)
			return false
		}
		// The quote ends the string unless a backslash before it escapes it.
		bs := bytes.IndexByte(d.data[d.i:d.i+j], '\\')
		if bs < 0 {
			d.i += j + 1
			return true
		}
		d.i += bs + 2 // an escape and the byte it escapes
		if d.i > len(d.data) {
			return false
		}
	}
}
