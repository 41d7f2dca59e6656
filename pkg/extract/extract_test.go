package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func raws(p *Page) []string {
	var out []string
	for _, r := range p.Records {
		out = append(out, string(r.Raw))
	}
	return out
}

func TestParseRecords(t *testing.T) {
	tests := []struct {
		name string
		body string
		path []string
		want []string
	}{
		{"top-level array", `[{"b":1,"a":2},{"id":12345678901234567890}]`, nil,
			[]string{`{"b":1,"a":2}`, `{"id":12345678901234567890}`}},
		{"object at empty path", `{"z":"<html>&","a":[1, 2]}`, nil, []string{`{"z":"<html>&","a":[1,2]}`}},
		{"nested list", `{"data":{"items":[{"x":1}, {"x": "a b"}]},"meta":{}}`, []string{"data", "items"},
			[]string{`{"x":1}`, `{"x":"a b"}`}},
		{"missing path", `{"data":[]}`, []string{"nope"}, nil},
		{"null at path", `{"data":null}`, []string{"data"}, nil},
		{"empty list", `{"data":[]}`, []string{"data"}, nil},
		{"wildcard keys", `{"a":{"v":1},"b":{"v":2}}`, []string{"*"}, []string{`{"v":1}`, `{"v":2}`}},
		{"wildcard then key", `{"r":[{"d":{"k":1}},{"d":{"k":2}}]}`, []string{"r", "*", "d"},
			[]string{`{"k":1}`, `{"k":2}`}},
		{"wildcard keeps lists whole", `{"a":[1,2],"b":[3]}`, []string{"*"}, []string{`[1,2]`, `[3]`}},
		{"list index", `{"r":[{"d":[{"k":1}]},{"d":[{"k":2}]}]}`, []string{"r", "1", "d"}, []string{`{"k":2}`}},
		{"pretty printed", "{\n  \"data\": [\n    {\"a\": \"x y\", \"b\": [ 1 , 2 ]}\n  ]\n}\n", []string{"data"},
			[]string{`{"a":"x y","b":[1,2]}`}},
		{"escapes kept", `[{"s":"a\"b\\c\u00e9 \n"}]`, nil, []string{`{"s":"a\"b\\c\u00e9 \n"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, want := range []Want{{}, {Body: true}, {Values: true}, {Body: true, Values: true}} {
				p, err := Parse([]byte(tt.body), tt.path, want)
				if err != nil {
					t.Fatalf("%+v: %v", want, err)
				}
				if got := raws(p); !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("%+v: records %q, want %q", want, got, tt.want)
				}
				for _, r := range p.Records {
					if want.Values {
						var v any
						d := json.NewDecoder(strings.NewReader(string(r.Raw)))
						d.UseNumber()
						if err := d.Decode(&v); err != nil {
							t.Fatal(err)
						}
						if !reflect.DeepEqual(v, r.Value) {
							t.Fatalf("value %#v, want %#v", r.Value, v)
						}
					} else if r.Value != nil {
						t.Fatalf("value built without Want.Values")
					}
				}
				if want.Body {
					var v any
					d := json.NewDecoder(strings.NewReader(tt.body))
					d.UseNumber()
					if err := d.Decode(&v); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(v, p.Body) {
						t.Fatalf("body %#v, want %#v", p.Body, v)
					}
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ body, want string }{
		{`<html>oops</html>`, `invalid JSON at byte 0: unexpected '<'`},
		{`{"a":1`, `invalid JSON at byte 6: unexpected end of body inside an object`},
		{`{"a":1} x`, `invalid JSON at byte 8: unexpected 'x' after the JSON value`},
		{`[1,]`, `invalid JSON at byte 3: unexpected ']'`},
		{`{"a":tru}`, `invalid JSON at byte 5: invalid literal`},
		{`{"a":01}`, `invalid JSON at byte 6: expected , or } in an object, found '1'`},
		{`"abc`, `invalid JSON at byte 4: unterminated string`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.body), []string{"a"}, Want{Body: true})
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%q) = %v, want %s", tt.body, err, tt.want)
		}
	}
	if _, err := Parse([]byte(" \n"), nil, Want{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty body: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"data":[{"a":1},{"b":"x"}]}`), "data")
	f.Add([]byte(`[1, 2, {"x": [true, false, null]}]`), "*")
	f.Add([]byte(arrays(MaxDepth)), "0")
	f.Add([]byte(arrays(MaxDepth+1)), "0")
	f.Add([]byte(`{"data":[`+objects(MaxDepth-2)+`]}`), "data")
	f.Add([]byte(`{"data":[`+objects(MaxDepth-1)+`]}`), "data")
	f.Add([]byte(`{"data":[{"x":`+arrays(MaxDepth-2)+`}]}`), "data")
	f.Fuzz(func(t *testing.T, body []byte, seg string) {
		p, err := Parse(body, []string{seg}, Want{Body: true, Values: true})
		var de *DepthError
		if errors.As(err, &de) {
			// Valid or not, a body refused for its depth opens more levels than the limit.
			if opens := bytes.Count(body, []byte("[")) + bytes.Count(body, []byte("{")); opens <= MaxDepth {
				t.Fatalf("Parse: %v, but the body opens only %d objects and lists", err, opens)
			}
			for _, want := range []Want{{}, {Body: true, LazyBody: true}} {
				if _, err2 := Parse(body, []string{seg}, want); !errors.As(err2, &de) {
					t.Fatalf("Parse with %+v: %v; with bodies and values: %v", want, err2, err)
				}
			}
			return
		}
		valid := json.Valid(body)
		// A field path ending at a scalar is reported only for a body that is valid JSON.
		var notRecord *NotRecordError
		parsed := err == nil || errors.As(err, &notRecord)
		if parsed != valid && len(strings.TrimSpace(string(body))) > 0 {
			t.Fatalf("Parse error %v but json.Valid = %v", err, valid)
		}
		if err != nil {
			return
		}
		for _, r := range p.Records {
			if !json.Valid(r.Raw) {
				t.Fatalf("record %q is not valid JSON", r.Raw)
			}
		}
		lazy, err := Parse(body, []string{seg}, Want{Body: true, LazyBody: true})
		if err != nil {
			t.Fatalf("Parse with LazyBody: %v", err)
		}
		if o, ok := lazy.Body.(*Object); ok {
			if got := materialize(o); !reflect.DeepEqual(any(got), p.Body) {
				t.Fatalf("lazy body %#v, want %#v", got, p.Body)
			}
		} else if !reflect.DeepEqual(lazy.Body, p.Body) {
			t.Fatalf("body %#v, want %#v", lazy.Body, p.Body)
		}
	})
}

// skip agrees with encoding/json on what a valid value is, and says whether it holds
// whitespace.
func FuzzSkip(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1, 2, {"x": [true, false, null]}]`, `"a\u00e9\n"`, `{"k" : "v" , "n":-1.5e+3}`,
		`{"a":"0123456789abcdef\"x"}`, `[{"a":{}},[],""]`, "\"tab\there\"", `{"a" 1}`, `[1,]`, `-01`,
		arrays(maxSkipDepth), arrays(maxSkipDepth + 1), objects(maxSkipDepth), arrays(MaxDepth + 1)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		if len(d) == 0 || isSpace[d[0]] {
			return // skip starts at a value
		}
		end, spaced, ok := skip(d, 0)
		valid := json.Valid(d)
		if !ok {
			if valid && strings.Count(string(d), "[")+strings.Count(string(d), "{") <= maxSkipDepth {
				t.Fatalf("skip refused %q, which is valid JSON", d)
			}
			return
		}
		if !json.Valid(d[:end]) {
			t.Fatalf("skip accepted %q (of %q), which is not valid JSON", d[:end], d)
		}
		if valid && strings.TrimRight(string(d[end:]), " \t\r\n") != "" {
			t.Fatalf("skip stopped at %d in valid %q", end, d)
		}
		if hasSpace := !bytes.Equal(compact(d[:end]), d[:end]); hasSpace != spaced {
			t.Fatalf("skip says spaced=%v for %q", spaced, d[:end])
		}
	})
}
