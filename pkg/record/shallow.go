package record

import "bytes"

// span is where member i of a Shallow object is in its raw text, and what of it still
// holds. end == 0: nothing, vals[i] holds the value (one set since, or a container that was
// decoded and may have been changed through the reference handed out).
type span struct {
	key        int32 // the key's opening quote
	start, end int32 // the value
	flags      uint8
}

const (
	// read: vals[i] holds the decoded value, and raw[start:end] is still exactly how
	// appendValue would write it (a number, true, false, null, or a string of plain ASCII
	// without escapes), so the encoder copies the text.
	read uint8 = 1 << iota
	// tight: raw[key:end] is the member exactly as the encoder writes it, `"key":value`,
	// the key plain ASCII with no space around the colon, so it is copied whole, and with
	// the members after it when they follow it in raw with only a comma between.
	tight
)

// Shallow reads a JSON object whose text is known to be valid (a record the page parser
// extracted) into an Object whose values stay JSON text until they are read: a
// transformation that touches two keys of a record decodes two values, and the others are
// written back as they came, copied with their keys. The values share data's memory: the
// Object must not outlive it. ok is false when data is not an object. Text that is not
// valid JSON gives no panic, but no promise either.
func Shallow(data []byte) (*Object, bool) { return (*Arena)(nil).Shallow(data) }

// Arena makes the Objects of many records out of a few large allocations rather than four
// each (the object, its keys, its values, where they are): the records of the pages one
// goroutine reads. An Object it makes is like any other (it may grow), until Reset gives
// its memory to the Objects made next. The zero Arena is ready; a nil *Arena allocates
// each Object on its own.
type Arena struct {
	// objs and the slots (keys, vals, spans) are the memory being handed out, up to nobj
	// and nslot so far; each is made twice as large when it is used up.
	objs        []Object
	keys        []string
	vals        []any
	spans       []span
	nobj, nslot int
	// last is the keys of the last object ShallowAt read (nil: none to compare with).
	last []string
}

const (
	arenaObjects = 128
	arenaSlots   = 2048
	// room is how many keys an Object read with ShallowAt can gain before it grows.
	room = 4
)

// Reset gives the memory of every Object the Arena made to the Objects it makes next.
// Call it only when none of them is used any more: the records of a page once the page
// is written and decided on.
func (a *Arena) Reset() { a.nobj, a.nslot = 0, 0 }

// object is an empty Object of data with room for n keys.
func (a *Arena) object(data []byte, n int) *Object {
	if a == nil {
		return &Object{keys: make([]string, 0, n), vals: make([]any, 0, n), raw: data, spans: make([]span, 0, n)}
	}
	if a.nobj == len(a.objs) {
		a.objs, a.nobj = make([]Object, max(2*len(a.objs), arenaObjects)), 0
	}
	if a.nslot+n > len(a.keys) {
		size := max(2*len(a.keys), n, arenaSlots)
		a.keys, a.vals, a.spans, a.nslot = make([]string, size), make([]any, size), make([]span, size), 0
	}
	o := &a.objs[a.nobj]
	a.nobj++
	i, j := a.nslot, a.nslot+n
	a.nslot = j
	*o = Object{keys: a.keys[i:i:j], vals: a.vals[i:i:j], raw: data, spans: a.spans[i:i:j]}
	return o
}

