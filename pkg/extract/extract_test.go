package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
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

// A key written twice keeps its last value, as Python's json.loads decides (the Airbyte
// CDK parses bodies with it): the records are those of the last value at each step of the
// field path, and a key under a wildcard keeps its first place. Each want is Python's
// answer (json.loads, then the CDK's DpathExtractor).
func TestParseRepeatedKeys(t *testing.T) {
	tests := []struct {
		body string
		path []string
		want []string
	}{
		{`{"data":[{"id":1},{"id":2}],"data":[{"id":3}]}`, []string{"data"}, []string{`{"id":3}`}},
		{`{"data":[{"id":1}],"data":null}`, []string{"data"}, nil},
		{`{"data":"x","data":[{"id":1}]}`, []string{"data"}, []string{`{"id":1}`}},
		{`{"data":[{"id":1}],"d\u0061ta":[{"id":2}]}`, []string{"data"}, []string{`{"id":2}`}},
		{`{"a":{"b":[1]},"a":{"b":[2,3]}}`, []string{"a", "b"}, []string{`2`, `3`}},
		{`{"a":{"b":[1],"b":[2]},"a":{"c":1}}`, []string{"a", "b"}, nil},
		{`{"a":{"b":[1],"b":[{"k":2}]}}`, []string{"a", "b"}, []string{`{"k":2}`}},
		{`{"x":{"v":1},"y":{"v":2},"x":{"v":3}}`, []string{"*"}, []string{`{"v":3}`, `{"v":2}`}},
		{`{"x":{"v":1},"x":{"v":2},"x":{"v":3},"y":{"v":4}}`, []string{"*"}, []string{`{"v":3}`, `{"v":4}`}},
		{`{"r":{"a":[{"k":1}],"b":[{"k":2}],"a":[{"k":3},{"k":4}]}}`, []string{"r", "*"}, []string{`[{"k":3},{"k":4}]`, `[{"k":2}]`}},
		{`{"r":{"a":{"d":[1,2]},"b":{"d":[3]},"a":{"d":[]}}}`, []string{"r", "*", "d"}, []string{`[]`, `[3]`}},
		{`{"r":[{"d":[1]},{"d":[2],"d":[3]}]}`, []string{"r", "1", "d"}, []string{`3`}},
		{`{"r":[{"d":1,"d":{"k":1}}]}`, []string{"r", "*", "d"}, []string{`{"k":1}`}},
	}
	for _, tt := range tests {
		for _, want := range []Want{{}, {Body: true}, {Values: true}, {Body: true, LazyBody: true}, {MaxRecords: 2}} {
			p, err := Parse([]byte(tt.body), tt.path, want)
			if err != nil {
				t.Errorf("%s at %v with %+v: %v", tt.body, tt.path, want, err)
				continue
			}
			if got := raws(p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s at %v with %+v: records %q, want %q", tt.body, tt.path, want, got, tt.want)
			}
		}
	}
}

