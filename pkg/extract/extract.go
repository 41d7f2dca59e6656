// Package extract takes records out of a JSON response body in one pass.
//
// Records are kept as the bytes the API sent (compacted when the API sent whitespace), so key
// order and number spelling survive untouched; Go values are built only for what a template
// needs to read: the whole body (`response`), or the records themselves (`last_records`, a
// record filter).
package extract

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Wildcard is the field path segment that matches every key or index at its level.
const Wildcard = "*"

// Want says which Go values Parse must build besides the raw records.
type Want struct {
	// Body builds the whole decoded body (the `response` template variable).
	Body bool
	// Values builds a decoded value for every record (`last_records`, record filters).
	Values bool
	// LazyBody, with Body, makes a body that is an object an *Object, whose values are
	// decoded only when they are read.
	LazyBody bool
	// MaxRecords, when positive, is the most records a page may hold: the record after it
	// is a *TooManyRecordsError, so that a page of tiny records cannot make the records
	// take many times the memory of the body.
	MaxRecords int
	// Members notes where the members of each record that is an object are (see
	// Record.Members), for a stream that edits its records.
	Members bool
}

// Record is one extracted record.
type Record struct {
	// Raw is the record's JSON text, without insignificant whitespace. It aliases the body
	// unless the body had whitespace inside the record.
	Raw []byte
	// Value is the decoded record (map[string]any, []any, string, json.Number, bool or nil)
	// when Want.Values was set.
	Value any
	// Members, with Want.Members, is where the members of a record that is an object are
	// in Raw: three offsets each, in order, where its key's opening quote is and where its
	// value starts and ends, the key followed by its colon and its value with no space
	// between. It is nil when the parser could not tell (a record with whitespace, not an
	// object, nested deeply, or with Want.Values).
	Members []int32
}

// Page is a parsed response body.
type Page struct {
	Records []Record
	// Body is the decoded body when Want.Body was set (an *Object with Want.LazyBody).
	Body any
}

// SyntaxError is a body that is not valid JSON.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// NotRecordError is a field path that ends at a scalar: a record is an object (or a list
// of them).
type NotRecordError struct {
	Offset int
	Kind   string // "a number", "a string" or "a boolean"
}

func (e *NotRecordError) Error() string {
	return fmt.Sprintf("the field path ends at %s (byte %d), not at an object or a list of objects", e.Kind, e.Offset)
}

// TooManyRecordsError is a page with more records than Want.MaxRecords; Offset is where the
// first record too many starts, or, when Count is set, where the list of Count records that
// was counted before any was read starts.
type TooManyRecordsError struct {
	Max    int
	Offset int
	Count  int
}

func (e *TooManyRecordsError) Error() string {
	if e.Count > 0 {
		return fmt.Sprintf("more than %d records on one page (the list at byte %d holds %d)", e.Max, e.Offset, e.Count)
	}
	return fmt.Sprintf("more than %d records on one page (the record at byte %d is one too many)", e.Max, e.Offset)
}

// countFirst is the size of the rest of a body from which a list of records is counted
// before it is read.
const countFirst = 1 << 20

// ErrEmpty is returned for a body that holds nothing but whitespace.
var ErrEmpty = errors.New("empty response body")

// MaxDepth is how deeply a body may nest objects and lists. Deeper JSON is refused with a
// *DepthError rather than walked, so that no body can exhaust the stack or the memory of the
// walk; 512 levels is far more than any real API sends. Count refuses the same bodies.
const MaxDepth = 512

// DepthError is a body nested deeper than MaxDepth: Offset is the bracket that opens the
// level one too deep.
type DepthError struct {
	Offset int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("JSON nested deeper than %d levels at byte %d, a limit of connector", MaxDepth, e.Offset)
}

