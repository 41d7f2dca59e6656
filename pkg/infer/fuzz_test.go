package infer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"connector/pkg/record"
	"connector/pkg/values"
)

// gen makes records out of fuzz bytes: each byte decides one thing, and the bytes running
// out make the rest null. Keys come from a small set so that records share fields.
type gen struct {
	b []byte
	i int
}

var fuzzKeys = []string{"id", "a", "b", "updated_at", "it's", "ünï", ""}

func (g *gen) next() int {
	if g.i >= len(g.b) {
		return 0
	}
	g.i++
	return int(g.b[g.i-1])
}

func (g *gen) value(depth int) string {
	c := g.next()
	if depth <= 0 && c%9 >= 7 {
		c = 0
	}
	switch c % 9 {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[g.next()%2]
	case 2:
		return []string{"0", "-7", "1686058051", "1686058051000", "123456789012345678901234567890"}[g.next()%5]
	case 3:
		return []string{"1.5", "-0.0", "1e300", "1E-5", "1686058051.0"}[g.next()%5]
	case 4, 5:
		return []string{`""`, `"x"`, `"2022-02-03"`, `"2022-02-03T12:34:56Z"`, `"1686058051"`, `"03/02/2022 12:34"`, `"\u0000\n"`}[g.next()%7]
	case 7:
		n := g.next() % 4
		items := make([]string, n)
		for i := range items {
			items[i] = g.value(depth - 1)
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	return g.object(depth - 1)
}

// object writes an object, at times with a key twice.
func (g *gen) object(depth int) string {
	n := g.next() % 5
	members := make([]string, n)
	for i := range members {
		k, _ := json.Marshal(fuzzKeys[g.next()%len(fuzzKeys)])
		members[i] = string(k) + ":" + g.value(depth)
	}
	return "{" + strings.Join(members, ",") + "}"
}

func (g *gen) paths() [][]string {
	var out [][]string
	for range g.next() % 3 {
		path := []string{}
		for range g.next() % 3 {
			path = append(path, fuzzKeys[g.next()%len(fuzzKeys)])
		}
		out = append(out, path)
	}
	return out
}

// FuzzSchemaInferrer checks, for generated records, that inference neither panics nor
// fails, gives the same bytes twice, and gives a schema that every record fits (with our
// draft-07 checker): all of them without key paths, and with key paths those that have
// each path, with values that are not null along it.
func FuzzSchemaInferrer(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 8, 4, 1, 2, 8, 2, 0, 0, 1})
	f.Add([]byte("\x05\x02\x08\x04\x00\x07\x07\x03\x01\x04\x02\x00\x06\x05\x03\x08\x02\x01\x04\x06"))
	f.Add(bytes.Repeat([]byte{8, 3, 7, 2, 6, 5, 4, 1}, 16))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		pk, cursor := g.paths(), g.paths()
		var texts []string
		for range 1 + g.next()%6 {
			texts = append(texts, g.object(3))
		}
		// infer returns the schema, its problems, the datetime formats and the error.
		infer := func() (string, []string, string, error) {
			s := NewSchemaInferrer(pk, cursor)
			var d DatetimeFormats
			for _, text := range texts {
				v := decode(t, text)
				if err := s.Accumulate("s", v); err != nil {
					t.Fatalf("Accumulate(%s): %v", text, err)
				}
				if err := d.Accumulate(v); err != nil {
					t.Fatalf("DatetimeFormats.Accumulate(%s): %v", text, err)
				}
			}
			schema, problems, err := s.Schema("s")
			again, problems2, err2 := s.Schema("s")
			if marshal(t, schema) != marshal(t, again) || !slices.Equal(problems, problems2) || fmt.Sprint(err) != fmt.Sprint(err2) {
				t.Fatalf("a second Schema call differs")
			}
			formats := d.Formats()
			first := decode(t, texts[0]).(*record.Object)
			var at []int
			for _, k := range formats.Keys() {
				at = append(at, slices.Index(first.Keys(), k))
			}
			if slices.Contains(at, -1) || !slices.IsSorted(at) {
				t.Fatalf("datetime fields %q are not fields of the first record %s in its order", formats.Keys(), texts[0])
			}
			return marshal(t, schema), problems, marshal(t, formats), err
		}
		schema, problems, formats, err := infer()
		schema2, problems2, formats2, err2 := infer()
		if schema != schema2 || !slices.Equal(problems, problems2) || fmt.Sprint(err) != fmt.Sprint(err2) || formats != formats2 {
			t.Fatalf("two inferences differ:\n%s\n%s", schema, schema2)
		}
		if err != nil {
			var ke *KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("Schema: %v", err)
			}
			return
		}
		var sch map[string]any
		if err := json.Unmarshal([]byte(schema), &sch); err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			dec := json.NewDecoder(strings.NewReader(text))
			dec.UseNumber()
			var rec any
			if err := dec.Decode(&rec); err != nil {
				t.Fatal(err)
			}
			if !hasPaths(rec, pk) || !hasPaths(rec, cursor) {
				continue
			}
			why, err := values.CheckSchema(sch, rec)
			if err != nil {
				t.Fatalf("the schema %s is not valid: %v", schema, err)
			}
			if why != "" {
				t.Fatalf("record %s does not fit the schema %s: %s", text, schema, why)
			}
		}
	})
}

// hasPaths reports whether every path leads, through objects, to a value, none of them null.
func hasPaths(rec any, paths [][]string) bool {
	for _, path := range paths {
		v := rec
		for _, k := range path {
			o, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v = o[k]; v == nil {
				return false
			}
		}
	}
	return true
}