// A record that holds a key twice is emitted as the API wrote it; the value a template
// reads (last_records, a record filter) and the body keep the last value, as in Python.
func TestParseRepeatedKeyInsideARecord(t *testing.T) {
	p, err := Parse([]byte(`{"data":[{"id":1,"id":2}],"next":"a","next":"b"}`), []string{"data"}, Want{Body: true, Values: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Records) != 1 || string(p.Records[0].Raw) != `{"id":1,"id":2}` ||
		!reflect.DeepEqual(p.Records[0].Value, map[string]any{"id": json.Number("2")}) {
		t.Errorf("records %+v", p.Records)
	}
	if next := p.Body.(map[string]any)["next"]; next != "b" {
		t.Errorf("body next %v, want b", next)
	}
	lazy, err := Parse([]byte(`{"data":[],"next":"a","next":"b"}`), []string{"data"}, Want{Body: true, LazyBody: true})
	if err != nil {
		t.Fatal(err)
	}
	if next, _ := lazy.Body.(*Object).Get("next"); next != "b" {
		t.Errorf("lazy body next %v, want b", next)
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
	f.Add([]byte(`{"data":[{"id":1},{"id":2}],"data":[{"id":3}],"d\u0061ta":null}`), "data")
	f.Add([]byte(`{"x":{"v":1},"y":[2],"x":{"v":3,"v":4}}`), "*")
	f.Add([]byte(`[{"a":1},{"a":2,"a":3}]`), "1")
	f.Add([]byte(`{"r":{"a":{"d":[1,2]},"b":{"d":[3]},"a":{"d":[]}}}`), "r/*/d")
	f.Add([]byte(`{"a":{"b":[1]},"a":{"b":[2,3]}}`), "a/b")
	f.Fuzz(func(t *testing.T, body []byte, seg string) {
		// seg is one segment of the field path, or several separated by slashes.
		path := []string{seg}
		if strings.Contains(seg, "/") {
			path = strings.Split(seg, "/")
		}
		p, err := Parse(body, path, Want{Body: true, Values: true})
		var de *DepthError
		if errors.As(err, &de) {
			// Valid or not, a body refused for its depth opens more levels than the limit.
			if opens := bytes.Count(body, []byte("[")) + bytes.Count(body, []byte("{")); opens <= MaxDepth {
				t.Fatalf("Parse: %v, but the body opens only %d objects and lists", err, opens)
			}
			for _, want := range []Want{{}, {Body: true, LazyBody: true}} {
				if _, err2 := Parse(body, path, want); !errors.As(err2, &de) {
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
		// The records are those of the body as encoding/json decodes it, which, like
		// Python's json.loads, keeps the last value of a key written twice. (Python refuses
		// a body that is not UTF-8, and encoding/json changes its keys: no reference then.)
		if utf8.Valid(body) {
			want, ordered := referenceRecords(decoded(t, string(body)), path)
			got := make([]string, len(p.Records))
			for i, r := range p.Records {
				got[i] = canonical(decoded(t, string(r.Raw)))
			}
			if !ordered {
				slices.Sort(got)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("records at %q: %q, want %q", seg, got, want)
			}
		}
		checkMembers(t, body, path, p.Records)
		lazy, err := Parse(body, path, Want{Body: true, LazyBody: true})
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

// checkMembers: Parse with Want.Members finds the same records as without, and the members
// it notes of a record put it back together exactly, each a JSON string key, a colon and a
// JSON value.
func checkMembers(t *testing.T, body []byte, path []string, want []Record) {
	t.Helper()
	p, err := Parse(body, path, Want{Members: true})
	if err != nil {
		t.Fatalf("Parse with Members: %v", err)
	}
	if len(p.Records) != len(want) {
		t.Fatalf("%d records with Members, %d without", len(p.Records), len(want))
	}
	for i, r := range p.Records {
		if !bytes.Equal(r.Raw, want[i].Raw) {
			t.Fatalf("record %d is %q with Members, %q without", i, r.Raw, want[i].Raw)
		}
		if r.Members == nil {
			continue
		}
		if len(r.Members)%3 != 0 {
			t.Fatalf("record %q: %d member offsets", r.Raw, len(r.Members))
		}
		rebuilt := []byte{'{'}
		for m := 0; m < len(r.Members); m += 3 {
			k, v, e := r.Members[m], r.Members[m+1], r.Members[m+2]
			var key string
			if err := json.Unmarshal(r.Raw[k:v-1], &key); err != nil || r.Raw[v-1] != ':' || !json.Valid(r.Raw[v:e]) {
				t.Fatalf("record %q: member %q is not a key, a colon and a value", r.Raw, r.Raw[k:e])
			}
			if m > 0 {
				rebuilt = append(rebuilt, ',')
			}
			rebuilt = append(rebuilt, r.Raw[k:e]...)
		}
		if rebuilt = append(rebuilt, '}'); !bytes.Equal(rebuilt, r.Raw) {
			t.Fatalf("record %q: its members make %q", r.Raw, rebuilt)
		}
	}
}

// referenceRecords is what Parse finds at path in body, a value decoded by encoding/json,
// each record as canonical JSON; ordered is false when a wildcard went through the members
// of an object (their order is not in a Go map). A body that is a list is a list of bodies,
// as the CDK's JSON decoder yields them.
func referenceRecords(body any, path []string) (records []string, ordered bool) {
	list, ok := body.([]any)
	if !ok {
		return pathRecords(body, path)
	}
	ordered = true
	for _, e := range list {
		switch e := e.(type) {
		case map[string]any, []any, nil:
		default:
			if len(path) == 0 {
				// A number, a string or a boolean is a record when Python calls it true.
				if f, err := strconv.ParseFloat(string(asNumber(e)), 64); e != false && e != "" && (err != nil || f != 0) {
					records = append(records, canonical(e))
				}
				continue
			}
		}
		r, o := pathRecords(e, path)
		records = append(records, r...)
		ordered = ordered && o
	}
	return records, ordered
}

func asNumber(v any) json.Number {
	n, _ := v.(json.Number)
	return n
}

// pathRecords is what Parse finds at path in a body that is not a list.
func pathRecords(body any, path []string) (records []string, ordered bool) {
	ordered = true
	var matched []any
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		if len(path) == 0 {
			matched = append(matched, v)
			return
		}
		switch v := v.(type) {
		case map[string]any:
			if path[0] == Wildcard {
				ordered = ordered && len(v) < 2
				for _, e := range v {
					walk(e, path[1:])
				}
			} else if e, ok := v[path[0]]; ok && !pythonLiteral(path[0]) {
				walk(e, path[1:])
			}
		case []any:
			at := refIndex(path[0], len(v))
			for i, e := range v {
				if path[0] == Wildcard || i == at {
					walk(e, path[1:])
				}
			}
		}
	}
	walk(body, path)
	if slices.Contains(path, Wildcard) {
		// Every value matched is one record, a list as a whole.
		for _, v := range matched {
			records = append(records, canonical(v))
		}
		return records, ordered
	}
	for _, v := range matched {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				records = append(records, canonical(e))
			}
		case nil:
		case map[string]any:
			if len(v) > 0 {
				records = append(records, canonical(v))
			}
		default:
			records = append(records, canonical(v))
		}
	}
	return records, ordered
}

// refIndex is the index of a list of n elements that a path segment selects (-1 for
// none): a segment Python reads as a number or a boolean is that number's integer part,
// counted from the end when negative; else a plain decimal index.
func refIndex(seg string, n int) int {
	t := strings.TrimSpace(seg)
	if pythonLiteral(seg) {
		switch t {
		case "True":
			return 1
		case "False":
			return 0
		case "None":
			return -1
		}
		f, _ := strconv.ParseFloat(t, 64)
		if f < 0 {
			return int(f) + n
		}
		return int(f)
	}
	if seg == "0" || seg != "" && seg[0] >= '1' && seg[0] <= '9' {
		if i, err := strconv.Atoi(seg); err == nil {
			return i
		}
	}
	return -1
}

// canonical is v as JSON with sorted keys.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
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

// TestMembers: Want.Members notes where the key and the value of every member of a compact
// object record are; a record with whitespace (compacted), not an object, or decoded for
// Want.Values has none.
func TestMembers(t *testing.T) {
	body := []byte(`{"data":[{"id":1,"n":{"a":[1,"}"]},"s":"x\"y"},{},{"a" : 1},[1],{"a":1,"a":2},{"k\u00e9":null}]}`)
	p, err := Parse(body, []string{"data"}, Want{Members: true})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int32{
		{1, 6, 7, 8, 12, 25, 26, 30, 36},
		{},
		nil,
		nil,
		{1, 5, 6, 7, 11, 12},
		{1, 11, 15},
	}
	if len(p.Records) != len(want) {
		t.Fatalf("%d records", len(p.Records))
	}
	for i, r := range p.Records {
		if !slices.Equal(r.Members, want[i]) || (r.Members == nil) != (want[i] == nil) {
			t.Errorf("record %s: members %v, want %v", r.Raw, r.Members, want[i])
		}
	}
	p, err = Parse(body, []string{"data"}, Want{Members: true, Values: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Records {
		if r.Members != nil {
			t.Errorf("record %s: members %v with Want.Values", r.Raw, r.Members)
		}
	}
}