// Parse validates body as one JSON value and extracts the records at path. An empty path
// selects the whole body. A list found at a path without wildcards yields one record per
// element; an object yields one record, unless it is empty; null or a missing path yields
// no record. With wildcards, every value matched at the end of the path is one record. A
// body that is a list is read as the CDK's JSON decoder reads it: as a list of bodies, each
// element one, the path followed inside each.
func Parse(body []byte, path []string, want Want) (*Page, error) {
	p := parser{data: body, path: path, want: want}
	for i, s := range path {
		if s == Wildcard {
			p.wild = true
		}
		if i < 64 && pythonLiteral(s) {
			p.notKey |= 1 << i
		}
	}
	p.ws()
	if p.pos >= len(p.data) {
		return nil, ErrEmpty
	}
	page := &Page{}
	p.page = page
	start := p.pos
	lazy := want.Body && want.LazyBody && p.data[p.pos] == '{'
	if lazy && len(path) > 0 {
		// The scan walks the top-level object to follow the path, passing over every value:
		// it notes where each one is, so the Object need not scan the body a second time.
		// (With an empty path the body is itself the record and is skipped whole.)
		p.top = &Object{keys: []string{}, spans: map[string]span{}}
		p.topBase = start
	}
	var v any
	var err error
	if p.data[p.pos] == '[' {
		v, err = p.topList(want.Body)
	} else {
		v, err = p.value(0, true, want.Body && !lazy)
	}
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected %q after the JSON value", p.data[p.pos])
	}
	if p.notRecord != nil {
		return nil, p.notRecord
	}
	switch {
	case p.top != nil:
		p.top.raw = p.data[start:p.pos]
		slices.Sort(p.top.keys)
		page.Body = p.top
	case lazy:
		page.Body = &Object{raw: p.data[start:p.pos]} // indexed when first read
	case want.Body:
		page.Body = v
	}
	return page, nil
}

type parser struct {
	data []byte
	pos  int
	path []string
	wild bool
	// notKey has bit i set when path[i] matches no key of an object: the CDK reads every
	// segment of a field path as a Python literal, and a segment such as 0, 1.5 or True is
	// then a number or a boolean, which no key of a decoded JSON object equals (it still
	// indexes a list).
	notKey uint64
	want   Want
	page   *Page
	// spaced is set when whitespace was skipped inside the value being scanned.
	spaced bool
	// slow is set while a value that skip refused is scanned again by the parser.
	slow bool
	// nest is how many objects and lists enclose the scan (at most MaxDepth).
	nest int
	// notRecord is set when the field path ends at a scalar.
	notRecord *NotRecordError
	// top, when set, is the lazy Object of the body whose index the scan of the top-level
	// object fills in; topBase is where the body's object starts in data.
	top     *Object
	topBase int
	// spans holds the Record.Members of every record of the page (Want.Members).
	spans []int32
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

// enter counts the object or list that starts at pos as one more level of nesting; a
// level beyond MaxDepth is an error. Every successful return from the object or list
// leaves the level (an error ends the scan, so its count no longer matters).
func (p *parser) enter() error {
	if p.nest == MaxDepth {
		return &DepthError{Offset: p.pos}
	}
	p.nest++
	return nil
}

// ws skips whitespace and records whether there was any.
func (p *parser) ws() {
	start := p.pos
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			if p.pos != start {
				p.spaced = true
			}
			return
		}
	}
	if p.pos != start {
		p.spaced = true
	}
}

// value scans one value at the given depth of the field path. onPath says that every key
// so far matched the path. build says that a Go value must be returned.
func (p *parser) value(depth int, onPath, build bool) (any, error) {
	if onPath && depth == len(p.path) {
		return p.selected(build)
	}
	if !build && !onPath && !p.slow && p.nest <= MaxDepth-maxSkipDepth {
		// Nothing to build or to look for inside: validate it in one tight loop (which
		// follows at most maxSkipDepth levels, so stays within MaxDepth). On failure the
		// scan below finds and words the error, without trying skip again inside.
		end, spaced, ok := skip(p.data, p.pos)
		if ok {
			p.pos = end
			p.spaced = p.spaced || spaced
			return nil, nil
		}
		p.slow = true
		defer func() { p.slow = false }()
	}
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of body")
	}
	switch c := p.data[p.pos]; c {
	case '{':
		return p.object(depth, onPath, build)
	case '[':
		return p.array(depth, onPath, build)
	default:
		return p.scalar(build)
	}
}

