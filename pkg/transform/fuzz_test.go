package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"connector/pkg/extract"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

// FuzzNoOpChainKeepsTheRecord: any JSON record.Decode accepts comes back from a chain that
// changes nothing (a RemoveFields of a pointer that is not there) as it was sent: the same
// keys in the same order, numbers spelled as sent, strings with the same characters. Only
// the escapes may be written differently (compared after both are re-encoded), and a key
// written twice keeps its last value at its first place, as Python's json does. An object
// goes both ways: decoded whole, and read lazily as a read reads it (the page parser's
// members, record.Arena, transform.Batch).
func FuzzNoOpChainKeepsTheRecord(f *testing.F) {
	for _, s := range []string{
		`{"a":1.50,"b":-0,"c":1e20,"d":1E-7,"e":12345678901234567890123,"f":-0.0,"g":0.1e+2}`,
		`{"s":"\u2028\u2029 \/ \" \\ \b\f\n\r\t \u0000 \ud83d\ude00 é 日本 <&>","u":"\u00e9"}`,
		`{"a":1,"b":2,"a":3}`,
		`{"a":{"x":1,"x":{"y":2}},"a":[1,{"b":null}]}`,
		`[1,"x",{"k":true,"k2":false,"k3":null}]`,
		`  {"sp" : [ 1 , 2 ] , "o" : { } , "l" : [ ] }  `,
		`"\ud800"`,
		`{"":{"":[[[[{"":""}]]]]}}`,
		`{"no such field":{"deep":1}}`,
		strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat(`}`, 500),
		strings.Repeat(`[`, 511) + strings.Repeat(`]`, 511),
		`12`, `-0.0e-0`, `true`, `null`,
	} {
		f.Add([]byte(s))
	}
	chain, err := New([]*manifest.Transformation{{Type: manifest.RemoveFields, FieldPointers: [][]string{{"no such field", "*", "x"}}}}, template.Globals{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := record.Decode(in)
		if err != nil {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("record.Decode accepts %q, which is not JSON", in)
		}
		if obj, ok := v.(*record.Object); ok {
			if err := chain.Apply(obj, map[string]any{}); err != nil {
				t.Fatalf("a no-op chain fails on %q: %v", in, err)
			}
		}
		out, err := record.Marshal(v)
		if err != nil {
			t.Fatalf("marshal %q: %v", in, err)
		}
		sameRecord(t, in, out)
		if _, ok := v.(*record.Object); !ok {
			return
		}
		// The way a read goes: the members the page parser notes, an Arena, a Batch.
		page, err := extract.Parse(append(append([]byte(`{"r":[`), in...), ']', '}'), []string{"r"}, extract.Want{Members: true})
		if err != nil {
			t.Fatalf("the page parser refuses %q: %v", in, err)
		}
		rec := page.Records[0]
		var arena record.Arena
		obj, ok := arena.Shallow(rec.Raw)
		if rec.Members != nil {
			obj, ok = arena.ShallowAt(rec.Raw, rec.Members)
		}
		if !ok {
			t.Fatalf("%q is not read as an object", rec.Raw)
		}
		if err := chain.Batch(map[string]any{}).Apply(obj); err != nil {
			t.Fatalf("a no-op chain fails on %q read lazily: %v", in, err)
		}
		if out, err = record.Marshal(obj); err != nil {
			t.Fatalf("marshal %q read lazily: %v", in, err)
		}
		sameRecord(t, in, out)
	})
}

// sameRecord: out, what became of the record in, is in once both are compacted, the escapes
// of strings aside.
func sameRecord(t *testing.T, in, out []byte) {
	t.Helper()
	want, dup, err := canonical(in)
	if err != nil {
		t.Fatalf("canonical %q: %v", in, err)
	}
	got, _, err := canonical(out)
	if err != nil {
		t.Fatalf("record.Marshal wrote %q, not JSON: %v", out, err)
	}
	if !dup {
		if !bytes.Equal(got, want) {
			t.Fatalf("in  %s\nout %s", want, got)
		}
		return
	}
	// A key written twice: the values are encoding/json's (the last one wins).
	if a, b := unmarshal(t, in), unmarshal(t, out); !reflect.DeepEqual(a, b) {
		t.Fatalf("in  %s\nout %s", in, out)
	}
}

// unmarshal is encoding/json's reading of data, numbers as spelled.
func unmarshal(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// canonical re-encodes JSON token by token, with encoding/json's reading of strings and the
// spelling of numbers kept; dup reports a key written twice in an object.
func canonical(data []byte) (out []byte, dup bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		obj  bool
		n    int
		keys map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, dup, nil
		}
		if err != nil {
			return nil, false, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out = append(out, byte(d))
			if len(stack) > 0 {
				stack[len(stack)-1].n++
			}
			continue
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			switch {
			case top.obj && top.n%2 == 1:
				out = append(out, ':')
			case top.n > 0:
				out = append(out, ',')
			}
			if top.obj && top.n%2 == 0 {
				k := tok.(string)
				dup = dup || top.keys[k]
				top.keys[k] = true
			}
		}
		switch x := tok.(type) {
		case json.Delim:
			out = append(out, byte(x))
			stack = append(stack, &frame{obj: x == '{', keys: map[string]bool{}})
			continue
		case string, bool, nil:
			b, _ := record.Marshal(x)
			out = append(out, b...)
		case json.Number:
			out = append(out, x...)
		}
		if len(stack) > 0 {
			stack[len(stack)-1].n++
		}
	}
}

// TestDuplicateKeysAsPython: a key written twice keeps its last value at its first place;
// want is json.dumps(json.loads(in)) in Python 3.11.
func TestDuplicateKeysAsPython(t *testing.T) {
	in := `{"a":1,"b":2,"a":{"x":1,"x":2}}`
	want := `{"a":{"x":2},"b":2}`
	v, err := record.Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := record.Marshal(v); err != nil || string(got) != want {
		t.Errorf("%s comes back as %s, %v; Python gives %s", in, got, err, want)
	}
}
