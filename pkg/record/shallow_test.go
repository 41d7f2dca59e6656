package record

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"connector/pkg/extract"
)

// FuzzShallow: an object read lazily (Shallow, and ShallowAt with the members the page
// parser notes) holds what Decode makes of it, whether none, some or all of its values
// were read, a key deleted or one set: the same keys in the same order and the same values
// (a value it did not decode may keep escapes Marshal would write otherwise, so texts are
// compared once decoded and marshalled again). Left alone, a compact object of plain ASCII
// without a repeated key is written back byte for byte. StrBytes, when it answers, gives the text of
// the value Get gives.
func FuzzShallow(f *testing.F) {
	for _, s := range []string{
		`{"id":"0000000042","name":"Customer 42","n":1.50,"t":true,"z":null,"tags":["a","b"],"o":{"k":[1,{"x":"}"}]}}`,
		`{"a":1,"b":2,"a":3}`,
		`{"s":"\u00e9\"\\x","k\u00e9y":"v","é":"日本","ctl":"a\tb"}`,
		` { "sp" : [ 1 , 2 ] , "o" : { } , "l" : [ ] } `,
		`{}`,
		`{"":""}`,
		`{"a":{"a":{"a":1}},"b":"\/"}`,
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(0xff))
	}
	f.Fuzz(func(t *testing.T, data []byte, touch uint8) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		ref, ok := v.(*Object)
		if !ok {
			return
		}
		page, err := extract.Parse(append(append([]byte(`{"r":[`), data...), ']', '}'), []string{"r"}, extract.Want{Members: true})
		if err != nil {
			t.Fatalf("the page parser refuses %q: %v", data, err)
		}
		rec := page.Records[0]
		var arena Arena
		lazy := map[string]*Object{}
		if lazy["Shallow"], ok = Shallow(data); !ok {
			t.Fatalf("Shallow refuses %q", data)
		}
		if lazy["Arena.Shallow"], ok = arena.Shallow(rec.Raw); !ok {
			t.Fatalf("Arena.Shallow refuses %q", rec.Raw)
		}
		if rec.Members != nil {
			if lazy["Arena.ShallowAt"], ok = arena.ShallowAt(rec.Raw, rec.Members); !ok {
				t.Fatalf("ShallowAt refuses %q (members %v)", rec.Raw, rec.Members)
			}
			// Again: the keys are those of the last object.
			if lazy["Arena.ShallowAt again"], ok = arena.ShallowAt(rec.Raw, rec.Members); !ok {
				t.Fatalf("ShallowAt refuses %q the second time", rec.Raw)
			}
		}
		for i, k := range ref.Keys() {
			if touch&(1<<(i%8)) == 0 {
				continue
			}
			want, _ := ref.Get(k)
			for how, o := range lazy {
				if text, ok := o.StrBytes(k); ok {
					switch w := want.(type) {
					case string:
						if string(text) != w {
							t.Fatalf("%s of %q: StrBytes(%q) = %q, Get gives %q", how, data, k, text, w)
						}
					case json.Number:
						if string(text) != string(w) {
							t.Fatalf("%s of %q: StrBytes(%q) = %q, Get gives %s", how, data, k, text, w)
						}
					default:
						t.Fatalf("%s of %q: StrBytes(%q) = %q, but Get gives %#v", how, data, k, text, w)
					}
				}
				if got, _ := o.Get(k); !same(t, got, want) {
					t.Fatalf("%s of %q: Get(%q) = %#v, want %#v", how, data, k, got, want)
				}
			}
		}
		edit := func(o *Object) {
			keys := o.Keys()
			if touch&0x40 != 0 && len(keys) > 1 {
				o.Delete(keys[1])
			}
			if touch&0x80 != 0 && len(keys) > 0 {
				o.Set(keys[0], "set")
				o.Set("added", json.Number("1.0"))
			}
		}
		edit(ref)
		want, err := Marshal(ref)
		if err != nil {
			t.Fatal(err)
		}
		for how, o := range lazy {
			edit(o)
			got, err := Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			// (Text that is not UTF-8 is written as it came where it was not decoded, and
			// with U+FFFD where it was: not compared.)
			if utf8.Valid(data) && !same(t, decoded(t, got), decoded(t, want)) {
				t.Fatalf("%s of %q: %s, %v; Decode gives %s", how, data, got, err, want)
			}
			if touch == 0 && plainASCII(data) && bytes.Equal(rec.Raw, data) && len(ref.Keys()) == len(rec.Members)/3 && !bytes.Equal(got, data) {
				t.Fatalf("%s of %q, left alone, writes %s", how, data, got)
			}
		}
	})
}

