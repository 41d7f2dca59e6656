package record

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func TestMarshal(t *testing.T) {
	inner := &Object{}
	inner.Set("z", json.Number("12345678901234567890"))
	inner.Set("a", []any{int64(1), 2.5, nil, true})
	o := &Object{}
	o.Set("name", "a <b> & \"c\"\n\x01é")
	o.Set("inner", inner)
	o.Set("map", map[string]any{"y": 1, "x": "s"})
	o.Set("name", "replaced keeps its place")
	tests := []struct {
		v    any
		want string
	}{
		{o, `{"name":"replaced keeps its place","inner":{"z":12345678901234567890,"a":[1,2.5,null,true]},"map":{"x":"s","y":1}}`},
		{"a <b> & \"c\"\n\x01é\\", `"a <b> & \"c\"\n\u0001é\\"`},
		{&Object{}, `{}`},
		{[]any{}, `[]`},
	}
	for _, tt := range tests {
		got, err := Marshal(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.v, got, err, tt.want)
		}
	}
	if _, err := Marshal(make(chan int)); err == nil {
		t.Error("a channel must not encode")
	}
}

func TestObjectDelete(t *testing.T) {
	o := &Object{}
	for _, k := range []string{"a", "b", "c"} {
		o.Set(k, k)
	}
	o.Delete("b")
	o.Delete("missing")
	o.Set("b", "again")
	got, _ := Marshal(o)
	if string(got) != `{"a":"a","c":"c","b":"again"}` || o.Len() != 3 {
		t.Fatalf("got %s (%d keys)", got, o.Len())
	}
}

func TestRecordAppendJSON(t *testing.T) {
	raw := Record{Raw: []byte(`{"id":1,"n":1.50}`)}
	o := &Object{}
	o.Set("id", json.Number("1"))
	edited := Record{Object: o}
	b, _ := raw.AppendJSON([]byte("x"))
	b, _ = edited.AppendJSON(b)
	if string(b) != `x{"id":1,"n":1.50}{"id":1}` {
		t.Fatalf("got %s", b)
	}
}

func TestMarshalValues(t *testing.T) {
	o := &Object{}
	o.Set("z", 1)
	o.Set("a", map[string]any{"y": []any{json.Number("1e3"), 2.5, "<b>"}, "x": nil})
	o.Set("z", "replaced, keeping its place")
	for _, tt := range []struct {
		v    any
		want string
	}{
		{o, `{"z":"replaced, keeping its place","a":{"x":null,"y":[1e3,2.5,"<b>"]}}`},
		{map[string]any{"b": 1, "a": 2, "c": map[string]any{}}, `{"a":2,"b":1,"c":{}}`},
		{[]any{}, `[]`},
		{&Object{}, `{}`},
		{"tab\tquote\"é\u2028", `"tab\tquote\"é\u2028"`},
		// A float (a template's result) in Python's json spelling, as the CDK writes it:
		// json.dumps([100.0, 1e16, 1.5e-05, 1485302400000.0, 0.1, -0.0]).
		{float64(100), `100.0`},
		{[]any{1e16, 1.5e-05, 1485302400000.0, 0.1, math.Copysign(0, -1)}, `[1e+16,1.5e-05,1485302400000.0,0.1,-0.0]`},
		{int64(-7), `-7`},
		{false, `false`},
		{nil, `null`},
	} {
		got, err := Marshal(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("Marshal(%#v) = %s, %v; want %s", tt.v, got, err, tt.want)
		}
	}
	if keys := o.Keys(); !reflect.DeepEqual(keys, []string{"z", "a"}) || o.Len() != 2 {
		t.Errorf("keys %q, len %d", keys, o.Len())
	}
}

func TestDecode(t *testing.T) {
	v, err := Decode([]byte(` {"b":1.50,"a":{"z":[1,"x",null,true],"y":{}},"b":12345678901234567890} `))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Marshal(v)
	if string(got) != `{"b":12345678901234567890,"a":{"z":[1,"x",null,true],"y":{}}}` {
		t.Errorf("got %s", got)
	}
	for _, bad := range []string{``, `{`, `{"a":}`, `[1,]`, `1 2`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) gave no error", bad)
		}
	}
}

// FuzzAppendString: a string is written as encoding/json writes it without HTML escaping.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"plain ascii text", "tab\there", `quote"back\slash`, "é日本\u2028", "\xff\x00", "0123456789abcdef<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := appendString(nil, s), bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
	})
}