// Shallow is the package's Shallow, the Object made by the Arena.
func (a *Arena) Shallow(data []byte) (*Object, bool) {
	if len(data) >= 1<<31 {
		return nil, false
	}
	i := spaceEnd(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	o := a.object(data, 16)
	if i = spaceEnd(data, i+1); i < len(data) && data[i] == '}' {
		return o, true
	}
	var seen uint64
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		keyAt := i
		keyEnd := stringEnd(data, i)
		if keyEnd < 0 {
			return nil, false
		}
		i = spaceEnd(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = spaceEnd(data, i+1)
		start := i
		if i = valueEnd(data, i); i <= start {
			return nil, false
		}
		if !o.add(data, keyAt, keyEnd, start, i, &seen) {
			return nil, false
		}
		if i = spaceEnd(data, i); i < len(data) && data[i] == ',' {
			i = spaceEnd(data, i+1)
			continue
		}
		if len(o.keys) > indexFrom {
			o.reindex()
		}
		return o, i < len(data) && data[i] == '}'
	}
}

// ShallowAt is Shallow for an object whose members the page parser found already (see
// extract.Record.Members): three offsets into data for each member, in order, where its
// key's opening quote is and where its value starts and ends, the key followed by its
// colon and its value with no space between. nil members (the parser could not tell) read
// data as Shallow does.
func (a *Arena) ShallowAt(data []byte, members []int32) (*Object, bool) {
	n := len(members) / 3
	if members == nil || len(members)%3 != 0 || len(data) >= 1<<31 {
		return a.Shallow(data)
	}
	o := a.object(data, n+room)
	var seen uint64
	// same: the keys so far are those of the last object read, in the same places (the
	// records of a page mostly have the same keys): no key needs hashing or checking.
	same := a != nil && a.last != nil && len(a.last) == n
	for m := range n {
		k, v, e := int(members[3*m]), int(members[3*m+1]), int(members[3*m+2])
		if k < 0 || v < k+3 || e <= v || e > len(data) {
			return a.Shallow(data) // not what the parser notes: read it all again
		}
		if same {
			if key := a.last[m]; string(data[k+1:v-2]) == key {
				o.keys = append(o.keys, key)
				o.vals = append(o.vals, nil)
				o.spans = append(o.spans, span{key: int32(k), start: int32(v), end: int32(e), flags: tight})
				continue
			}
			same = false
			for _, key := range o.keys {
				seen |= 1 << (keyHash(key) & 63)
			}
		}
		if !o.add(data, k, v-1, v, e, &seen) {
			return nil, false
		}
	}
	if !same && a != nil {
		a.remember(o)
	}
	if len(o.keys) > indexFrom {
		o.reindex()
	}
	return o, true
}

// remember keeps the keys of an object ShallowAt read for the next one, when they are
// plain, each in its place and none repeated (then they need no checking next time).
func (a *Arena) remember(o *Object) {
	a.last = a.last[:0]
	for i := range o.spans {
		if o.spans[i].flags&tight == 0 {
			a.last = nil
			return
		}
	}
	a.last = append(a.last, o.keys...)
}

// add adds the member of data whose key is data[key:keyEnd] (quotes included) and whose
// value is data[start:end]. seen has a bit per hash of the keys so far: a key whose bit is
// clear is no repeat, and is not looked for among the others. false: the key is not a
// valid JSON string.
func (o *Object) add(data []byte, key, keyEnd, start, end int, seen *uint64) bool {
	body := data[key+1 : keyEnd-1]
	// keyHash and plainASCII in one pass.
	h, plain := uint32(2166136261), true
	for _, c := range body {
		h = (h ^ uint32(c)) * 16777619
		plain = plain && c >= 0x20 && c < 0x80 && c != '\\'
	}
	sp := span{key: int32(key), start: int32(start), end: int32(end)}
	var k string
	if plain {
		k = internHashed(body, h)
		if start == keyEnd+1 {
			sp.flags = tight
		}
	} else {
		d := decoder{data: data, i: key}
		var err error
		if k, err = d.key(); err != nil {
			return false
		}
		h = keyHash(k) // the key's own bytes: "\u00e9" is "é"
	}
	if bit := uint64(1) << (h & 63); *seen&bit != 0 {
		if j := o.find(k); j >= 0 {
			// A key written twice: the last value, at the first place.
			o.vals[j], o.spans[j] = nil, span{start: sp.start, end: sp.end}
			return true
		}
	} else {
		*seen |= bit
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, nil)
	o.spans = append(o.spans, sp)
	return true
}

// value is the i-th value, decoded now if Shallow left it as text.
func (o *Object) value(i int) any {
	if o.spans == nil {
		return o.vals[i]
	}
	sp := &o.spans[i]
	if sp.end == 0 || sp.flags&read != 0 {
		return o.vals[i]
	}
	v, same := decodeText(o.raw[sp.start:sp.end])
	o.vals[i] = v
	if same {
		sp.flags |= read
	} else {
		*sp = span{}
	}
	return v
}

// decodeText decodes one valid JSON value; same reports that appendValue writes the value
// back as this very text.
func decodeText(text []byte) (v any, same bool) {
	switch c := text[0]; {
	case c == '"':
		body := text[1 : len(text)-1]
		if plainASCII(body) {
			return string(body), true
		}
	case c == 't' && string(text) == "true":
		return true, true
	case c == 'f' && string(text) == "false":
		return false, true
	case c == 'n' && string(text) == "null":
		return nil, true
	case c == '-' || c >= '0' && c <= '9':
		if v, err := Decode(text); err == nil {
			return v, true // json.Number, spelled as sent
		}
		return nil, false
	}
	v, err := Decode(text)
	if err != nil {
		return nil, false // unreachable: Shallow's input was validated JSON
	}
	return v, false
}

// StrBytes is the text a template writes for the value of k ({{ record.k }}), when the
// value is still the JSON text it came as and that text holds it as is: a string without
// escapes (its characters), or a number (its spelling). The bytes are the object's: not
// to be changed. ok is false otherwise, and Get gives the value.
func (o *Object) StrBytes(k string) ([]byte, bool) {
	i := o.find(k)
	if i < 0 || o.spans == nil || o.spans[i].end == 0 {
		return nil, false
	}
	sp := o.spans[i]
	text := o.raw[sp.start:sp.end]
	switch c := text[0]; {
	case c == '"':
		if body := text[1 : len(text)-1]; bytes.IndexByte(body, '\\') < 0 {
			return body, true
		}
	case c == '-' || c >= '0' && c <= '9':
		return text, true
	}
	return nil, false
}

// Has reports whether the object has the key, without decoding its value.
func (o *Object) Has(k string) bool { return o.find(k) >= 0 }

// appendJSON encodes the object: a member still as Shallow found it is copied from the
// raw text, with the members that follow it there.
func (o *Object) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	var err error
	for i := 0; i < len(o.keys); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		if o.spans != nil && o.spans[i].end > 0 {
			sp := o.spans[i]
			if sp.flags&tight == 0 {
				b = appendString(b, o.keys[i])
				b = append(b, ':')
				b = append(b, o.raw[sp.start:sp.end]...)
				continue
			}
			end := sp.end
			for i+1 < len(o.spans) {
				next := o.spans[i+1]
				if next.flags&tight == 0 || next.key != end+1 {
					break
				}
				i, end = i+1, next.end
			}
			b = append(b, o.raw[sp.key:end]...)
			continue
		}
		b = appendString(b, o.keys[i])
		b = append(b, ':')
		if b, err = appendValue(b, o.vals[i]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// plainASCII reports whether the body of a JSON string is written as is by appendString:
// printable ASCII without an escape.
func plainASCII(body []byte) bool {
	for _, c := range body {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// spaceEnd is the index of the first byte at or after i that is not JSON whitespace.
func spaceEnd(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd is the index after the JSON string whose opening quote is at d[i], or -1.
func stringEnd(d []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		// The quote ends the string unless an odd number of backslashes is before it.
		n := 0
		for b := j - 1; b > i && d[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// structural marks the bytes a scan of a valid object or list stops at.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// valueEnd is the index after the valid JSON value at d[i] (-1 or i when there is none):
// strings and containers are followed to their end, numbers and words to the next
// delimiter.
func valueEnd(d []byte, i int) int {
	if i >= len(d) {
		return -1
	}
	switch d[i] {
	case '"':
		return stringEnd(d, i)
	case '{', '[':
		depth := 0
		for i < len(d) {
			if !structural[d[i]] {
				i++
				continue
			}
			switch d[i] {
			case '"':
				if i = stringEnd(d, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			default:
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(d) {
		switch d[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