func decoded(t *testing.T, data []byte) any {
	t.Helper()
	v, err := Decode(data)
	if err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	return v
}

// same compares decoded values by their JSON text.
func same(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// TestShallowCopiesMembers: members a transformation leaves alone are copied from the
// record's text with their keys, those it reads keep their text when they are scalars
// written the same way, and a key with an escape is written as the encoder writes it.
func TestShallowCopiesMembers(t *testing.T) {
	data := []byte(`{"a":"x","b":1.50,"k\u00e9":"\u00e9","c":{"d":1},"e":"plain"}`)
	o, ok := Shallow(data)
	if !ok {
		t.Fatal("not an object")
	}
	for _, k := range []string{"a", "b", "c", "ké", "e"} {
		o.Get(k)
	}
	c, _ := o.Get("c")
	c.(*Object).Set("new", true)
	o.Delete("a")
	got, err := Marshal(o)
	want := `{"b":1.50,"ké":"é","c":{"d":1,"new":true},"e":"plain"}`
	if err != nil || string(got) != want {
		t.Errorf("got %s, %v; want %s", got, err, want)
	}
	if strings.Contains(string(got), `\u00e9`) {
		t.Errorf("an escaped string that was read is written from its value: %s", got)
	}
}

// TestArenaReset: after Reset an Arena makes new Objects in the memory of the old ones,
// each with its own keys and values, and one that grows past its room leaves its
// neighbour alone.
func TestArenaReset(t *testing.T) {
	var a Arena
	var first []*Object
	for i := range 300 {
		o, ok := a.Shallow([]byte(`{"i":` + strings.Repeat("1", i%7+1) + `,"s":"x"}`))
		if !ok {
			t.Fatal("not an object")
		}
		first = append(first, o)
	}
	a.Reset()
	o1, _ := a.ShallowAt([]byte(`{"a":1}`), []int32{1, 5, 6})
	o2, _ := a.ShallowAt([]byte(`{"b":2}`), []int32{1, 5, 6})
	// 300 Objects took a block of 128 and one of 256: the second is used again.
	if o1 != first[128] {
		t.Error("the first Object after Reset is not in the memory of the last block's first")
	}
	for i := range 10 {
		o1.Set(strings.Repeat("k", i+1), int64(i))
	}
	got1, _ := Marshal(o1)
	got2, _ := Marshal(o2)
	if string(got1) != `{"a":1,"k":0,"kk":1,"kkk":2,"kkkk":3,"kkkkk":4,"kkkkkk":5,"kkkkkkk":6,"kkkkkkkk":7,"kkkkkkkkk":8,"kkkkkkkkkk":9}` || string(got2) != `{"b":2}` {
		t.Errorf("got %s and %s", got1, got2)
	}
}

// TestShallowAtKeysOfTheLast: records read one after the other by an Arena, with the keys
// of the last one or not, repeated or not, are what Decode makes of them.
func TestShallowAtKeysOfTheLast(t *testing.T) {
	var a Arena
	for _, in := range []string{
		`{"a":1,"b":2,"c":3}`,
		`{"a":4,"b":5,"c":6}`,
		`{"a":7,"b":8,"a":9}`,
		`{"a":7,"b":8,"a":9}`,
		`{"a":1,"b":2,"c":3}`,
		`{"b":1,"a":2,"c":3}`,
		`{"b":1,"a":2,"d":3}`,
		`{"x\u00e9":1,"b":2,"c":3}`,
		`{"x\u00e9":1,"b":2,"c":3}`,
		`{"xé":1,"b":2,"c":3}`,
		`{"xé":1,"b":2,"xé":3}`,
		`{}`,
		`{}`,
		`{"a":{"a":1}}`,
	} {
		page, err := extract.Parse([]byte(`{"r":[`+in+`]}`), []string{"r"}, extract.Want{Members: true})
		if err != nil {
			t.Fatal(err)
		}
		rec := page.Records[0]
		o, ok := a.ShallowAt(rec.Raw, rec.Members)
		if !ok {
			t.Fatalf("%s: refused", in)
		}
		got, _ := Marshal(o)
		want, _ := Marshal(decoded(t, []byte(in)))
		if !same(t, decoded(t, got), decoded(t, want)) || o.Len() != decoded(t, want).(*Object).Len() {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
		for _, k := range o.Keys() {
			if !o.Has(k) {
				t.Errorf("%s: key %q not found", in, k)
			}
		}
	}
}