// selected scans the value at the end of the field path and turns it into records.
func (p *parser) selected(build bool) (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of body")
	}
	if p.data[p.pos] == '[' && !p.wild {
		// A list: one record per element. A large one is counted first (a pass over its
		// brackets, quotes and commas), so that a list of more records than a page may hold
		// fails before any is made, and the records are made into a slice of their number.
		if cap(p.page.Records) == 0 && len(p.data)-p.pos > countFirst && p.nest < MaxDepth {
			if n, _, ok := countList(p.data, skipWS(p.data, p.pos+1), MaxDepth-p.nest-1); ok {
				if m := p.want.MaxRecords; m > 0 && n > m {
					return nil, &TooManyRecordsError{Max: m, Offset: p.pos, Count: n}
				}
				p.page.Records = make([]Record, 0, n)
			}
		}
		return p.arrayOf(build, p.add)
	}
	if p.data[p.pos] == 'n' && !p.wild {
		return p.scalar(build)
	}
	if !p.wild && emptyObject(p.data, p.pos) {
		// An empty object at the end of a path is no record, as in the CDK (which keeps
		// what it finds only when it is truthy).
		return p.value(-1, false, build)
	}
	if c := p.data[p.pos]; c != '{' && !p.wild {
		kind := "a number"
		switch c {
		case '"':
			kind = "a string"
		case 't', 'f':
			kind = "a boolean"
		}
		// Reported once the whole body is known to be valid JSON.
		if p.notRecord == nil {
			p.notRecord = &NotRecordError{Offset: p.pos, Kind: kind}
		}
		return p.scalar(build)
	}
	if err := p.roomForRecord(); err != nil {
		return nil, err
	}
	v, raw, members, err := p.recordValue(build)
	if err != nil {
		return nil, err
	}
	p.add(raw, recordValue(v, p.want.Values), members)
	return v, nil
}

// add appends a record to the page.
func (p *parser) add(raw []byte, v any, members []int32) {
	recs := p.page.Records
	if cap(recs) == 0 {
		// Guess from the first record how many follow, so that the slice is made once
		// rather than grown (a page of the largest size would leave more than its own size
		// in discarded copies). At most one record per 64 bytes that remain: a tiny first
		// record before large ones cannot reserve more than the body's size.
		left := len(p.data) - p.pos
		n := min(left/(len(raw)+1), left/64) + 1
		if p.want.MaxRecords > 0 {
			n = min(n, p.want.MaxRecords)
		}
		recs = make([]Record, 0, n)
	}
	p.page.Records = append(recs, Record{Raw: raw, Value: v, Members: members})
}

// emptyObject says whether d[i:] starts with an object that has no member.
func emptyObject(d []byte, i int) bool {
	if i >= len(d) || d[i] != '{' {
		return false
	}
	i = skipWS(d, i+1)
	return i < len(d) && d[i] == '}'
}

// topList scans a body that is a list. The CDK's JSON decoder makes each element of such a
// body a body of its own, and its extractor follows the field path inside each: so a path
// [] gives the elements (the items of an element that is itself a list), a path ["data"]
// the records under each element's "data", and a leading wildcard matches the keys of each
// element, not the elements. An element that is a number, a string or a boolean is a
// record at an empty path when Python would call it true.
func (p *parser) topList(build bool) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	if len(p.path) == 0 && len(p.data)-p.pos > countFirst && p.nest < MaxDepth {
		// A large list of records is counted first, so that its records are made into a
		// slice of their number (the elements that turn out to be no record aside).
		if n, _, ok := countList(p.data, skipWS(p.data, p.pos+1), MaxDepth-p.nest-1); ok {
			if m := p.want.MaxRecords; m > 0 {
				n = min(n, m+1)
			}
			p.page.Records = make([]Record, 0, n)
		}
	}
	list, empty := p.openList(build)
	if empty {
		return list, nil
	}
	for {
		p.ws()
		var v any
		var err error
		if c := p.at(); len(p.path) == 0 && c != '{' && c != '[' && c != 'n' {
			v, err = p.topScalar(build)
		} else {
			v, err = p.value(0, true, build)
		}
		if err != nil {
			return nil, err
		}
		if build {
			list = append(list, v)
		}
		if end, err := p.listNext(); err != nil {
			return nil, err
		} else if end {
			return list, nil
		}
	}
}

