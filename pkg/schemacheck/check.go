// Package schemacheck finds what an author should know about the records a read returned,
// measured against the stream as the definition declares it: records that do not fit the
// declared schema, a primary key missing or repeated, a stream that returned nothing. It also
// lays the schema inferred from the records beside the declared one, field by field, and
// writes the inferred one as YAML to paste into the definition.
//
// Records are checked in the order the read returned them; each warning names the record by
// its number in that order (1 for the first) and the place in it by a JSON pointer.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"connector/pkg/record"
	"connector/pkg/values"
)

// Kind is the kind of a warning.
type Kind string

// The kinds of warnings, in the order a report lists their counts.
const (
	// Mismatch: a record does not fit the declared schema.
	Mismatch Kind = "schema_mismatch"
	// KeyMissing: a record lacks a field of the primary key, or has null there.
	KeyMissing Kind = "primary_key_missing"
	// KeyDuplicate: a record's primary key is that of an earlier record.
	KeyDuplicate Kind = "primary_key_duplicate"
	// NoRecords: the stream returned no record.
	NoRecords Kind = "no_records"
)

// Kinds are every kind, in the order reports list them.
var Kinds = []Kind{Mismatch, KeyMissing, KeyDuplicate, NoRecords}

// kindWords are how a person reads a kind, one and many.
var kindWords = map[Kind][2]string{
	Mismatch:     {"schema mismatch", "schema mismatches"},
	KeyMissing:   {"missing primary key", "missing primary keys"},
	KeyDuplicate: {"repeated primary key", "repeated primary keys"},
	NoRecords:    {"stream without records", "streams without records"},
}

// Count words n warnings of the kind: "1 schema mismatch", "3 repeated primary keys".
func (k Kind) Count(n int) string {
	w, ok := kindWords[k]
	if !ok {
		w = [2]string{string(k), string(k)}
	}
	if n == 1 {
		return "1 " + w[0]
	}
	return fmt.Sprintf("%d %s", n, w[1])
}

// Warning is one thing found in the records.
type Warning struct {
	Kind Kind `json:"kind"`
	// Record is the number of the record in the read, 1 for the first; 0 for a warning
	// about the stream (no records).
	Record int `json:"record"`
	// Pointer is the place in the record as a JSON pointer ("" for the whole record).
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	switch {
	case w.Record == 0:
		return w.Message
	case w.Pointer == "":
		return fmt.Sprintf("record %d: %s", w.Record, w.Message)
	}
	return fmt.Sprintf("record %d %s: %s", w.Record, w.Pointer, w.Message)
}

// DefaultMax is how many warnings a Checker keeps unless told otherwise; every warning is
// counted all the same.
const DefaultMax = 1000

// Checker checks the records of one stream, one at a time. The zero value is not ready: use
// New.
type Checker struct {
	// Max is the most warnings kept (0: DefaultMax); those past it are only counted.
	Max int

	schema *values.Schema // nil: no declared schema to check against
	pk     [][]string
	seen   map[string]int // a primary key's canonical text → the first record that had it
	n      int
	kept   []Warning
	counts map[Kind]int
}

// New returns a checker for a stream whose declared schema is declared (as record.Decode or
// encoding/json decodes JSON; nil or {} when the stream declares none: no record is then
// checked against it) and whose primary key is pk (field paths, as
// manifest.Stream.PrimaryKeyPaths gives them; nil for none). A declared schema that is not
// a valid JSON schema is an error, and the checker returned still checks the primary key.
func New(declared any, pk [][]string) (*Checker, error) {
	c := &Checker{pk: pk, seen: map[string]int{}, counts: map[Kind]int{}}
	m, _ := Plain(declared).(map[string]any)
	if len(m) == 0 {
		return c, nil
	}
	s, err := values.CompileSchema(m)
	if err != nil {
		return c, fmt.Errorf("the declared schema is not a valid JSON schema: %w", err)
	}
	c.schema = s
	return c, nil
}

