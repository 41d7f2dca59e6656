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
	"slices"
	"strconv"
)

// Record is one record to write. Exactly one of Raw and Object is set.
type Record struct {
	// Raw is the record's JSON text as the API sent it (compact). It may share the memory of
	// the page it came from: it is valid only until the emitter it is handed to returns.
	Raw []byte
	// Object is a record a transformation edited.
	Object *Object
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
	vals map[string]any
}

// Set adds or replaces a key; a new key goes last, an existing key keeps its place.
func (o *Object) Set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Get returns the value of a key.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.vals[k]
	return v, ok
}

// Delete removes a key; the others keep their order.
func (o *Object) Delete(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(x string) bool { return x == k })
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
	case *Object:
		b = append(b, '{')
		for i, k := range x.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, err = appendValue(b, x.vals[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
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

// appendString writes s as a JSON string as encoding/json does without HTML escaping: plain
// ASCII is copied, anything else goes through the encoder.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
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

// Decode decodes one JSON value as a read works with it: objects as *Object (keys in the
// order written; a key written twice keeps its last value at its first place, as Python's
// json does), arrays as []any, numbers as json.Number (spelled as sent), strings, bools and
// nil.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Set(kt.(string), v)
			}
			_, err := dec.Token() // '}'
			return o, err
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token() // ']'
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}