// at is the byte at pos, or 0 at the end of the body.
func (p *parser) at() byte {
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

// topScalar scans an element of a top-level list that is a number, a string or a boolean,
// read with an empty path: a record unless it is false, zero or an empty string.
func (p *parser) topScalar(build bool) (any, error) {
	start := p.pos
	v, err := p.scalar(build || p.want.Values)
	if err != nil {
		return nil, err
	}
	raw := p.data[start:p.pos]
	if truthyScalar(raw) {
		if err := p.roomForRecordAt(start); err != nil {
			return nil, err
		}
		p.add(raw, recordValue(v, p.want.Values), nil)
	}
	return v, nil
}

// truthyScalar says whether the JSON number, string or boolean raw is true to Python.
func truthyScalar(raw []byte) bool {
	switch raw[0] {
	case 'f':
		return false
	case 't':
		return true
	case '"':
		return len(raw) > 2
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return err != nil || f != 0
}

// roomForRecord says whether the record that starts at pos is within Want.MaxRecords.
func (p *parser) roomForRecord() error { return p.roomForRecordAt(p.pos) }

// roomForRecordAt says whether the record that starts at offset is within Want.MaxRecords.
func (p *parser) roomForRecordAt(offset int) error {
	if m := p.want.MaxRecords; m > 0 && len(p.page.Records) >= m {
		return &TooManyRecordsError{Max: m, Offset: offset}
	}
	return nil
}

func recordValue(v any, want bool) any {
	if want {
		return v
	}
	return nil
}

// recordValue scans a value that is a record: it returns its compacted raw text, with
// Want.Members where its members are, and, when build or Want.Values is set, its decoded
// value.
func (p *parser) recordValue(build bool) (any, []byte, []int32, error) {
	start := p.pos
	if p.want.Members && !build && !p.want.Values {
		if end, members, ok := p.members(); ok {
			p.pos = end
			return nil, p.data[start:end], members, nil
		}
	}
	saved := p.spaced
	p.spaced = false
	v, err := p.value(-1, false, build || p.want.Values)
	if err != nil {
		return nil, nil, nil, err
	}
	raw := p.data[start:p.pos]
	if p.spaced {
		raw = compact(raw)
	}
	p.spaced = saved || p.spaced
	return v, raw, nil, nil
}

// members validates the record at pos as skip does, member by member, noting where each
// member is (see Record.Members) in p.members. ok is false, and nothing noted, for a
// record that is not a compact object or that skip refuses: the caller then scans it the
// usual way, which compacts it or words the error.
func (p *parser) members() (end int, members []int32, ok bool) {
	d, start := p.data, p.pos
	// The record is one level, and skip follows maxSkipDepth more under each member.
	if start >= len(d) || d[start] != '{' || p.slow || p.nest >= MaxDepth-maxSkipDepth || len(d) >= 1<<31 {
		return 0, nil, false
	}
	mark := len(p.spans)
	i := start + 1
	if i < len(d) && d[i] == '}' {
		return i + 1, []int32{}, true
	}
	for {
		if i >= len(d) || d[i] != '"' {
			break
		}
		// A key is short and seldom has an escape: looked at byte by byte, and left to
		// skip when it has one.
		keyEnd := i + 1
		for keyEnd < len(d) && d[keyEnd] != '"' && d[keyEnd] != '\\' && d[keyEnd] >= 0x20 {
			keyEnd++
		}
		if keyEnd < len(d) && d[keyEnd] == '"' {
			keyEnd++
		} else if end, _, ok := skip(d, i); ok {
			keyEnd = end
		} else {
			break
		}
		if keyEnd >= len(d) || d[keyEnd] != ':' {
			break
		}
		valueEnd := scalarEnd(d, keyEnd+1)
		if valueEnd < 0 {
			end, spaced, ok := skip(d, keyEnd+1)
			if !ok || spaced {
				break
			}
			valueEnd = end
		}
		if valueEnd >= len(d) {
			break
		}
		p.spans = append(p.spans, int32(i-start), int32(keyEnd+1-start), int32(valueEnd-start))
		switch d[valueEnd] {
		case ',':
			i = valueEnd + 1
			continue
		case '}':
			if mark == 0 {
				p.reserveSpans(valueEnd + 1 - start)
			}
			return valueEnd + 1, p.spans[mark:len(p.spans):len(p.spans)], true
		}
		break
	}
	p.spans = p.spans[:mark]
	return 0, nil, false
}

// scalarEnd is the end of the string without escapes, the number, true, false or null at
// d[i], the most common values of a record, scanned here rather than by a call to skip; -1
// for any other value (or an invalid one), which skip is left to.
func scalarEnd(d []byte, i int) int {
	if i >= len(d) {
		return -1
	}
	switch c := d[i]; {
	case c == '-' || c-'0' < 10:
		return skipNumber(d, i)
	case c == 't' && len(d)-i >= 4 && string(d[i:i+4]) == "true", c == 'n' && len(d)-i >= 4 && string(d[i:i+4]) == "null":
		return i + 4
	case c == 'f' && len(d)-i >= 5 && string(d[i:i+5]) == "false":
		return i + 5
	case c != '"':
		return -1
	}
	for i++; i+8 <= len(d); i += 8 {
		if m := stop(binary.LittleEndian.Uint64(d[i:])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if d[i] == '"' {
				return i + 1
			}
			return -1
		}
	}
	for ; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1
		case c == '\\' || c < 0x20:
			return -1
		}
	}
	return -1
}