// AddJSON checks the next record, given as JSON text.
func (c *Checker) AddJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Errorf("record %d is not JSON: %w", c.n+1, err)
	}
	c.Add(v)
	return nil
}

// Add checks the next record, decoded (as record.Decode or encoding/json with UseNumber
// decode JSON).
func (c *Checker) Add(rec any) {
	c.n++
	v := Plain(rec)
	if c.schema != nil {
		for _, x := range c.schema.Check(v) {
			c.warn(Warning{Kind: Mismatch, Record: c.n, Pointer: x.Pointer, Message: x.Message})
		}
	}
	if len(c.pk) > 0 {
		c.checkKey(v)
	}
}

// checkKey finds a primary key field missing or null, else a key an earlier record had.
func (c *Checker) checkKey(v any) {
	parts := make([]any, len(c.pk))
	for i, path := range c.pk {
		x, ok := at(v, path)
		if !ok || x == nil {
			what := "missing"
			if ok {
				what = "null"
			}
			c.warn(Warning{Kind: KeyMissing, Record: c.n, Pointer: pointer(path),
				Message: fmt.Sprintf("primary key field %s is %s", strings.Join(path, "."), what)})
			return
		}
		parts[i] = x
	}
	b, _ := json.Marshal(parts)
	key := string(b)
	if first, ok := c.seen[key]; ok {
		c.warn(Warning{Kind: KeyDuplicate, Record: c.n, Pointer: pointer(c.pk[0]),
			Message: fmt.Sprintf("primary key %s already in record %d", describeKey(c.pk, parts), first)})
		return
	}
	c.seen[key] = c.n
}

// describeKey says a primary key with its values: "id = 42", "(id, region) = (42, "eu")".
func describeKey(pk [][]string, parts []any) string {
	names := make([]string, len(pk))
	vals := make([]string, len(parts))
	for i, p := range pk {
		names[i] = strings.Join(p, ".")
		b, _ := json.Marshal(parts[i])
		if vals[i] = string(b); len(vals[i]) > 60 {
			vals[i] = vals[i][:57] + "…"
		}
	}
	if len(pk) == 1 {
		return names[0] + " = " + vals[0]
	}
	return "(" + strings.Join(names, ", ") + ") = (" + strings.Join(vals, ", ") + ")"
}

func (c *Checker) warn(w Warning) {
	c.counts[w.Kind]++
	max := c.Max
	if max <= 0 {
		max = DefaultMax
	}
	if len(c.kept) < max {
		c.kept = append(c.kept, w)
	}
}

// Report is what a checker found.
type Report struct {
	// Records is how many records were checked.
	Records int `json:"records"`
	// Warnings are the warnings kept (Checker.Max at most), in record order.
	Warnings []Warning `json:"warnings"`
	// Counts counts every warning by kind, kept or not; a kind without warnings is absent.
	Counts map[Kind]int `json:"counts"`
}

// Total is the number of warnings, kept or not.
func (r Report) Total() int {
	n := 0
	for _, c := range r.Counts {
		n += c
	}
	return n
}

// Finish ends the check: a stream without records gets its warning.
func (c *Checker) Finish() Report {
	if c.n == 0 {
		c.warn(Warning{Kind: NoRecords, Message: "the stream returned no records"})
	}
	return Report{Records: c.n, Warnings: c.kept, Counts: c.counts}
}

// at is the value at a field path in a record, and whether it is there.
func at(v any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// pointer writes a field path as a JSON pointer.
func pointer(path []string) string {
	var b strings.Builder
	for _, k := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// Plain turns a decoded JSON value whose objects are *record.Object into one of
// map[string]any, as the schema checker reads values; other values are kept as they are.
func Plain(v any) any {
	switch x := v.(type) {
	case *record.Object:
		m := make(map[string]any, x.Len())
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			m[k] = Plain(e)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = Plain(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Plain(e)
		}
		return out
	}
	return v
}