// reserveSpans makes room in p.spans, after the first record, for as many members per
// byte in the rest of the body as that record had.
func (p *parser) reserveSpans(first int) {
	n := len(p.spans) * (len(p.data) - p.pos) / first
	if n > cap(p.spans)-len(p.spans) {
		p.spans = append(make([]int32, 0, len(p.spans)+n+3*16), p.spans...)
	}
}

func (p *parser) arrayOf(build bool, emit func(raw []byte, v any, members []int32)) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	list, empty := p.openList(build)
	if empty {
		return list, nil
	}
	for {
		p.ws()
		if err := p.roomForRecord(); err != nil {
			return nil, err
		}
		v, raw, members, err := p.recordValue(build)
		if err != nil {
			return nil, err
		}
		emit(raw, recordValue(v, p.want.Values), members)
		if build {
			list = append(list, v)
		}
		if end, err := p.listNext(); err != nil {
			return nil, err
		} else if end {
			return list, nil
		}
	}
}

func (p *parser) object(depth int, onPath, build bool) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // {
	var m map[string]any
	if build {
		m = map[string]any{}
	}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.nest--
		return m, nil
	}
	// An object on the field path may hold the key the path follows more than once. Like
	// Python's json.loads, which the Airbyte CDK parses bodies with, the last value wins:
	// the records found under an earlier one are dropped (see repeat).
	var r repeat
	if onPath && depth >= 0 && depth < len(p.path) {
		r = repeat{wild: p.path[depth] == Wildcard, base: len(p.page.Records), notRecord: p.notRecord}
	}
	for {
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("expected a quoted key in an object")
		}
		// Keys are compared in place; a string is made only for a map being built.
		start := p.pos + 1
		escaped, err := p.skipString()
		if err != nil {
			return nil, err
		}
		key := p.data[start : p.pos-1]
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("expected : after an object key")
		}
		p.pos++
		p.ws()
		next := onPath && depth >= 0 && depth < len(p.path) &&
			(p.path[depth] == Wildcard || p.notKey&(1<<depth) == 0 && keyIs(key, escaped, p.path[depth]))
		valueStart := p.pos
		var k string
		if next {
			k = r.enter(p, key, escaped)
		}
		v, err := p.value(depth+1, next, build)
		if err != nil {
			return nil, err
		}
		if next {
			r.leave(p, k)
		}
		if p.nest == 1 && p.top != nil { // a member of the body's object (depth counts only the path)
			p.top.note(keyString(key, escaped), valueStart-p.topBase, p.pos-p.topBase)
		}
		if build {
			m[keyString(key, escaped)] = v
		}
		p.ws()
		if p.pos >= len(p.data) {
			return nil, p.errorf("unexpected end of body inside an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.nest--
			return m, nil
		default:
			return nil, p.errorf("expected , or } in an object, found %q", p.data[p.pos])
		}
	}
}

// repeat keeps, for an object on the field path, the records of the last value of each key
// the path follows, as a decoded map would hold them: a key written twice keeps its first
// place and its last value.
type repeat struct {
	wild bool // the path matches every key of the object
	// With a plain key: whether it was met already, the number of records before the
	// object, and the scalar-at-the-path error as it was then.
	met       bool
	base      int
	notRecord *NotRecordError
	// With a wildcard: where each key's records are, in the order the keys first came, and
	// where the records of the value being scanned must go.
	members []keyRecords
	at      int
	start   int
}

// keyRecords is the records of one key's value under a wildcard: Records[start:end].
type keyRecords struct {
	key        string
	start, end int
}

// enter is called before the value of a key that the path follows; it returns the key as
// a string when the path is a wildcard (and "" otherwise).
func (r *repeat) enter(p *parser, raw []byte, escaped bool) string {
	if !r.wild {
		if r.met {
			p.page.Records = p.page.Records[:r.base]
			p.notRecord = r.notRecord
		}
		r.met = true
		return ""
	}
	key := keyString(raw, escaped)
	r.at, r.start = len(r.members), len(p.page.Records)
	for i, m := range r.members {
		if m.key != key {
			continue
		}
		// Drop the earlier value's records now, so that they do not count against
		// Want.MaxRecords; the new ones take their place in leave.
		n := m.end - m.start
		p.page.Records = slices.Delete(p.page.Records, m.start, m.end)
		for j := i + 1; j < len(r.members); j++ {
			r.members[j].start -= n
			r.members[j].end -= n
		}
		r.at, r.start = i, len(p.page.Records)
		break
	}
	return key
}

// leave is called after the value of a key that the path follows.
func (r *repeat) leave(p *parser, key string) {
	if !r.wild {
		return
	}
	recs := p.page.Records
	end := len(recs)
	if r.at == len(r.members) {
		r.members = append(r.members, keyRecords{key: key, start: r.start, end: end})
		return
	}
	// A repeated key: its new records move from the end back to its first place.
	m := &r.members[r.at]
	n := end - r.start
	if n > 0 && m.start < r.start {
		slices.Reverse(recs[m.start:r.start])
		slices.Reverse(recs[r.start:end])
		slices.Reverse(recs[m.start:end])
	}
	m.end = m.start + n
	for j := r.at + 1; j < len(r.members); j++ {
		r.members[j].start += n
		r.members[j].end += n
	}
}

func (p *parser) array(depth int, onPath, build bool) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	list, empty := p.openList(build)
	if empty {
		return list, nil
	}
	// The element the path follows: every one for a wildcard, else the one at the index
	// the segment reads as (none when it reads as no index).
	follow, all := -1, false
	if onPath && depth >= 0 && depth < len(p.path) {
		if all = p.path[depth] == Wildcard; !all {
			follow = p.listIndex(p.path[depth])
		}
	}
	for i := 0; ; i++ {
		p.ws()
		next := all || i == follow
		v, err := p.value(depth+1, next, build)
		if err != nil {
			return nil, err
		}
		if build {
			list = append(list, v)
		}
		if end, err := p.listNext(); err != nil {
			return nil, err
		} else if end {
			return list, nil
		}
	}
}

// listIndex is the index of the list that starts just before pos that the path segment
// seg selects, or -1, as the CDK indexes a list with a segment read as a Python literal:
// an integer, a float (its integer part) or a boolean (True is 1); a negative one counts
// from the end of the list.
func (p *parser) listIndex(seg string) int {
	n, err := strconv.Atoi(seg)
	if err != nil || (len(seg) > 1 && seg[0] == '0') || seg[0] == '+' {
		// Not a plain index: read it as Python would, when it reads as a number or a boolean.
		if !pythonLiteral(seg) {
			return -1
		}
		switch t := strings.Trim(seg, " \t"); t {
		case "True":
			return 1
		case "False":
			return 0
		case "None":
			return -1
		default:
			f, err := strconv.ParseFloat(t, 64)
			if err != nil || f >= 1<<31 || f <= -(1<<31) {
				return -1
			}
			n = int(f)
		}
	}
	if n < 0 {
		count, _, ok := countList(p.data, p.pos, MaxDepth-p.nest)
		if !ok || count+n < 0 {
			return -1
		}
		n += count
	}
	return n
}

func (p *parser) scalar(build bool) (any, error) {
	c := p.data[p.pos]
	switch {
	case c == '"':
		return p.str(build)
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(build)
	}
	return nil, p.errorf("unexpected %q", c)
}

func (p *parser) literal(word string, v any) (any, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return nil, p.errorf("invalid literal")
	}
	p.pos += len(word)
	return v, nil
}

// pythonLiteral says whether Python's ast.literal_eval reads s as a number, a boolean or
// None: True, False, None, or a decimal number (optional sign, digits, decimal point,
// exponent; an integer of several digits may not start with 0), spaces around aside.
// Other literals (hexadecimal, underscores, containers) are left out: no field path has
// them.
func pythonLiteral(s string) bool {
	s = strings.Trim(s, " \t")
	switch s {
	case "True", "False", "None":
		return true
	case "":
		return false
	}
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	intPart := len(s) - len(strings.TrimLeft(s, "0123456789"))
	digits, rest := s[:intPart], s[intPart:]
	frac := 0
	if strings.HasPrefix(rest, ".") {
		rest = rest[1:]
		frac = len(rest) - len(strings.TrimLeft(rest, "0123456789"))
		rest = rest[frac:]
		if digits == "" && frac == 0 {
			return false
		}
	} else if digits == "" || len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" && !strings.HasPrefix(rest, "e") && !strings.HasPrefix(rest, "E") {
		return false
	}
	if rest != "" && (rest[0] == 'e' || rest[0] == 'E') {
		rest = strings.TrimLeft(rest[1:], "+-")
		exp := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
		if exp == 0 || len(digits)+frac == 0 {
			return false
		}
		rest = rest[exp:]
	}
	return rest == ""
}

// openList steps into a list at its [: the list to fill (nil unless build), and whether it
// is empty, then read whole, its ] passed and its level left.
func (p *parser) openList(build bool) (list []any, empty bool) {
	p.pos++ // [
	if build {
		list = []any{}
	}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.nest--
		return list, true
	}
	return list, false
}

// listNext reads what follows an element of a list: a comma (more elements follow) or the
// closing bracket (end is true, and the list's nesting is left).
func (p *parser) listNext() (end bool, err error) {
	p.ws()
	if p.pos >= len(p.data) {
		return false, p.errorf("unexpected end of body inside a list")
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case ']':
		p.pos++
		p.nest--
		return true, nil
	}
	return false, p.errorf("expected , or ] in a list, found %q", p.data[p.pos])
}
